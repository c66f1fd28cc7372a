import axios from 'axios';
import request from 'supertest';
import type { Connection } from '@smartlock/db';
import { captureLogger, createVhost, dropDatabases, launchApp, MONGO_URL, NO_RATE_LIMITS, TestVhost, uniqueDbName, waitFor } from '@smartlock/testing';
import type { Gateway } from '../app';
import { TEST_ADMIN_TOKEN, TestCompany, booking, connectIdentity, portalHeaders, publishStatus, seedCompany, startGateway } from '../test-support/harness';
import { bookingModels } from './store';

/**
 * Issue 47: the portal's booking row is written after the ingest's 202, not before it
 * (bookings/record.ts). A gateway killed with rows not yet written loses nothing for good: the
 * worker's report of the event, acknowledged only once the row is written, or the relay of an event
 * still owed to the broker, writes it in the gateway that runs next.
 */
describe('booking rows: off the ingest answer, never lost to a crash', () => {
  const mongoDb = uniqueDbName('rows_crash');
  const identityDb = uniqueDbName('rows_crash_identity');
  const { logger } = captureLogger('rows-crash-test');
  let vhost: TestVhost;
  let identity: Connection;
  let company: TestCompany;
  let gw: Gateway | undefined;

  beforeAll(async () => {
    vhost = await createVhost('rows_crash');
    identity = await connectIdentity(MONGO_URL, identityDb, logger);
    company = await seedCompany(identity);
  });
  afterAll(async () => {
    await gw?.stop();
    await identity?.close();
    await vhost?.remove();
    await dropDatabases(mongoDb, identityDb);
  });

  it('a gateway SIGKILLed with its rows unwritten: the next one writes them from the report and from the relay', async () => {
    const env = {
      MONGO_URL,
      MONGO_DB: mongoDb,
      IDENTITY_DB: identityDb,
      AMQP_URL: vhost.url,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      LOCATION_API_URL: 'http://127.0.0.1:9',
      RELAY_INTERVAL_MS: '0',
      RELAY_GRACE_MS: '6000',
    };
    // The rows linger a minute: the 202s come, the rows are still in the process when it dies.
    const first = await launchApp('ingest-gateway', { ...NO_RATE_LIMITS, ...env, BOOKING_ROW_LINGER_MS: '60000' });
    const send = async (ref: string, room: string) => {
      const res = await axios.post(
        `${first.url}/webhook/t/${company.token}`,
        booking({ reference_id: ref, room, check_in: '2031-06-01', check_out: '2031-06-03' }),
        { validateStatus: () => true },
      );
      expect(res.status).toBe(202);
      return res.data.eventId as string;
    };
    const reported = await send('RC-1', '101');
    const owed = await send('RC-2', '102');
    first.kill('SIGKILL');
    await first.exited;

    gw = await startGateway({
      amqpUrl: vhost.url,
      mongoUrl: MONGO_URL,
      mongoDb,
      identityDb,
      logger,
      env: { RELAY_INTERVAL_MS: '200', RELAY_GRACE_MS: '6000' },
    });
    const rows = bookingModels(gw.ctx.db).BookingRow;
    const url = gw.url;
    // Neither row was written by the process that answered 202.
    expect(await rows.countDocuments({ company_id: company.companyId })).toBe(0);

    // The worker's report of the first: applied, and acknowledged once its row is written.
    await publishStatus(vhost.url, {
      event_id: reported,
      company_id: company.companyId,
      status: 'COMPLETED',
      message: null,
      retry_count: 0,
      at: new Date().toISOString(),
    });
    // The second was never reported: still owed to the broker, the relay publishes it again after its grace and writes its row.
    const view = (await portalHeaders(identity, company, ['view'])).read;
    const shown = async () =>
      (await request(url).get('/portal/api/bookings').query({ from: '2031-06-01', to: '2031-06-01' }).set(view)).body.bookings as {
        reference_id: string;
        status: string;
        room: string;
      }[];
    await waitFor(async () => (await shown()).length === 2, { what: 'both bookings in the portal list', timeoutMs: 20_000 });
    expect((await shown()).map((b) => [b.reference_id, b.room, b.status])).toEqual([
      ['RC-1', '101', 'COMPLETED'],
      ['RC-2', '102', 'QUEUED'],
    ]);
    expect(await rows.findOne({ event_id: owed }).lean()).toMatchObject({ reference_id: 'RC-2', sequence: 1, arrival_day: '2031-06-01' });
  });

  it("the 202 does not wait for the row; the report's acknowledgement does", async () => {
    // A gateway of its own whose rows linger 1.5 s.
    const db = uniqueDbName('rows_linger');
    const lingering = await startGateway({ amqpUrl: vhost.url, mongoUrl: MONGO_URL, mongoDb: db, identityDb, logger, env: { BOOKING_ROW_LINGER_MS: '1500' } });
    const rows = bookingModels(lingering.ctx.db).BookingRow;
    try {
      const res = await request(lingering.url)
        .post(`/webhook/t/${company.token}`)
        .send(booking({ reference_id: 'RL-1', room: '7', check_in: '2031-07-01', check_out: '2031-07-02' }));
      expect(res.status).toBe(202);
      // Answered, the row not written yet.
      expect(await rows.exists({ event_id: res.body.eventId })).toBeNull();
      const row = await waitFor(() => rows.findOne({ event_id: res.body.eventId }).lean(), { what: 'the row, after its linger' });
      expect(row).toMatchObject({ reference_id: 'RL-1', room: '7', arrival_day: '2031-07-01', departure_day: '2031-07-02', state: 'booked' });
    } finally {
      await lingering.stop();
      await dropDatabases(db);
    }
  });
});
