/**
 * Shares reads of one key between concurrent callers without ever answering a caller from a read
 * that was sent before it arrived (so a write that completed before a request started, such as a
 * revocation, is always seen by that request). A caller joins the next read of its key, which
 * leaves at once when none is in flight, else as soon as the one in flight returns. Under load
 * that is one read per key per round trip instead of one per request; alone, a caller waits for
 * exactly one read, as without sharing.
 */
export function freshReads<K, V>(read: (key: K) => Promise<V>): (key: K) => Promise<V> {
  interface Slot {
    /** Callers waiting for the read that leaves when the one in flight returns. */
    next?: { promise: Promise<V>; resolve: (v: V) => void; reject: (e: unknown) => void };
  }
  const inFlight = new Map<K, Slot>();

  function send(key: K, slot: Slot): Promise<V> {
    const p = read(key);
    const settled = () => {
      const waiting = slot.next;
      slot.next = undefined;
      if (waiting) send(key, slot).then(waiting.resolve, waiting.reject);
      else inFlight.delete(key);
    };
    p.then(settled, settled);
    return p;
  }

  return (key: K) => {
    const slot = inFlight.get(key);
    if (!slot) {
      const fresh: Slot = {};
      inFlight.set(key, fresh);
      return send(key, fresh);
    }
    if (!slot.next) {
      let resolve!: (v: V) => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<V>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      slot.next = { promise, resolve, reject };
    }
    return slot.next.promise;
  };
}
