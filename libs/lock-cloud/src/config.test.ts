import { Joi, baseEnv, loadConfig } from '@smartlock/config';
import { LOCK_CLOUD_DEV_DEFAULTS, LockCloudEnv, lockCloudConfigFromEnv, lockCloudEnv } from './index';
import { widenToHours, HOUR_MS } from './index';

const schema = Joi.object<LockCloudEnv>({ ...baseEnv, ...lockCloudEnv });

describe('lockCloudEnv', () => {
  it("defaults to the simulator's account in development", () => {
    const env = loadConfig(schema, { NODE_ENV: 'development' });
    expect(lockCloudConfigFromEnv(env)).toEqual({
      baseUrl: LOCK_CLOUD_DEV_DEFAULTS.url,
      clientId: LOCK_CLOUD_DEV_DEFAULTS.clientId,
      clientSecret: LOCK_CLOUD_DEV_DEFAULTS.clientSecret,
      username: LOCK_CLOUD_DEV_DEFAULTS.username,
      password: LOCK_CLOUD_DEV_DEFAULTS.password,
      timeoutMs: 10_000,
    });
  });

  it('requires every account variable in production, naming each', () => {
    expect(() => loadConfig(schema, { NODE_ENV: 'production' })).toThrow(
      /LOCK_CLOUD_URL is required.*LOCK_CLOUD_CLIENT_ID is required.*LOCK_CLOUD_CLIENT_SECRET is required.*LOCK_CLOUD_USERNAME is required.*LOCK_CLOUD_PASSWORD is required/,
    );
  });

  it('refuses a malformed URL or timeout', () => {
    expect(() => loadConfig(schema, { LOCK_CLOUD_URL: 'ftp://x', LOCK_CLOUD_TIMEOUT_MS: 'soon' })).toThrow(/LOCK_CLOUD_URL.*LOCK_CLOUD_TIMEOUT_MS/);
  });
});

describe('passcode periods', () => {
  it('are widened to whole hours, never narrowed', () => {
    const start = Date.parse('2030-01-01T15:30:00Z');
    const end = Date.parse('2030-01-03T11:00:00Z');
    expect(widenToHours({ start, end })).toEqual({ start: Date.parse('2030-01-01T15:00:00Z'), end });
    expect(widenToHours({ start, end: end + 1 }).end).toBe(end + HOUR_MS);
  });
});
