import { randomUUID } from 'node:crypto';
import type { ClientMetadata } from 'oidc-provider';
import {
  APP_GRANTS,
  AppStore,
  PKCE_POLICIES,
  type AppGrant,
  type AppRecordInput,
  type OAuthClientDoc,
  type PkcePolicy,
} from '../data/apps/store.js';
import type { Database } from '../data/database.js';
import { OAuthStore } from '../data/accounts/oauth-records.js';
import { OAUTH_SCOPES, OPENID, SELF_READ, type OAuthScope } from './constants.js';
import { EMAIL, PROFILE, SCOPES_NEEDING_APPROVAL } from './login-scopes.js';
import { AccessAudit, type AccessAction, type AccessActor } from '../data/accounts/access-log.js';
import { hashClientSecret, newClientSecret } from './secrets.js';
import { BadRequestError } from '../errors/index.js';
import type { AppStanding } from '../auth/policy.js';

/** Client metadata property (extraClientMetadata) that marks first-party clients. */
export const FIRST_PARTY = 'first_party';
/**
 * Client metadata property listing the scopes a client may request. The standard `scope`
 * metadata cannot hold `self:read` (oidc-provider accepts only OpenID scopes there).
 */
export const ALLOWED_SCOPES = 'allowed_scopes';
/** Client metadata property: false only for a confidential client registered with `--pkce optional`. */
export const REQUIRE_PKCE = 'require_pkce';
/** Client metadata property: the service the login page names (null: the app's name). */
export const SERVICE_NAME = 'service_name';

/** Apps one account may register in the developer console (docs/decisions.md, "Accounts and login"). */
export const MAX_APPS_PER_ACCOUNT = 10;
/** Redirect addresses of one app (and post-logout addresses), for every client. */
export const MAX_REDIRECT_URIS = 10;
/** Characters of an app's name and of its service name. */
export const MAX_APP_NAME_LENGTH = 100;

/** A client as `campus clients list` shows it; never the secret. */
export interface AppSummary {
  id: string;
  name: string;
  type: 'confidential' | 'public';
  firstParty: boolean;
  /** 'optional' only for confidential legacy apps; PKCE is required of every other client. */
  pkce: PkcePolicy;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  scopes: string[];
  /** The account that registered it in the developer console; null for `campus clients`. */
  ownerAccountId: number | null;
  /** The service the login page names; null: the app's name. */
  serviceName: string | null;
  /** How its people sign in: in a browser (`authorization_code`) and/or by device (`device`). */
  grants: AppGrant[];
  /** Where the app's server is told that a person's sign-in ended (OpenID Connect Back-Channel Logout); null: not told. */
  backchannelLogoutUri: string | null;
  /**
   * `disabled` (by an admin: nothing works), `testing` (a developer-console app asking for data
   * beyond the account, not yet approved: only its owner may sign in) or `active`
   * (docs/decisions.md, "Apps that ask for more than their owner wait for approval").
   */
  state: AppState;
  approvedAt: Date | null;
  disabledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface CreateAppInput {
  name: string;
  redirectUris: string[];
  postLogoutRedirectUris?: string[];
  scopes?: string[];
  public?: boolean;
  firstParty?: boolean;
  /** Default 'required'; 'optional' is refused for public clients. */
  pkce?: PkcePolicy;
  serviceName?: string | null;
  /** Default: a person's sign-in in a browser only (`authorization_code`). */
  grants?: AppGrant[];
  backchannelLogoutUri?: string | null;
  /** Only the demo seed fixes the id and secret, so the examples of docs/oauth.md work as written. */
  id?: string;
  secret?: string;
}

export interface UpdateAppInput {
  name?: string;
  redirectUris?: string[];
  postLogoutRedirectUris?: string[];
  scopes?: string[];
  firstParty?: boolean;
  pkce?: PkcePolicy;
  serviceName?: string | null;
  grants?: AppGrant[];
  backchannelLogoutUri?: string | null;
}

/** Where an app stands (see AppSummary.state). */
export const APP_STATES = ['active', 'testing', 'disabled'] as const;
export type AppState = (typeof APP_STATES)[number];

/** Changes made in the developer console name the account, which must own the client. */
export interface AppOwnerOption {
  ownerAccountId?: number;
}

/** Which rule a registration broke (the developer console words each in its own languages). */
export type AppProblem =
  | 'unknown_client'
  | 'name'
  | 'service_name'
  | 'redirect_uri_missing'
  | 'redirect_uri_invalid'
  | 'redirect_uri_fragment'
  | 'redirect_uri_not_https'
  | 'too_many_redirect_uris'
  | 'scopes'
  | 'pkce'
  | 'public_has_no_secret'
  | 'too_many_apps'
  | 'reserved_name'
  | 'grants'
  | 'backchannel_logout_uri';

/** A client registration the rules refuse; the message says which rule, `problem` names it, `detail` is the value at fault. */
export class AppValidationError extends BadRequestError {
  constructor(
    message: string,
    readonly problem: AppProblem,
    readonly detail?: string,
  ) {
    super(message);
  }
}

/** What the provider needs: a client's metadata by id. */
export interface AppDirectory {
  metadata(id: string): Promise<ClientMetadata | undefined>;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
/** An operator's app may ask for these unless told otherwise: the specification's scope and what OpenID Connect libraries ask for by default. */
export const DEFAULT_APP_SCOPES: readonly OAuthScope[] = [SELF_READ, OPENID, PROFILE, EMAIL];

/** Registers, changes and removes OAuth clients; secrets are returned once and stored hashed. */
export class AppService implements AppDirectory {
  private readonly store: AppStore;

