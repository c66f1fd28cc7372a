import { Connection, Schema, basePlugin, insertOnce, withRetries } from '@smartlock/db';

/**
 * The data of the worker's vendor calls: the operation log (one intent per credential issue, with
 * its owner and lease; the company lock accounts the calls go through are libs/auth's identity
 * store's). reconcile.ts calls the functions below and never
 * the models: the queries, the index they need and what the database does or does not guarantee
 * live here, so that a change of what it guarantees (atomic conditional updates: docs/adr/0101) is a
 * change of this module alone.
 *
 * What the operation log relies on:
 * - an intent is inserted once against its unique `_id` (the idempotency key, libs/db insertOnce),
 *   the one write every supported server makes atomic: of two runs issuing the same credential, one
 *   insert lands and the other meets the intent;
 * - the one who met it takes it over only once no live process holds it (its owner is this process
 *   and not running it, or the lease since `started_at` ran out), and the broker gives a booking's
 *   event (a schedule's message) to one run at a time: the take-over and the outcome are plain
 *   updates by `_id`, which a server may apply as a read then a write and lose nothing.
 */

export type OperationStatus = 'pending' | 'uncertain' | 'failed';

/**
 * The operation log: one intent per credential issue, `_id` = (subject, lock, type, version,
 * identity), written before the vendor call. The unique `_id` is the idempotency key: a redelivered
 * or retried event that meets the intent (its subject's record never stored the result: a crash, a
 * failed write) lists the lock and adopts the credential named `label` instead of issuing a second
 * key, passcode or card. The result itself is stored only in the subject's record (reconcile.ts).
 */
export interface OperationDoc {
  _id: string;
  company_id: string;
  subject: string;
  status: OperationStatus;
  label: string;
  owner: string;
  started_at: Date;
  error: string | null;
}

/** The operation log's model on a connection (called once per connection, by models.ts workerModels). */
export function operationModels(conn: Connection) {
  const operation = new Schema<OperationDoc>(
    {
      _id: { type: String },
      company_id: { type: String, required: true },
      subject: { type: String, required: true },
      status: { type: String, required: true },
      label: { type: String, required: true },
      owner: { type: String, required: true },
      started_at: { type: Date, required: true },
      error: { type: String, default: null },
    },
    { minimize: false },
  );
  operation.plugin(basePlugin);
  // `_id` is the idempotency key (unique by nature); this one serves "operations of a subject" (inspection).
  operation.index({ subject: 1 });
  return { Operation: conn.model<OperationDoc>('Operation', operation, 'operations') };
}

type OperationModels = ReturnType<typeof operationModels>;

/** What an intent is recorded with: its id (the idempotency key), whose it is, and the label the credential carries at the vendor. */
export interface Intent {
  id: string;
  companyId: string;
  subject: string;
  label: string;
}

/** How often a run waiting for another's intent reads it again. */
const INTENT_POLL_MS = 50;
/** The intent is still held by a live call: read it again. */
class IntentLive extends Error {}

/**
 * The operation log of this process (`owner`: host, pid, boot): every read and write of an intent.
 * It knows which intents this process is running now, so an intent of its own that is pending but
 * not running is known to be over at once, without waiting out its lease.
 */
export function operationStore({ Operation }: OperationModels, owner: string) {
  const running = new Set<string>();

  return {
    /** Records the intent, pending, this process its owner; false when it was recorded before (by anyone). */
    recordIntent: (intent: Intent): Promise<boolean> =>
      insertOnce(Operation, {
        _id: intent.id,
        company_id: intent.companyId,
        subject: intent.subject,
        status: 'pending',
        label: intent.label,
        owner,
        started_at: new Date(),
        error: null,
      }),

    /**
     * An intent recorded before, once no live process holds it: read again every INTENT_POLL_MS
     * while it is pending in another process within `leaseMs` of its start (its call may be under
     * way), or running here. Throws when it is gone.
     */
    async settledIntent(id: string, leaseMs: number): Promise<OperationDoc> {
      const live = (op: OperationDoc) =>
        op.status === 'pending' && (op.owner === owner ? running.has(id) : Date.now() - new Date(op.started_at).getTime() < leaseMs);
      // No deadline of its own: the other process's lease (`leaseMs`) ends the wait.
      return withRetries(
        async () => {
          const op = await Operation.findById(id).lean<OperationDoc>();
          if (!op) throw new Error(`operation ${id}: its intent was recorded, and is gone`);
          if (live(op)) throw new IntentLive();
          return op;
        },
        { attempts: Infinity, delayMs: INTENT_POLL_MS, maxDelayMs: INTENT_POLL_MS, retryable: (err) => err instanceof IntentLive },
      );
    },

    /** Takes a settled intent over for a new call: pending again, this process its owner, its lease from now. */
    retake: async (id: string): Promise<void> => {
      await Operation.updateOne({ _id: id }, { $set: { status: 'pending', owner, started_at: new Date(), error: null } });
    },

    /**
     * Runs the intent's vendor call in this process (a run here that meets the intent waits for it).
     * A failure is recorded as `failedAs(err)` (best effort: the call's error is what is thrown).
     */
    async run<T>(id: string, call: () => Promise<T>, failedAs: (err: unknown) => Exclude<OperationStatus, 'pending'>): Promise<T> {
      running.add(id);
      try {
        return await call();
      } catch (err) {
        await Operation.updateOne({ _id: id }, { $set: { status: failedAs(err), error: String((err as Error).message).slice(0, 500) } }).catch(() => undefined);
        throw err;
      } finally {
        running.delete(id);
      }
    },
  };
}

export type OperationStore = ReturnType<typeof operationStore>;
