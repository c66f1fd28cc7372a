import { type LayoutReplica, type ReplicaNode, ReplicaUnavailableError } from '@smartlock/layout';
import { boundedCache } from '@smartlock/db';
import { HttpError } from '@smartlock/http';
import type { Logger } from '@smartlock/observability';

export const siteNotFound = (site: string) => `Site ${site} not found in the company's layout`;

/**
 * Whether the X-Site-Id of a generic ingest is a site of the key's company, from the gateway's
 * replica of the layout (libs/layout: fed by location.events, rebuilt from location-api's snapshot);
 * the header may give the site's `_id` or its external id, and the site's `_id` is returned.
 *
 * A site the replica does not know (or a company whose replica another consumer is building right
 * now) is looked for once more in a fresh snapshot (it may have been created a moment ago), at most
 * once per company per `recheckMs`, so a client repeating a wrong id cannot make the gateway fetch
 * whole layouts in a loop. Between those rechecks the replica is given up to `catchUpMs` to apply
 * a location.events message still on its way: an integrator who sets a site's external id and
 * sends a booking under it the next moment must not get a 404 because our queue was a few
 * milliseconds behind (seen in CI). Then it is a 404. If the layout cannot be
 * read at all (location-api unreachable for a company the replica has never seen), the event is
 * accepted with the site as sent: the worker ends it FAILED `Site not found` if the site is wrong
 * (SPEC Errors), and ingest does not stop with location-api.
 */
export function siteChecker(replica: LayoutReplica, logger: Logger, { recheckMs = 10_000, catchUpMs = 1000 } = {}) {
  const recheckedAt = boundedCache<string, number>({ max: 10_000, ttlMs: Infinity });
  const due = (companyId: string) => Date.now() - (recheckedAt.peek(companyId) ?? 0) >= recheckMs;
  return async function knownSite(companyId: string, site: string, correlationId: string): Promise<string> {
    // Another consumer is building this company's replica right now: the rebuild below waits for it.
    const look = () =>
      replica.findSite(companyId, site).catch((err: unknown): ReplicaNode | null => {
        if (!(err instanceof ReplicaUnavailableError)) throw err;
        return null;
      });
    try {
      let found = await look();
      if (!found && due(companyId)) {
        recheckedAt.set(companyId, Date.now());
        await replica.rebuild(companyId);
        found = await replica.findSite(companyId, site);
      } else if (!found) {
        // Looks at 50, 150, 350, 750 ms...: four reads of the replica within the default second.
        for (let wait = 50, spent = 0; !found && spent + wait <= catchUpMs; spent += wait, wait *= 2) {
          await new Promise((r) => setTimeout(r, wait));
          found = await look();
        }
      }
      if (found) return found._id;
    } catch (err) {
      logger.warn('layout not readable: the site of a generic ingest is not checked', { companyId, siteId: site, correlationId, err: (err as Error).message });
      return site;
    }
    throw new HttpError(404, siteNotFound(site));
  };
}
export type KnownSite = ReturnType<typeof siteChecker>;
