import { randomUUID } from 'node:crypto';
import type { AccessEventMessage, EmployeeScheduleMessage } from '@smartlock/contracts';
import { Broker, EXCHANGES, QUEUES } from '@smartlock/messaging';
import type { RunningService } from '@smartlock/http';
import { captureLogger, waitFor } from '@smartlock/testing';
import { workerModels } from '../models';
import { LayoutSource, Tap, WorkerStack, companyId, workerStack } from '../test-support/harness';

jest.setTimeout(60_000);

describe('provisioning-worker: employee schedules converge the locks (real broker, database, simulator)', () => {
  const { logger, text } = captureLogger('provisioning-worker');
  const company = companyId();
  let w: WorkerStack;
  let pub: Broker;
  let app: RunningService;
  let layout: LayoutSource;
  let t: Tap;
  let sim: WorkerStack['sim'];

  beforeAll(async () => {
    w = await workerStack('provs', logger);
    ({ pub, app, layout, t, sim } = w);
    await pub.declareExchanges([EXCHANGES.employeeSchedules]);
    await pub.declareQueues([QUEUES.provisioningEmployeeSchedules]);
  });
  afterAll(() => w?.stop());

  it('issues on every room door and bed cabinet of the set, ignores an older version, revokes what left the set and everything on revoke', async () => {
    const { siteId, ids, locks } = await layout.seed(app.ctx.db, company, [{ name: 'A', beds: ['1'] }, { name: 'B' }]);
    const refId = `emp-${randomUUID().slice(0, 8)}`;
    const scheduleId = randomUUID();
    const day = 24 * 3600 * 1000;
    const startAt = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000).toISOString();
    const endAt = new Date(Date.parse(startAt) + 30 * day).toISOString();
    const msg = (version: number, type: EmployeeScheduleMessage['type'], rooms: { room: string; bed?: string }[]): EmployeeScheduleMessage => ({
      type,
      company_id: company,
      schedule_id: scheduleId,
      ref_id: refId,
      employee_id: 'emp-1',
      contact: 'cleaner@example.com',
      schedule_type: 'TIMED',
      access_types: ['EKEY', 'PASSCODE'],
      start: startAt,
      end: endAt,
      locations: rooms.map((r) => ({ site_id: siteId, room_id: ids[r.room], bed_id: r.bed ? ids[`${r.room}/${r.bed}`] : null })),
      version,
      occurred_at: new Date().toISOString(),
      correlation_id: randomUUID(),
    });
    const send = (m: EmployeeScheduleMessage) => pub.publish(EXCHANGES.employeeSchedules.name, m.type, m, { correlationId: m.correlation_id });
    const mine = async (lockId: string) => {
      const l = (await sim.sim.get(`/locks/${lockId}`)).data;
      return {
        ekeys: (l.ekeys ?? []).filter((k: { keyName: string }) => k.keyName.startsWith(refId)).length,
        passcodes: (l.passcodes ?? []).filter((p: { name: string }) => p.name.startsWith(refId)).length,
      };
    };
    const applied = async (v: number) =>
      (await workerModels(app.ctx.db).Schedule.findOne({ company_id: company, schedule_id: scheduleId }).lean())?.applied_version === v;
    const events = (type: string) => t.access.filter((a): a is AccessEventMessage => a.reference_id === refId && a.type === type);

    await send(msg(1, 'schedule.upserted', [{ room: 'A', bed: '1' }, { room: 'B' }]));
    const provisioned = await waitFor(() => events('access.provisioned').find((a) => a.sequence === 1), { what: 'access.provisioned v1' });
    expect(provisioned).toMatchObject({ company_id: company, subject: 'employee', validity: { check_in: startAt, check_out: endAt } });
    expect(provisioned.credentials.map((c) => `${c.type}@${c.lockId}`).sort()).toEqual(
      [locks.A, locks['A/1'], locks.B].flatMap((l) => [`EKEY@${l}`, `PASSCODE@${l}`]).sort(),
    );
    for (const l of [locks.A, locks['A/1'], locks.B]) expect(await mine(l)).toEqual({ ekeys: 1, passcodes: 1 });

    await send(msg(3, 'schedule.upserted', [{ room: 'B' }]));
    await waitFor(() => applied(3), { what: 'version 3 applied' });
    expect(events('access.revoked').find((a) => a.sequence === 3)?.credentials).toHaveLength(4);
    for (const l of [locks.A, locks['A/1']]) expect(await mine(l)).toEqual({ ekeys: 0, passcodes: 0 });
    expect(await mine(locks.B)).toEqual({ ekeys: 1, passcodes: 1 });

    // Older than what is applied: ignored, nothing comes back.
    await send(msg(2, 'schedule.upserted', [{ room: 'A' }]));
    await waitFor(() => text().includes('schedule version already superseded or applied; ignored'), { what: 'version 2 ignored' });
    expect(await mine(locks.A)).toEqual({ ekeys: 0, passcodes: 0 });

    await send(msg(4, 'schedule.revoked', [{ room: 'B' }]));
    await waitFor(() => applied(4), { what: 'version 4 applied' });
    expect(await mine(locks.B)).toEqual({ ekeys: 0, passcodes: 0 });
    expect(events('access.revoked').find((a) => a.sequence === 4)).toMatchObject({
      subject: 'employee',
      credentials: expect.arrayContaining([expect.objectContaining({ lockId: locks.B })]),
    });
    // Each credential was issued once (the operation log): 3 locks × e-key at version 1.
    const sent = (await sim.sim.get('/calls', { params: { path: '/v3/key/send' } })).data.calls as { lockId?: string }[];
    expect(sent.filter((c) => [locks.A, locks['A/1'], locks.B].includes(c.lockId as string))).toHaveLength(3);
  });
  it("a TIMED schedule of whole days covers the local days of each lock's site: New York (across its spring forward) and Tokyo", async () => {
    const other = companyId();
    const ny = await layout.seed(app.ctx.db, other, [{ name: 'N' }], {
      site: { time_zone: 'America/New_York', check_in_time: '15:00', check_out_time: '11:00' },
    });
    const tokyo = await layout.seed(app.ctx.db, other, [{ name: 'T' }], { site: { time_zone: 'Asia/Tokyo', check_in_time: '15:00', check_out_time: '11:00' } });
    const refId = `emp-${randomUUID().slice(0, 8)}`;
    const m: EmployeeScheduleMessage = {
      type: 'schedule.upserted',
      company_id: other,
      schedule_id: randomUUID(),
      ref_id: refId,
      employee_id: 'emp-2',
      contact: 'porter@example.com',
      schedule_type: 'TIMED',
      access_types: ['EKEY'],
      // What access-api stores for startDate 2030-03-09 and endDate 2030-03-10 (UTC midnights), with the days as sent.
      start: '2030-03-09T00:00:00.000Z',
      end: '2030-03-10T00:00:00.000Z',
      start_day: '2030-03-09',
      end_day: '2030-03-10',
      locations: [
        { site_id: ny.siteId, room_id: ny.ids.N, bed_id: null },
        { site_id: tokyo.siteId, room_id: tokyo.ids.T, bed_id: null },
      ],
      version: 1,
      occurred_at: new Date().toISOString(),
      correlation_id: randomUUID(),
    };
    await pub.publish(EXCHANGES.employeeSchedules.name, m.type, m, { correlationId: m.correlation_id });
    const provisioned = await waitFor(() => t.access.find((a) => a.reference_id === refId && a.type === 'access.provisioned'), { what: 'access.provisioned' });
    const key = async (lockId: string) =>
      ((await sim.sim.get(`/locks/${lockId}`)).data.ekeys as { keyName: string; validFrom: string; validTo: string }[]).find((k) =>
        k.keyName.startsWith(refId),
      );
    // New York: 00:00 EST on the 9th to 00:00 EDT after the 10th (the clocks went forward on the 10th).
    expect(await key(ny.locks.N)).toMatchObject({ validFrom: '2030-03-09T05:00:00.000Z', validTo: '2030-03-11T04:00:00.000Z' });
    // Tokyo (UTC+9): its own midnights.
    expect(await key(tokyo.locks.T)).toMatchObject({ validFrom: '2030-03-08T15:00:00.000Z', validTo: '2030-03-10T15:00:00.000Z' });
    expect(provisioned?.validity).toEqual({ check_in: '2030-03-08T15:00:00.000Z', check_out: '2030-03-11T04:00:00.000Z' });
  });

  it('a revoke whose first attempt failed on one lock: access.revoked names every lock once the retry applies it', async () => {
    const { siteId, ids, locks } = await layout.seed(app.ctx.db, company, [{ name: 'C' }, { name: 'D' }]);
    const refId = `emp-${randomUUID().slice(0, 8)}`;
    const scheduleId = randomUUID();
    const startAt = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000).toISOString();
    const endAt = new Date(Date.parse(startAt) + 7 * 24 * 3600 * 1000).toISOString();
    const msg = (version: number, type: EmployeeScheduleMessage['type']): EmployeeScheduleMessage => ({
      type,
      company_id: company,
      schedule_id: scheduleId,
      ref_id: refId,
      employee_id: 'emp-2',
      contact: 'porter@example.com',
      schedule_type: 'TIMED',
      access_types: ['EKEY'],
      start: startAt,
      end: endAt,
      locations: ['C', 'D'].map((room) => ({ site_id: siteId, room_id: ids[room], bed_id: null })),
      version,
      occurred_at: new Date().toISOString(),
      correlation_id: randomUUID(),
    });
    const send = (m: EmployeeScheduleMessage) => pub.publish(EXCHANGES.employeeSchedules.name, m.type, m, { correlationId: m.correlation_id });
    const applied = async (v: number) =>
      (await workerModels(app.ctx.db).Schedule.findOne({ company_id: company, schedule_id: scheduleId }).lean())?.applied_version === v;

    await send(msg(1, 'schedule.upserted'));
    await waitFor(() => applied(1), { what: 'version 1 applied' });
    await sim.sim.post('/failures', { path: '/v3/key/delete', lockId: locks.D, times: 1, errcode: -3002 });
    await send(msg(2, 'schedule.revoked'));
    await waitFor(() => applied(2), { what: 'version 2 applied' });
    const revoked = t.access.filter((a) => a.reference_id === refId && a.type === 'access.revoked' && a.sequence === 2).flatMap((a) => a.credentials);
    expect(new Set(revoked.map((c) => c.lockId))).toEqual(new Set([locks.C, locks.D]));
  });
});
