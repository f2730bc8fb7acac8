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
import { API_SCOPES, MAX_PURPOSE_LENGTH, type ApiScope } from '../data/keys/store.js';
import { findStanding, standingsOf } from '../data/accounts/standing.js';
import type { Database } from '../data/database.js';
import { OAuthStore } from '../data/accounts/oauth-records.js';
import { OAUTH_SCOPES, OPENID, SELF_READ, type OAuthScope } from './constants.js';
import { EMAIL, PROFILE, SCOPES_NEEDING_APPROVAL } from './login-scopes.js';
import { AccessAudit, type AccessAction, type AccessActor } from '../data/accounts/access-log.js';
import { hashClientSecret, newClientSecret } from './secrets.js';
import { BadRequestError } from '../errors/index.js';
import { appScopes, splitKeyRequest, type AccountStanding, type AppStanding, type KeyScopes, type PolicySettings } from '../auth/policy.js';

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
  /** How the app gets tokens: a person in a browser (`authorization_code`), by device (`device`), machine tokens (`client_credentials`). */
  grants: AppGrant[];
  /** The data scopes its machine tokens asked for; where each stands: `dataScopeStates`. */
  dataScopes: ApiScope[];
  approvedDataScopes: ApiScope[];
  refusedDataScopes: ApiScope[];
  /** What the owner wrote the data is for (null: nothing needed approval). */
  dataPurpose: string | null;
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
  /** Default: a person's sign-in only (`authorization_code`). */
  grants?: AppGrant[];
  /** With `client_credentials`: the data scopes of its machine tokens (at least one). */
  dataScopes?: ApiScope[];
  /** Why the data is needed: required of an account's app when a scope awaits approval. */
  dataPurpose?: string | null;
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
  dataScopes?: ApiScope[];
  dataPurpose?: string | null;
  backchannelLogoutUri?: string | null;
}