  constructor(
    private readonly db: Database,
    private readonly rules: { isProduction: boolean },
  ) {
    this.store = new AppStore(db);
  }

  /** Creates a client; the secret (confidential clients only) is in the result and nowhere else. */
  async create(input: CreateAppInput): Promise<{ client: AppSummary; secret: string | null }> {
    const isPublic = input.public ?? false;
    const secret = isPublic ? null : (input.secret ?? newClientSecret());
    const doc = await this.store.create(this.checkedRecord({ ...input, id: input.id ?? randomUUID() }, secret));
    return { client: summarize(doc), secret };
  }

  /**
   * Registers an app in the developer console for `accountId`: never first-party, PKCE always
   * required, at most MAX_APPS_PER_ACCOUNT per account (checked again after the insert, so that
   * parallel registrations cannot pass the cap together).
   */
  async createOwned(
    accountId: number,
    input: Pick<CreateAppInput, 'name' | 'serviceName' | 'redirectUris' | 'scopes' | 'public' | 'grants' | 'backchannelLogoutUri'>,
  ): Promise<{ client: AppSummary; secret: string | null }> {
    if ((await this.store.countOwnedBy(accountId)) >= MAX_APPS_PER_ACCOUNT) throw tooManyApps();
    await this.checkNotReserved([input.name, input.serviceName ?? '']);
    const isPublic = input.public ?? false;
    const secret = isPublic ? null : newClientSecret();
    const doc = await this.store.create({
      ...this.checkedRecord({ ...input, id: randomUUID() }, secret),
      postLogoutRedirectUris: [],
      firstParty: false,
      pkce: 'required',
      ownerAccountId: accountId,
    });
    if ((await this.store.countOwnedBy(accountId)) > MAX_APPS_PER_ACCOUNT) {
      await this.store.delete(doc._id);
      throw tooManyApps();
    }
    return { client: summarize(doc), secret };
  }

  /** A `campus clients` registration, every field checked; the secret (null: none) only as its hash. */
  private checkedRecord(input: CreateAppInput & { id: string }, secret: string | null): AppRecordInput {
    const isPublic = input.public ?? false;
    const grants = checkGrants(input.grants ?? ['authorization_code']);
    return {
      id: input.id,
      name: checkName(input.name),
      secretHash: secret === null ? null : hashClientSecret(secret),
      redirectUris: this.checkRedirectUris(input.redirectUris, grants),
      grants,
      backchannelLogoutUri: this.checkLogoutUri(input.backchannelLogoutUri ?? null),
      postLogoutRedirectUris: this.checkPostLogoutRedirectUris(input.postLogoutRedirectUris ?? []),
      scopes: checkScopes(input.scopes ?? [...DEFAULT_APP_SCOPES]),
      type: isPublic ? 'public' : 'confidential',
      firstParty: input.firstParty ?? false,
      pkce: checkPkce(input.pkce ?? 'required', isPublic),
      ownerAccountId: null,
      serviceName: checkServiceName(input.serviceName ?? null),
    };
  }

