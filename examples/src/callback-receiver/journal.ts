import { appendFile, mkdir, open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** The Standard Webhooks headers that sign a callback (a type, not an interface: it passes as a header record). */
export type SignatureHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/** One callback as it was received and recorded. */
export interface Recorded {
  deliveryId: string;
  event: string;
  referenceId: string;
  eventId: string;
  receivedAt: string;
  /** Which secret the signature matched: the current one or, during a rotation, the previous one. */
  signedWith: 'current' | 'previous';
  /** The exact bytes received and their signature, kept to prove later what was received. */
  body: string;
  headers: SignatureHeaders;
}

/**
 * The receiver's durable record: one JSON line per delivery, on disk (fsync) before the receiver
 * answers 2xx. Your system works from it (grant or revoke access) at its own pace; in production a
 * table with a unique index on deliveryId does the same.
 */
export class Journal {
  private readonly seen = new Set<string>();
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(readonly path: string) {}

  /** Opens (or creates) the journal at `path`, remembering what it already holds. */
  static async open(path: string): Promise<Journal> {
    const journal = new Journal(path);
    await mkdir(dirname(path), { recursive: true });
    await appendFile(path, '');
    for (const entry of await journal.entries()) journal.seen.add(entry.deliveryId);
    return journal;
  }

  async entries(): Promise<Recorded[]> {
    const text = await readFile(this.path, 'utf8');
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Recorded);
  }

  /**
   * Records a delivery once: false when it was recorded before (a repeat). One append at a time, so
   * two copies of one delivery arriving together are recorded once.
   */
  record(entry: Recorded): Promise<boolean> {
    const next = this.queue.then(async () => {
      if (this.seen.has(entry.deliveryId)) return false;
      const file = await open(this.path, 'a');
      try {
        await file.appendFile(`${JSON.stringify(entry)}\n`);
        await file.sync(); // on disk before the service hears 2xx
      } finally {
        await file.close();
      }
      this.seen.add(entry.deliveryId);
      return true;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}
