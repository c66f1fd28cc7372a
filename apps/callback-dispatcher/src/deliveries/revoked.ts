import type { CallbackBody, CallbackCredential } from '@smartlock/contracts';
import { SecretKey, decryptSecret } from '@smartlock/auth';
import type { DeliveryDoc } from '../models';
import type { DeliveryStore } from './store';

/** A stored body, decrypted and parsed; null when it cannot be read (another key, damage). */
export function storedBody(d: Pick<DeliveryDoc, 'body'>, key: SecretKey): CallbackBody | null {
  try {
    return JSON.parse(decryptSecret(d.body, key)) as CallbackBody;
  } catch {
    return null;
  }
}

/** The credentials a stored access.provisioned or access.revoked body names (none for access.failed). */
function credentialsOf(d: Pick<DeliveryDoc, 'body'>, key: SecretKey): CallbackCredential[] {
  const data = storedBody(d, key)?.data;
  return data && 'credentials' in data ? data.credentials : [];
}

/** A credential as its provisioned and revoked bodies both name it. */
const credentialKey = (c: CallbackCredential) => [c.type, c.lockId, c.keyId ?? c.passcodeId ?? c.cardId ?? ''].join('|');

/**
 * Whether an access.provisioned delivery hands out a credential revoked since: a later access.revoked
 * delivery of the booking names one of its credentials. Sending it again (a manual redelivery, or a
 * retry after the booking's checkout) would give whoever holds the endpoint a credential that no
 * longer opens, or the door of a stay that ended.
 */
export async function revokedSince(
  store: Pick<DeliveryStore, 'revokedBodiesSince'>,
  key: SecretKey,
  d: Pick<DeliveryDoc, 'company_id' | 'reference_id' | 'event' | 'body'> & { occurred_at: Date | string },
): Promise<boolean> {
  if (d.event !== 'access.provisioned') return false;
  const since = new Date(d.occurred_at);
  const revoked = await store.revokedBodiesSince(d.company_id, d.reference_id, since);
  if (revoked.length === 0) return false;
  const gone = new Set(revoked.flatMap((r) => credentialsOf(r, key)).map(credentialKey));
  return credentialsOf(d, key).some((c) => gone.has(credentialKey(c)));
}