  /** The apps an account registered. */
  async listOwnedBy(accountId: number): Promise<AppSummary[]> {
    return (await this.store.listOwnedBy(accountId)).map(summarize);
  }

  /** How many accounts hold a grant for the client (the developer console shows it). */
  async grantingAccounts(id: string): Promise<number> {
    return new OAuthStore(this.db).countGrantingAccounts(id);
  }

  /** Creates or replaces a client with a fixed id and secret (the idempotent demo seed). */
  async put(input: CreateAppInput & { id: string }): Promise<AppSummary> {
    const existing = await this.store.find(input.id);
    const isPublic = input.public ?? false;
    const doc = await this.store.put(
      this.checkedRecord(input, isPublic || !input.secret ? null : input.secret),
      existing?.createdAt ?? new Date(),
    );
    return summarize(doc);
  }

  async list(): Promise<AppSummary[]> {
    return (await this.store.list()).map(summarize);
  }

  async get(id: string, options: AppOwnerOption = {}): Promise<AppSummary> {
    return summarize(await this.mustFind(id, options));
  }

  /**
   * Changes a client. An account's app that was approved goes back to review (its approval is
   * cleared: in testing again when its scopes need approval, src/oauth/login-scopes.ts) when the
   * change reaches past what was approved: a scope needing approval it did not ask for, or a
   * redirect address it did not have (codes would go somewhere the school never saw). Its name,
   * service name, post-logout addresses (they receive no code or token) and fewer scopes or
   * addresses keep the approval.
   */
  async update(id: string, changes: UpdateAppInput, options: AppOwnerOption = {}): Promise<AppSummary> {
    const existing = await this.mustFind(id, options);
    if (existing.ownerAccountId != null) await this.checkNotReserved([changes.name ?? '', changes.serviceName ?? '']);
    const grants = changes.grants === undefined ? undefined : checkGrants(changes.grants);
    // The addresses are checked with the grants they will have (an app left with no way in is refused).
    const redirectUris =
      changes.redirectUris === undefined && grants === undefined
        ? undefined
        : this.checkRedirectUris(changes.redirectUris ?? existing.redirectUris, grants ?? grantsOf(existing));
    const widened =
      changes.scopes !== undefined && changes.scopes.some((s) => SCOPES_NEEDING_APPROVAL.includes(s) && !existing.scopes.includes(s));
    const redirected = redirectUris !== undefined && redirectUris.some((uri) => !existing.redirectUris.includes(uri));
    const updated = await this.store.update(id, {
      ...((widened || redirected) && existing.ownerAccountId != null ? { approvedAt: null, approvedBy: null } : {}),
      ...(changes.name !== undefined ? { name: checkName(changes.name) } : {}),
      ...(redirectUris !== undefined ? { redirectUris } : {}),
      ...(changes.postLogoutRedirectUris !== undefined
        ? { postLogoutRedirectUris: this.checkPostLogoutRedirectUris(changes.postLogoutRedirectUris) }
        : {}),
      ...(changes.scopes !== undefined ? { scopes: checkScopes(changes.scopes) } : {}),
      ...(changes.firstParty !== undefined ? { firstParty: changes.firstParty } : {}),
      ...(changes.pkce !== undefined ? { pkce: checkPkce(changes.pkce, existing.type === 'public') } : {}),
      ...(changes.serviceName !== undefined ? { serviceName: checkServiceName(changes.serviceName) } : {}),
      ...(grants !== undefined ? { grants } : {}),
      ...(changes.backchannelLogoutUri !== undefined ? { backchannelLogoutUri: this.checkLogoutUri(changes.backchannelLogoutUri) } : {}),
    });
    if (!updated) throw unknownClient(id);
    return summarize(updated);
  }

