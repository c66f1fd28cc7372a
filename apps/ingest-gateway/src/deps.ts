import type { Auth } from '@smartlock/auth';
import type { LongPoll } from '@smartlock/http';
import type { Broker } from '@smartlock/messaging';
import type { Logger } from '@smartlock/observability';
import type { BookingRows } from './bookings/record';
import type { Config } from './config';
import type { EventStore } from './events/store';
import type { KnownSite } from './ingest/site';
import type { GatewayMetrics } from './metrics';
import type { UnsettledEvents } from './publish/unsettled';

/** The injectable clock: tests move it instead of sleeping (duplicate window, relay back-off). */
export type Clock = () => Date;

/** What every use case of the gateway works with. */
export interface Deps {
  config: Config;
  logger: Logger;
  /** The booking events' records: every read and write of them (events/store.ts). */
  events: EventStore;
  broker: Broker;
  auth: Auth;
  now: Clock;
  /** The X-Site-Id of a generic ingest, checked against the layout (ingest/site.ts). */
  knownSite: KnownSite;
  metrics: GatewayMetrics;
  /** Events published here whose worker has not reported yet (publish/unsettled.ts). */
  unsettled: UnsettledEvents;
  /** `GET /webhook/events/:eventId?wait=`: woken by the status reports this instance applies. */
  eventWaits: LongPoll;
  /** A site's IANA zone from the layout replica (null: none set, or not known here). */
  siteZone: (companyId: string, siteId: string) => Promise<string | null>;
  /** The portal's booking rows, written off the ingest's answer and made certain before a report is acknowledged (bookings/record.ts). */
  bookingRows: BookingRows;
}
