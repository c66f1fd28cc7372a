// Message factories for the dispatcher's tests and benchmark (no test framework imports here).
import { randomUUID } from 'node:crypto';
import { credentialRecord } from '@smartlock/testing';
import type { AccessEventMessage, AccessEventType, CallbackEndpointConfig, IdentityEventMessage } from '@smartlock/contracts';
import { encryptSecret } from '@smartlock/auth';

export const TEST_SECRETS_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
/** admin-api's signing key of identity.events, and the worker's key of credentials sealed in access.events. */
export const TEST_IDENTITY_EVENTS_KEY = '1e'.repeat(32);
export const TEST_MESSAGE_KEY = '3f'.repeat(32);

/** The shared factory of libs/testing. */
export const credential = credentialRecord;

export function accessEvent(companyId: string, type: AccessEventType, over: Partial<AccessEventMessage> = {}): AccessEventMessage {
  return {
    type,
    company_id: companyId,
    reference_id: `BK-${randomUUID().slice(0, 8)}`,
    event_id: randomUUID(),
    occurred_at: new Date().toISOString(),
    sequence: 1,
    credentials: type === 'access.failed' ? [] : [credential('PASSCODE')],
    validity: { check_in: '2026-12-01T14:00:00.000Z', check_out: '2026-12-04T10:00:00.000Z' },
    ...(type === 'access.failed' ? { reason: 'Room not found' } : {}),
    correlation_id: randomUUID(),
    ...over,
  };
}

export type AuthSpec =
  /** previousValidUntil: the end of the older secrets' window (a day from now by default). */
  | { type: 'hmac'; secrets: string[]; previousValidUntil?: string }
  | { type: 'bearer'; token: string }
  | { type: 'basic'; username: string; password: string }
  | { type: 'api_key'; header: string; value: string };

/** A `callback.updated` (or `callback.secret_rotated`) identity event as admin-api publishes it. */
export function endpointEvent(
  companyId: string,
  url: string,
  auth: AuthSpec,
  key: Buffer,
  version = 1,
  type: 'callback.updated' | 'callback.secret_rotated' = 'callback.updated',
): IdentityEventMessage {
  const now = new Date().toISOString();
  let enc: CallbackEndpointConfig['auth'];
  switch (auth.type) {
    case 'hmac':
      enc = {
        type: 'hmac',
        secrets: auth.secrets.map((s, i) => ({
          secret: encryptSecret(s, key),
          created_at: now,
          valid_until: i === 0 ? null : (auth.previousValidUntil ?? new Date(Date.now() + 86_400_000).toISOString()),
        })),
      };
      break;
    case 'bearer':
      enc = { type: 'bearer', token: encryptSecret(auth.token, key) };
      break;
    case 'basic':
      enc = { type: 'basic', username: auth.username, password: encryptSecret(auth.password, key) };
      break;
    case 'api_key':
      enc = { type: 'api_key', header: auth.header, value: encryptSecret(auth.value, key) };
      break;
  }
  const endpoint: CallbackEndpointConfig = { company_id: companyId, url, version, updated_at: now, auth: enc };
  return { type, company_id: companyId, id: companyId, at: now, data: { endpoint } };
}
