import { errors, type Adapter, type AdapterPayload, type ClientMetadata } from 'oidc-provider';
import type { OAuthRecordKeys, OAuthStore } from '../data/oauth-store.js';
import { RememberedLookups } from '../data/remembered.js';
import type { ClientDirectory } from './clients.js';

/** Kinds whose first use must be their only use; a second redemption is a replay. */
const SINGLE_USE = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

/** Client registrations remembered per process. */
const MAX_REMEMBERED_CLIENTS = 1000;

/**
 * oidc-provider's storage interface over the data layer, one instance per model name.
 * Clients are read from the client registry (`campus clients`) and remembered until the `oauth`
 * version moves (every change to a client moves it: src/data/accounts.ts), everything else from
 * the OAuth store. The store's clock decides expiry, so tests can move time forward.
 */
export function createAdapterFactory(store: OAuthStore, clients: ClientDirectory): (name: string) => Adapter {
  const remembered = new RememberedLookups(store.versions, 'oauth', MAX_REMEMBERED_CLIENTS, (id: string) => clients.metadata(id));
  return (name) => (name === 'Client' ? new ClientAdapter(remembered) : new StoreAdapter(name, store));
}

class StoreAdapter implements Adapter {
  constructor(
    private readonly kind: string,
    private readonly store: OAuthStore,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void> {
    await this.store.upsert(this.kind, id, payload, expiresIn, indexedKeys(payload));
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const record = await this.store.find(this.kind, id);
    return record ? withConsumed(record.payload, record.consumedAt) : undefined;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const record = await this.store.findBy(this.kind, 'uid', uid);
    return record ? withConsumed(record.payload, record.consumedAt) : undefined;
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const record = await this.store.findBy(this.kind, 'userCode', userCode);
    return record ? withConsumed(record.payload, record.consumedAt) : undefined;
  }

  /**
   * The provider checks `consumed` and then consumes; concurrent redemptions could all pass that
   * check. The store claims the first use with an insert that only one caller can win (see
   * OAuthStore.consume), so exactly one redemption proceeds; every loser is treated like any
   * replay: the grant is revoked and the request fails with invalid_grant.
   */
  async consume(id: string): Promise<void> {
    if (await this.store.consume(this.kind, id)) return;
    if (!SINGLE_USE.has(this.kind)) return;
    const record = await this.store.find(this.kind, id);
    const grantId = record?.payload['grantId'];
    if (typeof grantId === 'string') await this.store.revokeGrant(grantId);
    throw new errors.InvalidGrant(`${describeKind(this.kind)} already used`);
  }

  async destroy(id: string): Promise<void> {
    await this.store.destroy(this.kind, id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.store.revokeByGrantId(this.kind, grantId);
  }
}

/** Clients are registered with the CLI, never through the provider (no dynamic registration). */
class ClientAdapter implements Adapter {
  constructor(private readonly clients: RememberedLookups<string, ClientMetadata>) {}

  async find(id: string): Promise<ClientMetadata | undefined> {
    return this.clients.get(id);
  }

  async upsert(): Promise<void> {
    throw new Error('clients are managed with `campus clients`');
  }

  async destroy(): Promise<void> {
    throw new Error('clients are managed with `campus clients`');
  }

  async consume(): Promise<void> {}
  async findByUid(): Promise<undefined> {
    return undefined;
  }
  async findByUserCode(): Promise<undefined> {
    return undefined;
  }
  async revokeByGrantId(): Promise<void> {}
}

function withConsumed(payload: Record<string, unknown>, consumedAt: number | null): AdapterPayload {
  return consumedAt === null ? payload : { ...payload, consumed: consumedAt };
}

/** Copies the fields the store queries by out of the provider's payload. */
function indexedKeys(payload: AdapterPayload): OAuthRecordKeys {
  const params = asRecord(payload['params']);
  const session = asRecord(payload['session']);
  return {
    grantId: stringOr(payload.grantId),
    uid: stringOr(payload.uid),
    userCode: stringOr(payload.userCode),
    clientId: stringOr(payload.clientId) ?? stringOr(params?.['client_id']),
    accountId: stringOr(payload.accountId) ?? stringOr(session?.['accountId']),
  };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function describeKind(kind: string): string {
  return kind === 'AuthorizationCode' ? 'authorization code' : kind === 'RefreshToken' ? 'refresh token' : kind;
}
