/**
 * A bounded cache of values read from the database, kept in one process: at most `max` entries
 * (the least recently used goes first), each for `ttlMs` at most, so a value changed elsewhere is
 * read again within `ttlMs` on every process (nothing here is shared between processes: both servers
 * alike; `Infinity` for what never changes, such as content-addressed records). Concurrent misses of
 * one key share one load; a failed load is not kept. `delete` and `clear` are the invalidation for a
 * process that learns of a change sooner (an event, its own write): a load that was under way when
 * its key was deleted or cleared does not refill it. `set` keeps a value learnt so (an event's,
 * one's own write); `peek` answers what is held, without a load.
 */
export function boundedCache<K, V>(opts: { max: number; ttlMs: number; now?: () => number }) {
  const now = opts.now ?? Date.now;
  interface Entry {
    value: Promise<V>;
    at: number;
    loaded?: { value: V };
  }
  // Map keeps insertion order: the first key is the least recently used.
  const entries = new Map<K, Entry>();
  const fresh = (key: K): Entry | undefined => {
    const e = entries.get(key);
    if (e && now() - e.at < opts.ttlMs) return e;
    entries.delete(key);
    return undefined;
  };
  const keep = (key: K, e: Entry) => {
    entries.delete(key);
    entries.set(key, e);
    if (entries.size > opts.max) entries.delete(entries.keys().next().value as K);
  };
  return {
    get(key: K, load: (key: K) => Promise<V>): Promise<V> {
      const hit = fresh(key);
      if (hit) {
        keep(key, hit);
        return hit.value;
      }
      const e: Entry = { value: load(key), at: now() };
      keep(key, e);
      e.value.then(
        (value) => {
          e.loaded = { value };
        },
        () => {
          if (entries.get(key) === e) entries.delete(key);
        },
      );
      return e.value;
    },
    set(key: K, value: V): void {
      keep(key, { value: Promise.resolve(value), at: now(), loaded: { value } });
    },
    /** What is held and loaded, even past ttlMs (get reads it again; a newer value learnt can be compared with it). */
    peek(key: K): V | undefined {
      return entries.get(key)?.loaded?.value;
    },
    delete(key: K): void {
      entries.delete(key);
    },
    clear(): void {
      entries.clear();
    },
  };
}
