import type { AccessEventMessage } from '@smartlock/contracts';
import { captureLogger, waitFor } from '@smartlock/testing';
import { bookingEvent, companyId, publishEvent, waitFinal, workerStack, WorkerStack } from '../test-support/harness';

jest.setTimeout(120_000);

/**
 * Issue 48, item 2: a booking's dates as hotels send them are resolved in its site's time. Sites in
 * New York (west of UTC), Sydney and Berlin (east), each across a night the clocks change.
 */
describe("a stay's dates in the site's time zone, across daylight saving", () => {
  let s: WorkerStack;
  const { logger } = captureLogger('provisioning-worker');
  const sites: Record<string, { company: string; siteId: string; locks: Record<string, string> }> = {};
  let n = 0;

  beforeAll(async () => {
    s = await workerStack('site_time', logger);
    for (const zone of ['America/New_York', 'Australia/Sydney', 'Europe/Berlin']) {
      const company = companyId();
      sites[zone] = {
        company,
        ...(await s.layout.seed(s.app.ctx.db, company, [{ name: '101' }], { site: { time_zone: zone, check_in_time: '15:00', check_out_time: '11:00' } })),
      };
    }
  });
  afterAll(() => s?.stop());

  /** A booking of the zone's site with these dates: the e-key on its door, and the access.provisioned. */
  async function stay(zone: string, check_in: string, check_out: string) {
    const { company, siteId, locks } = sites[zone];
    const ev = await publishEvent(s.pub, bookingEvent(company, siteId, `st-${++n}-${Date.now()}`, 1, 'BOOKING_CREATE', { room: '101', check_in, check_out }));
    expect(await waitFinal(s.t, ev.event_id)).toMatchObject({ status: 'COMPLETED' });
    const provisioned = (await waitFor(() => s.t.access.find((a) => a.event_id === ev.event_id && a.type === 'access.provisioned'))) as AccessEventMessage;
    const door = (await s.sim.sim.get(`/locks/${locks['101']}`)).data.ekeys.find((k: { validFrom: string }) =>
      provisioned.credentials.some((c) => c.keyId === (k as { keyId?: number }).keyId),
    );
    return { provisioned, door };
  }

  it('New York: "2030-03-09" to "2030-03-11" opens from 15:00 EST to 11:00 EDT, on the lock, the credentials and the validity', async () => {
    const { provisioned, door } = await stay('America/New_York', '2030-03-09', '2030-03-11');
    const validity = { check_in: '2030-03-09T20:00:00.000Z', check_out: '2030-03-11T15:00:00.000Z' };
    expect(provisioned.validity).toEqual(validity);
    expect(provisioned.site_time_zone).toBe('America/New_York');
    expect(provisioned.credentials[0]).toMatchObject({ validFrom: validity.check_in, validTo: validity.check_out });
    expect(door).toMatchObject({ validFrom: validity.check_in, validTo: validity.check_out });
  });

  it('Sydney, the night the clocks go forward: the check-out hour after the change, a time in the gap moved to 03:00 AEDT', async () => {
    const dates = await stay('Australia/Sydney', '2030-10-05', '2030-10-07');
    // 15:00 AEST (+10:00) and 11:00 AEDT (+11:00).
    expect(dates.provisioned.validity).toEqual({ check_in: '2030-10-05T05:00:00.000Z', check_out: '2030-10-07T00:00:00.000Z' });
    const gap = await stay('Australia/Sydney', '2030-10-06T02:30:00.000', '2030-10-08');
    expect(gap.provisioned.validity?.check_in).toBe('2030-10-05T16:00:00.000Z');
    expect(gap.door).toMatchObject({ validFrom: '2030-10-05T16:00:00.000Z' });
  });

  it('New York and Berlin, the nights the clocks go back: a time that occurs twice is its earlier instant', async () => {
    const ny = await stay('America/New_York', '2030-11-03T01:30:00.000', '2030-11-04');
    expect(ny.provisioned.validity).toEqual({ check_in: '2030-11-03T05:30:00.000Z', check_out: '2030-11-04T16:00:00.000Z' });
    const berlin = await stay('Europe/Berlin', '2030-10-27T02:30:00.000', '2030-10-28');
    expect(berlin.provisioned.validity).toEqual({ check_in: '2030-10-27T00:30:00.000Z', check_out: '2030-10-28T10:00:00.000Z' });
  });

  it('a value with Z or an offset is that instant, whatever the zone', async () => {
    const { provisioned } = await stay('America/New_York', '2030-03-09T15:00:00.000Z', '2030-03-11T11:00:00.000Z');
    expect(provisioned.validity).toEqual({ check_in: '2030-03-09T15:00:00.000Z', check_out: '2030-03-11T11:00:00.000Z' });
  });
});