  /** Issues a new secret; the old one stops working at once. Public clients have none. */
  async rotateSecret(id: string, options: AppOwnerOption = {}): Promise<{ client: AppSummary; secret: string }> {
    const doc = await this.mustFind(id, options);
    if (doc.type === 'public') throw new AppValidationError(`Client ${id} is public: it has no secret to rotate.`, 'public_has_no_secret');
    const secret = newClientSecret();
    const updated = await this.store.update(id, { secretHash: hashClientSecret(secret) });
    if (!updated) throw unknownClient(id);
    return { client: summarize(updated), secret };
  }

  /** Deletes a client and every grant, token and code issued to it. */
  async delete(id: string, options: AppOwnerOption = {}): Promise<{ client: AppSummary; revoked: number }> {
    const doc = await this.mustFind(id, options);
    await this.store.delete(id);
    const revoked = await new OAuthStore(this.db).revokeAllOf({ clientId: id });
    return { client: summarize(doc), revoked };
  }

  /**
   * An admin (or an operator: `by` null) approves an app: everyone may sign in to it. Idempotent
   * (an approved app keeps its first approval).
   */
  async approve(id: string, actor: AccessActor, now = new Date()): Promise<{ before: AppSummary; after: AppSummary }> {
    const doc = await this.mustFind(id);
    const updated = doc.approvedAt ? doc : await this.store.update(id, { approvedAt: now, approvedBy: actorId(actor) }, now);
    if (!updated) throw unknownClient(id);
    if (!doc.approvedAt)
      await this.logged(actor, 'APP_APPROVED', doc, { scopes: [...doc.scopes], from: stateOf(doc), to: stateOf(updated) });
    return { before: summarize(doc), after: summarize(updated) };
  }

  /** Writes an app's change to the access log (src/data/accounts/access-log.ts). */
  private async logged(actor: AccessActor, action: AccessAction, doc: OAuthClientDoc, detail: Record<string, unknown>): Promise<void> {
    await new AccessAudit(this.db).record(actor, { action, target: { kind: 'APP', id: doc._id, label: doc.name }, detail });
  }

  /**
   * Disables an app: its authorize answers an error page, its tokens stop at the token endpoint
   * and at userinfo at once (the `oauth` version moves; nothing is revoked, so enabling it again
   * restores what people had allowed).
   */
  async disable(id: string, actor: AccessActor, now = new Date()): Promise<{ before: AppSummary; after: AppSummary }> {
    const doc = await this.mustFind(id);
    if (id === RESERVED_WEB_CLIENT) throw new AppValidationError('The consoles’ own sign-in cannot be disabled.', 'unknown_client', id);
    const updated = doc.disabledAt ? doc : await this.store.update(id, { disabledAt: now, disabledBy: actorId(actor) }, now);
    if (!updated) throw unknownClient(id);
    if (!doc.disabledAt) await this.logged(actor, 'APP_DISABLED', doc, { from: stateOf(doc), to: 'disabled' });
    return { before: summarize(doc), after: summarize(updated) };
  }

  /** Enables a disabled app again. */
  async enable(id: string, actor: AccessActor, now = new Date()): Promise<{ before: AppSummary; after: AppSummary }> {
    const doc = await this.mustFind(id);
    const updated = doc.disabledAt ? await this.store.update(id, { disabledAt: null, disabledBy: null }, now) : doc;
    if (!updated) throw unknownClient(id);
    if (doc.disabledAt) await this.logged(actor, 'APP_ENABLED', doc, { from: 'disabled', to: stateOf(updated) });
    return { before: summarize(doc), after: summarize(updated) };
  }

  /**
   * The app as the authorization rules see it now (src/auth/policy.ts, appAdmits), read at every
   * authorization that has a signed-in account (src/oauth/provider.ts); undefined when there is none.
   */
  async standing(id: string): Promise<AppStanding | undefined> {
    const doc = await this.store.known(id);
    return doc ? { ownerAccountId: doc.ownerAccountId ?? null, state: stateOf(doc) } : undefined;
  }

  /** Whether the app exists and is not disabled (userinfo asks it of every token). */
  async isActive(id: string): Promise<boolean> {
    const doc = await this.store.known(id);
    return doc !== null && !doc.disabledAt;
  }

