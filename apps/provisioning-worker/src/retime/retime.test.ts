import { randomUUID } from 'node:crypto';
import type { AccessEventMessage, EmployeeScheduleMessage } from '@smartlock/contracts';
import { EXCHANGES, QUEUES } from '@smartlock/messaging';
import { captureLogger, waitFor } from '@smartlock/testing';
import { workerModels } from '../models';
import { bookingEvent, companyId, publishEvent, waitFinal, workerStack, WorkerStack } from '../test-support/harness';

jest.setTimeout(120_000);

interface SimKey {
  keyId: number;
  validFrom: string;
  validTo: string;
}

/**
 * Issue 48, item 5: a change of a site's zone or hours re-times the bookings sent as dates or local
 * times (on the locks, through reconcile and the vendor's calls; access.provisioned with the new
 * validity and why), never those sent as instants.
 */
describe("a site's new time zone or hours re-times the bookings sent in its local time", () => {
  let s: WorkerStack;
  const { logger, text } = captureLogger('provisioning-worker');
  let n = 0;

  beforeAll(async () => {
    s = await workerStack('retime', logger);
    await s.pub.declareExchanges([EXCHANGES.employeeSchedules]);
    await s.pub.declareQueues([QUEUES.provisioningEmployeeSchedules]);
  });
  afterAll(() => s?.stop());

  async function book(company: string, siteId: string, room: string, check_in: string, check_out: string) {
    const reference = `rt-${++n}-${Date.now()}`;
    const ev = await publishEvent(s.pub, bookingEvent(company, siteId, reference, 1, 'BOOKING_CREATE', { room, check_in, check_out }));
    const completed = await waitFinal(s.t, ev.event_id);
    expect(completed).toMatchObject({ status: 'COMPLETED' });
    // What the dates resolved to, for the gateway's event record (item 2).
    expect(completed.resolved?.time_zone).toBeTruthy();
    return reference;
  }
  const keysOn = async (lockId: string): Promise<SimKey[]> => (await s.sim.sim.get(`/locks/${lockId}`)).data.ekeys;
  const accessOf = (reference: string) => s.t.access.filter((a) => a.reference_id === reference);
  const retimed = (reference: string) =>
    waitFor(() => accessOf(reference).find((a) => a.type === 'access.provisioned' && a.reason), {
      what: `re-timing of ${reference}`,
    }) as Promise<AccessEventMessage>;

  it('UTC to New York: the booking sent as dates moves on its lock and in its validity, the one sent as instants does not', async () => {
    const company = companyId();
    const { siteId, locks } = await s.layout.seed(s.app.ctx.db, company, [{ name: '101' }, { name: '102' }]);
    const dates = await book(company, siteId, '101', '2030-03-09', '2030-03-11');
    expect(s.t.statuses.find((r) => r.status === 'COMPLETED' && r.resolved?.check_in === '2030-03-09T15:00:00.000Z')?.resolved).toEqual({
      check_in: '2030-03-09T15:00:00.000Z',
      check_out: '2030-03-11T11:00:00.000Z',
      time_zone: 'UTC',
    });
    const instants = await book(company, siteId, '102', '2030-03-09T15:00:00Z', '2030-03-11T11:00:00Z');
    expect(await keysOn(locks['101'])).toEqual([expect.objectContaining({ validFrom: '2030-03-09T15:00:00.000Z', validTo: '2030-03-11T11:00:00.000Z' })]);
    const before102 = await keysOn(locks['102']);
    const told = s.t.access.length;

    await s.layout.setSiteTime(company, siteId, { time_zone: 'America/New_York' });

    const event = await retimed(dates);
    // 15:00 EST on 9 March, 11:00 EDT on 11 March (the clocks change between).
    const validity = { check_in: '2030-03-09T20:00:00.000Z', check_out: '2030-03-11T15:00:00.000Z' };
    expect(event).toMatchObject({
      validity,
      site_time_zone: 'America/New_York',
      reason: "Re-timed: the site's time zone changed from UTC to America/New_York",
      sequence: 1,
    });
    expect(event.event_id).toMatch(/^rt_[0-9a-f]{24}$/);
    expect(event.credentials).toEqual([
      expect.objectContaining({ type: 'EKEY', lockId: locks['101'], validFrom: validity.check_in, validTo: validity.check_out }),
    ]);
    // Changed in place on the lock (same key, new period), through the vendor's call, which the booking's operations record.
    const [key] = await keysOn(locks['101']);
    expect(key).toMatchObject({ keyId: event.credentials[0].keyId, validFrom: validity.check_in, validTo: validity.check_out });
    expect(event.operations?.at(-1)).toMatchObject({ action: 'change', type: 'EKEY', lockId: locks['101'], outcome: 'ok' });

    // The instants' booking: untouched on its lock, and nothing told about it.
    await waitFor(async () => s.t.access.length > told, { what: 'the re-timing told' });
    expect(await keysOn(locks['102'])).toEqual(before102);
    expect(accessOf(instants).filter((a) => a.reason)).toEqual([]);

    // A later event of the re-timed booking keeps the new time (its dates are resolved again, in New York).
    const later = await publishEvent(
      s.pub,
      bookingEvent(company, siteId, dates, 2, 'BOOKING_UPDATE', { room: '101', check_in: undefined, check_out: undefined }),
    );
    expect(await waitFinal(s.t, later.event_id)).toMatchObject({ status: 'COMPLETED' });
    expect((await keysOn(locks['101']))[0]).toMatchObject({ validFrom: validity.check_in, validTo: validity.check_out });
  });

  it('new hours move a stay sent as dates; a zone-less time keeps its hour, and a checked-out booking is left alone', async () => {
    const company = companyId();
    const { siteId, locks } = await s.layout.seed(s.app.ctx.db, company, [{ name: '201' }, { name: '202' }, { name: '203' }], {
      site: { time_zone: 'Europe/Berlin' },
    });
    const dates = await book(company, siteId, '201', '2030-10-26', '2030-10-28');
    const local = await book(company, siteId, '202', '2030-10-26T18:00:00', '2030-10-28T09:00:00');
    const gone = await book(company, siteId, '203', '2030-10-26', '2030-10-28');
    const out = await publishEvent(s.pub, bookingEvent(company, siteId, gone, 2, 'BOOKING_CHECKOUT', {}));
    expect(await waitFinal(s.t, out.event_id)).toMatchObject({ status: 'COMPLETED' });
    const before202 = await keysOn(locks['202']);

    await s.layout.setSiteTime(company, siteId, { check_in_time: '16:00', check_out_time: '10:00' });

    const event = await retimed(dates);
    // 16:00 CEST on the 26th; 10:00 CET on the 28th (the clocks went back on the 27th).
    expect(event.validity).toEqual({ check_in: '2030-10-26T14:00:00.000Z', check_out: '2030-10-28T09:00:00.000Z' });
    expect(event.reason).toBe("Re-timed: the site's check-in time changed from 15:00 to 16:00, check-out time changed from 11:00 to 10:00");
    expect((await keysOn(locks['201']))[0]).toMatchObject({ validFrom: '2030-10-26T14:00:00.000Z', validTo: '2030-10-28T09:00:00.000Z' });

    // Then the zone: the zone-less times are 18:00 and 09:00 in London now; the dates move as well.
    await s.layout.setSiteTime(company, siteId, { time_zone: 'Europe/London' });
    const moved = await waitFor(() => accessOf(local).find((a) => a.reason), { what: 're-timing of the local times' });
    expect(moved?.validity).toEqual({ check_in: '2030-10-26T17:00:00.000Z', check_out: '2030-10-28T09:00:00.000Z' });
    expect(await keysOn(locks['202'])).not.toEqual(before202);
    await waitFor(() => accessOf(dates).filter((a) => a.reason).length === 2, { what: 'the second re-timing of the dates' });
    expect(accessOf(gone).filter((a) => a.reason)).toEqual([]);
    expect(await keysOn(locks['203'])).toEqual([]);
  });

  it("UTC to New York: an employee schedule of whole days moves to the site's new days; one of instants and a revoked one are left alone", async () => {
    const company = companyId();
    const { siteId, ids, locks } = await s.layout.seed(s.app.ctx.db, company, [{ name: '301' }, { name: '302' }, { name: '303' }]);
    const schedule = (room: string, version: number, fields: Partial<EmployeeScheduleMessage> = {}): EmployeeScheduleMessage => ({
      type: 'schedule.upserted',
      company_id: company,
      schedule_id: `sch-${room}-${company}`,
      ref_id: `emp-${room}-${company.slice(-6)}`,
      employee_id: `emp-${room}`,
      contact: `staff-${room}@example.com`,
      schedule_type: 'TIMED',
      access_types: ['EKEY'],
      // What access-api sends for startDate 2030-03-09 and endDate 2030-03-10 given as days: their UTC midnights, and the days.
      start: '2030-03-09T00:00:00.000Z',
      end: '2030-03-10T00:00:00.000Z',
      start_day: '2030-03-09',
      end_day: '2030-03-10',
      locations: [{ site_id: siteId, room_id: ids[room], bed_id: null }],
      version,
      occurred_at: new Date().toISOString(),
      correlation_id: randomUUID(),
      ...fields,
    });
    const send = (m: EmployeeScheduleMessage) => s.pub.publish(EXCHANGES.employeeSchedules.name, m.type, m, { correlationId: m.correlation_id });
    const stored = (m: EmployeeScheduleMessage) => workerModels(s.app.ctx.db).Schedule.findOne({ company_id: company, schedule_id: m.schedule_id }).lean();
    const applied = (m: EmployeeScheduleMessage) =>
      waitFor(async () => (await stored(m))?.applied_version === m.version, { what: `${m.ref_id} v${m.version} applied` });
    const days = schedule('301', 1);
    const instants = schedule('302', 1, { end: '2030-03-11T00:00:00.000Z', start_day: null, end_day: null });
    const revoked = schedule('303', 1);
    for (const m of [days, instants, revoked]) {
      await send(m);
      await applied(m);
    }
    const revoke = { ...schedule('303', 2), type: 'schedule.revoked' as const };
    await send(revoke);
    await applied(revoke);
    // Whole days in UTC: midnight to midnight after the 10th, on the lock.
    expect(await keysOn(locks['301'])).toEqual([expect.objectContaining({ validFrom: '2030-03-09T00:00:00.000Z', validTo: '2030-03-11T00:00:00.000Z' })]);
    const before302 = await keysOn(locks['302']);
    expect(before302).toEqual([expect.objectContaining({ validFrom: '2030-03-09T00:00:00.000Z', validTo: '2030-03-11T00:00:00.000Z' })]);
    expect(await keysOn(locks['303'])).toEqual([]);

    await s.layout.setSiteTime(company, siteId, { time_zone: 'America/New_York' });

    const event = await retimed(days.ref_id);
    // 00:00 EST on the 9th to 00:00 EDT after the 10th (the clocks go forward on the 10th).
    const validity = { check_in: '2030-03-09T05:00:00.000Z', check_out: '2030-03-11T04:00:00.000Z' };
    expect(event).toMatchObject({
      subject: 'employee',
      validity,
      reason: "Re-timed: the site's time zone changed from UTC to America/New_York",
      sequence: 1,
    });
    expect(event.event_id).toMatch(/^rt_[0-9a-f]{24}$/);
    expect(event.credentials).toEqual([
      expect.objectContaining({ type: 'EKEY', lockId: locks['301'], validFrom: validity.check_in, validTo: validity.check_out }),
    ]);
    // Changed in place on the lock (the same key, the New York days), and so recorded.
    const [key] = await keysOn(locks['301']);
    expect(key).toMatchObject({ keyId: event.credentials[0].keyId, validFrom: validity.check_in, validTo: validity.check_out });
    expect((await stored(days))?.desired).toEqual([expect.objectContaining({ validFrom: validity.check_in, validTo: validity.check_out })]);

    // Told once: a redelivery of the re-timing finds the schedule in the site's time and says nothing new.
    const siteVersion = (await s.app.ctx.db.collection('replica_location_companies').findOne<{ version: number }>({ _id: company as never }))?.version;
    const again = { kind: 'schedule', company_id: company, site_id: siteId, version: siteVersion, schedule_id: days.schedule_id, reason: event.reason };
    await s.pub.sendToQueue(QUEUES.provisioningSiteRetimes.name, again);
    await waitFor(() => text().includes("schedule already in the site's time"), { what: 'the redelivery seen' });
    expect(accessOf(days.ref_id).filter((a) => a.reason)).toHaveLength(1);

    // Instants stay where they were; a revoked schedule gets nothing back.
    expect(await keysOn(locks['302'])).toEqual(before302);
    expect(accessOf(instants.ref_id).filter((a) => a.reason)).toEqual([]);
    expect(await keysOn(locks['303'])).toEqual([]);
    expect(accessOf(revoked.ref_id).filter((a) => a.reason)).toEqual([]);
    expect(await stored(revoked)).toMatchObject({ state: 'revoked', applied_version: 2, desired: [] });
  });
});
