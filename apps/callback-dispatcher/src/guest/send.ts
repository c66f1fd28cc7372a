import type { Counter } from 'prom-client';
import type { GuestMessageNotSentReason } from '@smartlock/contracts';
import { SecretKey, decryptSecret } from '@smartlock/auth';
import { DeadLetterInfo, MessageContext, PermanentError, isPermanent } from '@smartlock/messaging';
import type { WorkMessage } from '../deliveries/deliver';
import type { DeliveryStore } from '../deliveries/store';
import type { EmailContent } from './compose';
import { EmailSender, SmsSender, channelNotConfigured } from './channels';

export interface GuestDeps {
  store: DeliveryStore;
  key: SecretKey;
  email?: EmailSender;
  sms?: SmsSender;
  failed: Counter<string>;
  /** Guest messages per company and channel: a leaked ingest URL must not become an SMS pump. */
  limit: { take(key: string): Promise<boolean>; points: number };
}

/** A recorded message's decrypted content: the address or number, the SMS text, the e-mail's parts. */
type GuestContent = { to: string; text: string } & Partial<EmailContent>;

/**
 * One e-mail or SMS to a guest. Transient failures go back to the broker's retry schedule (the same
 * schedule as callbacks, on its own queue, so they never hold a callback). A refused address is
 * permanent: recorded `failed` with the reason, logged as an error and counted, never retried. Past
 * the company's hourly quota, or with its channel no longer configured, it is recorded `not_sent`
 * with the reason.
 */
export async function sendGuestMessage(deps: GuestDeps, msg: WorkMessage, ctx: MessageContext): Promise<void> {
  const { store } = deps;
  // The message in hand owns the guest message's record: the broker gives it to one consumer at a time.
  const doc = await store.takeGuestAttempt(msg.id);
  if (!doc) {
    ctx.logger.info('guest message unknown or already settled', { guestMessageId: msg.id });
    return;
  }
  const channel = doc.channel;
  if (!channel || !doc.content) throw new PermanentError(`guest message ${doc._id} is pending without a channel or content`);
  const notSent = async (reason: GuestMessageNotSentReason, text: string, outcome: string) => {
    await store.guestNotSent(doc._id, reason, text);
    deps.failed.inc({ channel, outcome });
    ctx.logger.warn(`guest message not sent: ${text}`, { guestMessageId: doc._id, channel, referenceId: doc.reference_id });
  };
  const { email, sms } = deps;
  const send = channel === 'email' ? email && ((c: GuestContent) => email(c.to, c as EmailContent)) : sms && ((c: GuestContent) => sms(c.to, c.text));
  // Its channel was configured when the message was recorded, and is not now (a restart with another configuration).
  if (!send) return notSent('channel_not_configured', channelNotConfigured(channel), 'not_configured');
  if (!(await deps.limit.take(`${doc.company_id}|${channel}`))) {
    return notSent('rate_limited', `rate limited: more than ${deps.limit.points} guest messages of this channel per hour for the company`, 'rate_limited');
  }
  try {
    await send(JSON.parse(decryptSecret(doc.content, deps.key)) as GuestContent);
  } catch (err) {
    const reason = (err as Error).message;
    if (isPermanent(err)) {
      await store.guestRefused(doc._id, reason);
      deps.failed.inc({ channel, outcome: 'refused' });
      ctx.logger.error('guest message refused; not retried', { guestMessageId: doc._id, channel, referenceId: doc.reference_id, reason });
      return;
    }
    await store.guestAttemptFailed(doc._id, reason);
    throw err;
  }
  await store.guestSent(doc._id);
  ctx.logger.info('guest message sent', { guestMessageId: doc._id, channel, attempt: doc.attempts });
}

export async function onGuestDeadLetter(deps: GuestDeps, msg: WorkMessage | undefined, ctx: MessageContext, info: DeadLetterInfo) {
  const doc = msg?.id ? await deps.store.guestDead(msg.id, info.reason) : null;
  deps.failed.inc({ channel: doc?.channel ?? 'unknown', outcome: 'dead_lettered' });
  ctx.logger.error('guest message dead-lettered', { alert: 'access.failed', guestMessageId: msg?.id, reason: info.reason, retries: info.retryCount });
}