  /**
   * Refuses a developer-console app's name or service name that reads as one of the school's own
   * apps' (those registered by an operator), compared without invisible and bidirectional
   * characters, case or width.
   */
  private async checkNotReserved(names: string[]): Promise<void> {
    const wanted = names.map(reservedForm).filter(Boolean);
    if (wanted.length === 0) return;
    const school = (await this.store.list()).filter((c) => c.ownerAccountId == null);
    const reserved = new Set(school.flatMap((c) => [reservedForm(c.name), reservedForm(c.serviceName ?? '')]).filter(Boolean));
    const taken = wanted.find((n) => reserved.has(n));
    if (taken)
      throw new AppValidationError(`The name "${taken}" belongs to one of the school's own apps; choose another.`, 'reserved_name', taken);
  }

  /**
   * The provider's view of a client (unknown id: undefined, which the provider answers 401).
   * In production a plain-http redirect address registered elsewhere (e.g. in development) is
   * left out, so it can never receive a code.
   */
  async metadata(id: string): Promise<ClientMetadata | undefined> {
    const doc = await this.store.known(id);
    // A disabled app is unknown to the provider: authorize answers an error page, the token
    // endpoint invalid_client (src/oauth/provider.ts).
    if (!doc || doc.disabledAt) return undefined;
    const metadata = toMetadata(doc);
    if (!this.rules.isProduction) return metadata;
    return {
      ...metadata,
      redirect_uris: (metadata.redirect_uris ?? []).filter(isProductionRedirect),
      post_logout_redirect_uris: postLogoutRedirectUrisOf(doc).filter(isProductionRedirect),
    };
  }

  /** The client; with `ownerAccountId`, only that account's (another's reads as unknown). */
  private async mustFind(id: string, options: AppOwnerOption = {}): Promise<OAuthClientDoc> {
    const doc = await this.store.find(id);
    if (!doc || (options.ownerAccountId !== undefined && doc.ownerAccountId !== options.ownerAccountId)) throw unknownClient(id);
    return doc;
  }

  /**
   * Redirect addresses are compared as exact strings later, so they are checked here: absolute
   * http(s) URLs without a fragment; in production https, or http on a loopback address
   * (native apps listening locally).
   */
  private checkRedirectUris(uris: string[], grants: readonly AppGrant[]): string[] {
    // A device (a screen, a command-line tool) signs in without a browser of its own: it may have none.
    if (uris.length === 0 && !grants.includes('device'))
      throw new AppValidationError(
        'At least one --redirect-uri is required (or --grant device for an app that signs in only by device).',
        'redirect_uri_missing',
      );
    return this.checkUris(uris, 'Redirect URI');
  }

  /**
   * Where logout tokens go (OpenID Connect Back-Channel Logout 1.0, section 2.2: an absolute URL
   * without a fragment): http(s), https in production. Whether its address may be reached is
   * checked at each delivery, as for webhooks (src/events/targets.ts). Empty: none.
   */
  private checkLogoutUri(uri: string | null): string | null {
    const value = uri?.trim() ?? '';
    if (value === '') return null;
    const url = URL.parse(value);
    const refuse = (why: string) => new AppValidationError(`Back-channel logout URI ${value} ${why}.`, 'backchannel_logout_uri', value);
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw refuse('must be an absolute http(s) URL');
    if (url.hash || value.includes('#')) throw refuse('must not have a fragment');
    if (url.username || url.password) throw refuse('must not hold a user name or password');
    if (value.length > MAX_LOGOUT_URI_LENGTH) throw refuse(`must be at most ${MAX_LOGOUT_URI_LENGTH} characters`);
    if (this.rules.isProduction && url.protocol !== 'https:') throw refuse('must use https in production');
    return value;
  }

  /** Addresses RP-initiated logout may return to: the rules of redirect addresses; none is fine. */
  private checkPostLogoutRedirectUris(uris: string[]): string[] {
    return this.checkUris(uris, 'Post-logout redirect URI');
  }

