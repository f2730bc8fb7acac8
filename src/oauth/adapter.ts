import { AsyncLocalStorage } from 'node:async_hooks';
import Provider, { errors, type Adapter, type AdapterPayload, type ClientMetadata, type KoaContextWithOIDC } from 'oidc-provider';
import type { OAuthRecordKeys, OAuthStore } from '../data/accounts/oauth-records.js';
import type { AppDirectory } from './apps.js';
import { LIFETIMES, SESSION_DEVICE } from './constants.js';

/** Kinds whose first use must be their only use; a second redemption is a replay. */
const SINGLE_USE = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

/**
 * Refresh tokens used at the token endpoint whose claim waits for their successor (see
 * StoreAdapter.consume), by request: oidc-provider keeps each request's context in
 * AsyncLocalStorage (`Provider.ctx`), and its refresh grant consumes the presented token and then
 * saves the new one, in that order, in the same request.
 */
const pendingRotations = new WeakMap<KoaContextWithOIDC, string>();

/** The context of a token endpoint request under way, if this call is part of one. */
function tokenRequest(): KoaContextWithOIDC | undefined {
  const ctx = Provider.ctx;
  return ctx?.oidc.route === 'token' ? ctx : undefined;
}

/**
 * The interactions a step of our login pages has read or written, within that one request
 * (src/surfaces/web/login.ts runs each step in `withInteractionMemo`): the provider reads an
 * interaction for its details and again when the step finishes it, and saves one it has just read;
 * within a request the second read is the first one's answer, and the save replaces what is known
 * to exist. Never across requests: another process may change the interaction in between.
 */
const interactionMemo = new AsyncLocalStorage<Map<string, AdapterPayload | null>>();

/** Runs `step` (one request of the login pages) with a memo of the interactions it reads and writes. */
export function withInteractionMemo<T>(step: () => Promise<T>): Promise<T> {
  return interactionMemo.run(new Map(), step);
}

/**
 * oidc-provider's storage interface over the data layer, one instance per model name. Clients are
 * read from the client registry (`campus clients`), which remembers them until a change names the
 * client (src/data/accounts/store.ts, AppStore.known); everything else from the OAuth store. The
 * store's clock decides expiry, so tests can move time forward.
 */
export function createAdapterFactory(store: OAuthStore, clients: AppDirectory): (name: string) => Adapter {
  return (name) => (name === 'Client' ? new ClientAdapter(clients) : new StoreAdapter(name, store));
}

class StoreAdapter implements Adapter {
  constructor(
    private readonly kind: string,
    private readonly store: OAuthStore,
  ) {}

  /** Saves a record; the successor of a refresh token used in this request is saved with its claim (see consume). */
  async upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void> {
    const memo = this.kind === 'Interaction' ? interactionMemo.getStore() : undefined;
    if (memo) {
      const exists = memo.get(id) != null;
      memo.set(id, payload);
      return this.store.upsert(this.kind, id, payload, expiresIn, indexedKeys(payload), { exists });
    }
    if (this.kind === 'Session') payload = withDevice(payload, Provider.ctx);
    const ctx = this.kind === 'RefreshToken' ? tokenRequest() : undefined;
    const used = ctx && pendingRotations.get(ctx);
    if (!ctx || used === undefined) return this.store.upsert(this.kind, id, payload, expiresIn, indexedKeys(payload));
    pendingRotations.delete(ctx);
    const next = { id, payload, expiresInSeconds: expiresIn, keys: indexedKeys(payload) };
    const outcome = await this.store.rotate(this.kind, used, next, LIFETIMES.refreshRetryGrace);
    if (outcome === 'gone') throw new errors.InvalidGrant('refresh token not found');
    if (outcome === 'reused') {
      if (typeof payload.grantId === 'string') await this.store.revokeGrant(payload.grantId);
      throw new errors.InvalidGrant('refresh token already used');
    }
  }

  /**
   * At the token endpoint a refresh token's claim is not read: the claim's insert finds reuse by
   * itself (see consume), which saves a read on every refresh. Elsewhere (introspection) a used
   * token must show as used, so its claim is read.
   */
  async find(id: string): Promise<AdapterPayload | undefined> {
    const memo = this.kind === 'Interaction' ? interactionMemo.getStore() : undefined;
    if (memo?.has(id)) return memo.get(id) ?? undefined;
    const claim = !(this.kind === 'RefreshToken' && tokenRequest());
    const record = await this.store.find(this.kind, id, { claim });
    const payload = record ? withConsumed(record.payload, record.consumedAt) : undefined;
    memo?.set(id, payload ?? null);
    return payload;
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
   *
   * A refresh token used at the token endpoint is claimed together with its successor, when the
   * provider saves that (upsert, OAuthStore.rotate): one write for the two, and the claim names
   * the successor, so that a retry whose answer was lost can be told from reuse.
   */
  async consume(id: string): Promise<void> {
    const ctx = this.kind === 'RefreshToken' ? tokenRequest() : undefined;
    if (ctx) {
      pendingRotations.set(ctx, id);
      return;
    }
    if (await this.store.consume(this.kind, id)) return;
    if (!SINGLE_USE.has(this.kind)) return;
    const record = await this.store.find(this.kind, id);
    const grantId = record?.payload['grantId'];
    if (typeof grantId === 'string') await this.store.revokeGrant(grantId);
    throw new errors.InvalidGrant(`${describeKind(this.kind)} already used`);
  }

  async destroy(id: string): Promise<void> {
    if (this.kind === 'Interaction') interactionMemo.getStore()?.set(id, null);
    await this.store.destroy(this.kind, id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.store.revokeByGrantId(this.kind, grantId);
  }
}

/** Clients are registered with the CLI, never through the provider (no dynamic registration). */
class ClientAdapter implements Adapter {
  constructor(private readonly clients: AppDirectory) {}

  async find(id: string): Promise<ClientMetadata | undefined> {
    return this.clients.metadata(id);
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

/** The longest user agent kept with a login session (real ones are a few hundred characters). */
const MAX_USER_AGENT = 512;

/**
 * A login session's device, for "My sign-ins" (/console/sessions, src/oauth/sign-ins.ts): the
 * browser's user agent and when the session was last used. oidc-provider saves a Session at the
 * end of every request of its browser that reads it (node_modules/oidc-provider/lib/shared/session.js)
 * and keeps only its own fields (Session.IN_PAYLOAD), so the device is added here, fresh from
 * the request being answered, on every save: it lives, moves and expires with the session
 * itself, with no second record to keep in step. A save outside a request keeps no device.
 */
function withDevice(payload: AdapterPayload, ctx: KoaContextWithOIDC | undefined): AdapterPayload {
  if (!ctx) return payload;
  const userAgent = ctx.get('user-agent').slice(0, MAX_USER_AGENT);
  return { ...payload, [SESSION_DEVICE]: { userAgent, lastUsedAt: Math.floor(Date.now() / 1000) } };
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
