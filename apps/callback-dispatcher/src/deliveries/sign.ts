import { createHmac } from 'node:crypto';
import { CALLBACK_HEADERS, CallbackEndpointConfig } from '@smartlock/contracts';
import { SecretKey, decryptSecret } from '@smartlock/auth';

const SIGNATURE_HEADER = CALLBACK_HEADERS.signature;
export const EVENT_HEADER = CALLBACK_HEADERS.event;
/** Names the sender in the receiver's access logs (instead of the HTTP library's default). */
export const USER_AGENT = 'SmartLock-Callbacks/1.0';
const TIMESTAMP_HEADER = CALLBACK_HEADERS.timestamp;
const SIGNATURE_V2_HEADER = CALLBACK_HEADERS.signatureV2;
const SECRET_PREFIX = 'whsec_';

function hmacHex(secret: string, data: string): string {
  return createHmac('sha256', secret).update(data, 'utf8').digest('hex');
}

/**
 * Standard Webhooks `v1,` signature: base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`, keyed with
 * the bytes the secret's base64 part decodes to, as the `standardwebhooks` libraries decode
 * `whsec_<base64>`. Node's decoder also reads the base64url of secrets issued before the standard
 * form, so those sign alike (a receiver converts them: `-` to `+`, `_` to `/`, or rotates).
 */
function standardSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`;
}

/**
 * The authentication headers of one attempt. hmac: `X-Service-Signature` = hex HMAC-SHA256 of the
 * exact body with the newest secret (SPEC rule 4), plus `X-Service-Timestamp` (unix seconds) and
 * `X-Service-Signature-V2` = hex HMAC-SHA256 of `${timestamp}.${body}` for receivers that want to
 * refuse replays; and the Standard Webhooks headers beside them: `webhook-id` (the delivery's id,
 * the same on every attempt), `webhook-timestamp` and `webhook-signature` with one `v1,` signature
 * per secret still valid at the attempt, newest first, so a receiver holding either side of a
 * rotation verifies.
 */
export function authHeaders(config: CallbackEndpointConfig, id: string, body: string, key: SecretKey, now: Date): Record<string, string> {
  const auth = config.auth;
  switch (auth.type) {
    case 'hmac': {
      const [newest, ...older] = auth.secrets;
      if (!newest) throw new Error('hmac endpoint has no secret');
      const secret = decryptSecret(newest.secret, key);
      const timestamp = String(Math.floor(now.getTime() / 1000));
      // The replica keeps a rotated-out secret until the next change: its window is checked here.
      const previous = older
        .filter((s) => s.valid_until !== null && new Date(s.valid_until).getTime() > now.getTime())
        .map((s) => decryptSecret(s.secret, key));
      return {
        [SIGNATURE_HEADER]: hmacHex(secret, body),
        [TIMESTAMP_HEADER]: timestamp,
        [SIGNATURE_V2_HEADER]: hmacHex(secret, `${timestamp}.${body}`),
        [CALLBACK_HEADERS.webhookId]: id,
        [CALLBACK_HEADERS.webhookTimestamp]: timestamp,
        [CALLBACK_HEADERS.webhookSignature]: [secret, ...previous].map((s) => standardSignature(s, id, timestamp, body)).join(' '),
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
