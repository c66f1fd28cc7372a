import { randomBytes } from 'node:crypto';
import { accessEventMessageSchema, type AccessEventMessage } from '@smartlock/contracts';
import { credentialRecord } from '@smartlock/testing';
import { openAccessEvent, sealAccessEvent } from './sealed-credentials';

describe('credentials sealed inside access.events', () => {
  const key = randomBytes(32);
  const msg: AccessEventMessage = {
    type: 'access.provisioned',
    company_id: 'co-1',
    reference_id: 'BK-1',
    event_id: 'ev-1',
    occurred_at: new Date().toISOString(),
    sequence: 1,
    credentials: [
      credentialRecord('PASSCODE', { passcode: '482913' }),
      credentialRecord('EKEY', { lockData: 'LOCKDATA-SECRET-abc' }),
      credentialRecord('CARD', { card_id: 'CARD-0042' }),
    ],
    correlation_id: 'c-1',
  };

  it('no passcode, lockData or card number in clear; the sealed message still matches the contract; opening gives back the original', () => {
    const sealed = sealAccessEvent(msg, key);
    const bytes = JSON.stringify(sealed);
    for (const secret of ['482913', 'LOCKDATA-SECRET-abc', 'CARD-0042']) expect(bytes).not.toContain(secret);
    expect(sealed.credentials.every((c) => c.sealed && c.lockId)).toBe(true);
    expect(accessEventMessageSchema.validate(JSON.parse(bytes)).error).toBeUndefined();
    expect(openAccessEvent(JSON.parse(bytes), key)).toEqual(msg);
  });

  it('another key or a tampered seal: an error marked permanent (dead-lettered, not retried)', () => {
    const sealed = sealAccessEvent(msg, key);
    expect(() => openAccessEvent(sealed, randomBytes(32))).toThrow(expect.objectContaining({ permanent: true }));
  });

  it('a credential with no secret (here an e-key without lockData) is neither sealed nor refused', () => {
    const bare: AccessEventMessage = { ...msg, type: 'access.revoked', credentials: [credentialRecord('EKEY', { lockData: undefined })] };
    const sent = sealAccessEvent(bare, key);
    expect(sent.credentials[0].sealed).toBeUndefined();
    expect(openAccessEvent(JSON.parse(JSON.stringify(sent)), key)).toEqual(bare);
  });
});
