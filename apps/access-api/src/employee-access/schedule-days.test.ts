import { DateTime } from 'luxon';
import { Types } from 'mongoose';
import { LocationEventMessage, LocationNodeState } from '@smartlock/contracts';
import { Connection, connectDb, ensureIndexes } from '@smartlock/db';
import { createLayoutReplica } from '@smartlock/layout';
import { Broker, EXCHANGES, createBroker } from '@smartlock/messaging';
import { MONGO_URL, TestVhost, captureLogger, createVhost, dropDatabases, uniqueDbName } from '@smartlock/testing';
import { reresolveCompany } from './follow-layout';
import { scheduleModels, scheduleStore } from './store';

const oid = () => new Types.ObjectId().toHexString();

/**
 * Issue 48, item 3: a TIMED schedule sent as dates alone lasts to the end of its last day in the
 * zone of each of its sites (as the worker gives each lock), not to that day's UTC midnight: access-api
 * keeps following the layout for it until then. West of UTC (Pago Pago, UTC-11) the last day is
 * still running although its UTC midnight has passed; east (Kiritimati, UTC+14) yesterday's last
 * day is over, although its end is within a day and a half.
 */
describe("employee schedules of whole local days follow the layout until their last day ends in their sites' zones", () => {
  const dbName = uniqueDbName('schedule_days');
  const { logger } = captureLogger('schedule-days');
  let db: Connection;
  let vhost: TestVhost;
  let broker: Broker;

  beforeAll(async () => {
    db = await connectDb({ url: MONGO_URL, dbName, logger });
    vhost = await createVhost('schedule_days');
    broker = createBroker({ url: vhost.url, logger, connectionName: 'schedule-days' });
    await broker.declareExchanges([EXCHANGES.employeeSchedules]);
    await broker.connect();
  });
  afterAll(async () => {
    await broker?.close(0);
    await vhost?.remove();
    await db?.close();
    await dropDatabases(dbName);
  });

  it('west: still followed on its last local day; east: not after it; UTC: not after it, though within the slack', async () => {
    const company = oid();
    const replica = createLayoutReplica({ db, logger });
    const { Schedule, ScheduleVersion } = scheduleModels(db);
    const deps = { schedules: scheduleStore({ Schedule, ScheduleVersion }), replica, broker, logger };
    await ensureIndexes([...replica.models, Schedule, ScheduleVersion]);
    let version = 0;
    const created = async (n: Omit<LocationNodeState, 'version' | 'external_id'>) => {
      const node = { external_id: null, ...n, version: ++version } as LocationNodeState;
      const msg: LocationEventMessage = {
        company_id: company,
        kind: 'node.created',
        version,
        commit_first: version,
        commit_last: version,
        occurred_at: new Date().toISOString(),
        node: { ...node, path: [] },
        correlation_id: 'days',
      };
      await replica.apply(msg);
      return node;
    };
    /** A site in `zone` with one room, and a TIMED schedule of whole days ending on `endDay` granting every room of the site. */
    async function siteWithSchedule(zone: string, endDay: string) {
      const site = await created({ level: 'site', _id: oid(), name: zone, time_zone: zone, check_in_time: '15:00', check_out_time: '11:00' });
      const building = await created({ level: 'building', _id: oid(), name: 'A', site_id: site._id });
      const floor = await created({ level: 'floor', _id: oid(), name: '1', site_id: site._id, building_id: building._id });
      const room = await created({ level: 'room', _id: oid(), name: '1', site_id: site._id, building_id: building._id, floor_id: floor._id, locks: [] });
      const doc = await deps.schedules.create({
        company_id: company,
        ref_id: `days-${zone}`,
        employee_id: oid(),
        contact: null,
        type: 'TIMED',
        access_type: 'EKEY',
        start: new Date(`${endDay}T00:00:00Z`),
        // As the route stores a date alone: its UTC midnight.
        end: new Date(`${endDay}T00:00:00Z`),
        start_day: endDay,
        end_day: endDay,
        rules: [{ site_id: site._id, room_id: '*' }],
        locations: [{ site: { _id: site._id, name: site.name }, room: { _id: room._id, name: room.name }, bed: null }],
      });
      if (!doc) throw new Error(`schedule days-${zone} not stored`);
      return { id: String(doc._id), site, floor, building };
    }
    const today = (zone: string) => DateTime.now().setZone(zone).toISODate() as string;
    const west = await siteWithSchedule('Pacific/Pago_Pago', today('Pacific/Pago_Pago'));
    const east = await siteWithSchedule('Pacific/Kiritimati', DateTime.now().setZone('Pacific/Kiritimati').minus({ days: 1 }).toISODate() as string);
    const utc = await siteWithSchedule('UTC', DateTime.utc().minus({ days: 1 }).toISODate() as string);

    // A room added to each site: only the schedules whose last day still runs at their site get it.
    for (const s of [west, east, utc])
      await created({ level: 'room', _id: oid(), name: '2', site_id: s.site._id, building_id: s.building._id, floor_id: s.floor._id, locks: [] });
    expect(await reresolveCompany(deps, company, 'days')).toBe(1);
    const versionOf = async (id: string) => (await Schedule.findById(id).lean())?.version;
    expect(await versionOf(west.id)).toBe(2);
    expect(await versionOf(east.id)).toBe(1);
    expect(await versionOf(utc.id)).toBe(1);
  });
});
