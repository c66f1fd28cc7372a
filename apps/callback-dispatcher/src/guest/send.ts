import type { Counter } from 'prom-client';
import { SecretKey, decryptSecret } from '@smartlock/auth';
import { DeadLetterInfo, MessageContext, PermanentError, isPermanent } from '@smartlock/messaging';
import type { DispatcherModels, GuestMessageDoc } from '../models';
import type { WorkMessage } from '../deliveries/deliver';
import type { EmailContent } from './compose';
import type { EmailSender, SmsSender } from './channels';

export interface GuestDeps {
  models: DispatcherModels;
  key: SecretKey;
  email?: EmailSender;
  sms?: SmsSender;
  failed: Counter<string>;
  /** Guest messages per company and channel: a leaked ingest URL must not become an SMS pump. */
  limit: { take(key: string): Promise<boolean>; points: number };
}

/**
 * One e-mail or SMS to a guest. Transient failures go back to the broker's retry schedule (the same
 * schedule as callbacks, on its own queue, so they never hold a callback). A refused address is
 * permanent: recorded `failed` with the reason, logged as an error and counted, never retried.
 */
export async function sendGuestMessage(deps: GuestDeps, msg: WorkMessage, ctx: MessageContext): Promise<void> {
  const { models } = deps;
  const doc = await models.GuestMessage.findOneAndUpdate({ _id: msg.id, status: 'pending' }, { $inc: { attempts: 1 } }, { new: true }).lean<GuestMessageDoc>();
  if (!doc) {
    ctx.logger.info('guest message unknown or already settled', { guestMessageId: msg.id });
    return;
  }
  if (!(await deps.limit.take(`${doc.company_id}|${doc.channel}`))) {
    const reason = `rate limited: more than ${deps.limit.points} guest messages of this channel per hour for the company`;
    await models.GuestMessage.updateOne({ _id: doc._id }, { $set: { status: 'failed', last_error: reason } });
    deps.failed.inc({ channel: doc.channel, outcome: 'rate_limited' });
    ctx.logger.warn('guest message not sent: rate limited', { guestMessageId: doc._id, channel: doc.channel, referenceId: doc.reference_id });
    return;
  }
  const content = JSON.parse(decryptSecret(doc.content, deps.key)) as { to: string; text: string } & Partial<EmailContent>;
  try {
    if (doc.channel === 'email') {
      if (!deps.email) throw new PermanentError('e-mail channel disabled (SMTP_HOST unset)');
      await deps.email(content.to, content as EmailContent);
    } else {
      if (!deps.sms) throw new PermanentError('SMS channel disabled (SMS_API_URL unset)');
      await deps.sms(content.to, content.text);
    }
  } catch (err) {
    const reason = (err as Error).message;
    if (isPermanent(err)) {
      await models.GuestMessage.updateOne({ _id: doc._id }, { $set: { status: 'failed', last_error: reason } });
      deps.failed.inc({ channel: doc.channel, outcome: 'refused' });
      ctx.logger.error('guest message refused; not retried', { guestMessageId: doc._id, channel: doc.channel, referenceId: doc.reference_id, reason });
      return;
    }
    await models.GuestMessage.updateOne({ _id: doc._id }, { $set: { last_error: reason } });
    throw err;
  }
  await models.GuestMessage.updateOne({ _id: doc._id }, { $set: { status: 'sent', sent_at: new Date(), last_error: null } });
  ctx.logger.info('guest message sent', { guestMessageId: doc._id, channel: doc.channel, attempt: doc.attempts });
}

export async function onGuestDeadLetter(deps: GuestDeps, msg: WorkMessage | undefined, ctx: MessageContext, info: DeadLetterInfo) {
  const doc = msg?.id
    ? await deps.models.GuestMessage.findOneAndUpdate({ _id: msg.id, status: 'pending' }, { $set: { status: 'dead', last_error: info.reason } }).lean<GuestMessageDoc>()
    : null;
  deps.failed.inc({ channel: doc?.channel ?? 'unknown', outcome: 'dead_lettered' });
  ctx.logger.error('guest message dead-lettered', { alert: 'access.failed', guestMessageId: msg?.id, reason: info.reason, retries: info.retryCount });
}
