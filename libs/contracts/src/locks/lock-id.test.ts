import { serviceLockId, vendorLockOf } from './lock-id';

describe('lock ids across vendors (ADR 0109)', () => {
  it("keeps TTLock's ids as they are and prefixes every other vendor's", () => {
    expect(serviceLockId('ttlock', '17012345')).toBe('17012345');
    expect(serviceLockId('nuki', '17012345')).toBe('nuki:17012345');
  });

  it('reads the vendor back; an id without a known prefix is TTLock\'s, so ids bound before Nuki keep their meaning', () => {
    expect(vendorLockOf('nuki:17012345')).toEqual({ provider: 'nuki', vendorId: '17012345' });
    expect(vendorLockOf('17012345')).toEqual({ provider: 'ttlock', vendorId: '17012345' });
    expect(vendorLockOf('lock-A:1')).toEqual({ provider: 'ttlock', vendorId: 'lock-A:1' });
    expect(vendorLockOf(':1')).toEqual({ provider: 'ttlock', vendorId: ':1' });
    for (const [provider, id] of [['ttlock', '42'], ['nuki', '42']] as const) expect(vendorLockOf(serviceLockId(provider, id))).toEqual({ provider, vendorId: id });
  });
});
