import { customerLock, serviceLockId, vendorLockOf } from './lock-id';

describe('lock ids across vendors (ADR 0109)', () => {
  it("keeps TTLock's ids as they are and prefixes every other vendor's", () => {
    expect(serviceLockId('ttlock', '17012345')).toBe('17012345');
    expect(serviceLockId('nuki', '17012345')).toBe('nuki:17012345');
  });

  it("reads the vendor back; an id without a known prefix is TTLock's, so ids bound before Nuki keep their meaning", () => {
    expect(vendorLockOf('nuki:17012345')).toEqual({ provider: 'nuki', vendorId: '17012345' });
    expect(vendorLockOf('17012345')).toEqual({ provider: 'ttlock', vendorId: '17012345' });
    expect(vendorLockOf('lock-A:1')).toEqual({ provider: 'ttlock', vendorId: 'lock-A:1' });
    expect(vendorLockOf(':1')).toEqual({ provider: 'ttlock', vendorId: ':1' });
    for (const [provider, id] of [
      ['ttlock', '42'],
      ['nuki', '42'],
    ] as const)
      expect(vendorLockOf(serviceLockId(provider, id))).toEqual({ provider, vendorId: id });
  });

  it("a credential's lock as customers read it: its provider, and TTLock's MAC; null, not the empty string the Nuki adapter holds, on a Nuki lock", () => {
    expect(customerLock({ lockId: '17012345', lockMac: 'AA:BB:CC:DD:EE:01' })).toEqual({ lockMac: 'AA:BB:CC:DD:EE:01', lockProvider: 'ttlock' });
    expect(customerLock({ lockId: 'nuki:17012345', lockMac: '' })).toEqual({ lockMac: null, lockProvider: 'nuki' });
    // a TTLock lock keeps what the worker recorded, whatever it is
    expect(customerLock({ lockId: 'lock-101', lockMac: '' })).toEqual({ lockMac: '', lockProvider: 'ttlock' });
  });
});