  private checkUris(uris: string[], what: string): string[] {
    const unique = [...new Set(uris)];
    if (unique.length > MAX_REDIRECT_URIS) {
      throw new AppValidationError(`At most ${MAX_REDIRECT_URIS} ${what}s are allowed (got ${unique.length}).`, 'too_many_redirect_uris');
    }
    for (const uri of unique) {
      const url = URL.parse(uri);
      if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
        throw new AppValidationError(`${what} ${uri} must be an absolute http(s) URL.`, 'redirect_uri_invalid', uri);
      }
      if (url.hash || uri.includes('#'))
        throw new AppValidationError(`${what} ${uri} must not have a fragment.`, 'redirect_uri_fragment', uri);
      if (this.rules.isProduction && !isProductionRedirect(uri)) {
        throw new AppValidationError(
          `${what} ${uri} must use https in production (plain http only on a loopback address).`,
          'redirect_uri_not_https',
          uri,
        );
      }
    }
    return unique;
  }
}

/** https, or plain http on a loopback address (a native app listening on the device). */
function isProductionRedirect(uri: string): boolean {
  const url = URL.parse(uri);
  return url !== null && (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)));
}

function actorId(actor: AccessActor): number | null {
  return actor.kind === 'ACCOUNT' ? actor.id : null;
}

/** The id of the consoles' own sign-in client (src/surfaces/web/signin.ts, WEB_CLIENT_ID). */
const RESERVED_WEB_CLIENT = 'campus-web';

/**
 * Invisible characters (format characters: zero-width spaces and joiners, bidirectional marks,
 * embeddings, overrides and isolates, the BOM), which would let a name look like another.
 */
const INVISIBLE = /[\p{Cf}\u115F\u1160\u3164\uFFA0]/gu;

/** A name as names are compared: NFKC, without invisible characters, spaces collapsed, lower case. */
export function reservedForm(name: string): string {
  return name.normalize('NFKC').replace(INVISIBLE, '').replace(/\s+/g, ' ').trim().toLowerCase();
}

function checkName(name: string): string {
  const trimmed = name.replace(INVISIBLE, '').trim();
  if (trimmed.length === 0 || trimmed.length > MAX_APP_NAME_LENGTH)
    throw new AppValidationError(`--name must be 1 to ${MAX_APP_NAME_LENGTH} characters.`, 'name');
  return trimmed;
}

/** An empty service name means none (the login page then names the app). */
function checkServiceName(name: string | null): string | null {
  const trimmed = name?.replace(INVISIBLE, '').trim() ?? '';
  if (trimmed.length === 0) return null;
  if (trimmed.length > MAX_APP_NAME_LENGTH)
    throw new AppValidationError(`The service name must be at most ${MAX_APP_NAME_LENGTH} characters.`, 'service_name');
  return trimmed;
}

function unknownClient(id: string): AppValidationError {
  return new AppValidationError(`No client with id ${id}.`, 'unknown_client', id);
}

function tooManyApps(): AppValidationError {
  return new AppValidationError(`An account may register at most ${MAX_APPS_PER_ACCOUNT} apps; delete one first.`, 'too_many_apps');
}

/** PKCE may be made optional only for a confidential client (RFC 9700 requires it of public ones). */
function checkPkce(policy: string, isPublic: boolean): PkcePolicy {
  if (!(PKCE_POLICIES as readonly string[]).includes(policy))
    throw new AppValidationError(`--pkce must be one of ${PKCE_POLICIES.join(', ')}.`, 'pkce');
  if (policy === 'optional' && isPublic)
    throw new AppValidationError('A public client always requires PKCE: --pkce optional is only for confidential clients.', 'pkce');
  return policy as PkcePolicy;
}

/** Registrations older than the field have none; read them as PKCE required. */
function pkceOf(doc: OAuthClientDoc): PkcePolicy {
  return doc.pkce === 'optional' && doc.type === 'confidential' ? 'optional' : 'required';
}

function postLogoutRedirectUrisOf(doc: OAuthClientDoc): string[] {
  return [...(doc.postLogoutRedirectUris ?? [])];
}

/** The longest back-channel logout address taken (as a webhook's). */
const MAX_LOGOUT_URI_LENGTH = 2000;

