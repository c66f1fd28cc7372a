import {
  Joi,
  baseEnv,
  adminTokenEnv,
  loadConfig,
  ConfigError,
  portEnv,
  identityEventsKeyEnv,
  messageKeyEnv,
  secretsKeyEnv,
  callbackDestinationEnv,
  callbackPolicy,
  proxyTrust,
  trustedProxiesEnv,
} from './index';

const schema = Joi.object({ ...baseEnv, ...adminTokenEnv, ...portEnv(3000), MONGO_DB: Joi.string().required() });

describe('loadConfig', () => {
  it('applies defaults and converts types', () => {
    const cfg = loadConfig(schema, { NODE_ENV: 'development', MONGO_DB: 'x', PORT: '4000' });
    expect(cfg).toMatchObject({ NODE_ENV: 'development', PORT: 4000, ADMIN_TOKEN: 'dev-admin-token', MONGO_DB: 'x' });
  });

  it('names every missing or malformed variable', () => {
    try {
      loadConfig(schema, { PORT: 'eighty', AMQP_URL: 'http://nope' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as Error).message;
      expect(message).toContain('PORT');
      expect(message).toContain('AMQP_URL');
      expect(message).toContain('MONGO_DB');
    }
  });

  it("AMQP_URL takes a cluster's nodes, comma-separated; every one must be an amqp(s) URL", () => {
    const nodes = 'amqp://u:p@10.0.0.1:5672/v,amqp://u:p@10.0.0.2:5672/v, amqps://u:p@rabbit-3:5671/v';
    expect(loadConfig(schema, { NODE_ENV: 'test', MONGO_DB: 'x', AMQP_URL: nodes })).toMatchObject({ AMQP_URL: nodes });
    for (const bad of ['amqp://10.0.0.1,http://10.0.0.2', 'amqp://10.0.0.1,', 'amqp://10.0.0.1,,amqp://10.0.0.2']) {
      expect(() => loadConfig(schema, { NODE_ENV: 'test', MONGO_DB: 'x', AMQP_URL: bad })).toThrow(
        'AMQP_URL must be amqp:// or amqps:// URLs, separated by commas',
      );
    }
  });

  it('refuses to start in production without an admin token', () => {
    expect(() => loadConfig(schema, { NODE_ENV: 'production', MONGO_DB: 'x' })).toThrow(/ADMIN_TOKEN is required/);
  });

  it('fails closed when NODE_ENV is unset: production, no development admin token or secrets key', () => {
    const secrets = Joi.object({ ...baseEnv, ...adminTokenEnv, ...secretsKeyEnv, ...identityEventsKeyEnv, ...messageKeyEnv });
    expect(() => loadConfig(secrets, {})).toThrow(/ADMIN_TOKEN is required.*SECRETS_KEY is required.*IDENTITY_EVENTS_KEY is required.*MESSAGE_KEY is required/);
    expect(loadConfig(schema, { MONGO_DB: 'x', ADMIN_TOKEN: 'a'.repeat(32) })).toMatchObject({ NODE_ENV: 'production' });
  });

  it('outside development the admin token is at least 32 characters and never the development one', () => {
    const prod = (ADMIN_TOKEN: string) => () => loadConfig(schema, { NODE_ENV: 'production', MONGO_DB: 'x', ADMIN_TOKEN });
    expect(prod('dev-admin-token')).toThrow(/ADMIN_TOKEN/);
    expect(prod('s'.repeat(31))).toThrow(/ADMIN_TOKEN length must be at least 32/);
    expect(prod('s'.repeat(32))()).toMatchObject({ ADMIN_TOKEN: 's'.repeat(32) });
    // development and test keep their short tokens
    expect(loadConfig(schema, { NODE_ENV: 'test', MONGO_DB: 'x', ADMIN_TOKEN: 'test-admin-token-0123' })).toMatchObject({
      ADMIN_TOKEN: 'test-admin-token-0123',
    });
  });
});

describe('message keys (IDENTITY_EVENTS_KEY, MESSAGE_KEY)', () => {
  const keys = Joi.object({ ...baseEnv, ...identityEventsKeyEnv, ...messageKeyEnv });

  it('have fixed keys in development and are required in production', () => {
    expect(loadConfig(keys, { NODE_ENV: 'development' })).toMatchObject({ IDENTITY_EVENTS_KEY: expect.any(String), MESSAGE_KEY: expect.any(String) });
    expect(() => loadConfig(keys, { NODE_ENV: 'production' })).toThrow(/IDENTITY_EVENTS_KEY is required.*MESSAGE_KEY is required/);
  });

  it('must be 32 bytes', () => {
    expect(() => loadConfig(keys, { NODE_ENV: 'production', IDENTITY_EVENTS_KEY: 'short', MESSAGE_KEY: 'ab'.repeat(32) })).toThrow(
      /IDENTITY_EVENTS_KEY must be 32 bytes/,
    );
    expect(
      loadConfig(keys, { NODE_ENV: 'production', IDENTITY_EVENTS_KEY: Buffer.alloc(32, 1).toString('base64'), MESSAGE_KEY: 'ab'.repeat(32) }),
    ).toBeTruthy();
  });
});

describe('CALLBACK_ALLOW_LOOPBACK (the development switch of callback destinations)', () => {
  const destinations = Joi.object({ ...baseEnv, ...callbackDestinationEnv });
  const policy = (env: NodeJS.ProcessEnv) => callbackPolicy(loadConfig(destinations, env) as { NODE_ENV: string; CALLBACK_ALLOW_LOOPBACK: boolean });

  it('is off unless set, in every environment; http only in development and test', () => {
    expect(policy({ NODE_ENV: 'development' })).toEqual({ allowLoopback: false, allowHttp: true });
    expect(policy({ NODE_ENV: 'test' })).toEqual({ allowLoopback: false, allowHttp: true });
    expect(policy({ NODE_ENV: 'production' })).toEqual({ allowLoopback: false, allowHttp: false });
    expect(policy({})).toEqual({ allowLoopback: false, allowHttp: false });
  });

  it('may be set in development and test only: a production process refuses to start with it', () => {
    expect(policy({ NODE_ENV: 'development', CALLBACK_ALLOW_LOOPBACK: 'true' })).toEqual({ allowLoopback: true, allowHttp: true });
    expect(policy({ NODE_ENV: 'test', CALLBACK_ALLOW_LOOPBACK: 'true' })).toEqual({ allowLoopback: true, allowHttp: true });
    expect(() => policy({ NODE_ENV: 'production', CALLBACK_ALLOW_LOOPBACK: 'true' })).toThrow(/CALLBACK_ALLOW_LOOPBACK is a development switch/);
    expect(() => policy({ CALLBACK_ALLOW_LOOPBACK: 'true' })).toThrow(/CALLBACK_ALLOW_LOOPBACK is a development switch/);
    expect(policy({ NODE_ENV: 'production', CALLBACK_ALLOW_LOOPBACK: 'false' })).toEqual({ allowLoopback: false, allowHttp: false });
  });
});

describe('TRUSTED_PROXIES', () => {
  const proxies = Joi.object({ ...trustedProxiesEnv('loopback') });

  it('takes addresses, CIDRs and `loopback`, comma-separated; empty trusts no one; anything else is refused', () => {
    expect(loadConfig(proxies, {})).toEqual({ TRUSTED_PROXIES: 'loopback' });
    expect(loadConfig(proxies, { TRUSTED_PROXIES: '' })).toEqual({ TRUSTED_PROXIES: '' });
    expect(loadConfig(proxies, { TRUSTED_PROXIES: '10.0.0.0/8, fd00::/8,192.0.2.7,loopback' })).toEqual({
      TRUSTED_PROXIES: '10.0.0.0/8, fd00::/8,192.0.2.7,loopback',
    });
    for (const bad of ['uniquelocal', '10.0.0.0/33', 'proxy.internal', '10.0.0.1;10.0.0.2']) {
      expect(() => loadConfig(proxies, { TRUSTED_PROXIES: bad })).toThrow('TRUSTED_PROXIES must be comma-separated addresses, CIDRs or `loopback`');
    }
  });

  it('matches a connecting address against the list, an IPv4-mapped one as its IPv4 address', () => {
    const trusted = proxyTrust('loopback, 10.1.0.0/16, 2001:db8::5');
    expect(['127.0.0.1', '::1', '::ffff:127.0.0.1', '10.1.200.3', '::ffff:10.1.0.9', '2001:db8::5'].filter((a) => !trusted(a))).toEqual([]);
    expect(['10.2.0.1', '203.0.113.16', '2001:db8::6', '::ffff:10.2.0.1', 'not-an-address', ''].filter(trusted)).toEqual([]);
    expect(proxyTrust('')('127.0.0.1')).toBe(false);
  });
});
