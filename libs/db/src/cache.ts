/**
 * A bounded cache of values read from the database, kept in one process: at most `max` entries
 * (the oldest goes first), each for `ttlMs` at most, so a value changed elsewhere is read again
 * within `ttlMs` on every process (nothing here is shared between processes: both servers alike).
 * Concurrent misses of one key share one load; a failed load is not kept. `delete` and `clear` are
 * the invalidation for a process that learns of a change sooner (an event, its own write).
 */
export function boundedCache<K, V>(opts: { max: number; ttlMs: number; now?: () => number }) {
  const now = opts.now ?? Date.now;
  const entries = new Map<K, { value: Promise<V>; at: number }>();
  return {
    get(key: K, load: (key: K) => Promise<V>): Promise<V> {
      const hit = entries.get(key);
      if (hit && now() - hit.at < opts.ttlMs) return hit.value;
      entries.delete(key);
      const value = load(key);
      entries.set(key, { value, at: now() });
      value.catch(() => {
        if (entries.get(key)?.value === value) entries.delete(key);
      });
      // Map keeps insertion order: the first key is the oldest.
      if (entries.size > opts.max) entries.delete(entries.keys().next().value as K);
      return value;
    },
    delete(key: K): void {
      entries.delete(key);
    },
    clear(): void {
      entries.clear();
    },
  };
}
