import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config/index.js';

describe('operations: configuration, loadConfig', () => {
  it('runs a local start with no configuration at all', () => {
    const config = loadConfig({});
    expect(config.env).to.equal('development');
    expect(config.host).to.equal('127.0.0.1');
    expect(config.port).to.equal(8080);
    expect(config.dataDir).to.equal('./.data');
    expect(config.rateLimit).to.deep.equal({ points: 100, durationSeconds: 60 });
    expect(config.schoolTimeZone).to.equal('Asia/Seoul');
    expect(config.urls).to.deep.equal({ auth: 'http://127.0.0.1:8080', userinfo: 'http://127.0.0.1:8080', base: 'http://127.0.0.1:8080' });
    expect(config.neis.syncTime).to.equal('02:00');
    expect(Object.isFrozen(config.urls)).to.equal(true);
  });

  it('reads every variable it documents', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      RATE_LIMIT: '600/30',
      TRUSTED_PROXIES: '10.0.0.1, 10.0.0.2',
      AUTH_URL: 'https://auth.example.kr/',
      REDIS_URL: 'redis://127.0.0.1:6379',
      NEIS_SYNC_ENABLED: 'FALSE',
    });
    expect(config.port).to.equal(9000);
    expect(config.rateLimit).to.deep.equal({ points: 600, durationSeconds: 30 });
    expect(config.trustedProxies).to.deep.equal(['10.0.0.1', '10.0.0.2']);
    expect(config.urls.auth).to.equal('https://auth.example.kr');
    expect(config.urls.base).to.equal('http://0.0.0.0:9000');
    expect(config.neis.syncEnabled).to.equal(false);
  });

  it('SQLITE_SYNCHRONOUS is normal by default, may be full, and nothing less durable', () => {
    expect(loadConfig({}).sqliteSynchronous).to.equal('normal');
    expect(loadConfig({ SQLITE_SYNCHRONOUS: 'full' }).sqliteSynchronous).to.equal('full');
    expect(() => loadConfig({ SQLITE_SYNCHRONOUS: 'off' }))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.deep.equals(['SQLITE_SYNCHRONOUS: Invalid option: expected one of "normal"|"full"']);
  });

  it('lists every problem in one error', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', RATE_LIMIT: '100', SCHOOL_TIMEZONE: 'Mars/Olympus', MONGODB_URI: 'postgres://x' });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).to.have.length(4);
    expect(problems.join('\n'))
      .to.match(/PORT/)
      .and.match(/RATE_LIMIT: must look like <requests>\/<seconds>/)
      .and.match(/SCHOOL_TIMEZONE/)
      .and.match(/MONGODB_URI/);
  });

  it('refuses development defaults in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' }))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.has.members([
        'MONGODB_URI: required in production (the embedded database is for development), unless FERRETDB_POSTGRESQL_URL is set',
        'AUTH_URL: required in production',
        'USERINFO_URL: required in production',
        'BASE_URL: required in production',
        'OAUTH_JWKS: required in production (a JSON Web Key Set with private keys and kid)',
        'OAUTH_COOKIE_KEYS: required in production (comma-separated random strings)',
        'SMTP_URL: required in production (sign-up and password-reset codes are sent by email)',
      ]);
  });

  it('refuses blank or short cookie keys in production', () => {
    const base = {
      NODE_ENV: 'production',
      MONGODB_URI: 'mongodb://db/campus',
      AUTH_URL: 'https://auth.example.kr',
      USERINFO_URL: 'https://me.example.kr',
      BASE_URL: 'https://api.example.kr',
      OAUTH_JWKS: '{"keys":[]}',
      SMTP_URL: 'smtp://mail.example.kr',
    };
    expect(() => loadConfig({ ...base, OAUTH_COOKIE_KEYS: ' , ' }))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.deep.equals(['OAUTH_COOKIE_KEYS: required in production (comma-separated random strings)']);
    expect(() => loadConfig({ ...base, OAUTH_COOKIE_KEYS: 'short' }))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.deep.equals(['OAUTH_COOKIE_KEYS: each key must be at least 32 characters']);
  });

  it('the isolation limits of the data API have defaults and can each be set', () => {
    expect(loadConfig({}).dataLimits).to.deep.equal({
      timeBudgetMs: 5000,
      maxDbOperations: 100,
      dbConcurrency: 1,
      graphqlConcurrency: 1,
      graphqlQueue: 32,
      graphqlCostPerPoint: 1000,
      apiKeyFailures: { points: 20, durationSeconds: 60 },
      publicRequests: { points: 60, durationSeconds: 60 },
    });
    const config = loadConfig({
      DATA_TIME_BUDGET_MS: '2500',
      DATA_MAX_DB_OPERATIONS: '40',
      DATA_DB_CONCURRENCY: '4',
      GRAPHQL_CONCURRENCY: '3',
      GRAPHQL_QUEUE: '0',
      GRAPHQL_COST_PER_POINT: '500',
      API_KEY_FAILURE_LIMIT: '5/300',
      PUBLIC_RATE_LIMIT: '10/30',
    });
    expect(config.dataLimits).to.deep.equal({
      timeBudgetMs: 2500,
      maxDbOperations: 40,
      dbConcurrency: 4,
      graphqlConcurrency: 3,
      graphqlQueue: 0,
      graphqlCostPerPoint: 500,
      apiKeyFailures: { points: 5, durationSeconds: 300 },
      publicRequests: { points: 10, durationSeconds: 30 },
    });
    expect(Object.isFrozen(config.dataLimits.apiKeyFailures)).to.equal(true);
  });

  it('refuses isolation limits out of range, naming each', () => {
    let error: unknown;
    try {
      loadConfig({
        DATA_TIME_BUDGET_MS: '5',
        DATA_MAX_DB_OPERATIONS: '0',
        DATA_DB_CONCURRENCY: 'two',
        GRAPHQL_CONCURRENCY: '0',
        GRAPHQL_QUEUE: '-1',
        GRAPHQL_COST_PER_POINT: '1.5',
        API_KEY_FAILURE_LIMIT: '0/60',
      });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const named = (error as ConfigError).problems.map((p) => p.split(':')[0]);
    expect(named).to.have.members([
      'DATA_TIME_BUDGET_MS',
      'DATA_MAX_DB_OPERATIONS',
      'DATA_DB_CONCURRENCY',
      'GRAPHQL_CONCURRENCY',
      'GRAPHQL_QUEUE',
      'GRAPHQL_COST_PER_POINT',
      'API_KEY_FAILURE_LIMIT',
    ]);
  });

  it('refuses an http issuer in production', () => {
    expect(() =>
      loadConfig({
        NODE_ENV: 'production',
        MONGODB_URI: 'mongodb://db/campus',
        AUTH_URL: 'http://auth.example.kr',
        USERINFO_URL: 'https://me.example.kr',
        BASE_URL: 'https://api.example.kr',
        OAUTH_JWKS: '{"keys":[]}',
        OAUTH_COOKIE_KEYS: 'cookie-key-one-that-is-long-enough-32,cookie-key-two-that-is-long-enough-32',
        SMTP_URL: 'smtp://mail.example.kr',
      }),
    )
      .to.throw(ConfigError)
      .with.property('problems')
      .that.deep.equals(['AUTH_URL: must be an https:// address in production']);
  });
});
