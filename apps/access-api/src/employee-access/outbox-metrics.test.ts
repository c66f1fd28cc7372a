import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Types } from 'mongoose';
import type { LocationNodeState } from '@smartlock/contracts';
import { scrapeMetrics, waitFor } from '@smartlock/testing';
import { Harness, startHarness } from '../test-support/harness';

const id = () => new Types.ObjectId().toHexString();

/** The outbox of employee schedules, as /metrics shows it: a change the broker has not taken ages. */
describe('access-api /metrics: outbox_oldest_age_seconds', () => {
  let h: Harness;
  let layout: http.Server;
  const [site, building, floor, room] = [id(), id(), id(), id()];
  const nodes: LocationNodeState[] = [
    { level: 'site', _id: site, name: 'Harbour House', external_id: null, version: 1 },
    { level: 'building', _id: building, name: 'A', external_id: null, version: 1, site_id: site },
    { level: 'floor', _id: floor, name: '1', external_id: null, version: 1, site_id: site, building_id: building },
    { level: 'room', _id: room, name: '12', external_id: null, version: 1, site_id: site, building_id: building, floor_id: floor, locks: [] },
  ];
  const age = async () => (await scrapeMetrics(h.app.url)).value('outbox_oldest_age_seconds', { outbox: 'employee-schedules' });

  beforeAll(async () => {
    // location-api's snapshot route, from which the layout replica learns the company.
    layout = http.createServer((req, res) => {
      const company = /^\/admin\/v1\/companies\/([0-9a-f]{24})\/snapshot$/.exec(req.url ?? '')?.[1];
      if (company !== h.a.id) return void res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ message: 'ok', code: 7000, error: false, data: { company_id: company, version: 1, nodes } }));
    });
    await new Promise<void>((r) => layout.listen(0, '127.0.0.1', () => r()));
    // No relay round during the test: a change stays owed.
    h = await startHarness('access_outbox', {
      LOCATION_API_URL: `http://127.0.0.1:${(layout.address() as AddressInfo).port}`,
      SCHEDULE_RELAY_INTERVAL_MS: '600000',
    });
  });
  afterAll(async () => {
    await h?.stop();
    await new Promise((r) => layout?.close(r));
  });

  it('0 while nothing is owed; a schedule stored with the broker unreachable is owed, and its age grows', async () => {
    expect(await age()).toBe(0);
    await h.vhost.remove(); // the broker drops access-api's connection and refuses it back
    await waitFor(() => !h.app.ctx.broker.isReady(), { what: 'access-api to lose the broker' });
    const res = await h.send('post', '/api/v3/access/employee', h.a, {
      ref_id: 'EMPOUTBOX1',
      type: 'PERMANENT',
      emp_id: id(),
      access_locations: [{ room_id: room }],
    });
    expect(res.status).toBe(201);
    await waitFor(async () => (await age()) >= 1, { what: 'the owed schedule to be a second old' });
    expect(await age()).toBeLessThan(60);
  });
});
