import { isDuplicateKeyError } from '@smartlock/db';
import { GroupCommit, insertEach } from './group-commit';

describe('group commit', () => {
  it('sends the first write at once and the writes that queue meanwhile together', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const gc = new GroupCommit<number, number>(async (items) => {
      batches.push(items);
      if (batches.length === 1) await gate;
      return items.map((i) => i * 10);
    });
    const first = gc.submit(1);
    const rest = [2, 3, 4].map((i) => gc.submit(i));
    release();
    expect(await Promise.all([first, ...rest])).toEqual([10, 20, 30, 40]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('fails only the items that failed, or the whole batch on a batch error', async () => {
    const gc = new GroupCommit<number, true>(async (items) => items.map((i) => (i % 2 ? new Error(`odd ${i}`) : true)));
    const out = await Promise.allSettled([1, 2].map((i) => gc.submit(i)));
    expect(out.map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
    const broken = new GroupCommit<number, true>(async () => {
      throw new Error('database down');
    });
    await expect(broken.submit(1)).rejects.toThrow('database down');
  });

  it('an unordered insert reports duplicate keys per document', async () => {
    const bulk = Object.assign(new Error('bulk'), { writeErrors: [{ index: 1, code: 11000, errmsg: 'dup' }] });
    const out = await insertEach(async () => Promise.reject(bulk), ['a', 'b', 'c']);
    expect(out[0]).toBe(true);
    expect(isDuplicateKeyError(out[1])).toBe(true);
    expect(out[2]).toBe(true);
    const other = Object.assign(new Error('bulk'), { writeErrors: [{ index: 0, code: 2 }] });
    await expect(insertEach(async () => Promise.reject(other), ['a'])).rejects.toBe(other);
  });
});
