import type { Types } from '@smartlock/db';
import type { Deps } from './deps';

/**
 * `last_used_at` of each key or token (credential_usage, written by libs/auth), null for one never
 * used. One read for a listing (`_id: {$in}`: a scan of the small usage collection on a server that
 * pushes down no `$in`).
 */
export async function withLastUse<D extends { _id: Types.ObjectId }>(deps: Deps, docs: D[]): Promise<(D & { last_used_at: Date | null })[]> {
  if (!docs.length) return [];
  const at = await deps.identity.lastUsedAt(docs.map((d) => String(d._id)));
  return docs.map((d) => ({ ...d, last_used_at: at.get(String(d._id)) ?? null }));
}
