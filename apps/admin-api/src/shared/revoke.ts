import type { Request } from 'express';
import type { IdentityEventType } from '@smartlock/contracts';
import type { Model, Types } from '@smartlock/db';
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
 * reads the slice on every request).
 */
export async function revokeOnce<D extends Revocable>(
  deps: Deps,
  req: Request,
  what: { model: Model<D>; label: string; event: IdentityEventType; data: (d: D) => Record<string, unknown> },
  id: Types.ObjectId,
  owner?: Types.ObjectId,
): Promise<D> {
  const mine = owner ? { company_id: owner } : {};
  const revoked = await what.model.findOneAndUpdate({ _id: id, revoked_at: null, ...mine }, { $set: { revoked_at: deps.now() } }, { new: true }).lean<D>();
  if (revoked) {
    await deps.events.publish(
      what.event,
      { company_id: String(revoked.company_id), id: String(revoked._id), data: what.data(revoked) },
      { correlationId: req.correlationId, logger: req.log },
    );
    return revoked;
  }
  const existing = await what.model.findOne({ _id: id, ...mine }).lean<D>();
  if (!existing) throw notFoundError(what.label, id);
  return existing;
}
