import type { CallbackEndpointConfig, IdentityEventMessage } from '@smartlock/contracts';
import { boundedCache } from '@smartlock/db';
import type { EndpointDoc } from '../models';
import { CALLBACK_EVENTS } from './on-identity-event';
import type { EndpointStore } from './store';

/** A safety net only: events keep entries current; an entry this old is read again all the same. */
const ENTRY_TTL_MS = 60_000;
/** Companies one process remembers (an entry is one endpoint configuration). */
const MAX_ENTRIES = 10_000;

export type EndpointCache = ReturnType<typeof endpointCache>;

/**
 * The callback endpoints this process signs with, kept in memory instead of read twice per delivery
 * (once when the access event is recorded, once per attempt). An entry is read from the replica
 * once (libs/db boundedCache: concurrent misses share the read), then kept current by
 * identity.events themselves: every dispatcher process gets them on a broadcast queue of its own
 * (signed by admin-api, like the replica's), so a changed URL or a rotated secret is used from the
 * next attempt on, in every process. A company without an endpoint is remembered too, until its
 * `callback.updated` arrives. The broadcast queue is lost while the broker connection is, and
 * events sent meanwhile with it: each time it is bound again the cache starts over (`clear`; a
 * read under way then does not refill it).
 */
export function endpointCache(store: Pick<EndpointStore, 'current'>, now: () => number = Date.now) {
  const entries = boundedCache<string, EndpointDoc | null>({ max: MAX_ENTRIES, ttlMs: ENTRY_TTL_MS, now });
  const versionOf = (e: EndpointDoc | null | undefined) => e?.version ?? 0;

  return {
    async get(companyId: string): Promise<EndpointDoc | null> {
      const read = await entries.get(companyId, (id) => store.current(id));
      // An event applied while the read was on its way is newer than what it found.
      const meanwhile = entries.peek(companyId);
      return meanwhile !== undefined && versionOf(meanwhile) > versionOf(read) ? meanwhile : read;
    },

    /** identity.events: a callback configuration newer than the one held replaces it. */
    apply(msg: IdentityEventMessage): void {
      if (!CALLBACK_EVENTS.has(msg.type)) return;
      const config = (msg.data as { endpoint?: CallbackEndpointConfig } | undefined)?.endpoint;
      if (!config || typeof config.version !== 'number' || typeof config.url !== 'string' || !config.auth) return;
      const companyId = String(config.company_id ?? msg.company_id);
      // Kept even for a company not asked for yet: its replica document may still be the older one.
      if (versionOf(entries.peek(companyId)) >= config.version) return;
      entries.set(companyId, { company_id: companyId, version: config.version, config: { ...config, company_id: companyId } });
    },

    clear(): void {
      entries.clear();
    },
  };
}
