import axios from 'axios';
import { createVhost, dropDatabases, LaunchedApp, launchApp, MONGO_URL, TestVhost, uniqueDbName } from '@smartlock/testing';
import { ADMIN_TOKEN } from './test-support/harness';

/**
 * Issue 46, item 5: through the edge, a client chose the address its failed authentications counted
 * under with X-Forwarded-For (it locked out 203.0.113.16, not itself). The edge now replaces what a
 * client sent with the address it connects from, and location-api believes only the edge
 * (TRUSTED_PROXIES, loopback by default). Both run as processes, as `npm start` runs them.
 */
describe('location-api behind the edge: failed authentications count under the real client', () => {
  const locationDb = uniqueDbName('client_location');
  const identityDb = uniqueDbName('client_identity');
  let vhost: TestVhost;
  let location: LaunchedApp;
  let edge: LaunchedApp;

  beforeAll(async () => {
    vhost = await createVhost('client_address');
    location = await launchApp('location-api', {
      MONGO_URL,
      MONGO_DB: locationDb,
      IDENTITY_DB: identityDb,
      AMQP_URL: vhost.url,
      ADMIN_TOKEN,
      RATE_LIMIT_AUTH_FAILURES_PER_MIN: '3',
    });
    edge = await launchApp('edge', {
      LOCATION_API_URL: location.url,
      ACCESS_API_URL: 'http://127.0.0.1:9',
      ADMIN_API_URL: 'http://127.0.0.1:9',
      CALLBACK_DISPATCHER_URL: 'http://127.0.0.1:9',
      INGEST_GATEWAY_URL: 'http://127.0.0.1:9',
    });
  });
  afterAll(async () => {
    await edge?.stop();
    await location?.stop();
    await vhost?.remove();
    await dropDatabases(locationDb, identityDb);
  });

  it('a made-up X-Forwarded-For per request does not spread the failures: the client itself is refused once over', async () => {
    const get = (forwardedFor: string) =>
      axios.get(`${edge.url}/api/v4/location/all`, { headers: { apikey: 'sk_live_wrong', 'X-Forwarded-For': forwardedFor }, validateStatus: () => true });
    for (const forged of ['203.0.113.16', '203.0.113.17', '2001:db8::1']) expect((await get(forged)).status).toBe(401);
    const locked = await get('198.51.100.9');
    expect(locked.status).toBe(429);
    expect(locked.headers.ratelimit).toMatch(/^"auth-failures";r=0;t=\d+$/);
  });
});
