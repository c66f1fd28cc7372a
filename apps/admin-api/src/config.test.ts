import { readConfig } from './config';

describe('admin-api configuration', () => {
  it('has development defaults for the admin token, the secrets key and the 24 h overlap', () => {
    const c = readConfig({ NODE_ENV: 'development' });
    expect(c).toMatchObject({ PORT: 8083, MONGO_DB: 'smartlock_identity', ADMIN_TOKEN: 'dev-admin-token', CALLBACK_SECRET_OVERLAP_MS: 86_400_000 });
    expect(c.SECRETS_KEY).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses to start in production without ADMIN_TOKEN, SECRETS_KEY and IDENTITY_EVENTS_KEY, naming each', () => {
    expect(() => readConfig({ NODE_ENV: 'production' })).toThrow(/ADMIN_TOKEN is required.*SECRETS_KEY is required.*IDENTITY_EVENTS_KEY is required/);
  });

  it('refuses a SECRETS_KEY that is not 32 bytes, and a negative overlap', () => {
    expect(() => readConfig({ NODE_ENV: 'production', ADMIN_TOKEN: 'a-long-admin-token-of-32-characters', SECRETS_KEY: 'abc123' })).toThrow(
      /SECRETS_KEY must be 32 bytes/,
    );
    expect(() => readConfig({ NODE_ENV: 'development', CALLBACK_SECRET_OVERLAP_MS: '-1' })).toThrow(/CALLBACK_SECRET_OVERLAP_MS/);
    // Lock accounts: the vendor's cloud and the service's application there (no default in production).
    const vendor = { LOCK_CLOUD_URL: 'https://euapi.ttlock.com', LOCK_CLOUD_CLIENT_ID: 'client', LOCK_CLOUD_CLIENT_SECRET: 'secret' };
    expect(
      readConfig({
        NODE_ENV: 'production',
        ADMIN_TOKEN: 'a-long-admin-token-of-32-characters',
        SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
        IDENTITY_EVENTS_KEY: 'ab'.repeat(32),
        ...vendor,
      }).SECRETS_KEY,
    ).toBeDefined();
  });

  it('takes the keys SECRETS_KEY replaced (SECRETS_KEY_PREVIOUS, comma-separated), and refuses one that is not a key', () => {
    const base = { NODE_ENV: 'development' };
    expect(readConfig(base).SECRETS_KEY_PREVIOUS).toBe('');
    expect(readConfig({ ...base, SECRETS_KEY_PREVIOUS: `${'ab'.repeat(32)},${Buffer.alloc(32, 1).toString('base64')}` }).SECRETS_KEY_PREVIOUS).toContain(',');
    expect(() => readConfig({ ...base, SECRETS_KEY_PREVIOUS: 'ab'.repeat(32) + ',short' })).toThrow(/SECRETS_KEY_PREVIOUS must be keys of 32 bytes/);
  });
});