function checkGrants(grants: readonly string[]): AppGrant[] {
  const unique = [...new Set(grants)];
  const unknown = unique.filter((g) => !(APP_GRANTS as readonly string[]).includes(g));
  if (unknown.length > 0 || unique.length === 0)
    throw new AppValidationError(
      `--grant must be one or more of ${APP_GRANTS.join(', ')} (got ${unknown.join(', ') || 'none'}).`,
      'grants',
      unknown.join(', '),
    );
  return unique as AppGrant[];
}

/** Registrations older than the field sign people in with a browser only. */
function grantsOf(doc: Pick<OAuthClientDoc, 'grants'>): AppGrant[] {
  const grants = (doc.grants ?? []) as AppGrant[];
  return grants.length > 0 ? [...grants] : ['authorization_code'];
}

/** The grant types and response types of the provider's view of an app (refresh tokens come with every way of signing in). */
function grantMetadata(grants: readonly AppGrant[]): Pick<ClientMetadata, 'grant_types' | 'response_types'> {
  const signsIn = grants.includes('authorization_code');
  return {
    grant_types: [
      ...(signsIn ? ['authorization_code'] : []),
      ...(grants.includes('device') ? ['urn:ietf:params:oauth:grant-type:device_code'] : []),
      'refresh_token',
    ],
    response_types: signsIn ? ['code'] : [],
  };
}

function checkScopes(scopes: string[]): string[] {
  const unknown = scopes.filter((s) => !(OAUTH_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) throw new AppValidationError(`Unknown scope ${unknown.join(', ')}; use ${OAUTH_SCOPES.join(', ')}.`, 'scopes');
  if (scopes.length === 0) throw new AppValidationError(`At least one scope is required (${OAUTH_SCOPES.join(', ')}).`, 'scopes');
  return [...new Set(scopes)];
}

/** Whether an app is disabled, in testing or active (AppSummary.state). */
export function stateOf(doc: Pick<OAuthClientDoc, 'disabledAt' | 'approvedAt' | 'ownerAccountId' | 'scopes'>): AppState {
  if (doc.disabledAt) return 'disabled';
  if (doc.ownerAccountId != null && !doc.approvedAt && doc.scopes.some((s) => SCOPES_NEEDING_APPROVAL.includes(s))) return 'testing';
  return 'active';
}

function summarize(doc: OAuthClientDoc): AppSummary {
  return {
    id: doc._id,
    name: doc.name,
    type: doc.type,
    firstParty: doc.firstParty,
    pkce: pkceOf(doc),
    redirectUris: [...doc.redirectUris],
    postLogoutRedirectUris: postLogoutRedirectUrisOf(doc),
    scopes: [...doc.scopes],
    ownerAccountId: doc.ownerAccountId ?? null,
    serviceName: doc.serviceName ?? null,
    grants: grantsOf(doc),
    backchannelLogoutUri: doc.backchannelLogoutUri ?? null,
    state: stateOf(doc),
    approvedAt: doc.approvedAt ?? null,
    disabledAt: doc.disabledAt ?? null,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

/** Maps a registration to oidc-provider client metadata. The secret field holds the hash. */
function toMetadata(doc: OAuthClientDoc): ClientMetadata {
  const isPublic = doc.type === 'public';
  return {
    client_id: doc._id,
    client_name: doc.name,
    ...(isPublic || !doc.secretHash ? {} : { client_secret: doc.secretHash }),
    redirect_uris: [...doc.redirectUris],
    post_logout_redirect_uris: postLogoutRedirectUrisOf(doc),
    ...grantMetadata(grantsOf(doc)),
    // The logout token names the sign-in (`sid`), which the app then finds in its ID tokens.
    ...(doc.backchannelLogoutUri ? { backchannel_logout_uri: doc.backchannelLogoutUri, backchannel_logout_session_required: true } : {}),
    token_endpoint_auth_method: isPublic ? 'none' : 'client_secret_basic',
    application_type: 'web',
    [FIRST_PARTY]: doc.firstParty,
    [ALLOWED_SCOPES]: [...doc.scopes],
    [REQUIRE_PKCE]: pkceOf(doc) === 'required',
    ...(doc.serviceName ? { [SERVICE_NAME]: doc.serviceName } : {}),
  };
}
