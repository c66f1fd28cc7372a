import { MONGO_URL, NO_RATE_LIMITS } from '@smartlock/testing';
import { Config, readConfig } from '../config';

/** admin-api's configuration in tests: port 0, the test database server, no rate limits, and what the test gives. */
export function testConfig(env: Record<string, string>): Config {
  return readConfig({ ...NO_RATE_LIMITS, NODE_ENV: 'test', PORT: '0', MONGO_URL, ...env });
}
