import { freshReads } from './fresh-reads';

/** A store whose reads the test releases one by one, recording the value each read saw when it was sent. */
function manualStore() {
  let value = 0;
  const pending: { resolve: (v: number) => void; seen: number }[] = [];
  const read = jest.fn(async (_key: string) => new Promise<number>((resolve) => pending.push({ resolve, seen: value })));
  return {
    read,
    set: (v: number) => (value = v),
    /** Answers the oldest read in flight with what the store held when it was sent. */
    release: async () => {
      const p = pending.shift();
      if (!p) throw new Error('no read in flight');
      p.resolve(p.seen);
      await new Promise((r) => setImmediate(r));
    },
    inFlight: () => pending.length,
  };
}

describe('freshReads', () => {
  it('a caller alone gets one read; callers queued behind a read in flight share the next one', async () => {
    const store = manualStore();
    const get = freshReads(store.read);
    const callers = Array.from({ length: 10 }, () => get('k'));
    expect(store.read).toHaveBeenCalledTimes(1);
    await store.release();
    await store.release();
    expect(await Promise.all(callers)).toEqual(Array(10).fill(0));
    expect(store.read).toHaveBeenCalledTimes(2);
    const alone = get('k');
    await store.release();
    expect(await alone).toBe(0);
    expect(store.read).toHaveBeenCalledTimes(3);
  });

  it('a caller never gets a read sent before it arrived: it waits for the next one', async () => {
    const store = manualStore();
    const get = freshReads(store.read);
    const before = get('k'); // read 1 sent, store = 0
    store.set(1); // e.g. a revocation completes
    const after1 = get('k');
    const after2 = get('k');
    expect(store.inFlight()).toBe(1); // the later callers wait for read 2, sent when read 1 returns
    await store.release();
    expect(await before).toBe(0);
    expect(store.inFlight()).toBe(1);
    await store.release();
    expect(await Promise.all([after1, after2])).toEqual([1, 1]);
    expect(store.read).toHaveBeenCalledTimes(2);
  });

  it('keys are independent and a failed read fails only its callers', async () => {
    const get = freshReads(async (key: string) => {
      if (key === 'bad') throw new Error('database down');
      return key.length;
    });
    await expect(get('bad')).rejects.toThrow('database down');
    expect(await Promise.all([get('ab'), get('abc')])).toEqual([2, 3]);
    await expect(get('bad')).rejects.toThrow('database down');
  });
});
