import type { CredentialRecord } from '@smartlock/contracts';
import type { AccessLogDoc } from './store';

export type AccessStatus = 'pending' | 'active' | 'revoked' | 'failed';

export interface RevokedCredential {
  record: CredentialRecord;
  revoked_at: string;
}

/** A reference's current state, folded from its log entries. */
export interface AccessView {
  reference_id: string;
  status: AccessStatus;
  /** Why the latest provisioning failed (status `failed`), else null. */
  reason: string | null;
  validity: AccessLogDoc['validity'];
  /** Ingest provider of the booking, when a booking event was seen. */
  provider: string | null;
  /** Highest booking version applied by an access event (0 when none yet). */
  sequence: number;
  updated_at: string;
  active: CredentialRecord[];
  revoked: RevokedCredential[];
}

/** What identifies one credential on one lock across messages. */
function credentialKey(c: CredentialRecord): string {
  const id = c.keyId ?? c.passcodeId ?? c.cardId ?? c.passcode ?? c.card_id ?? '';
  return `${c.type}|${c.lockId}|${id}`;
}

// At one sequence and instant, a revoke is applied after a failure, and both after a provision.
const KIND_RANK: Record<AccessLogDoc['kind'], number> = { booking: 0, 'access.provisioned': 1, 'access.failed': 2, 'access.revoked': 3 };

function order(a: AccessLogDoc, b: AccessLogDoc): number {
  return a.sequence - b.sequence || a.occurred_at.getTime() - b.occurred_at.getTime() || KIND_RANK[a.kind] - KIND_RANK[b.kind];
}

/**
 * Order-independent: the same entries give the same view whatever order they arrived in.
 * - `access.provisioned` carries the full active set: the newest one (by sequence) is the candidate set;
 * - a credential is active iff it is in that set and no `access.revoked` of a sequence >= that set's
 *   sequence names it (a revoke wins over a provision of the same or an older version, so a
 *   redelivered or late provision never resurrects a revoked credential);
 * - every other credential ever seen is revoked, at the time of the revoke that named it or of the
 *   provision that dropped it from the set.
 */
/** Entries recorded before validity named the zone have none: null, unknown. */
function validityOf(entry: AccessLogDoc | undefined): AccessView['validity'] {
  const v = entry?.validity;
  return v ? { check_in: v.check_in ?? null, check_out: v.check_out ?? null, time_zone: v.time_zone ?? null } : null;
}

export function foldAccess(referenceId: string, entries: AccessLogDoc[]): AccessView | null {
  if (entries.length === 0) return null;
  const sorted = [...entries].sort(order);
  const access = sorted.filter((e) => e.kind !== 'booking');
  const bookings = sorted.filter((e) => e.kind === 'booking');
  const provisions = access.filter((e) => e.kind === 'access.provisioned');
  const revokes = access.filter((e) => e.kind === 'access.revoked');
  const latestProvision = provisions[provisions.length - 1];

  const revokedAtOrAfter = (key: string, sequence: number) =>
    revokes.find((r) => r.sequence >= sequence && r.credentials.some((c) => credentialKey(c) === key));

  const active = (latestProvision?.credentials ?? []).filter((c) => !revokedAtOrAfter(credentialKey(c), latestProvision.sequence));
  const activeKeys = new Set(active.map(credentialKey));

  // Newest record of every inactive credential, with when it stopped.
  const revoked = new Map<string, RevokedCredential>();
  for (const entry of access) {
    if (entry.kind === 'access.failed') continue;
    for (const c of entry.credentials) {
      const key = credentialKey(c);
      if (activeKeys.has(key)) continue;
      const lastProvision = [...provisions].reverse().find((p) => p.credentials.some((x) => credentialKey(x) === key));
      const since = lastProvision?.sequence ?? entry.sequence;
      const revoke = revokedAtOrAfter(key, since);
      const dropped = provisions.find((p) => order(p, lastProvision ?? entry) > 0 && !p.credentials.some((x) => credentialKey(x) === key));
      const at = revoke?.occurred_at ?? dropped?.occurred_at ?? entry.occurred_at;
      revoked.set(key, { record: c, revoked_at: at.toISOString() });
    }
  }

  const last = access[access.length - 1];
  let status: AccessStatus;
  if (!last) status = 'pending';
  else if (last.kind === 'access.failed') status = 'failed';
  else if (active.length > 0 || revoked.size === 0) status = 'active';
  else status = 'revoked';

  const latestBooking = bookings[bookings.length - 1];
  return {
    reference_id: referenceId,
    status,
    reason: status === 'failed' ? (last?.reason ?? null) : null,
    validity: validityOf(latestProvision?.validity ? latestProvision : latestBooking),
    provider: latestBooking?.provider ?? null,
    sequence: access.reduce((max, e) => Math.max(max, e.sequence), 0),
    updated_at: new Date(Math.max(...sorted.map((e) => e.occurred_at.getTime()))).toISOString(),
    active,
    revoked: [...revoked.values()],
  };
}
