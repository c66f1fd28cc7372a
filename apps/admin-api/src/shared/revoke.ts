import type { Request } from 'express';
import type { IdentityEventType } from '@smartlock/contracts';
import type { Types } from '@smartlock/db';
import type { Deps } from './deps';
import { notFoundError } from './validation';

interface Revocable {
  _id: Types.ObjectId;
  company_id: Types.ObjectId;
  revoked_at: Date | null;
}

/**
 * Revokes an API key or ingest token. Idempotent: revoking a revoked one answers with it unchanged
 * and publishes nothing new; an unknown id is a 404, and so is another company's when `owner` names
 * the company it must belong to (a portal session's). The next request with it is refused (libs/auth
 * reads the slice on every request). Of concurrent revocations exactly one publishes (`revoke`: the
 * identity store's, which says `won` once).
 */
export async function revokeOnce<D extends Revocable>(
  deps: Deps,
  req: Request,
  what: {
    revoke: (id: Types.ObjectId, at: Date, owner?: Types.ObjectId) => Promise<{ won: boolean; doc: D } | null>;
    label: string;
    event: IdentityEventType;
    data: (d: D) => Record<string, unknown>;
  },
  id: Types.ObjectId,
  owner?: Types.ObjectId,
): Promise<D> {
  const done = await what.revoke(id, deps.now(), owner);
  if (!done) throw notFoundError(what.label, id);
  if (done.won) {
    await deps.events.publish(
      what.event,
      { company_id: String(done.doc.company_id), id: String(done.doc._id), data: what.data(done.doc) },
      { correlationId: req.correlationId, logger: req.log },
    );
  }
  return done.doc;
}
