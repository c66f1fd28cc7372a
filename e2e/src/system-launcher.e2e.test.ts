import axios from 'axios';
import { launchSystem, System } from '@smartlock/testing';

describe('the system launcher', () => {
  let system: System;
  beforeAll(async () => {
    system = await launchSystem({ workers: 2 });
  }, 120_000);
  afterAll(async () => {
    await system?.stop();
  });

  it('runs every app as its own process behind the edge', async () => {
    const names = system.processes().map((p) => p.name);
    expect(names.sort()).toEqual(
      [
        'access-api',
        'admin-api',
        'callback-dispatcher',
        'edge',
        'ingest-gateway',
        'location-api',
        'lock-cloud-simulator',
        'provisioning-worker',
        'provisioning-worker',
      ].sort(),
    );
    const created = await axios.post(
      `${system.baseUrl}/admin/v1/companies`,
      { name: 'Launcher Hotel' },
      {
        headers: { Authorization: `Bearer ${system.adminToken}` },
      },
    );
    expect(created.status).toBe(201);
    expect(created.data.name).toBe('Launcher Hotel');
  });

  it('kills a worker with SIGKILL and restarts it on demand', async () => {
    const before = system.app('provisioning-worker', 1).pid;
    await system.kill('provisioning-worker', 1);
    const restarted = await system.restart('provisioning-worker', 1);
    expect(restarted.pid).not.toBe(before);
    expect((await axios.get(`${restarted.url}/readyz`)).status).toBe(200);
  });
});
