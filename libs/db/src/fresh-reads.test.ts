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

const tick = () => new Promise((r) => setImmediate(r));
/** Whether every promise has settled by the next turn of the event loop. */
const settled = (ps: Promise<unknown>[]) => Promise.race([Promise.all(ps).then(() => true), tick().then(() => false)]);

describe('freshReads', () => {
  it('callers of one tick share a read; callers arriving while it is in flight share the next one; a caller alone gets one read', async () => {
    const store = manualStore();
    const get = freshReads(store.read);
    const first = Array.from({ length: 5 }, () => get('k'));
    await tick();
    expect(store.read).toHaveBeenCalledTimes(1);
    const queued = Array.from({ length: 10 }, () => get('k'));
    await tick();
    expect(store.read).toHaveBeenCalledTimes(1); // they wait for the read in flight to return
    await store.release();
    expect(await settled(first)).toBe(true); // the first read answered all five
    expect(await settled(queued)).toBe(false);
    expect(store.read).toHaveBeenCalledTimes(2);
    await store.release();
    expect(await Promise.all([...first, ...queued])).toEqual(Array(15).fill(0));
    const alone = get('k');
    await tick();
    await store.release();
    expect(await alone).toBe(0);
    expect(store.read).toHaveBeenCalledTimes(3);
  });

  it('a caller never gets a read sent before it arrived: it waits for the next one', async () => {
    const store = manualStore();
    const get = freshReads(store.read);
    const before = get('k');
    await tick(); // read 1 sent, store = 0
    store.set(1); // e.g. a revocation completes
    const after1 = get('k');
    const after2 = get('k');
    await tick();
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

  it('a read that throws before returning a promise fails its callers, and the next caller reads again', async () => {
    let calls = 0;
    const get = freshReads((key: string): Promise<number> => {
      calls += 1;
      if (calls === 1) throw new Error('not connected');
      return Promise.resolve(key.length);
    });
    await expect(Promise.all([get('abc'), get('abc')])).rejects.toThrow('not connected');
    expect(await get('abc')).toBe(3);
    expect(calls).toBe(2);
  });
});
