import type { Connection } from '@smartlock/db';
import type {
  AccessEventType,
  CallbackEndpointConfig,
  EncryptedSecret,
  GuestChannel,
  GuestMessageNotSentReason,
  GuestMessageStatus,
} from '@smartlock/contracts';
import { deliveryModels } from './deliveries/store';
import { endpointModels } from './endpoints/store';

/**
 * One version of a company's callback endpoint in the replica (fed by identity.events `callback.*`):
 * `_id` is `<company>:<version>`; the company's endpoint is its highest version (endpoints/store.ts `current`).
 */
export interface EndpointDoc {
  _id?: string;
  company_id: string;
  version: number;
  config: CallbackEndpointConfig;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'dead';

/**
 * One callback delivery: one access event to one company's endpoint. `_id` is the deliveryId,
 * derived from (eventId, event, company), so a broker redelivery of the access event finds it.
 */
export interface DeliveryDoc {
  _id: string;
  company_id: string;
  reference_id: string;
  event: AccessEventType;
  event_id: string;
  occurred_at: Date;
  /** The exact body bytes, AES-256-GCM encrypted with SECRETS_KEY (they hold credentials). */
  body: EncryptedSecret;
  status: DeliveryStatus;
  attempts: number;
  /** Every attempt, in order (bounded: the retry schedule plus manual redeliveries). */
  attempt_log: AttemptRecord[];
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  dead_at: Date | null;
  dead_reason: string | null;
  created_at?: Date;
  updated_at?: Date;
}

export type AttemptTrigger = 'scheduled' | 'manual';

/** One attempt, kept inside its delivery document: recording it is the same single write that settles the attempt. */
export interface AttemptRecord {
  attempt: number;
  at: Date;
  trigger: AttemptTrigger;
  url: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

export type EndpointState = 'healthy' | 'failing' | 'disabled';

/**
 * The health of a company's callback endpoint (`_id` the company): `failing` since a delivery ran out
 * of retries with no success after it, `disabled` (its deliveries not sent, recorded dead: kept for
 * its recovery) after failing for CALLBACK_DISABLE_AFTER_MS or on a 410 Gone. No record: healthy.
 */
export interface EndpointHealthDoc {
  _id: string;
  state: EndpointState;
  failing_since: Date | null;
  last_failure: string | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
}

/**
 * One e-mail or SMS to a guest, or why none was sent (libs/contracts GuestMessageStatus); `_id` from
 * (eventId, event, channel). An access event whose booking had no contact data leaves one record
 * without a channel, so the portal tells "no contact data" from "nothing recorded".
 */
export interface GuestMessageDoc {
  _id: string;
  company_id: string;
  reference_id: string;
  event: AccessEventType;
  event_id: string;
  channel: GuestChannel | null;
  /** The rendered message, encrypted (it carries the passcode or card number); null when not to be sent. */
  content: EncryptedSecret | null;
  status: GuestMessageStatus;
  /** Why it was not sent (status `not_sent`), else null. */
  reason: GuestMessageNotSentReason | null;
  attempts: number;
  last_error: string | null;
  sent_at: Date | null;
  created_at?: Date;
}

const cache = new WeakMap<Connection, ReturnType<typeof build>>();

/** The dispatcher's models on its connection (built once per connection: mongoose refuses a second definition). */
export function dispatcherModels(conn: Connection) {
  let models = cache.get(conn);
  if (!models) cache.set(conn, (models = build(conn)));
  return models;
}

function build(conn: Connection) {
  return { ...endpointModels(conn), ...deliveryModels(conn) };
}
