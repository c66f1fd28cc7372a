import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Messages whose origin matters (a callback endpoint change decides where a company's credentials go)
 * carry an HMAC-SHA256 of their exact body bytes in this header, keyed with a secret only their
 * producer and consumer hold. Broker permissions alone do not suffice: every app may publish to any
 * queue through the default exchange (its retry and dead-letter paths need it).
 */
export const SIGNATURE_HEADER = 'x-signature';

export function signBody(body: Buffer, key: Buffer): string {
  return createHmac('sha256', key).update(body).digest('hex');
}

/** Constant-time check; a missing or malformed signature is simply wrong. */
export function verifyBody(body: Buffer, signature: unknown, key: Buffer): boolean {
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature)) return false;
  return timingSafeEqual(Buffer.from(signature, 'hex'), Buffer.from(signBody(body, key), 'hex'));
}
