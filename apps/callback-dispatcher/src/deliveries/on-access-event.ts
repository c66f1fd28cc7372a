import { createHash } from 'node:crypto';
import type { AccessEventMessage } from '@smartlock/contracts';
import { SecretKey, encryptSecret } from '@smartlock/auth';
import { insertOnce, Model } from '@smartlock/db';
import { Broker, MessageContext, QUEUES } from '@smartlock/messaging';
import type { DispatcherModels, GuestChannel } from '../models';
import type { EndpointCache } from '../endpoints/cache';
import { composeEmail, composeSms } from '../guest/compose';
import { deliveryIdFor, serializeCallbackBody } from './body';
import type { RecentlyRecorded } from './recorded';

export interface AccessEventDeps {
  models: DispatcherModels;
  endpoints: EndpointCache;
  broker: Broker;
  key: SecretKey;
  channels: { email: boolean; sms: boolean };
  keyLinkBase: string;
  /** Deliveries recorded here: their first attempt in this process sends without reading them back. */
  recorded: RecentlyRecorded;
}

/**
 * Record first (unique _id; concurrent messages' records group-committed), then enqueue. A
 * redelivered access event finds the record: if it is still pending its message is published again
 * (the first publish may not have happened before a crash); the duplicate is harmless, since an
 * attempt checks the status before sending and one process never runs two attempts of one delivery
 * at once.
 */
async function recordAndEnqueue<T extends { _id: string; status: string }>(
  model: Model<T>,
  doc: T,
  queue: string,
  broker: Broker,
  correlationId: string,
  company: string,
  stored?: (doc: T) => void,
): Promise<void> {
  if (await insertOnce(model, doc)) {
    stored?.(doc);
  } else {
    const current = (await model.findById(doc._id, { status: 1 }).lean()) as { status: string } | null;
    if (current?.status !== 'pending') return;
  }
  await broker.sendToQueue(queue, { id: doc._id, company, trigger: 'scheduled' }, { correlationId, messageId: doc._id });
}

function guestMessageId(eventId: string, event: string, channel: GuestChannel): string {
  return `gst_${createHash('sha256').update(`${eventId}|${event}|${channel}`).digest('hex').slice(0, 32)}`;
}

/**
 * access.events → one callback delivery (when the company has an endpoint) and one message per guest
 * channel (provisioned and revoked, when the booking carried guest.email / guest.phone). Only records
 * and enqueues: sending happens on the dispatcher's own queues, so a slow endpoint never holds this
 * consumer.
 */
export async function onAccessEvent(deps: AccessEventDeps, msg: AccessEventMessage, ctx: MessageContext): Promise<void> {
  const { models, broker, key } = deps;
  const endpoint = await deps.endpoints.get(msg.company_id);
  if (endpoint) {
    const id = deliveryIdFor(msg.event_id, msg.type, msg.company_id);
    await recordAndEnqueue(
      models.Delivery,
      {
        _id: id,
        company_id: msg.company_id,
        reference_id: msg.reference_id,
        event: msg.type,
        event_id: msg.event_id,
        occurred_at: new Date(msg.occurred_at),
        body: encryptSecret(serializeCallbackBody(msg, id), key),
        status: 'pending',
        attempts: 0,
        attempt_log: [],
        last_status_code: null,
        last_error: null,
        delivered_at: null,
        dead_at: null,
        dead_reason: null,
      },
      QUEUES.dispatcherDeliveries.name,
      broker,
      ctx.correlationId,
      msg.company_id,
      (stored) => deps.recorded.remember(stored),
    );
  } else {
    ctx.logger.debug('no callback endpoint for the company; no delivery', { companyId: msg.company_id });
  }

  if (msg.type === 'access.failed' || !msg.guest) return;
  const targets: [GuestChannel, string | undefined, () => unknown][] = [
    ['email', deps.channels.email ? msg.guest.email : undefined, () => composeEmail(msg, deps.keyLinkBase)],
    ['sms', deps.channels.sms ? msg.guest.phone : undefined, () => ({ text: composeSms(msg, deps.keyLinkBase) })],
  ];
  for (const [channel, to, compose] of targets) {
    if (!to) continue;
    const id = guestMessageId(msg.event_id, msg.type, channel);
    await recordAndEnqueue(
      models.GuestMessage,
      {
        _id: id,
        company_id: msg.company_id,
        reference_id: msg.reference_id,
        event: msg.type,
        event_id: msg.event_id,
        channel,
        content: encryptSecret(JSON.stringify({ to, ...(compose() as object) }), key),
        status: 'pending',
        attempts: 0,
        last_error: null,
        sent_at: null,
      },
      QUEUES.dispatcherGuestMessages.name,
      broker,
      ctx.correlationId,
      msg.company_id,
    );
  }
}
