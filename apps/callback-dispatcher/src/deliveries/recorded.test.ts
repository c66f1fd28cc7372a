import { recentlyRecorded } from './recorded';

const record = (id: string) => ({ _id: id, company_id: 'co', event: 'access.provisioned' as const, body: { iv: 'i', tag: 't', data: id } as never });

describe('callback-dispatcher: deliveries recorded a moment ago (the first attempt sends without a read)', () => {
  it('hands a record out once: every later message of the delivery reads it', () => {
    const r = recentlyRecorded();
    r.remember(record('d1'));
    expect(r.take('d1')).toEqual(record('d1'));
    expect(r.take('d1')).toBeUndefined();
  });

  it('a record older than the time to live, forgotten (parked) or cleared (a reconnect) is not handed out', () => {
    let t = 0;
    const r = recentlyRecorded(10, 1000, () => t);
    r.remember(record('old'));
    r.remember(record('parked'));
    r.remember(record('cleared'));
    t = 1001;
    expect(r.take('old')).toBeUndefined();
    r.remember(record('parked'));
    r.forget('parked');
    expect(r.take('parked')).toBeUndefined();
    r.remember(record('cleared'));
    r.clear();
    expect(r.take('cleared')).toBeUndefined();
  });

  it('holds at most `max` records: past it, expired ones make room, else a new one is not kept (its attempt reads)', () => {
    let t = 0;
    const r = recentlyRecorded(2, 1000, () => t);
    r.remember(record('a'));
    r.remember(record('b'));
    r.remember(record('c'));
    expect(r.take('c')).toBeUndefined();
    t = 2000;
    r.remember(record('d'));
    expect(r.take('d')).toEqual(record('d'));
    expect(r.take('a')).toBeUndefined();
  });
});
