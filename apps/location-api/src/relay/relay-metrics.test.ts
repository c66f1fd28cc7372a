import amqp from 'amqplib';
import axios from 'axios';
import { QUEUES } from '@smartlock/messaging';
import { RABBIT_API, scrapeMetrics, waitFor } from '@smartlock/testing';
import { LocationApiHarness, property, startLocationApi } from '../test-support/harness';

const rabbitAuth = { username: process.env.RABBITMQ_USER || 'guest', password: process.env.RABBITMQ_PASS || 'guest' };

/** The outbox of location.events, as /metrics shows it: a change the broker has not confirmed ages. */
describe('location-api /metrics: outbox_oldest_age_seconds', () => {
  let h: LocationApiHarness;
  const age = async () => (await scrapeMetrics(h.url)).value('outbox_oldest_age_seconds', { outbox: 'location-events' });

  beforeAll(async () => {
    // No relay round during the test: the change stays owed.
    h = await startLocationApi({ LOCATION_RELAY_INTERVAL_MS: '600000' });
  });
  afterAll(() => h.stop());

  it('0 while every change is confirmed; a change made with the broker unreachable is owed, and its age grows', async () => {
    const A = await h.company('A');
    expect((await h.admin.put(`${A.base}/layout`, property({ floors: 1, rooms: 1, beds: 0 }))).status).toBe(200);
    expect(await age()).toBe(0);

    await h.vhost.remove(); // the broker drops location-api's connection and refuses it back
    await waitFor(() => !h.service.ctx.broker.isReady(), { what: 'location-api to lose the broker' });
    const room = (await A.api.get('/api/v4/location/rooms')).data.data.rooms[0];
    expect((await A.api.patch(`/api/v4/location/rooms/${room._id}`, { external_id: 'PMS-1' })).status).toBe(200);
    await waitFor(async () => (await age()) >= 1, { what: 'the owed change to be a second old' });
    expect(await age()).toBeLessThan(60);
  });
});

/** The outbox of location.events: a commit whose events the broker did not confirm is announced by the relay. */
describe('location-api relay', () => {
  let h: LocationApiHarness;
  beforeAll(async () => {
    h = await startLocationApi(); // a relay round every 500 ms
  });
  afterAll(() => h.stop());

  it('a change committed while the broker is unreachable is owed; once the broker is back the replicas get one layout.resync at its version, and the commit owes nothing', async () => {
    const A = await h.company('A');
    expect((await h.admin.put(`${A.base}/layout`, property({ floors: 1, rooms: 1, beds: 0 }))).status).toBe(200);
    await h.vhost.remove();
    await waitFor(() => !h.service.ctx.broker.isReady(), { what: 'location-api to lose the broker' });
    const room = (await A.api.get('/api/v4/location/rooms')).data.data.rooms[0];
    expect((await A.api.patch(`/api/v4/location/rooms/${room._id}`, { external_id: 'PMS-1' })).status).toBe(200);
    const commits = h.db().collection('location_commits');
    const owedCommit = await commits.findOne({ company_id: A.id, publish_owed: true });
    expect(owedCommit).not.toBeNull();

    // The broker back (the vhost restored): location-api reconnects and declares the replicas' queues again.
    await axios.put(`${RABBIT_API}/vhosts/${encodeURIComponent(h.vhost.vhost)}`, {}, { auth: rabbitAuth });
    await axios.put(
      `${RABBIT_API}/permissions/${encodeURIComponent(h.vhost.vhost)}/${rabbitAuth.username}`,
      { configure: '.*', write: '.*', read: '.*' },
      { auth: rabbitAuth },
    );
    await waitFor(async () => (await commits.findOne({ _id: owedCommit?._id }))?.publish_owed === false, {
      what: 'the relay to announce the commit',
      timeoutMs: 30_000,
    });
    const conn = await amqp.connect(h.vhost.url);
    try {
      const ch = await conn.createChannel();
      const got = [];
      for (
        let m = await ch.get(QUEUES.accessApiLocationEvents.name, { noAck: true });
        m;
        m = await ch.get(QUEUES.accessApiLocationEvents.name, { noAck: true })
      )
        got.push(JSON.parse(m.content.toString()));
      expect(got.filter((m) => m.kind === 'layout.resync')).toEqual([
        expect.objectContaining({ company_id: A.id, version: owedCommit?.last, commit_first: owedCommit?.first }),
      ]);
    } finally {
      await conn.close();
    }
    expect(await commits.findOne({ _id: owedCommit?._id })).toMatchObject({ publish_owed: false, next_attempt_at: null });
  });
});
