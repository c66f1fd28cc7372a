import amqp, { ChannelModel, Options } from 'amqplib';

/**
 * AMQP_URL names one broker or the nodes of a cluster: URLs separated by commas, each complete
 * (credentials and vhost; a comma inside a password is written %2C). Every connection of ours goes
 * through connectAny, so a client of a cluster reaches whichever node answers.
 */
export function brokerUrls(setting: string): string[] {
  return setting
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
}

/** amqp://user:pass@host/vhost → amqp://host/vhost (every URL of a list), for logs. */
export function safeUrl(url: string): string {
  return url.replace(/\/\/[^@/,]*@/g, '//');
}

/** A node that accepts TCP but never answers (a half-dead host) must not hold up the next one. */
const CONNECT_TIMEOUT_MS = 5000;

/**
 * Connects to the first of `urls` that accepts, trying them in order from `first` (wrapping round);
 * `index` says which. Fails only when none does, with every node's reason.
 */
export async function connectAny(
  urls: string[],
  first = 0,
  socketOptions: Options.Connect & Record<string, unknown> = {},
): Promise<{ connection: ChannelModel; index: number }> {
  if (!urls.length) throw new Error('no broker URL given');
  const failures: string[] = [];
  for (let n = 0; n < urls.length; n++) {
    const index = (first + n) % urls.length;
    try {
      const connection = await amqp.connect(urls[index], { timeout: CONNECT_TIMEOUT_MS, ...socketOptions });
      return { connection, index };
    } catch (err) {
      failures.push(urls.length > 1 ? `${safeUrl(urls[index])}: ${(err as Error).message}` : (err as Error).message);
    }
  }
  throw new Error(failures.join('; '));
}

/** How long a close may wait for the broker's answer. */
const CLOSE_TIMEOUT_MS = 2000;

/**
 * Closes a connection, channel or consumer without failing and without waiting for ever: a close
 * that crosses the broker's own (a node restarting, a vhost removed) may never get its close-ok.
 */
export async function closeQuietly(close: (() => Promise<unknown>) | undefined): Promise<void> {
  if (!close) return;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([close().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS)))]);
  } catch {
    // amqplib throws synchronously when the connection is already closed: that is closed enough
  } finally {
    clearTimeout(timer);
  }
}
