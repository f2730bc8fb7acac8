import type { Database } from '../database.js';
import type { AppGrant, ClientType, OAuthClientDoc, PkcePolicy } from '../models/oauth-client.model.js';
import type { ApiScope } from '../models/api-key.model.js';
import { isDuplicateKey } from '../platform/errors.js';
import { cacheTarget } from '../platform/versions.js';
import { RememberedLookups } from '../platform/remembered.js';
import { deleteLogoutNoticesOf } from '../events/logout-notices.js';

export {
  APP_GRANTS,
  CLIENT_TYPES,
  PKCE_POLICIES,
  type AppGrant,
  type ClientType,
  type OAuthClientDoc,
  type PkcePolicy,
} from '../models/oauth-client.model.js';

/** What a client registration holds (the secret only as a hash). */
export interface AppRecordInput {
  id: string;
  name: string;
  secretHash: string | null;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  scopes: string[];
  type: ClientType;
  firstParty: boolean;
  pkce: PkcePolicy;
  /** The account that registered it in the developer console (null: `campus clients`). */
  ownerAccountId?: number | null;
  /** The service named on the login page (null: the app's name). */
  serviceName?: string | null;
  /** When and by whom (an account id; null: an operator) the app was disabled or approved. */
  disabledAt?: Date | null;
  disabledBy?: number | null;
  approvedAt?: Date | null;
  approvedBy?: number | null;
  /** How the app gets tokens (absent: a person's sign-in only). */
  grants?: AppGrant[];
  /** Machine tokens: the data scopes asked for, an admin's decisions, the purpose, the grant every token carries. */
  dataScopes?: ApiScope[];
  approvedDataScopes?: ApiScope[];
  refusedDataScopes?: ApiScope[];
  dataPurpose?: string | null;
  machineGrantId?: string | null;
  /** Where the app's server receives logout tokens (null: nowhere). */
  backchannelLogoutUri?: string | null;
}

/** Clients remembered per process and database handle (AppStore.known). */
const MAX_REMEMBERED_CLIENTS = 1000;
const rememberedClients = new WeakMap<Database, RememberedLookups<string, OAuthClientDoc>>();

/**
 * OAuth client records. Secrets are generated and hashed in oauth/. Every change moves the
 * `oauth` version naming the client, which the authorization server's remembered clients rest on
 * (src/oauth/adapter.ts).
 */
export class AppStore {
  constructor(private readonly db: Database) {}

  async create(input: AppRecordInput, now = new Date()): Promise<OAuthClientDoc> {
    const doc = recordOf(input, now);
    await this.db.models.oauthClients.create(doc);
    return doc;
  }

  /**
   * Creates or replaces a client with a fixed id (the demo seed, our pages' client), keeping it
   * idempotent. Every `campus serve` puts its pages' client at start-up, so two instances starting
   * at once race to create it: one upsert inserts it and the other fails on the duplicate `_id`
   * (MongoDB and FerretDB alike); the client now exists, so that second write is made again, as a
   * replacement (test/apps/app-store.integration.test.ts).
   */
  async put(input: AppRecordInput, now = new Date()): Promise<OAuthClientDoc> {
    const doc = recordOf(input, now);
    const write = () => this.db.models.oauthClients.replaceOne({ _id: input.id }, doc, { upsert: true });
    try {
      await write();
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      await write();
    }
    await this.db.versions.bump('oauth', [cacheTarget.client(input.id)]);
    return doc;
  }

  async find(id: string): Promise<OAuthClientDoc | null> {
    return this.db.models.oauthClients.findOne({ _id: id }).lean<OAuthClientDoc>();
  }

  /**
   * The client as the authorization path reads it (every authorization asks whether the app admits
   * the person, userinfo whether it is active), remembered per process until a change names it.
   */
  async known(id: string): Promise<OAuthClientDoc | null> {
    let lookups = rememberedClients.get(this.db);
    if (!lookups) {
      lookups = new RememberedLookups(
        this.db.versions,
        'oauth',
        MAX_REMEMBERED_CLIENTS,
        async (clientId: string) => (await this.find(clientId)) ?? undefined,
        (clientId) => [cacheTarget.client(clientId)],
      );
      rememberedClients.set(this.db, lookups);
    }
    return (await lookups.get(id)) ?? null;
  }

  async list(): Promise<OAuthClientDoc[]> {
    return this.db.models.oauthClients.find({}).sort({ createdAt: 1, _id: 1 }).lean<OAuthClientDoc[]>();
  }

  async update(id: string, changes: Partial<Omit<AppRecordInput, 'id'>>, now = new Date()): Promise<OAuthClientDoc | null> {
    const result = await this.db.models.oauthClients.updateOne({ _id: id }, { $set: { ...changes, updatedAt: now } });
    if (result.matchedCount !== 1) return null;
    await this.db.versions.bump('oauth', [cacheTarget.client(id)]);
    return this.find(id);
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.db.models.oauthClients.deleteOne({ _id: id });
    // What it was told of people's sign-outs goes with it.
    await deleteLogoutNoticesOf(this.db, id);
    if (result.deletedCount === 1) await this.db.versions.bump('oauth', [cacheTarget.client(id)]);
    return result.deletedCount === 1;
  }

  /** The clients an account registered, oldest first. */
  async listOwnedBy(accountId: number): Promise<OAuthClientDoc[]> {
    return this.db.models.oauthClients.find({ ownerAccountId: accountId }).sort({ createdAt: 1, _id: 1 }).lean<OAuthClientDoc[]>();
  }

  async countOwnedBy(accountId: number): Promise<number> {
    return this.db.models.oauthClients.countDocuments({ ownerAccountId: accountId });
  }

  /** The clients with these ids (for naming the apps that hold grants). */
  async findByIds(ids: string[]): Promise<OAuthClientDoc[]> {
    if (ids.length === 0) return [];
    return this.db.models.oauthClients.find({ _id: { $in: ids } }).lean<OAuthClientDoc[]>();
  }
}

const STATE_DEFAULTS = { disabledAt: null, disabledBy: null, approvedAt: null, approvedBy: null };

/** The stored document of a new registration: no decision taken yet, no data scope unless asked. */
function recordOf(input: AppRecordInput, now: Date): OAuthClientDoc {
  return {
    _id: input.id,
    ...STATE_DEFAULTS,
    ...withoutId(input),
    dataScopes: input.dataScopes ?? [],
    approvedDataScopes: input.approvedDataScopes ?? [],
    refusedDataScopes: input.refusedDataScopes ?? [],
    backchannelLogoutUri: input.backchannelLogoutUri ?? null,
    createdAt: now,
    updatedAt: now,
  };
}

function withoutId(input: AppRecordInput): Omit<AppRecordInput, 'id'> {
  const { id: _id, ...rest } = input;
  return rest;
}
