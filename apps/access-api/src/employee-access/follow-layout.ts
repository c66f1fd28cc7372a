import { randomUUID } from 'node:crypto';
import type { LocationEventMessage } from '@smartlock/contracts';
import type { Model } from '@smartlock/db';
import type { LayoutReplica } from '@smartlock/layout';
import type { Broker, MessageContext } from '@smartlock/messaging';
import type { Logger } from '@smartlock/observability';
import { layoutRows } from './layout';
import { publishSchedule } from './publish';
import { regrant, sameGrants } from './resolve';
import type { ScheduleDoc } from './schedule.schema';
import { VersionDeps, nextVersion } from './versions';

export interface FollowDeps extends VersionDeps {
  schedules: Model<ScheduleDoc>;
  replica: LayoutReplica;
  broker: Broker;
  logger: Logger;
}

const hasWildcard = (s: ScheduleDoc) => s.rules.some((r) => Object.values(r).includes('*'));

/**
 * Schedules follow the layout: the company's active schedules with a `*` rule (PERMANENT, and TIMED
 * ones not yet over) are resolved again against the replica; each whose rooms and beds changed gets a
 * new version (decided by nextVersion's insert, so several access-api processes handling events of one
 * company publish each version once), published through the outbox.
 */
export async function reresolveCompany(deps: FollowDeps, companyId: string, correlationId: string): Promise<number> {
  // The `*` test is done here: FerretDB 1.x and MongoDB differ on $elemMatch over several fields.
  const active = await deps.schedules.find({ company_id: companyId, status: 'active', end: { $gt: new Date() } }).lean<ScheduleDoc[]>();
  const following = active.filter(hasWildcard);
  if (!following.length) return 0;
  const rows = await layoutRows(deps.replica, companyId);
  let changed = 0;
  for (const s of following) {
    const grants = regrant(s.rules, rows);
    const doc = await nextVersion(deps, s._id, (cur) => (cur.status === 'active' && !sameGrants(cur.locations, grants) ? { locations: grants } : null));
    if (!doc) continue;
    changed += 1;
    deps.logger.info('employee schedule follows the layout', { scheduleId: String(doc._id), companyId, version: doc.version, locations: doc.locations.length, correlationId });
    await publishSchedule(deps, doc, correlationId);
  }
  return changed;
}

/**
 * How schedules learn of layout changes:
 * - onLocationEvent, access-api's location.events handler: the message goes into the replica, then the
 *   company's schedules are re-resolved (on every message, a redelivered one included);
 * - sweep, with the outbox relay: a company whose replica version moved since this process last
 *   re-resolved it (a version applied by the replica's gap check or rebuild, not by a message handled
 *   here; and every company once after a start) is re-resolved.
 */
export function layoutFollower(deps: FollowDeps) {
  const resolvedAt = new Map<string, number>();
  async function follow(companyId: string, correlationId: string) {
    const version = await deps.replica.version(companyId);
    await reresolveCompany(deps, companyId, correlationId);
    resolvedAt.set(companyId, version);
  }
  return {
    async onLocationEvent(msg: LocationEventMessage, ctx: MessageContext): Promise<void> {
      await deps.replica.apply(msg);
      await follow(msg.company_id, ctx.correlationId || msg.correlation_id);
    },
    async sweep(): Promise<void> {
      const companies = (await deps.schedules.distinct('company_id', { status: 'active' })) as string[];
      for (const c of companies) if ((await deps.replica.version(c)) !== resolvedAt.get(c)) await follow(c, randomUUID());
    },
  };
}
