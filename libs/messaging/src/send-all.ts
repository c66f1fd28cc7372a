import type { Broker, PublishOptions } from './broker';

/**
 * Sends every item of `items` to one queue (the default exchange: that queue only), up to `inFlight`
 * publishes awaiting their confirms at once: a replay of a big company one confirm at a time would
 * take minutes. Returns how many were sent; the first failed publish rejects the whole call (a replay
 * is idempotent at the receiver, so the caller simply runs it again).
 */
export async function sendAllToQueue<T>(
  broker: Pick<Broker, 'sendToQueue'>,
  queue: string,
  items: AsyncIterable<T>,
  toMessage: (item: T) => { payload: unknown; options: PublishOptions },
  inFlight = 100,
): Promise<number> {
  let sent = 0;
  let batch: Promise<void>[] = [];
  // allSettled, not all: a rejection must not leave the rest of the batch unawaited (an unhandled
  // rejection ends a Node 20 process).
  const settle = async () => {
    const failed = (await Promise.allSettled(batch)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
    batch = [];
    if (failed) throw failed.reason;
  };
  for await (const item of items) {
    const { payload, options } = toMessage(item);
    batch.push(broker.sendToQueue(queue, payload, options));
    sent += 1;
    if (batch.length >= inFlight) await settle();
  }
  await settle();
  return sent;
}
