import express, { Express } from 'express';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Journal } from './journal';

export interface ReceiverOptions {
  /** The signing secret shown when the callback was set, or the new one after a rotation. */
  secret: string;
  /** During a rotation, the previous secret (until the `previous_valid_until` the rotation returned). */
  previousSecret?: string;
  journal: Journal;
}

const SIGNATURE = /^[0-9a-f]{64}$/;

/** Which secret signed these bytes, comparing in constant time; undefined when none did. */
function signedWith(raw: Buffer, signature: string, secrets: [string, string | undefined]): 'current' | 'previous' | undefined {
  if (!SIGNATURE.test(signature)) return undefined;
  const given = Buffer.from(signature, 'hex');
  const matches = secrets.map((secret) => secret !== undefined && timingSafeEqual(createHmac('sha256', secret).update(raw).digest(), given));
  return matches[0] ? 'current' : matches[1] ? 'previous' : undefined;
}

/**
 * A callback endpoint (SPEC "Outbound callbacks" and "Events"): `POST /callbacks`.
 *  1. The signature `X-Service-Signature` = hex HMAC-SHA256(secret, raw body) is checked over the
 *     exact bytes received, before parsing, in constant time, against the current secret and
 *     during a rotation the previous one. Anything else: 401, nothing recorded.
 *  2. The delivery is recorded durably, then answered 200. Any non-2xx makes the service retry.
 *  3. A repeat (the same deliveryId: the service retries, and rarely delivers twice) is answered
 *     200 and changes nothing.
 */
export function callbackReceiver(options: ReceiverOptions): Express {
  const app = express();
  // The raw bytes, not parsed JSON: re-serialising would change what was signed.
  app.post('/callbacks', express.raw({ type: 'application/json', limit: '1mb' }), async (req, res, next) => {
    try {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const signature = req.get('X-Service-Signature') ?? '';
      const secret = signedWith(raw, signature, [options.secret, options.previousSecret]);
      if (!secret) {
        res.status(401).json({ error: 'invalid signature' });
        return;
      }

      const body = JSON.parse(raw.toString('utf8')) as { event: string; referenceId: string; eventId: string; deliveryId: string };
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
        body: raw.toString('utf8'),
        signature,
      });
      res.status(200).json({ recorded, repeat: !recorded });
    } catch (err) {
      next(err); // not recorded: Express answers 500 and the service retries
    }
  });
  return app;
}
