import express, { Express } from 'express';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { Journal, SignatureHeaders } from './journal';

export interface ReceiverOptions {
  /** The signing secret shown when the callback was set (`whsec_...`), or the new one after a rotation. */
  secret: string;
  /** During a rotation, the previous secret (until the `previous_valid_until` the rotation returned). */
  previousSecret?: string;
  journal: Journal;
}

/**
 * Which secret signed these bytes, by the `standardwebhooks` library (the Standard Webhooks headers
 * `webhook-id`, `webhook-timestamp`, `webhook-signature`; it refuses a timestamp more than 5 minutes
 * away, so a captured delivery cannot be replayed later); undefined when none did.
 */
function signedWith(raw: string, headers: SignatureHeaders, secrets: [string, string | undefined]): 'current' | 'previous' | undefined {
  const names = ['current', 'previous'] as const;
  for (const [i, secret] of secrets.entries()) {
    if (secret === undefined) continue;
    try {
      new Webhook(secret).verify(raw, { ...headers });
      return names[i];
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
    }
  }
  return undefined;
}

/**
 * A callback endpoint (SPEC "Outbound callbacks" and "Events"): `POST /callbacks`.
 *  1. The Standard Webhooks signature is checked with the `standardwebhooks` library over the exact
 *     bytes received, before parsing, against the current secret and during a rotation the previous
 *     one (the service signs with both while the previous one is valid). Anything else: 401,
 *     nothing recorded. (SPEC's `X-Service-Signature`, hex HMAC-SHA256 of the body with the same
 *     secret string, is sent too, for receivers written before.)
 *  2. The delivery is recorded durably, then answered 200. Any non-2xx makes the service retry.
 *  3. A repeat (the same deliveryId: the service retries, and rarely delivers twice) is answered
 *     200 and changes nothing.
 */
export function callbackReceiver(options: ReceiverOptions): Express {
  const app = express();
  // The raw bytes, not parsed JSON: re-serialising would change what was signed.
  app.post('/callbacks', express.raw({ type: 'application/json', limit: '1mb' }), async (req, res, next) => {
    try {
      const raw = (Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)).toString('utf8');
      const headers: SignatureHeaders = {
        'webhook-id': req.get('webhook-id') ?? '',
        'webhook-timestamp': req.get('webhook-timestamp') ?? '',
        'webhook-signature': req.get('webhook-signature') ?? '',
      };
      const secret = signedWith(raw, headers, [options.secret, options.previousSecret]);
      if (!secret) {
        res.status(401).json({ error: 'invalid signature' });
        return;
      }

      const body = JSON.parse(raw) as { event: string; referenceId: string; eventId: string; deliveryId: string };
      if (body.event !== req.get('X-Service-Event')) {
        res.status(400).json({ error: 'X-Service-Event does not match the body' });
        return;
      }

      // SPEC names (referenceId, event) as the idempotency pair; a booking's later changes (a room
      // move) repeat that pair with new credentials, so the key here is the delivery: deliveryId is
      // the same on every retry and redelivery of one delivery.
      const recorded = await options.journal.record({
        deliveryId: body.deliveryId,
        event: body.event,
        referenceId: body.referenceId,
        eventId: body.eventId,
        receivedAt: new Date().toISOString(),
        signedWith: secret,
        body: raw,
        headers,
      });
      res.status(200).json({ recorded, repeat: !recorded });
    } catch (err) {
      next(err); // not recorded: Express answers 500 and the service retries
    }
  });
  return app;
}
