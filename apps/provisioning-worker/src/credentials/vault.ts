import { SecretKey, companyAad, decryptSecret, encryptSecret, openCredentials, sealCredentials } from '@smartlock/auth';
import type { EncryptedSecret } from '@smartlock/contracts';

/** The fields of bookings, schedules and operations that hold credentials (lists, one issued `result`, a booking's `card_id`). */
const LISTS = ['desired', 'actual', 'published'] as const;

/**
 * Credentials at rest: lockData, passcodes and card numbers are written sealed (AES-256-GCM with
 * SECRETS_KEY, the record's company as associated data) and opened when read, at the one boundary
 * of each read and write of the worker's records. A database dump opens no lock; a record copied
 * under another company does not open.
 */
export function credentialVault(key: SecretKey) {
  const each = (fields: Record<string, unknown>, aad: string, f: <T extends object>(list: T[], aad: string) => T[]) => {
    const out = { ...fields };
    for (const name of LISTS) if (Array.isArray(out[name])) out[name] = f(out[name] as object[], aad);
    if (out.result && typeof out.result === 'object') out.result = f([out.result as object], aad)[0];
    return out;
  };
  return {
    /** A write's fields (a `$set`, a new record) with their credentials sealed. */
    seal<T extends object>(companyId: string, fields: T): T {
      const aad = companyAad(companyId);
      const out = each(fields as Record<string, unknown>, aad, (list) => sealCredentials(list, key, aad));
      if ('card_id' in out) {
        out.sealed_card_id = typeof out.card_id === 'string' ? encryptSecret(out.card_id, key, aad) : null;
        out.card_id = null;
      }
      return out as T;
    },
    /** A record as read, with its credentials opened (null stays null). */
    open<T extends { company_id: string }>(doc: T | null): T | null {
      if (!doc) return doc;
      const aad = companyAad(doc.company_id);
      const out = each(doc as unknown as Record<string, unknown>, aad, (list) => openCredentials(list, key, aad, 'SECRETS_KEY for its company'));
      const sealed = out.sealed_card_id as EncryptedSecret | null | undefined;
      if (sealed) out.card_id = decryptSecret(sealed, key, aad);
      delete out.sealed_card_id;
      return out as unknown as T;
    },
  };
}

export type CredentialVault = ReturnType<typeof credentialVault>;
