import type { CallbackEndpointConfig, EncryptedSecret } from '@smartlock/contracts';
import { Connection, Model, Schema, Types, VersionDoc, basePlugin, versionModel } from '@smartlock/db';

/** A callback secret as stored: AES-256-GCM ciphertext (SECRETS_KEY), never the plaintext. */
export interface StoredHmacSecret {
  secret: EncryptedSecret;
  created_at: Date;
  /** null for the current secret; a rotated-out secret is accepted by receivers until then. */
  valid_until: Date | null;
}

export type StoredCallbackAuth =
  | { type: 'hmac'; secrets: StoredHmacSecret[] }
  | { type: 'bearer'; token: EncryptedSecret }
  | { type: 'basic'; username: string; password: EncryptedSecret }
  | { type: 'api_key'; header: string; value: EncryptedSecret };

/** One per company (collection `callback_endpoints` of the identity slice). */
export interface CallbackEndpointDoc {
  _id: Types.ObjectId;
  company_id: Types.ObjectId;
  url: string;
  auth: StoredCallbackAuth;
  /** +1 on every change; the dispatcher's replica keeps the highest version it has seen. */
  version: number;
  created_at: Date;
  updated_at: Date;
}

const schema = new Schema<CallbackEndpointDoc>({
  company_id: { type: Schema.Types.ObjectId, required: true },
  url: { type: String, required: true },
  // The shape differs per auth type (validated with joi before any write): a plain sub-document.
  auth: { type: Schema.Types.Mixed, required: true },
  version: { type: Number, required: true },
});
schema.plugin(basePlugin);
// One endpoint per company; the unique index also settles two first PUTs racing (one wins, one retries as an update).
schema.index({ company_id: 1 }, { unique: true });

export type CallbackEndpointModel = Model<CallbackEndpointDoc>;

export function callbackEndpointModel(conn: Connection): CallbackEndpointModel {
  return (
    (conn.models.CallbackEndpoint as CallbackEndpointModel | undefined) ?? conn.model<CallbackEndpointDoc>('CallbackEndpoint', schema, 'callback_endpoints')
  );
}

/** `<endpoint>:<version>`: whoever inserts it makes that version of the endpoint (libs/db nextVersion). */
export function callbackEndpointVersions(conn: Connection): Model<VersionDoc> {
  return versionModel(conn, 'callback_endpoint_versions');
}

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
