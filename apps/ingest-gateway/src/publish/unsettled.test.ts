import type { EventDoc } from '../events/event.schema';
import { unsettledEvents } from './unsettled';

const ev = (id: string) => ({ _id: id }) as EventDoc;

describe('events published here whose worker has not reported yet', () => {
  it('hands out those waiting longer than afterMs, once; a reported one never', () => {
    let t = 0;
    const u = unsettledEvents({ afterMs: 100 }, () => t);
    u.add(ev('a'));
    t = 50;
    u.add(ev('b'));
    u.add(ev('c'));
    u.reported('b');
    expect(u.take()).toEqual([]);
    t = 101;
    expect(u.take().map((e) => e._id)).toEqual(['a']);
    t = 151;
    expect(u.take().map((e) => e._id)).toEqual(['c']);
    expect(u.take()).toEqual([]);
    expect(u.size).toBe(0);
  });

  it('at shutdown hands out every one; past `max` an event is refused (the caller settles it at once)', () => {
    const u = unsettledEvents({ afterMs: 60_000, max: 2 }, () => 0);
    expect(u.add(ev('a'))).toBe(true);
    expect(u.add(ev('b'))).toBe(true);
    expect(u.add(ev('c'))).toBe(false);
    expect(u.take()).toEqual([]);
    expect(u.take(true).map((e) => e._id)).toEqual(['a', 'b']);
  });
});
