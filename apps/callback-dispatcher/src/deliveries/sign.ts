import { createHmac } from 'node:crypto';
import type { CallbackEndpointConfig } from '@smartlock/contracts';
import { decryptSecret } from '@smartlock/auth';

export const SIGNATURE_HEADER = 'X-Service-Signature';
export const EVENT_HEADER = 'X-Service-Event';
/** Names the sender in the receiver's access logs (instead of the HTTP library's default). */
export const USER_AGENT = 'SmartLock-Callbacks/1.0';
export const TIMESTAMP_HEADER = 'X-Service-Timestamp';
export const SIGNATURE_V2_HEADER = 'X-Service-Signature-V2';

export function hmacHex(secret: string, data: string): string {
  return createHmac('sha256', secret).update(data, 'utf8').digest('hex');
}

/**
 * The authentication headers of one attempt. hmac: `X-Service-Signature` = hex HMAC-SHA256 of the
 * exact body with the newest secret (SPEC rule 4), plus `X-Service-Timestamp` (unix seconds) and
 * `X-Service-Signature-V2` = hex HMAC-SHA256 of `${timestamp}.${body}` for receivers that want to
 * refuse replays.
 */
export function authHeaders(config: CallbackEndpointConfig, body: string, key: Buffer, now: Date): Record<string, string> {
  const auth = config.auth;
  switch (auth.type) {
    case 'hmac': {
      const newest = auth.secrets[0];
      if (!newest) throw new Error('hmac endpoint has no secret');
      const secret = decryptSecret(newest.secret, key);
      const timestamp = String(Math.floor(now.getTime() / 1000));
      return {
        [SIGNATURE_HEADER]: hmacHex(secret, body),
        [TIMESTAMP_HEADER]: timestamp,
        [SIGNATURE_V2_HEADER]: hmacHex(secret, `${timestamp}.${body}`),
      };
    }
    case 'bearer':
      return { Authorization: `Bearer ${decryptSecret(auth.token, key)}` };
    case 'basic':
      return { Authorization: `Basic ${Buffer.from(`${auth.username}:${decryptSecret(auth.password, key)}`).toString('base64')}` };
    case 'api_key':
      return { [auth.header]: decryptSecret(auth.value, key) };
  }
}
