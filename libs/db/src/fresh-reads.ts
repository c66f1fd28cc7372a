/**
 * Shares reads of one key between concurrent callers without ever answering a caller from a read
 * that was sent before it arrived (so a write that completed before a request started, such as a
 * revocation, is always seen by that request). A caller joins the next read of its key. That read
 * leaves on the next tick when none is in flight (callers of the same tick, such as an event's
 * look-ups of its site and its room, share it), else as soon as the one in flight returns. Under
 * load that is one read per key per round trip instead of one per caller; alone, a caller waits for
 * exactly one read, as without sharing.
 */
export function freshReads<K, V>(read: (key: K) => Promise<V>): (key: K) => Promise<V> {
  interface Waiting {
    promise: Promise<V>;
    resolve: (v: V) => void;
    reject: (e: unknown) => void;
  }
  /** A key being read: the callers of the read not sent yet, if any. */
  interface Slot {
    next?: Waiting;
  }
  const slots = new Map<K, Slot>();

  function send(key: K, slot: Slot): void {
    const waiting = slot.next as Waiting;
    slot.next = undefined;
    const p = Promise.resolve().then(() => read(key));
    p.then(waiting.resolve, waiting.reject);
    const settled = () => {
      if (slot.next) send(key, slot);
      else slots.delete(key);
    };
    p.then(settled, settled);
  }

  return (key: K) => {
    let slot = slots.get(key);
    const idle = !slot;
    if (!slot) slots.set(key, (slot = {}));
    if (!slot.next) {
      let resolve!: (v: V) => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<V>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      slot.next = { promise, resolve, reject };
    }
    const { promise } = slot.next;
    if (idle) {
      const s = slot;
      process.nextTick(() => send(key, s));
    }
    return promise;
  };
}
