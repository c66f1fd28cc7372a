import { createHmac } from 'node:crypto';
import { CALLBACK_HEADERS, CallbackEndpointConfig } from '@smartlock/contracts';
import { SecretKey, decryptSecret } from '@smartlock/auth';

const SIGNATURE_HEADER = CALLBACK_HEADERS.signature;
export const EVENT_HEADER = CALLBACK_HEADERS.event;
/** Names the sender in the receiver's access logs (instead of the HTTP library's default). */
export const USER_AGENT = 'SmartLock-Callbacks/1.0';
const TIMESTAMP_HEADER = CALLBACK_HEADERS.timestamp;
const SIGNATURE_V2_HEADER = CALLBACK_HEADERS.signatureV2;

function hmacHex(secret: string, data: string): string {
  return createHmac('sha256', secret).update(data, 'utf8').digest('hex');
}

/**
 * The authentication headers of one attempt. hmac: `X-Service-Signature` = hex HMAC-SHA256 of the
 * exact body with the newest secret (SPEC rule 4), plus `X-Service-Timestamp` (unix seconds) and
 * `X-Service-Signature-V2` = hex HMAC-SHA256 of `${timestamp}.${body}` for receivers that want to
 * refuse replays.
 */
export function authHeaders(config: CallbackEndpointConfig, body: string, key: SecretKey, now: Date): Record<string, string> {
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
