import axios from 'axios';
import { httpSnapshotFetcher } from '@smartlock/layout';
import { HttpError } from '@smartlock/http';

/**
 * What a lock account's disconnection asks location-api, which owns the bindings: where the
 * company's locks are bound (its snapshot), and to unbind one (`DELETE …/locks/:lockId`), both with
 * ADMIN_TOKEN. Either failing refuses the disconnection (503): nothing is released unread.
 */
export function locationLocks(locationApiUrl: string, adminToken: string) {
  const base = locationApiUrl.replace(/\/+$/, '');
  const fetchSnapshot = httpSnapshotFetcher(base, adminToken, 10_000);
  const unavailable = () => new HttpError(503, "The company's layout cannot be read or changed now: try again shortly");
  return {
    async boundLocks(companyId: string) {
      const nodes = await fetchSnapshot(companyId).then(
        (s) => s.nodes,
        () => Promise.reject(unavailable()),
      );
      const bound = new Map<string, { level: string; _id: string; name: string }>();
      for (const n of nodes) for (const l of n.locks ?? []) bound.set(l.lock_id, { level: n.level, _id: n._id, name: n.name });
      return bound;
    },
    async unbind(companyId: string, lockId: string, correlationId: string) {
      const res = await axios
        .delete(`${base}/admin/v1/companies/${companyId}/locks/${encodeURIComponent(lockId)}`, {
          headers: { Authorization: `Bearer ${adminToken}`, 'X-Correlation-Id': correlationId },
          timeout: 10_000,
          validateStatus: () => true,
        })
        .catch(() => undefined);
      // 404: not bound any more (unbound meanwhile): the outcome wanted.
      if (!res || (res.status !== 200 && res.status !== 404)) throw unavailable();
    },
  };
}
