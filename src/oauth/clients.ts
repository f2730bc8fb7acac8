import { randomUUID } from 'node:crypto';
import type { ClientMetadata } from 'oidc-provider';
import { ClientStore, type OAuthClientDoc } from '../data/accounts.js';
import type { Database } from '../data/database.js';
import { OAuthStore } from '../data/oauth-store.js';
import { OAUTH_SCOPES, OPENID, SELF_READ, type OAuthScope } from './constants.js';
import { hashClientSecret, newClientSecret } from './secrets.js';

/** Client metadata property (extraClientMetadata) that marks first-party clients. */
export const FIRST_PARTY = 'first_party';
/**
 * Client metadata property listing the scopes a client may request. The standard `scope`
 * metadata cannot hold `self:read` (oidc-provider accepts only OpenID scopes there).
 */
export const ALLOWED_SCOPES = 'allowed_scopes';

/** A client as `campus clients list` shows it; never the secret. */
export interface ClientSummary {
  id: string;
  name: string;
  type: 'confidential' | 'public';
  firstParty: boolean;
  redirectUris: string[];
  scopes: string[];
  createdAt: Date;
  updatedAt: Date;
}

export interface CreateClientInput {
  name: string;
  redirectUris: string[];
  scopes?: string[];
  public?: boolean;
  firstParty?: boolean;
  /** Only the demo seed fixes the id and secret, so the README works as written. */
  id?: string;
  secret?: string;
}

export interface UpdateClientInput {
  name?: string;
  redirectUris?: string[];
  scopes?: string[];
  firstParty?: boolean;
}

/** A client registration the rules refuse; the message says which rule. */
export class ClientValidationError extends Error {
  override name = 'ClientValidationError';
}

/** What the provider needs: a client's metadata by id. */
export interface ClientDirectory {
  metadata(id: string): Promise<ClientMetadata | undefined>;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
export const DEFAULT_CLIENT_SCOPES: readonly OAuthScope[] = [SELF_READ, OPENID];

/** Registers, changes and removes OAuth clients; secrets are returned once and stored hashed. */
export class ClientService implements ClientDirectory {
  private readonly store: ClientStore;

  constructor(
    private readonly db: Database,
    private readonly rules: { isProduction: boolean },
  ) {
    this.store = new ClientStore(db);
  }

  /** Creates a client; the secret (confidential clients only) is in the result and nowhere else. */
  async create(input: CreateClientInput): Promise<{ client: ClientSummary; secret: string | null }> {
    const isPublic = input.public ?? false;
    const secret = isPublic ? null : (input.secret ?? newClientSecret());
    const doc = await this.store.create({
      id: input.id ?? randomUUID(),
      name: checkName(input.name),
      secretHash: secret === null ? null : hashClientSecret(secret),
      redirectUris: this.checkRedirectUris(input.redirectUris),
      scopes: checkScopes(input.scopes ?? [...DEFAULT_CLIENT_SCOPES]),
      type: isPublic ? 'public' : 'confidential',
      firstParty: input.firstParty ?? false,
    });
    return { client: summarize(doc), secret };
  }

  /** Creates or replaces a client with a fixed id and secret (the idempotent demo seed). */
  async put(input: CreateClientInput & { id: string }): Promise<ClientSummary> {
    const existing = await this.store.find(input.id);
    const isPublic = input.public ?? false;
    const doc = await this.store.put(
      {
        id: input.id,
        name: checkName(input.name),
        secretHash: isPublic || !input.secret ? null : hashClientSecret(input.secret),
        redirectUris: this.checkRedirectUris(input.redirectUris),
        scopes: checkScopes(input.scopes ?? [...DEFAULT_CLIENT_SCOPES]),
        type: isPublic ? 'public' : 'confidential',
        firstParty: input.firstParty ?? false,
      },
      existing?.createdAt ?? new Date(),
    );
    return summarize(doc);
  }

  async list(): Promise<ClientSummary[]> {
    return (await this.store.list()).map(summarize);
  }

  async get(id: string): Promise<ClientSummary> {
    return summarize(await this.mustFind(id));
  }

