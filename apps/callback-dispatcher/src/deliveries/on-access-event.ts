import { createHash } from 'node:crypto';
import type { AccessEventMessage, GuestChannel } from '@smartlock/contracts';
import { SecretKey, encryptSecret } from '@smartlock/auth';
import { Broker, MessageContext, QUEUES } from '@smartlock/messaging';
import type { GuestMessageDoc } from '../models';
import { channelNotConfigured } from '../guest/channels';
import type { EndpointCache } from '../endpoints/cache';
import { composeEmail, composeSms } from '../guest/compose';
import { deliveryIdFor, serializeCallbackBody } from './body';
import type { WorkMessage } from './deliver';
import type { DeliveryStore, NewDelivery } from './store';
import type { RecentlyEnqueued } from './enqueued';

export interface AccessEventDeps {
  store: DeliveryStore;
  endpoints: EndpointCache;
  broker: Broker;
  key: SecretKey;
  channels: { email: boolean; sms: boolean };
  keyLinkBase: string;
  /** Deliveries enqueued or attempted here: their first attempt sends from the message, without a read. */
  enqueued: RecentlyEnqueued;
  /** The company's endpoint takes an attempt at once (a free slot, not failing): the first attempt runs here. */
  attemptHere(companyId: string): boolean;
}

/**
 * A guest message: record first, then enqueue. A redelivered access event finds the record: if it is
 * still pending its message is published again (the first publish may not have happened before a
 * crash); the duplicate is harmless, since an attempt checks the status before sending.
 */
async function recordAndEnqueue(store: DeliveryStore, doc: GuestMessageDoc, broker: Broker, correlationId: string, company: string): Promise<void> {
  if (!(await store.recordGuestMessage(doc))) return;
  await broker.sendToQueue(QUEUES.dispatcherGuestMessages.name, { id: doc._id, company, trigger: 'scheduled' }, { correlationId, messageId: doc._id });
}

/**
 * A guest message that is not to be sent (no contact data, its channel not configured), recorded so
 * the portal tells why. Most bookings carry no contact data, so this is on the booking path: written
 * once, without waiting (the access event's consumer slot is not held), group-committed with others
 * (store.recordGuestNotSent); a lost record loses the reason shown on the portal, never a message.
 */
function recordNotSent(store: DeliveryStore, doc: GuestMessageDoc, ctx: MessageContext): void {
  store
    .recordGuestNotSent(doc)
    .catch((err: Error) =>
      ctx.logger.warn('could not record why a guest message is not sent', { guestMessageId: doc._id, reason: doc.reason, err: err.message }),
    );
}

function guestMessageId(eventId: string, event: string, channel: GuestChannel | 'none'): string {
  return `gst_${createHash('sha256').update(`${eventId}|${event}|${channel}`).digest('hex').slice(0, 32)}`;
}

/**
 * access.events → one callback delivery (when the company has an endpoint) and one message per guest
 * channel (provisioned and revoked, when the booking carried guest.email / guest.phone), side by side.
 *
 * A delivery's message carries what its record starts with; the record is written once, at its first
 * attempt, with that attempt's outcome (deliver.ts), not here and then updated. The first attempt runs
 * here, as the deliveries queue's consumer would run it (broker.handleHere: its retries and dead
 * letter take that queue's paths), when the endpoint can take it at once; otherwise the message is
 * enqueued, so an endpoint that is slow, saturated or failing holds no more of this consumer than its
 * few attempts already running. A copy of the access event (the broker's redelivery, or one this
 * process handled a moment ago) reads the record first and enqueues nothing when the delivery is
 * settled.
 */
export async function onAccessEvent(deps: AccessEventDeps, msg: AccessEventMessage, ctx: MessageContext): Promise<void> {
  const outcomes = await Promise.allSettled([callback(deps, msg, ctx), guestMessages(deps, msg, ctx)]);
  for (const o of outcomes) if (o.status === 'rejected') throw o.reason;
}

