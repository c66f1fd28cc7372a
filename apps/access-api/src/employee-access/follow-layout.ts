import { randomUUID } from 'node:crypto';
import { localDayBound, type LocationEventMessage } from '@smartlock/contracts';
import type { LayoutReplica } from '@smartlock/layout';
import type { Broker, MessageContext } from '@smartlock/messaging';
import type { Logger } from '@smartlock/observability';
import { layoutRows } from './layout';
import { publishSchedule } from './publish';
import { regrant, sameGrants } from './resolve';
import type { ScheduleDoc, ScheduleStore } from './store';

export interface FollowDeps {
  schedules: ScheduleStore;
  replica: LayoutReplica;
  broker: Broker;
  logger: Logger;
}

/**
 * A schedule of whole local days (`end_day`) holds its last day's UTC midnight in `end`; the day ends
 * later in every zone, at the latest 36 h later (UTC-12). Schedules that old are read, and decided
 * by their sites' zones (stillRunning).
 */
const LAST_DAY_SLACK_MS = 36 * 3600_000;

/**
 * Whether the schedule is not over: its `end`, or, for one of whole local days, the end of its last
 * day in the zone of any of its sites (the sites of its grants and rules), as the worker gives each
 * lock (libs/contracts localDayBound). A site the replica does not know counts as UTC.
 */
async function stillRunning(replica: LayoutReplica, s: ScheduleDoc, now: number): Promise<boolean> {
  if (!s.end_day) return s.end.getTime() > now;
  const sites = new Set([...s.locations.map((g) => String(g.site._id)), ...s.rules.map((r) => r.site_id).filter((id): id is string => !!id && id !== '*')]);
  if (!sites.size) return s.end.getTime() + LAST_DAY_SLACK_MS > now;
  const zones = await Promise.all([...sites].map(async (id) => (await replica.node(s.company_id, id))?.time_zone ?? 'UTC'));
  return zones.some((zone) => localDayBound(s.end_day as string, 'end', zone).toMillis() > now);
}

/**
 * Schedules follow the layout: the company's active schedules with a `*` rule (PERMANENT, and TIMED
 * ones not yet over: for whole local days, not before their last day ended in their sites' zones) are resolved again against the replica; each whose rooms and beds changed gets a
 * new version (decided by nextVersion's insert, so several access-api processes handling events of one
 * company publish each version once), published through the outbox.
 */
export async function reresolveCompany(deps: FollowDeps, companyId: string, correlationId: string): Promise<number> {
  const now = Date.now();
  const wildcards = await deps.schedules.followingLayout(companyId, new Date(now - LAST_DAY_SLACK_MS));
  const running = await Promise.all(wildcards.map((s) => stillRunning(deps.replica, s, now)));
  const following = wildcards.filter((_, i) => running[i]);
  if (!following.length) return 0;
  const rows = await layoutRows(deps.replica, companyId);
  let changed = 0;
  for (const s of following) {
    const grants = regrant(s.rules, rows);
    const doc = await deps.schedules.nextVersion(s._id, (cur) =>
      cur.status === 'active' && !sameGrants(cur.locations, grants) ? { locations: grants } : null,
    );
    if (!doc) continue;
    changed += 1;
    deps.logger.info('employee schedule follows the layout', {
      scheduleId: String(doc._id),
      companyId,
      version: doc.version,
      locations: doc.locations.length,
      correlationId,
    });
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
      for (const c of await deps.schedules.companiesWithActive()) if ((await deps.replica.version(c)) !== resolvedAt.get(c)) await follow(c, randomUUID());
    },
  };
}
