import type { CallbackEndpointConfig } from '@smartlock/contracts';
import type { CallbackEndpointDoc, StoredHmacSecret } from '@smartlock/auth';

/** Secrets that still count: the current one and rotated-out ones whose window is open. */
export function liveSecrets(secrets: StoredHmacSecret[], now: Date): StoredHmacSecret[] {
  return secrets.filter((s) => s.valid_until === null || new Date(s.valid_until).getTime() > now.getTime());
}

/** The configuration as published on identity.events: secrets encrypted exactly as stored. */
export function toEndpointConfig(doc: CallbackEndpointDoc): CallbackEndpointConfig {
  const iso = (d: Date | string) => new Date(d).toISOString();
  const a = doc.auth;
  const auth: CallbackEndpointConfig['auth'] =
    a.type === 'hmac'
      ? {
          type: 'hmac',
          secrets: a.secrets.map((s) => ({ secret: s.secret, created_at: iso(s.created_at), valid_until: s.valid_until ? iso(s.valid_until) : null })),
        }
      : a.type === 'bearer'
        ? { type: 'bearer', token: a.token }
        : a.type === 'basic'
          ? { type: 'basic', username: a.username, password: a.password }
          : { type: 'api_key', header: a.header, value: a.value };
  return { company_id: String(doc.company_id), url: doc.url, version: doc.version, updated_at: iso(doc.updated_at), auth };
}

/** What GET shows: no secret, not even encrypted; for hmac only when each secret was created and until when it is valid. */
export function toEndpointView(doc: CallbackEndpointDoc, now: Date) {
  const a = doc.auth;
  const auth =
    a.type === 'hmac'
      ? { type: a.type, secrets: liveSecrets(a.secrets, now).map((s) => ({ created_at: s.created_at, valid_until: s.valid_until })) }
      : a.type === 'basic'
        ? { type: a.type, username: a.username }
        : a.type === 'api_key'
          ? { type: a.type, header: a.header }
          : { type: a.type };
  return { company_id: String(doc.company_id), url: doc.url, auth, version: doc.version, created_at: doc.created_at, updated_at: doc.updated_at };
}
