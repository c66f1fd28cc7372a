import { parseSecretsKey, sealAccessEvent } from '@smartlock/auth';
import type { AccessEventMessage, BookingEventMessage } from '@smartlock/contracts';
import { EXCHANGES } from '@smartlock/messaging';
import { scrapeMetrics, waitFor } from '@smartlock/testing';
import { Harness, TEST_MESSAGE_KEY, startHarness } from '../test-support/harness';
import { accessEvent, bookingEvent, credential, ref } from '../test-support/factories';
import { ACCESS_ROUTE } from './booking-access';

describe('GET /api/v4/bookings/:referenceId/access?wait= (real broker and database)', () => {
  let h: Harness;

  beforeAll(async () => {
    // A poll far longer than any test waits: only the access event this process records answers early.
    h = await startHarness('access_wait', { WAIT_POLL_MS: '30000', WAIT_PER_KEY: '1' });
  });
  afterAll(async () => {
    await h?.stop();
  });

  const publish = (msg: AccessEventMessage) =>
    h.publisher.publish(EXCHANGES.accessEvents.name, msg.type, sealAccessEvent(msg, parseSecretsKey(TEST_MESSAGE_KEY)), { correlationId: msg.correlation_id });
  const publishBooking = (msg: BookingEventMessage) => h.publisher.publish(EXCHANGES.bookingEvents.name, `booking.${msg.event_type.toLowerCase()}`, msg);
  const v4 = (reference: string, wait: string | number, c = h.a) => h.get(`/api/v4/bookings/${encodeURIComponent(reference)}/access?wait=${wait}`, c);
  const waiting = async () => (await scrapeMetrics(h.app.url)).value('http_waiting_requests', { route: ACCESS_ROUTE });

  it("answers with the booking's first outcome as soon as its access event is recorded: the credentials in the call that asked", async () => {
    const reference = ref();
    const started = Date.now();
    await publishBooking(bookingEvent(h.a.id, reference));
    await waitFor(async () => (await v4(reference, 0)).data.data?.status === 'pending', { what: 'the booking known, pending' });
    const answer = v4(reference, 20);
    await waitFor(async () => (await waiting()) === 1, { what: 'the request waiting' });
    await publish(accessEvent(h.a.id, reference, 'access.provisioned', { credentials: [credential('PASSCODE', { lockId: 'lock-101' })] }));
    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.data.data).toMatchObject({ reference_id: reference, status: 'active', credentials: [{ type: 'PASSCODE', passcode: '482913' }] });
    expect(Date.now() - started).toBeLessThan(10_000); // woken, not the 30 s poll nor the 20 s wait
    expect(await waiting()).toBe(0);

    const failing = ref();
    await publishBooking(bookingEvent(h.a.id, failing));
    await waitFor(async () => (await v4(failing, 0)).status === 200, { what: 'the second booking known' });
    const failed = v4(failing, 20);
    await waitFor(async () => (await waiting()) === 1, { what: 'the second request waiting' });
    await publish(accessEvent(h.a.id, failing, 'access.failed', { credentials: [], reason: 'Room not found' }));
    expect((await failed).data.data).toMatchObject({ status: 'failed', reason: 'Room not found' });
  });

  it('a pending booking answers pending when the wait ends; an unknown one 404 at once; another company sees nothing', async () => {
    const reference = ref();
    await publishBooking(bookingEvent(h.a.id, reference));
    await waitFor(async () => (await v4(reference, 0)).status === 200, { what: 'the booking known, pending' });
    const started = Date.now();
    const pending = await v4(reference, 1);
    expect(pending.data.data.status).toBe('pending');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    // Unknown, and another company's booking: the same 404, at once.
    const asked = Date.now();
    expect((await v4(reference, 20, h.b)).status).toBe(404);
    expect((await v4('NO-SUCH-BOOKING', 20)).status).toBe(404);
    expect(Date.now() - asked).toBeLessThan(5_000);
  });

  it('refuses a bad wait (400) and a second wait of the same key (429 with Retry-After), in the API envelope', async () => {
    for (const wait of ['31', 'x', '-2']) {
      const res = await v4(ref(), wait);
      expect(res.status).toBe(400);
      expect(res.data).toMatchObject({ error: true });
    }
    const [reference, other] = [ref(), ref()];
    for (const r of [reference, other]) await publishBooking(bookingEvent(h.a.id, r));
    await waitFor(async () => (await v4(reference, 0)).status === 200 && (await v4(other, 0)).status === 200, { what: 'both bookings known' });
    const held = v4(reference, 20);
    await waitFor(async () => (await waiting()) === 1, { what: 'one request waiting' });
    const refused = await v4(other, 20);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.data).toMatchObject({ error: true, message: 'Too many waiting requests; at most 1 at once per API key' });
    // Without wait the same key is served as ever.
    expect((await v4(other, 0)).status).toBe(200);
    await publish(accessEvent(h.a.id, reference, 'access.revoked'));
    expect((await held).data.data.status).not.toBe('pending');
  });
});
