/**
 * The part of oidc-provider 9's API this service uses. The package ships no type declarations,
 * and a hand-written subset keeps the strict compiler honest about every call we make.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  import type Koa from 'koa';

  /** A stored artifact (token, code, grant, session, interaction) as the provider hands it over. */
  export interface AdapterPayload {
    [key: string]: unknown;
    jti?: string;
    kind?: string;
    grantId?: string;
    userCode?: string;
    uid?: string;
    accountId?: string;
    clientId?: string;
    exp?: number;
    consumed?: unknown;
  }

  /** The storage interface the provider calls, one instance per model name. */
  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface ClientMetadata {
    [key: string]: unknown;
    client_id: string;
    client_secret?: string;
    client_name?: string;
    redirect_uris: string[];
    grant_types?: string[];
    response_types?: string[];
    token_endpoint_auth_method?: string;
    scope?: string;
    application_type?: 'web' | 'native';
  }

  export class Client {
    readonly clientId: string;
    readonly clientName?: string;
    readonly clientSecret?: string;
    readonly clientAuthMethod: string;
    readonly redirectUris: string[];
    readonly scope?: string;
    readonly [extra: string]: unknown;
    grantTypeAllowed(type: string): boolean;
    compareClientSecret(actual: string): boolean | Promise<boolean>;
    static find(id: string): Promise<Client | undefined>;
  }

  export class Grant {
    constructor(properties: { accountId: string; clientId: string });
    readonly jti: string;
    readonly accountId: string;
    readonly clientId: string;
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    getOIDCScopeEncountered(): string;
    getResourceScopeEncountered(resource: string): string;
    save(): Promise<string>;
    destroy(): Promise<void>;
    static find(id: string): Promise<Grant | undefined>;
  }

  export interface AccountClaims {
    [key: string]: unknown;
    sub: string;
  }

  export interface Account {
    accountId: string;
    claims(use: string, scope: string): AccountClaims | Promise<AccountClaims>;
  }

  export interface ResourceServerInfo {
    scope: string;
    audience?: string;
    accessTokenTTL?: number;
    accessTokenFormat?: 'opaque' | 'jwt';
    jwt?: { sign?: { alg: string; kid?: string } };
  }

  export interface ResourceServer {
    readonly identifier: string;
    readonly scopes: Set<string>;
  }

  export interface Session {
    readonly accountId?: string;
    readonly uid: string;
    grantIdFor(clientId: string): string | undefined;
  }

  export interface InteractionResults {
    [key: string]: unknown;
    login?: { accountId: string; remember?: boolean };
    consent?: { grantId?: string };
    error?: string;
    error_description?: string;
  }

  export interface PromptDetail {
    name: 'login' | 'consent' | string;
    reasons: string[];
    details: {
      [key: string]: unknown;
      missingOIDCScope?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
  }

  export interface Interaction {
    readonly uid: string;
    readonly prompt: PromptDetail;
    readonly params: Record<string, unknown>;
    readonly session?: { accountId: string; uid: string };
    readonly grantId?: string;
    readonly returnTo: string;
    readonly exp: number;
  }

  /** The per-request view the provider attaches to its Koa context. */
  export interface OIDCContext {
    readonly route: string;
    readonly provider: Provider;
    readonly client?: Client;
    readonly params?: Record<string, unknown>;
    readonly body?: Record<string, unknown>;
    readonly session?: Session;
    readonly account?: Account;
    readonly grant?: Grant;
    readonly result?: InteractionResults;
    readonly entities: Record<string, unknown>;
    readonly resourceServers: Record<string, ResourceServer>;
    readonly requestParamScopes: Set<string>;
    readonly requestParamOIDCScopes: Set<string>;
  }

  export type KoaContextWithOIDC = Koa.ParameterizedContext & { oidc?: OIDCContext };
  export type ProviderMiddleware = (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>;

  /** The artifact handed to the TTL functions and extraTokenClaims. */
  export interface TokenLike {
    readonly kind: string;
    readonly grantId?: string;
  }

  export interface ErrorOut {
    [key: string]: unknown;
    error: string;
    error_description?: string;
    state?: string;
  }

  type TTL = number | ((ctx: KoaContextWithOIDC, token: TokenLike, client?: Client) => number);

  export interface Configuration {
    adapter?: (name: string) => Adapter;
    clients?: ClientMetadata[];
    jwks?: { keys: Record<string, unknown>[] };
    cookies?: {
      keys?: string[];
      names?: Record<string, string>;
      long?: Record<string, unknown>;
      short?: Record<string, unknown>;
    };
    clientDefaults?: Partial<ClientMetadata>;
    clientAuthMethods?: string[];
    clientBasedCORS?: (ctx: KoaContextWithOIDC, origin: string, client: Client) => boolean;
    extraClientMetadata?: {
      properties: string[];
      validator?: (ctx: KoaContextWithOIDC | undefined, key: string, value: unknown, metadata: ClientMetadata) => void;
    };
    extraTokenClaims?: (ctx: KoaContextWithOIDC, token: TokenLike) => Promise<Record<string, unknown> | undefined>;
    findAccount: (ctx: KoaContextWithOIDC, sub: string) => Promise<Account | undefined>;
    loadExistingGrant?: (ctx: KoaContextWithOIDC) => Promise<Grant | undefined>;
    expiresWithSession?: (ctx: KoaContextWithOIDC, token: TokenLike) => Promise<boolean>;
    issueRefreshToken?: (ctx: KoaContextWithOIDC, client: Client, code: TokenLike) => Promise<boolean>;
    rotateRefreshToken?: boolean;
    allowOmittingSingleRegisteredRedirectUri?: boolean;
    pkce?: { required: (ctx: KoaContextWithOIDC, client: Client) => boolean };
    responseTypes?: string[];
    scopes?: string[];
    claims?: Record<string, string[] | null>;
    routes?: Record<string, string>;
    discovery?: Record<string, unknown>;
    interactions?: { url: (ctx: KoaContextWithOIDC, interaction: { uid: string }) => Promise<string> };
    renderError?: (ctx: KoaContextWithOIDC, out: ErrorOut, error: Error) => Promise<void>;
    ttl?: Record<string, TTL>;
    features?: {
      devInteractions?: { enabled: boolean };
      dPoP?: { enabled: boolean };
      pushedAuthorizationRequests?: { enabled: boolean };
      rpInitiatedLogout?: { enabled: boolean };
      userinfo?: { enabled: boolean };
      revocation?: {
        enabled: boolean;
        allowedPolicy?: (ctx: KoaContextWithOIDC, client: Client, token: TokenLike & { clientId?: string }) => Promise<boolean>;
      };
      introspection?: {
        enabled: boolean;
        allowedPolicy?: (ctx: KoaContextWithOIDC, client: Client, token: TokenLike & { clientId?: string }) => Promise<boolean>;
      };
      resourceIndicators?: {
        enabled: boolean;
        defaultResource?: (ctx: KoaContextWithOIDC, client: Client, oneOf?: string[]) => Promise<string | string[] | undefined>;
        useGrantedResource?: (ctx: KoaContextWithOIDC, model: unknown) => Promise<boolean>;
        getResourceServerInfo?: (ctx: KoaContextWithOIDC, resource: string, client: Client) => Promise<ResourceServerInfo>;
      };
    };
  }

  export class Provider extends Koa {
    constructor(issuer: string, configuration: Configuration);
    readonly issuer: string;
    readonly Client: typeof Client;
    readonly Grant: typeof Grant;
    use(middleware: ProviderMiddleware): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: InteractionResults,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    on(event: 'server_error', listener: (ctx: KoaContextWithOIDC, error: Error) => void): this;
    on(event: 'error', listener: (error: Error) => void): this;
    on(event: string, listener: (ctx: KoaContextWithOIDC, value: unknown) => void): this;
  }

  export namespace errors {
    class OIDCProviderError extends Error {
      readonly error: string;
      readonly error_description?: string;
      readonly status: number;
      readonly statusCode: number;
      readonly expose: boolean;
    }
    class InvalidGrant extends OIDCProviderError {
      constructor(description?: string);
    }
    class InvalidRequest extends OIDCProviderError {
      constructor(description?: string);
    }
    class InvalidScope extends OIDCProviderError {
      constructor(description: string, scope?: string);
    }
    class InvalidTarget extends OIDCProviderError {
      constructor(description?: string);
    }
    class InvalidClientMetadata extends OIDCProviderError {
      constructor(description?: string);
    }
    class SessionNotFound extends InvalidRequest {}
  }

  export default Provider;
}