/** What an app's machine tokens rest on, as the token endpoint and the data API read it (AppService.machineStanding). */
export interface MachineStanding {
  /** Registered for client_credentials. */
  readonly issues: boolean;
  readonly disabled: boolean;
  readonly ownerAccountId: number | null;
  /** Its data scopes: asked for, approved, refused (src/auth/policy.ts, appScopes). */
  readonly scopes: { readonly requested: ApiScope[]; readonly approved: ApiScope[]; readonly refused: ApiScope[] };
  /** The machine grant every valid token carries as `gid` (null: none issued yet). */
  readonly grantId: string | null;
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
  | 'data_scopes'
  | 'purpose'
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
    private readonly rules: { isProduction: boolean; policy?: PolicySettings },
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
    input: Pick<
      CreateAppInput,
      'name' | 'serviceName' | 'redirectUris' | 'scopes' | 'public' | 'grants' | 'dataScopes' | 'dataPurpose' | 'backchannelLogoutUri'
    >,
  ): Promise<{ client: AppSummary; secret: string | null }> {
    if ((await this.store.countOwnedBy(accountId)) >= MAX_APPS_PER_ACCOUNT) throw tooManyApps();
    await this.checkNotReserved([input.name, input.serviceName ?? '']);
    const isPublic = input.public ?? false;
    const secret = isPublic ? null : newClientSecret();
    const record = this.checkedRecord({ ...input, id: randomUUID() }, secret);
    await this.checkOwnedDataScopes(accountId, record.dataScopes ?? [], record.dataPurpose ?? null);
    const doc = await this.store.create({
      ...record,
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
    const grants = checkGrants(input.grants ?? ['authorization_code'], isPublic);
    // People sign in (and login scopes apply) in a browser or on a device; machine tokens need neither.
    const signsIn = grants.includes('authorization_code') || grants.includes('device');
    const machine = grants.includes('client_credentials');
    return {
      id: input.id,
      name: checkName(input.name),
      secretHash: secret === null ? null : hashClientSecret(secret),
      redirectUris: this.checkRedirectUris(input.redirectUris, grants),
      backchannelLogoutUri: this.checkLogoutUri(input.backchannelLogoutUri ?? null),
      postLogoutRedirectUris: this.checkPostLogoutRedirectUris(input.postLogoutRedirectUris ?? []),
      // Login scopes are what a person's sign-in releases: an app of machine tokens only has none.
      scopes: signsIn ? checkScopes(input.scopes ?? [...DEFAULT_APP_SCOPES]) : [],
      type: isPublic ? 'public' : 'confidential',
      firstParty: input.firstParty ?? false,
      pkce: checkPkce(input.pkce ?? 'required', isPublic),
      ownerAccountId: null,
      serviceName: checkServiceName(input.serviceName ?? null),
      grants,
      dataScopes: checkDataScopes(input.dataScopes ?? [], machine),
      approvedDataScopes: [],
      refusedDataScopes: [],
      dataPurpose: checkPurpose(input.dataPurpose ?? null),
      machineGrantId: machine ? randomUUID() : null,
    };
  }

  /**
   * An account's app asks for data scopes as its owner's keys would (src/auth/policy.ts,
   * splitKeyRequest): a scope the owner's role may not ask for is refused, and one that awaits an
   * admin's approval needs a purpose. What it reads is worked out at each use (appScopes).
   */
  private async checkOwnedDataScopes(accountId: number, scopes: readonly ApiScope[], purpose: string | null): Promise<void> {
    if (scopes.length === 0) return;
    const owner = await findStanding(this.db, accountId);
    if (!owner) throw unknownClient(String(accountId));
    const split = splitKeyRequest(owner, scopes, this.policy());
    if (split.refused.length > 0)
      throw new AppValidationError(
        `An account with the role ${owner.role} may not ask for ${split.refused.join(', ')}.`,
        'data_scopes',
        split.refused.join(', '),
      );
    if (split.pending.length > 0 && !purpose)
      throw new AppValidationError(
        `${split.pending.join(', ')} needs an administrator's approval: write what you need the data for (the purpose).`,
        'purpose',
        split.pending.join(', '),
      );
  }

  private policy(): PolicySettings {
    if (!this.rules.policy) throw new Error('AppService needs the scope policy (config.policy) for data scopes');
    return this.rules.policy;
  }

  /**
   * Where each data scope of these apps stands now (src/auth/policy.ts, appScopes), their owners'
   * standings read together: what the machine tokens read, what awaits approval, what is refused.
   */
  async dataScopeStates(apps: readonly AppSummary[]): Promise<Map<string, KeyScopes>> {
    const owners = await standingsOf(
      this.db,
      apps.flatMap((app) => (app.ownerAccountId === null ? [] : [app.ownerAccountId])),
    );
    return new Map(apps.map((app) => [app.id, appScopes(dataScopeRecord(app), ownerOf(app.ownerAccountId, owners), this.policy())]));
  }

  /**
   * An admin (or an operator) decides an app's data scopes awaiting approval, as a key's are
   * decided: approved ones join what its machine tokens read at once, refused ones stay refused.
   * Refused with 400 when nothing awaits.
   */
  async decideDataScopes(
    id: string,
    approve: boolean,
    actor: AccessActor,
    now = new Date(),
  ): Promise<{ before: AppSummary; after: AppSummary; decided: ApiScope[] }> {
    const doc = await this.mustFind(id);
    const before = summarize(doc);
    const pending = (await this.dataScopeStates([before])).get(id)?.pending ?? [];
    if (pending.length === 0) throw new AppValidationError(`Client ${id} has no data scope awaiting approval.`, 'data_scopes');
    const updated = await this.store.update(
      id,
      approve
        ? { approvedDataScopes: [...before.approvedDataScopes, ...pending] }
        : { refusedDataScopes: [...before.refusedDataScopes, ...pending] },
      now,
    );
    if (!updated) throw unknownClient(id);
    await this.logged(actor, approve ? 'APP_DATA_SCOPES_APPROVED' : 'APP_DATA_SCOPES_REFUSED', doc, { scopes: pending });
    return { before, after: summarize(updated), decided: [...pending] };
  }

  /**
   * Revokes every machine token of the app at once, everywhere: each carries the app's machine
   * grant (`gid`), and a new one is written (the data API reads it as it reads the app's state).
   */
  async revokeMachineTokens(id: string, options: AppOwnerOption = {}): Promise<AppSummary> {
    const doc = await this.mustFind(id, options);
    if (!grantsOf(doc).includes('client_credentials'))
      throw new AppValidationError(`Client ${id} has no machine tokens: it was not registered for client_credentials.`, 'grants', id);
    const updated = await this.store.update(id, { machineGrantId: randomUUID() });
    if (!updated) throw unknownClient(id);
    return summarize(updated);
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
    const machine = await this.checkedMachineChanges(existing, changes);
    const grants = machine.grants ?? grantsOf(existing);
    // People sign in (and login scopes apply) in a browser or on a device; machine tokens need neither.
    const signsIn = grants.includes('authorization_code') || grants.includes('device');
    // The addresses are checked with the grants they will have (an app left with no way in is refused).
    const redirectUris =
      changes.redirectUris === undefined && machine.grants === undefined
        ? undefined
        : this.checkRedirectUris(changes.redirectUris ?? existing.redirectUris, grants);
    // An app that comes to sign people in has login scopes (the default ones unless given); one left
    // with machine tokens only has none.
    const scopes = !signsIn
      ? []
      : changes.scopes !== undefined
        ? checkScopes(changes.scopes)
        : existing.scopes.length === 0
          ? [...DEFAULT_APP_SCOPES]
          : undefined;
    const widened = scopes !== undefined && scopes.some((s) => SCOPES_NEEDING_APPROVAL.includes(s) && !existing.scopes.includes(s));
    const redirected = redirectUris !== undefined && redirectUris.some((uri) => !existing.redirectUris.includes(uri));
    const updated = await this.store.update(id, {
      ...((widened || redirected) && existing.ownerAccountId != null ? { approvedAt: null, approvedBy: null } : {}),
      ...(changes.name !== undefined ? { name: checkName(changes.name) } : {}),
      ...(redirectUris !== undefined ? { redirectUris } : {}),
      ...(changes.postLogoutRedirectUris !== undefined
        ? { postLogoutRedirectUris: this.checkPostLogoutRedirectUris(changes.postLogoutRedirectUris) }
        : {}),
      ...(scopes !== undefined ? { scopes } : {}),
      ...(changes.firstParty !== undefined ? { firstParty: changes.firstParty } : {}),
      ...(changes.pkce !== undefined ? { pkce: checkPkce(changes.pkce, existing.type === 'public') } : {}),
      ...(changes.serviceName !== undefined ? { serviceName: checkServiceName(changes.serviceName) } : {}),
      ...machine,
      ...(changes.backchannelLogoutUri !== undefined ? { backchannelLogoutUri: this.checkLogoutUri(changes.backchannelLogoutUri) } : {}),
    });
    if (!updated) throw unknownClient(id);
    return summarize(updated);
  }

  /**
   * The grants, data scopes and purpose of an update, checked together against what the app will
   * be: data scopes go with `client_credentials` (a public client cannot have it), an account's
   * app asks for them under its owner's policy, and an app given the grant gets its machine grant.
   */
  private async checkedMachineChanges(existing: OAuthClientDoc, changes: UpdateAppInput): Promise<Partial<AppRecordInput>> {
    if (changes.grants === undefined && changes.dataScopes === undefined && changes.dataPurpose === undefined) return {};
    const grants = checkGrants(changes.grants ?? grantsOf(existing), existing.type === 'public');
    const machine = grants.includes('client_credentials');
    const dataScopes = checkDataScopes(changes.dataScopes ?? (machine ? dataScopesOf(existing) : []), machine);
    const dataPurpose = changes.dataPurpose === undefined ? (existing.dataPurpose ?? null) : checkPurpose(changes.dataPurpose);
    if (existing.ownerAccountId != null) {
      const added = dataScopes.filter((s) => !dataScopesOf(existing).includes(s));
      await this.checkOwnedDataScopes(existing.ownerAccountId, added, dataPurpose);
    }
    return {
      grants,
      dataScopes,
      dataPurpose,
      ...(machine && !existing.machineGrantId ? { machineGrantId: randomUUID() } : {}),
    };
  }

  /** Issues a new secret; the old one stops working at once. Public clients have none. */
  async rotateSecret(id: string, options: AppOwnerOption = {}): Promise<{ client: AppSummary; secret: string }> {
    const doc = await this.mustFind(id, options);
    if (doc.type === 'public') throw new AppValidationError(`Client ${id} is public: it has no secret to rotate.`, 'public_has_no_secret');
    const secret = newClientSecret();
    // Machine tokens minted with the old secret go with it.
    const machine = grantsOf(doc).includes('client_credentials') ? { machineGrantId: randomUUID() } : {};
    const updated = await this.store.update(id, { secretHash: hashClientSecret(secret), ...machine });
    if (!updated) throw unknownClient(id);
    return { client: summarize(updated), secret };
  }

  /** Deletes a client and every grant, token and code issued to it. */
  async delete(id: string, options: AppOwnerOption = {}): Promise<{ client: AppSummary; revoked: number }> {
    const doc = await this.mustFind(id, options);
    await this.store.delete(id);
    const revoked = await new OAuthStore(this.db).revokeAllOf({ clientId: id });
    // Its machine tokens' requests per day go with it (counted as `app:<id>`, src/http/usage.ts).
    await this.db.models.apiKeyUsage.deleteMany({ keyId: machineUsageId(id) });
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
    // Approving an app approves what its machine tokens wait for too (each decision in the access log).
    if (dataScopesOf(updated).length > 0 && this.rules.policy) {
      const pending = (await this.dataScopeStates([summarize(updated)])).get(id)?.pending ?? [];
      if (pending.length > 0) return { before: summarize(doc), after: (await this.decideDataScopes(id, true, actor, now)).after };
    }
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

  /**
   * What an app's machine tokens rest on (src/oauth/machine-tokens.ts), remembered per process
   * until a change names the app (disabling it, revoking its tokens, changing its scopes); undefined
   * when there is no such app.
   */
  async machineStanding(id: string): Promise<MachineStanding | undefined> {
    const doc = await this.store.known(id);
    if (!doc) return undefined;
    const app = summarize(doc);
    return {
      issues: app.grants.includes('client_credentials'),
      disabled: doc.disabledAt != null,
      ownerAccountId: app.ownerAccountId,
      scopes: dataScopeRecord(app),
      grantId: doc.machineGrantId ?? null,
    };
  }

  /**
   * The machine grant a new token carries, read from the database itself rather than remembered:
   * a process that has not yet heard of a revocation (at most a second) must not stamp a new
   * token with the grant it replaced, which every other process already refuses.
   */
  async currentMachineGrant(id: string): Promise<string | null> {
    return (await this.store.find(id))?.machineGrantId ?? null;
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
    // A device (a screen, a command-line tool) signs in without a browser of its own, and machine
    // tokens need no sign-in: only an app whose people sign in in a browser alone needs an address.
    if (uris.length === 0 && grants.includes('authorization_code') && !grants.includes('device'))
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

/** The grants of a registration: at least one; `client_credentials` only for a confidential app (it authenticates with its secret). */
function checkGrants(grants: readonly string[], isPublic: boolean): AppGrant[] {
  const unique = [...new Set(grants)];
  const unknown = unique.filter((g) => !(APP_GRANTS as readonly string[]).includes(g));
  if (unknown.length > 0 || unique.length === 0)
    throw new AppValidationError(
      `--grant must be one or more of ${APP_GRANTS.join(', ')} (got ${unknown.join(', ') || 'none'}).`,
      'grants',
    );
  if (isPublic && unique.includes('client_credentials'))
    throw new AppValidationError('A public client has no secret: client_credentials is only for confidential apps.', 'grants');
  return unique as AppGrant[];
}

/** Machine tokens need at least one data scope; an app without the grant has none. */
function checkDataScopes(scopes: readonly string[], machine: boolean): ApiScope[] {
  const unique = [...new Set(scopes.map((s) => s.trim().toUpperCase()).filter(Boolean))];
  const unknown = unique.filter((s) => !(API_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0)
    throw new AppValidationError(
      `Unknown data scope ${unknown.join(', ')}; use ${API_SCOPES.join(', ')}.`,
      'data_scopes',
      unknown.join(', '),
    );
  if (!machine && unique.length > 0)
    throw new AppValidationError('Data scopes are for machine tokens: register the app with the client_credentials grant.', 'data_scopes');
  if (machine && unique.length === 0)
    throw new AppValidationError(`Machine tokens need at least one data scope (${API_SCOPES.join(', ')}).`, 'data_scopes');
  return unique as ApiScope[];
}

function checkPurpose(purpose: string | null): string | null {
  const trimmed = purpose?.trim() ?? '';
  if (trimmed.length > MAX_PURPOSE_LENGTH)
    throw new AppValidationError(`The purpose must be at most ${MAX_PURPOSE_LENGTH} characters.`, 'purpose');
  return trimmed || null;
}

/** Registrations older than the field sign people in with a browser only. */
function grantsOf(doc: Pick<OAuthClientDoc, 'grants'>): AppGrant[] {
  const grants = (doc.grants ?? []) as AppGrant[];
  return grants.length > 0 ? [...grants] : ['authorization_code'];
}

function dataScopesOf(doc: Pick<OAuthClientDoc, 'dataScopes'>): ApiScope[] {
  return [...((doc.dataScopes ?? []) as ApiScope[])];
}

/** The id an app's machine tokens are budgeted and counted under, beside the keys' record ids. */
export function machineUsageId(clientId: string): string {
  return `app:${clientId}`;
}

/** What the policy reads of an app's data scopes (src/auth/policy.ts, appScopes). */
export function dataScopeRecord(app: Pick<AppSummary, 'dataScopes' | 'approvedDataScopes' | 'refusedDataScopes'>): {
  requested: ApiScope[];
  approved: ApiScope[];
  refused: ApiScope[];
} {
  return { requested: app.dataScopes, approved: app.approvedDataScopes, refused: app.refusedDataScopes };
}

/** The owner's standing of an app: null for an operator's; a gone owner reads as disabled (nothing). */
export function ownerOf(ownerAccountId: number | null, owners: ReadonlyMap<number, AccountStanding>): AccountStanding | null {
  if (ownerAccountId === null) return null;
  return owners.get(ownerAccountId) ?? { id: ownerAccountId, role: 'USER', disabled: true, secondFactor: false };
}

/** The grant types and response types of the provider's view of an app (refresh tokens come with every way a person signs in). */
function grantMetadata(grants: readonly AppGrant[]): Pick<ClientMetadata, 'grant_types' | 'response_types'> {
  const browser = grants.includes('authorization_code');
  const device = grants.includes('device');
  return {
    grant_types: [
      ...(browser ? ['authorization_code'] : []),
      ...(device ? ['urn:ietf:params:oauth:grant-type:device_code'] : []),
      ...(browser || device ? ['refresh_token'] : []),
      ...(grants.includes('client_credentials') ? ['client_credentials'] : []),
    ],
    response_types: browser ? ['code'] : [],
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
    dataScopes: dataScopesOf(doc),
    approvedDataScopes: [...((doc.approvedDataScopes ?? []) as ApiScope[])],
    refusedDataScopes: [...((doc.refusedDataScopes ?? []) as ApiScope[])],
    dataPurpose: doc.dataPurpose ?? null,
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