async function callback(deps: AccessEventDeps, msg: AccessEventMessage, ctx: MessageContext): Promise<void> {
  const { store, broker, key } = deps;
  const endpoint = await deps.endpoints.get(msg.company_id);
  if (!endpoint) {
    ctx.logger.debug('no callback endpoint for the company; no delivery', { companyId: msg.company_id });
    return;
  }
  const id = deliveryIdFor(msg.event_id, msg.type, msg.company_id);
  const copy = ctx.redelivered || deps.enqueued.seen(id);
  if (copy && (await store.deliverySettled(id))) return;
  const delivery: NewDelivery = {
    _id: id,
    company_id: msg.company_id,
    reference_id: msg.reference_id,
    event: msg.type,
    event_id: msg.event_id,
    occurred_at: msg.occurred_at,
    body: encryptSecret(serializeCallbackBody(msg, id), key),
  };
  const work: WorkMessage = { id, company: msg.company_id, trigger: 'scheduled', delivery };
  const options = { correlationId: ctx.correlationId, messageId: id };
  if (!copy) {
    deps.enqueued.remember(id);
    if (deps.attemptHere(msg.company_id)) return broker.handleHere(QUEUES.dispatcherDeliveries, work, options);
  }
  return broker.sendToQueue(QUEUES.dispatcherDeliveries.name, work, options);
}

/**
 * The access event's guest messages: one per channel the booking gave contact data for, recorded and
 * enqueued; recorded `not_sent` when its channel is not configured, and once without a channel when
 * the booking had neither an e-mail address nor a phone number. A failed provisioning issued nothing
 * to send and records nothing.
 */
async function guestMessages(deps: AccessEventDeps, msg: AccessEventMessage, ctx: MessageContext): Promise<void> {
  const { store, broker, key } = deps;
  if (msg.type === 'access.failed') return;
  const record = { company_id: msg.company_id, reference_id: msg.reference_id, event: msg.type, event_id: msg.event_id, attempts: 0, sent_at: null };
  const targets: [GuestChannel, string | undefined, boolean, () => unknown][] = [
    ['email', msg.guest?.email, deps.channels.email, () => composeEmail(msg, deps.keyLinkBase)],
    ['sms', msg.guest?.phone, deps.channels.sms, () => ({ text: composeSms(msg, deps.keyLinkBase) })],
  ];
  if (!targets.some(([, to]) => to)) {
    const doc: GuestMessageDoc = {
      _id: guestMessageId(msg.event_id, msg.type, 'none'),
      ...record,
      channel: null,
      content: null,
      status: 'not_sent',
      reason: 'no_contact',
      last_error: 'the booking had no e-mail address or phone number',
    };
    recordNotSent(store, doc, ctx);
    return;
  }
  for (const [channel, to, enabled, compose] of targets) {
    if (!to) continue;
    const id = guestMessageId(msg.event_id, msg.type, channel);
    if (!enabled) {
      // Per booking, so that "the guest got nothing" is answered by a search for its reference (the
      // start-up warning says which variable is missing). The address is not logged.
      ctx.logger.info('guest message not sent: its channel is not configured', {
        channel,
        event: msg.type,
        companyId: msg.company_id,
        referenceId: msg.reference_id,
      });
      const doc: GuestMessageDoc = {
        _id: id,
        ...record,
        channel,
        content: null,
        status: 'not_sent',
        reason: 'channel_not_configured',
        last_error: channelNotConfigured(channel),
      };
      recordNotSent(store, doc, ctx);
      continue;
    }
    await recordAndEnqueue(
      store,
      {
        _id: id,
        ...record,
        channel,
        content: encryptSecret(JSON.stringify({ to, ...(compose() as object) }), key),
        status: 'pending',
        reason: null,
        last_error: null,
      },
      broker,
      ctx.correlationId,
      msg.company_id,
    );
  }
}
