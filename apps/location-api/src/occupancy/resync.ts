import axios from 'axios';
import { HttpError } from '@smartlock/http';

export interface ResyncSources {
  INGEST_GATEWAY_URL: string;
  ACCESS_API_URL: string;
  ADMIN_TOKEN: string;
}

export interface ResyncResult {
  booking_events: number;
  access_events: number;
}

type Answer = { replayed?: unknown; data?: { replayed?: unknown } } | undefined;

/**
 * The re-sync of location-api's two logs of guests (occupancy.ts, bookings.ts) from their sources:
 * the gateway sends the company's booking events again and access-api its credential messages, each
 * to location-api's own queue, where the usual consumers insert what the logs lack (entries are
 * keyed by their message, so nothing is counted twice). Both are asked at once; a source that fails
 * makes it a 503 naming it, and the call can simply be made again.
 */
export function occupancyResync(config: ResyncSources) {
  // What each source answers: the gateway's ingest envelope `{ success, replayed }`, access-api's API envelope `{ data: { replayed } }`.
  const ask = async (source: string, url: string, replayed: (body: Answer) => unknown, correlationId: string): Promise<number> => {
    try {
      const res = await axios.post<Answer>(url, undefined, {
        headers: { Authorization: `Bearer ${config.ADMIN_TOKEN}`, 'X-Correlation-Id': correlationId },
        // A replay streams the company's history once: minutes for a very large one, never forever
        // (the edge answers its caller after UPSTREAM_TIMEOUT_MS regardless; docs/operations.md "Re-syncing replicas").
        timeout: 10 * 60_000,
      });
      const n = replayed(res.data);
      if (typeof n !== 'number') throw new Error('unexpected answer');
      return n;
    } catch (err) {
      const status = axios.isAxiosError(err) && err.response ? ` (HTTP ${err.response.status})` : '';
      throw new HttpError(
        503,
        `Occupancy re-sync incomplete: ${source} did not replay${status}: ${(err as Error).message}; nothing is lost, send the request again`,
      );
    }
  };
  return async function resync(companyId: string, correlationId: string): Promise<ResyncResult> {
    const base = (u: string) => u.replace(/\/+$/, '');
    const [bookings, credentials] = await Promise.allSettled([
      ask('ingest-gateway', `${base(config.INGEST_GATEWAY_URL)}/admin/v1/companies/${companyId}/booking-events/replay`, (b) => b?.replayed, correlationId),
      ask('access-api', `${base(config.ACCESS_API_URL)}/admin/v1/companies/${companyId}/access-events/replay`, (b) => b?.data?.replayed, correlationId),
    ]);
    if (bookings.status === 'rejected') throw bookings.reason;
    if (credentials.status === 'rejected') throw credentials.reason;
    return { booking_events: bookings.value, access_events: credentials.value };
  };
}
export type OccupancyResync = ReturnType<typeof occupancyResync>;
