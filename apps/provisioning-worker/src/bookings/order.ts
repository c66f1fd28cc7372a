import type { BookingDoc, BookingStore } from './store';

/**
 * Per-booking order with competing workers (docs/adr/0105-per-booking-order.md: events of one
 * booking take effect in the order received). An event with sequence N runs only once the booking's
 * `applied_sequence` is N - 1: the previous event settled (COMPLETED, FAILED or DEAD_LETTER). Only
 * the holder of that turn writes the booking, so no update of it needs to be atomic across processes
 * (bookings/store.ts relies on this). Unrelated bookings never wait for each other.
 *
 * An event that arrives early waits here (woken at once when this process settles the previous
 * event, else polling the database with back-off: not libs/db withRetries, which has no early
 * wake-up) up to PROVISIONING_ORDER_WAIT_MS; then the caller
 * parks it in the broker (see on-booking-event.ts) without spending a retry.
 */
export function createTurns(bookings: BookingStore) {
  const waiters = new Map<string, Set<() => void>>();
  const keyOf = (companyId: string, ref: string) => `${companyId}|${ref}`;

  function settled(companyId: string, ref: string) {
    const set = waiters.get(keyOf(companyId, ref));
    if (set) for (const wake of [...set]) wake();
  }

  /** The booking once `sequence` may run, or null when the wait ran out. */
  async function waitTurn(companyId: string, ref: string, sequence: number, waitMs: number): Promise<BookingDoc | null> {
    const key = keyOf(companyId, ref);
    const deadline = Date.now() + waitMs;
    let interval = 100;
    for (;;) {
      const b = await bookings.load(companyId, ref);
      if (b && b.applied_sequence >= sequence - 1) return b;
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await new Promise<void>((resolve) => {
        let set = waiters.get(key);
        if (!set) waiters.set(key, (set = new Set()));
        const wake = () => {
          clearTimeout(timer);
          set.delete(wake);
          if (!set.size) waiters.delete(key);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(interval, left));
        set.add(wake);
      });
      interval = Math.min(interval * 2, 1000);
    }
  }

  /**
   * Marks `sequence` settled (never moves backwards), with `set` (the event's last write of the
   * booking, in the same round trip), and wakes this process's waiters. `failed`: the event settles
   * without having changed the booking (it is remembered in `failed_sequences`).
   */
  async function settle(companyId: string, ref: string, sequence: number, set: Partial<BookingDoc> = {}, failed = false): Promise<void> {
    await bookings.settle(companyId, ref, sequence, set, failed);
    settled(companyId, ref);
  }

  /**
   * Stores a booking not stored before, its event settled (`applied_sequence`): its first write is
   * also its last. False when another delivery stored it first; nothing is written then.
   */
  async function settleNew(b: BookingDoc, sequence: number): Promise<boolean> {
    if (!(await bookings.storeNew({ ...b, applied_sequence: sequence }))) return false;
    settled(b.company_id, b.reference_id);
    return true;
  }

  return { waitTurn, settle, settleNew };
}

export type Turns = ReturnType<typeof createTurns>;
