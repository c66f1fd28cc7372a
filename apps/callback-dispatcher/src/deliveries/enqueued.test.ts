import { recentlyEnqueued } from './enqueued';

describe('callback-dispatcher: deliveries enqueued a moment ago (the first attempt sends without a read)', () => {
  it('says once that a delivery is fresh; it stays seen, so a copy of its access event reads the record', () => {
    const e = recentlyEnqueued();
    expect(e.seen('d1')).toBe(false);
    e.remember('d1');
    expect(e.take('d1')).toBe(true);
    expect(e.take('d1')).toBe(false);
    expect(e.seen('d1')).toBe(true);
  });

  it('an entry older than the time to live, forgotten (parked) or cleared (a reconnect) is not fresh', () => {
    let t = 0;
    const e = recentlyEnqueued(10, 1000, () => t);
    e.remember('old');
    t = 1001;
    expect(e.take('old')).toBe(false);
    expect(e.seen('old')).toBe(false);
    e.remember('parked');
    e.forget('parked');
    expect(e.take('parked')).toBe(false);
    expect(e.seen('parked')).toBe(true);
    e.remember('cleared');
    e.clear();
    expect(e.take('cleared')).toBe(false);
    expect(e.seen('cleared')).toBe(false);
  });

  it('holds at most `max` entries: past it, expired ones make room, else a new one is not kept (its attempt reads)', () => {
    let t = 0;
    const e = recentlyEnqueued(2, 1000, () => t);
    e.remember('a');
    e.remember('b');
    e.remember('c');
    expect(e.take('c')).toBe(false);
    t = 2000;
    e.remember('d');
    expect(e.take('d')).toBe(true);
    expect(e.take('a')).toBe(false);
  });

  it('an entry remembered again counts from then: older entries expire before it and make room', () => {
    let t = 0;
    const e = recentlyEnqueued(2, 1000, () => t);
    e.remember('a');
    t = 100;
    e.remember('b');
    t = 900;
    e.remember('a');
    t = 1150; // b expired, a (900) not
    e.remember('c');
    expect(e.take('c')).toBe(true);
    expect(e.take('a')).toBe(true);
    expect(e.seen('b')).toBe(false);
  });

  it('by default keeps a burst of 10,000 deliveries enqueued within a second: none of their first attempts reads', () => {
    let t = 0;
    const e = recentlyEnqueued(undefined, undefined, () => t);
    for (let i = 0; i < 10_000; i++) {
      t = i / 10;
      e.remember(`d${i}`);
    }
    let fresh = 0;
    for (let i = 0; i < 10_000; i++) if (e.take(`d${i}`)) fresh++;
    expect(fresh).toBe(10_000);
  });
});