  async update(id: string, changes: UpdateClientInput): Promise<ClientSummary> {
    await this.mustFind(id);
    const updated = await this.store.update(id, {
      ...(changes.name !== undefined ? { name: checkName(changes.name) } : {}),
      ...(changes.redirectUris !== undefined ? { redirectUris: this.checkRedirectUris(changes.redirectUris) } : {}),
      ...(changes.scopes !== undefined ? { scopes: checkScopes(changes.scopes) } : {}),
      ...(changes.firstParty !== undefined ? { firstParty: changes.firstParty } : {}),
    });
    if (!updated) throw new ClientValidationError(`No client with id ${id}.`);
    return summarize(updated);
  }

  /** Issues a new secret; the old one stops working at once. Public clients have none. */
  async rotateSecret(id: string): Promise<{ client: ClientSummary; secret: string }> {
    const doc = await this.mustFind(id);
    if (doc.type === 'public') throw new ClientValidationError(`Client ${id} is public: it has no secret to rotate.`);
    const secret = newClientSecret();
    const updated = await this.store.update(id, { secretHash: hashClientSecret(secret) });
    if (!updated) throw new ClientValidationError(`No client with id ${id}.`);
    return { client: summarize(updated), secret };
  }

  /** Deletes a client and every grant, token and code issued to it. */
  async delete(id: string): Promise<{ client: ClientSummary; revoked: number }> {
    const doc = await this.mustFind(id);
    await this.store.delete(id);
    const revoked = await new OAuthStore(this.db).revokeAllOf({ clientId: id });
    return { client: summarize(doc), revoked };
  }

  /**
   * The provider's view of a client (unknown id: undefined, which the provider answers 401).
   * In production a plain-http redirect address registered elsewhere (e.g. in development) is
   * left out, so it can never receive a code.
   */
  async metadata(id: string): Promise<ClientMetadata | undefined> {
    const doc = await this.store.find(id);
    if (!doc) return undefined;
    const metadata = toMetadata(doc);
    return this.rules.isProduction ? { ...metadata, redirect_uris: metadata.redirect_uris.filter(isProductionRedirect) } : metadata;
  }

  private async mustFind(id: string): Promise<OAuthClientDoc> {
    const doc = await this.store.find(id);
    if (!doc) throw new ClientValidationError(`No client with id ${id}.`);
    return doc;
  }

  /**
   * Redirect addresses are compared as exact strings later, so they are checked here: absolute
   * http(s) URLs without a fragment; in production https, or http on a loopback address
   * (native apps listening locally).
   */
  private checkRedirectUris(uris: string[]): string[] {
    if (uris.length === 0) throw new ClientValidationError('At least one --redirect-uri is required.');
    for (const uri of uris) {
      const url = URL.parse(uri);
      if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
        throw new ClientValidationError(`Redirect URI ${uri} must be an absolute http(s) URL.`);
      }
      if (url.hash || uri.includes('#')) throw new ClientValidationError(`Redirect URI ${uri} must not have a fragment.`);
      if (this.rules.isProduction && !isProductionRedirect(uri)) {
        throw new ClientValidationError(`Redirect URI ${uri} must use https in production (plain http only on a loopback address).`);
      }
    }
    return [...new Set(uris)];
  }
}

/** https, or plain http on a loopback address (a native app listening on the device). */
function isProductionRedirect(uri: string): boolean {
  const url = URL.parse(uri);
  return url !== null && (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)));
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 100) throw new ClientValidationError('--name must be 1 to 100 characters.');
  return trimmed;
}

function checkScopes(scopes: string[]): string[] {
  const unknown = scopes.filter((s) => !(OAUTH_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) throw new ClientValidationError(`Unknown scope ${unknown.join(', ')}; use ${OAUTH_SCOPES.join(', ')}.`);
  if (scopes.length === 0) throw new ClientValidationError(`At least one scope is required (${OAUTH_SCOPES.join(', ')}).`);
  return [...new Set(scopes)];
}

function summarize(doc: OAuthClientDoc): ClientSummary {
  return {
    id: doc._id,
    name: doc.name,
    type: doc.type,
    firstParty: doc.firstParty,
    redirectUris: [...doc.redirectUris],
    scopes: [...doc.scopes],
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
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: isPublic ? 'none' : 'client_secret_basic',
    application_type: 'web',
    [FIRST_PARTY]: doc.firstParty,
    [ALLOWED_SCOPES]: [...doc.scopes],
  };
}
