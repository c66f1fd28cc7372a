import axios from 'axios';
import { createVhost, dropDatabases, launchApp, MONGO_URL, TestVhost, uniqueDbName } from '@smartlock/testing';

// The apps (README.md "The apps"), each as its own process: configuration checked at boot, health and
// readiness served, SIGTERM answered by a graceful stop with exit code 0.
const APPS = ['ingest-gateway', 'location-api', 'access-api', 'provisioning-worker', 'callback-dispatcher', 'admin-api', 'lock-cloud-simulator'];

describe('every app as a process', () => {
  let vhost: TestVhost;
  const dbs: string[] = [];
  beforeAll(async () => {
    vhost = await createVhost('procs');
  });
  afterAll(async () => {
    await vhost.remove();
    await dropDatabases(...dbs);
  });

  it.each(APPS)('%s starts, is healthy and ready, and stops on SIGTERM with exit code 0', async (name) => {
    const db = uniqueDbName(name.replace(/-/g, '_'));
    dbs.push(db);
    const app = await launchApp(name, { AMQP_URL: vhost.url, MONGO_URL, MONGO_DB: db });
    expect((await axios.get(`${app.url}/healthz`)).data).toEqual({ status: 'ok' });
    const ready = await axios.get(`${app.url}/readyz`);
    expect(ready.data.status).toBe('ready');
    expect((await axios.get(`${app.url}/metrics`)).data).toContain('process_resident_memory_bytes');
    expect(await app.stop()).toBe(0);
    const lines = app
      .output()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines.every((l) => l.service === name && typeof l.timestamp === 'string')).toBe(true);
    expect(lines.map((l) => l.message)).toEqual(expect.arrayContaining(['service started', 'shutting down', 'stopped']));
  });

  it.each(APPS)('%s refuses to start with a malformed variable, naming it', async (name) => {
    const app = await launchApp(name, { AMQP_URL: 'not-a-url', MONGO_URL }, { waitReady: false });
    expect(await app.exited).toBe(1);
    expect(app.output()).toContain('AMQP_URL');
  });

  it('the edge starts and stops the same way', async () => {
    const app = await launchApp('edge', {});
    expect((await axios.get(`${app.url}/healthz`)).data).toEqual({ status: 'ok' });
    expect((await axios.get(`${app.url}/metrics`)).data).toContain('process_resident_memory_bytes');
    expect(await app.stop()).toBe(0);
    const lines = app
      .output()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.message)).toEqual(expect.arrayContaining(['service started', 'shutting down', 'stopped']));
  });

  it('an app stops gracefully when its broker is gone, and reports not ready while it is', async () => {
    const db = uniqueDbName('ingest');
    dbs.push(db);
    const app = await launchApp('ingest-gateway', { AMQP_URL: vhost.url, MONGO_URL, MONGO_DB: db });
    await vhost.closeConnections();
    const res = await axios.get(`${app.url}/readyz`, { validateStatus: () => true });
    // either caught mid-reconnect (503) or already reconnected (200): never an error
    expect([200, 503]).toContain(res.status);
    expect(await app.stop()).toBe(0);
  });
});
