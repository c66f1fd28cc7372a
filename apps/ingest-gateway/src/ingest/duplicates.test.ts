import request from 'supertest';
import { generateIngestToken, identityModels } from '@smartlock/auth';
import type { Connection } from '@smartlock/db';
import type { CommandStartedEvent } from 'mongodb';
import { captureLogger, createVhost, dropDatabases, MONGO_URL, TestVhost, uniqueDbName, withCommandMonitoring } from '@smartlock/testing';
import type { Gateway } from '../app';
import { BookingTap, TestCompany, booking, connectIdentity, movableClock, seedCompany, startGateway } from '../test-support/harness';
import { originalEventId, sequenceClaimId } from '../events/store';
import { ORPHAN_AFTER_MS, OriginalPendingMessage } from './accept';
import { IngestMessages } from './routes';

describe('duplicates: same reference_id and action within 60 s of the original', () => {
  const mongoDb = uniqueDbName('dups');
  const identityDb = uniqueDbName('dups_identity');
  const { logger } = captureLogger('dups-test');
  const clock = movableClock();
  let vhost: TestVhost;
  let identity: Connection;
  let gw: Gateway;
  let tap: BookingTap;
  let a: TestCompany;
  let b: TestCompany;
  /** The gateway's commands to its events database (the driver's command monitoring). */
  const commands: CommandStartedEvent[] = [];

  beforeAll(async () => {
    vhost = await createVhost('dups');
    identity = await connectIdentity(MONGO_URL, identityDb, logger);
    a = await seedCompany(identity);
    b = await seedCompany(identity);
    gw = await startGateway({ amqpUrl: vhost.url, mongoUrl: withCommandMonitoring(MONGO_URL), mongoDb, identityDb, logger, now: clock.now });
    gw.deps.models.Event.db.getClient().on('commandStarted', (e) => {
      if (e.databaseName === mongoDb) commands.push(e);
    });
    tap = await new BookingTap(vhost.url).open();
  });
  afterAll(async () => {
    await tap.close();
    await gw.stop();
    await identity.close();
    await vhost.remove();
    await dropDatabases(mongoDb, identityDb);
  });

  const send = (company: TestCompany, body: Record<string, unknown>) =>
    request(gw.url).post(`/webhook/t/${company.token}`).set('Content-Type', 'application/json').send(body);
  const Event = () => gw.deps.models.Event;
  const published = async (referenceId: string) => (await tap.drain()).filter((m) => m.body.reference_id === referenceId);

  it('within 60 s: 202 with the original eventId and status QUEUED; the duplicate is stored DUPLICATE and never published', async () => {
    const first = await send(a, booking({ reference_id: 'DUP-1' }));
    clock.advance(30_000);
    const again = await send(a, booking({ reference_id: 'DUP-1', room: 'another room is still the same action' }));
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ success: true, eventId: first.body.eventId, status: 'QUEUED', message: IngestMessages.duplicate });
    expect(again.body.message).toMatch(/duplicate/i);
    const dup = await Event().findOne({ reference_id: 'DUP-1', status: 'DUPLICATE' }).lean();
    expect(dup).toMatchObject({ duplicate_of: first.body.eventId, sequence: null, message: null, next_attempt_at: null });
    expect(dup?._id).not.toBe(first.body.eventId);
    expect((await published('DUP-1')).map((m) => m.body.event_id)).toEqual([first.body.eventId]);
  });

  it("another site's event (its own token) is no duplicate: both are originals, published, with the booking's next numbers", async () => {
    const t = generateIngestToken();
    await identityModels(identity).IngestToken.create({ company_id: a.companyId, site_id: 'site-2', provider: a.provider, hash: t.hash });
    const other: TestCompany = { ...a, siteId: 'site-2', token: t.token };
    const first = await send(a, booking({ reference_id: 'DUP-SITES', action: 'cancel' }));
    clock.advance(10_000);
    const fromOther = await send(other, booking({ reference_id: 'DUP-SITES', action: 'cancel' }));
    expect(fromOther.body).toMatchObject({ message: IngestMessages.queued });
    expect(fromOther.body.eventId).not.toBe(first.body.eventId);
    expect(await Event().findById(fromOther.body.eventId).lean()).toMatchObject({ site_id: 'site-2', sequence: 2, claim_gen: 1, status: 'QUEUED' });
    // Each site's own window still holds.
    expect((await send(other, booking({ reference_id: 'DUP-SITES', action: 'cancel' }))).body).toMatchObject({
      eventId: fromOther.body.eventId,
      message: IngestMessages.duplicate,
    });
    expect((await send(a, booking({ reference_id: 'DUP-SITES', action: 'cancel' }))).body).toMatchObject({
      eventId: first.body.eventId,
      message: IngestMessages.duplicate,
    });
    expect((await published('DUP-SITES')).map((m) => [m.body.event_id, m.body.site_id])).toEqual([
      [first.body.eventId, a.siteId],
      [fromOther.body.eventId, 'site-2'],
    ]);
  });

  it('check-in and CheckIn are one action', async () => {
    const first = await send(a, booking({ reference_id: 'DUP-2', action: 'check-in' }));
    const again = await send(a, booking({ reference_id: 'DUP-2', action: 'CheckIn' }));
    expect(again.body.eventId).toBe(first.body.eventId);
  });

  it('the window is measured from the original, not from the last duplicate; after it a new original is processed', async () => {
    const first = await send(a, booking({ reference_id: 'DUP-3' }));
    clock.advance(59_000);
    expect((await send(a, booking({ reference_id: 'DUP-3' }))).body.eventId).toBe(first.body.eventId);
    clock.advance(1_000); // 60 s after the original (and 1 s after its duplicate)
    const later = await send(a, booking({ reference_id: 'DUP-3' }));
    expect(later.status).toBe(202);
    expect(later.body.eventId).not.toBe(first.body.eventId);
    expect(later.body.message).toBe(IngestMessages.queued);
    expect(await Event().findById(later.body.eventId).lean()).toMatchObject({ status: 'QUEUED', sequence: 2, claim_gen: 2 });
    // …and the new original opens its own window
    clock.advance(10_000);
    expect((await send(a, booking({ reference_id: 'DUP-3' }))).body.eventId).toBe(later.body.eventId);
    expect((await published('DUP-3')).map((m) => m.body.event_id)).toEqual([first.body.eventId, later.body.eventId]);
  });

  it('another action on the same booking is not a duplicate', async () => {
    const create = await send(a, booking({ reference_id: 'DUP-4', action: 'create' }));
    const cancel = await send(a, booking({ reference_id: 'DUP-4', action: 'cancel' }));
    expect(cancel.body.eventId).not.toBe(create.body.eventId);
    expect(cancel.body.message).toBe(IngestMessages.queued);
  });

  it('the window is per company', async () => {
    const inA = await send(a, booking({ reference_id: 'DUP-5' }));
    const inB = await send(b, booking({ reference_id: 'DUP-5' }));
    expect(inB.body.eventId).not.toBe(inA.body.eventId);
    expect(inB.body.message).toBe(IngestMessages.queued);
  });

  it('50 identical requests at the same instant: exactly one event is processed', async () => {
    const body = booking({ reference_id: 'DUP-BURST' });
    const answers = await Promise.all(Array.from({ length: 50 }, () => send(a, body)));
    expect(answers.map((r) => r.status)).toEqual(Array(50).fill(202));
    const ids = new Set(answers.map((r) => r.body.eventId));
    expect(ids.size).toBe(1);
    const [original] = [...ids];
    expect(answers.filter((r) => r.body.message === IngestMessages.queued)).toHaveLength(1);
    const records = await Event().find({ reference_id: 'DUP-BURST' }).lean();
    expect(records.filter((r) => r.status === 'DUPLICATE')).toHaveLength(49);
    expect(records.filter((r) => r.status !== 'DUPLICATE').map((r) => r._id)).toEqual([original]);
    expect((await published('DUP-BURST')).map((m) => m.body.event_id)).toEqual([original]);
    // the burst used one sequence number: the booking's next event is number 2
    expect(records.find((r) => r._id === original)?.sequence).toBe(1);
    const next = await send(a, booking({ reference_id: 'DUP-BURST', action: 'cancel' }));
    expect((await Event().findById(next.body.eventId).lean())?.sequence).toBe(2);
  });

  it('a claim whose original was never stored (the process died) stops counting after a while', async () => {
    const body = booking({ reference_id: 'DUP-ORPHAN' });
    const claimId = originalEventId(a.companyId, a.siteId, 'DUP-ORPHAN', 'create', 1);
    // died a moment ago: the duplicate cannot name an event that does not exist, so it is a 503 (retry)
    const numberId = sequenceClaimId(a.companyId, 'DUP-ORPHAN', 1);
    await gw.deps.models.SequenceClaim.create({ _id: numberId, event_id: claimId, at: new Date(clock.now().getTime() - 1_000) });
    const early = await send(a, body);
    expect(early.status).toBe(503);
    expect(early.body).toEqual({ success: false, errors: [OriginalPendingMessage], message: OriginalPendingMessage });
    // died long enough ago: the next event is the original
    await gw.deps.models.SequenceClaim.updateOne({ _id: numberId }, { at: new Date(clock.now().getTime() - ORPHAN_AFTER_MS - 1) });
    const later = await send(a, body);
    expect(later.status).toBe(202);
    expect(later.body.message).toBe(IngestMessages.queued);
    expect(later.body.eventId).toBe(originalEventId(a.companyId, a.siteId, 'DUP-ORPHAN', 'create', 2));
    // the orphan keeps its number: the original takes the next one
    expect((await Event().findById(later.body.eventId).lean())?.sequence).toBe(2);
  });

  it('different actions of one booking at the same instant get distinct sequence numbers, 1 to n', async () => {
    const actions = ['create', 'update', 'checkin', 'checkout', 'roommove', 'datechange', 'cancel', 'extend-stay', 'note', 'upgrade'];
    const answers = await Promise.all(actions.map((action) => send(a, booking({ reference_id: 'SEQ-BURST', action }))));
    expect(answers.map((r) => r.status)).toEqual(Array(actions.length).fill(202));
    const seqs = (await Event().find({ reference_id: 'SEQ-BURST' }).lean()).map((r) => r.sequence).sort((x, y) => (x ?? 0) - (y ?? 0));
    expect(seqs).toEqual(actions.map((_, i) => i + 1));
  });

  it("a booking's 31st event skips past the earlier ones in one read; its number, window and duplicates stay right", async () => {
    const ref = 'SEQ-LONG';
    expect((await send(a, booking({ reference_id: ref, action: 'create' }))).status).toBe(202);
    for (let month = 1; month < 30; month++) {
      clock.advance(61_000); // each update its own window
      expect((await send(a, booking({ reference_id: ref, action: 'update' }))).status).toBe(202);
    }
    await new Promise((r) => setTimeout(r, 300)); // the last request's background writes
    const claimInserts = () => commands.filter((c) => c.commandName === 'insert' && c.command.insert === 'booking_sequences').length;

    clock.advance(61_000);
    const before = claimInserts();
    const update = await send(a, booking({ reference_id: ref, action: 'update' }));
    expect(update.status).toBe(202);
    // Walking claim by claim tried all 30 earlier numbers; skipping: a first try, a jump past the
    // stored events, and the next window of 'update'.
    expect(claimInserts() - before).toBeLessThanOrEqual(3);
    expect(update.body.eventId).toBe(originalEventId(a.companyId, a.siteId, ref, 'update', 30));
    expect(await Event().findById(update.body.eventId).lean()).toMatchObject({ sequence: 31, claim_gen: 30, status: 'QUEUED' });

    // The jump lands on the latest window of the action, not past it: still a duplicate inside 60 s.
    clock.advance(10_000);
    const again = await send(a, booking({ reference_id: ref, action: 'update' }));
    expect(again.body).toMatchObject({ eventId: update.body.eventId, message: IngestMessages.duplicate });

    const cancel = await send(a, booking({ reference_id: ref, action: 'cancel' }));
    expect(cancel.body.message).toBe(IngestMessages.queued);
    expect(await Event().findById(cancel.body.eventId).lean()).toMatchObject({ sequence: 32, claim_gen: 1 });
    const numbers = (
      await Event()
        .find({ reference_id: ref, status: { $ne: 'DUPLICATE' } })
        .lean()
    )
      .map((e) => e.sequence)
      .sort((x, y) => (x ?? 0) - (y ?? 0));
    expect(numbers).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
  });
});
