import type { EncryptedSecret } from '@smartlock/contracts';
import { Connection, Model, Schema, Types, basePlugin, transitionModel, versionModel } from '@smartlock/db';

/**
 * The identity slice (database `smartlock_identity`), written by admin-api: the records' types, their
 * schemas and the indexes the queries of this folder need. libs/auth reads it directly (the one
 * shared read, README.md "The system") so a revoked key fails on the very next request. Only this
 * folder's stores and tests use the models; `identityModels` stays exported for the apps that still
 * read lock owners and accounts through them (location-api, provisioning-worker).
 */
export interface CompanyDoc {
  _id: Types.ObjectId;
  name: string;
  created_at: Date;
  updated_at: Date;
}

export interface ApiKeyDoc {
  _id: Types.ObjectId;
  company_id: Types.ObjectId;
  name: string;
  prefix: string;
  hash: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  /** The portal session that issued it (the session names its link and who it was issued to); null: the operator's admin API. */
  portal_session_id: Types.ObjectId | null;
  created_at: Date;
  updated_at: Date;
}

export interface IngestTokenDoc {
  _id: Types.ObjectId;
  company_id: Types.ObjectId;
  site_id: string;
  provider: string;
  hash: string;
  revoked_at: Date | null;
  /** Refused from this moment on, like a revoked token; null: no expiry. */
  expires_at: Date | null;
  /** The portal session that issued it; null: the operator's admin API. */
  portal_session_id: Types.ObjectId | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * When an API key or ingest token was last used (`_id` = its id). Kept apart from the key or token:
 * a server may apply an update as a read then a write of the whole document (docs/adr/0101), so a
 * `last_used_at` write racing a revocation of the same document could write `revoked_at: null` back,
 * and the revoked credential would keep working. Here a lost race loses a timestamp, nothing else.
 */
export interface CredentialUsageDoc {
  _id: string;
  last_used_at: Date;
}

const companySchema = new Schema<CompanyDoc>({ name: { type: String, required: true } });
companySchema.plugin(basePlugin);

const apiKeySchema = new Schema<ApiKeyDoc>({
  company_id: { type: Schema.Types.ObjectId, required: true },
  name: { type: String, required: true },
  prefix: { type: String, required: true },
  hash: { type: String, required: true },
  expires_at: { type: Date, default: null },
  revoked_at: { type: Date, default: null },
  portal_session_id: { type: Schema.Types.ObjectId, default: null },
});
apiKeySchema.plugin(basePlugin);
// Every request finds its key by the non-secret prefix; unique so a prefix names one key.
apiKeySchema.index({ prefix: 1 }, { unique: true });
// The admin listing of a company's keys.
apiKeySchema.index({ company_id: 1, created_at: -1 });

const ingestTokenSchema = new Schema<IngestTokenDoc>({
  company_id: { type: Schema.Types.ObjectId, required: true },
  site_id: { type: String, required: true },
  provider: { type: String, required: true },
  hash: { type: String, required: true },
  revoked_at: { type: Date, default: null },
  expires_at: { type: Date, default: null },
  portal_session_id: { type: Schema.Types.ObjectId, default: null },
});
ingestTokenSchema.plugin(basePlugin);
// Every ingest request finds its token by the hash of the URL's token.
ingestTokenSchema.index({ hash: 1 }, { unique: true });
// The admin listing of a company's tokens.
ingestTokenSchema.index({ company_id: 1, created_at: -1 });

/**
 * A portal link: opened once, before `expires_at`, for a session of its company with its capabilities.
 * The link's token is `<_id>.<secret>`; only sha256 of the secret is stored.
 */
export interface PortalLinkDoc {
  _id: Types.ObjectId;
  /** null: an operator's on-call link (capability on_call, every company's dead letters). */
  company_id: Types.ObjectId | null;
  capabilities: string[];
  hash: string;
  expires_at: Date;
  /** When it was opened (its session's creation); the session's unique link_id is what makes it single-use. */
  used_at: Date | null;
  /** Revoked by the operator: it opens nothing, and the session it opened (if any) is revoked too. */
  revoked_at: Date | null;
  issued_to: string | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * A portal session: the cookie `<_id>.<secret>` (sha256 of the secret stored), scoped to one company
 * and a set of capabilities, until `expires_at` or `revoked_at`.
 */
export interface PortalSessionDoc {
  _id: Types.ObjectId;
  /** null: an operator's on-call session (no company: every company's dead letters). */
  company_id: Types.ObjectId | null;
  capabilities: string[];
  hash: string;
  /** The link it was opened with: unique, so a link opens one session however many try at once. */
  link_id: Types.ObjectId;
  issued_to: string | null;
  expires_at: Date;
  revoked_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const portalLinkSchema = new Schema<PortalLinkDoc>({
  company_id: { type: Schema.Types.ObjectId, default: null },
  capabilities: { type: [String], required: true },
  hash: { type: String, required: true },
  expires_at: { type: Date, required: true },
  used_at: { type: Date, default: null },
  revoked_at: { type: Date, default: null },
  issued_to: { type: String, default: null },
});
portalLinkSchema.plugin(basePlugin);

const portalSessionSchema = new Schema<PortalSessionDoc>({
  company_id: { type: Schema.Types.ObjectId, default: null },
  capabilities: { type: [String], required: true },
  hash: { type: String, required: true },
  link_id: { type: Schema.Types.ObjectId, required: true },
  issued_to: { type: String, default: null },
  expires_at: { type: Date, required: true },
  revoked_at: { type: Date, default: null },
});
portalSessionSchema.plugin(basePlugin);
// Single use of a link: the insert of a second session for it fails (an insert into a unique index
// decides on every supported server, where a read-then-update "claim" would not: docs/adr/0101).
portalSessionSchema.index({ link_id: 1 }, { unique: true });
// The operator's listing of a company's sessions.
portalSessionSchema.index({ company_id: 1, created_at: -1 });

const credentialUsageSchema = new Schema<CredentialUsageDoc>({ _id: String, last_used_at: { type: Date, required: true } }, { versionKey: false });

/**
 * The owner of a lock the service operates (`_id`: the vendor's lock id): the one company whose
 * layout may bind it and whose bookings may put credentials on it. Claimed by insert (unique
 * `_id`), so two companies can never both hold one, on every supported server. Written by
 * location-api (the operator assigns a lock, or the operator's layout import claims a lock no company
 * holds), read by location-api before every binding and by the worker before every vendor call.
 */
export interface LockOwnerDoc {
  _id: string;
  company_id: string;
  /** How it became the company's: assigned by the operator, claimed by the operator's layout import, or found in one of the company's lock accounts. */
  source: 'assigned' | 'import' | 'account';
  created_at: Date;
  /** The company's lock account it was found in; absent or null: the operator's service account (LOCK_CLOUD_*). */
  account_id?: string | null;
  /** As the vendor names it and tells its battery, at the account's last sync. */
  name?: string | null;
  battery?: { percent: number | null; low: boolean } | null;
}

const lockOwnerSchema = new Schema<LockOwnerDoc>(
  {
    _id: String,
    company_id: { type: String, required: true },
    source: { type: String, required: true },
    created_at: { type: Date, required: true },
    account_id: { type: String, default: null },
    name: { type: String, default: null },
    battery: { type: Schema.Types.Mixed, default: null },
  },
  { versionKey: false },
);
// The company's locks (GET /admin/v1/companies/:id/locks), in lock id order.
lockOwnerSchema.index({ company_id: 1, _id: 1 });

/**
 * A vendor account a company connected (issue 52): its locks become the company's, and every vendor
 * call on them uses it. The secret (TTLock: the account's username and password under the service's
 * application; Nuki: an API token) is sealed with SECRETS_KEY (encryptSecret, the company's id as
 * associated data) and never leaves this record in clear.
 */
export interface LockAccountDoc {
  _id: Types.ObjectId;
  company_id: string;
  provider: 'ttlock' | 'nuki';
  /** What the company calls it (TTLock: the username); unique per company and provider. */
  label: string;
  secret: { iv: string; tag: string; ciphertext: string };
  /** connected, or needs_attention: the vendor refused its credentials (a changed password, a revoked token). */
  status: 'connected' | 'needs_attention';
  status_reason: string | null;
  locks_found: number;
  synced_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const lockAccountSchema = new Schema<LockAccountDoc>({
  company_id: { type: String, required: true },
  provider: { type: String, required: true },
  label: { type: String, required: true },
  secret: { type: Schema.Types.Mixed, required: true },
  status: { type: String, required: true },
  status_reason: { type: String, default: null },
  locks_found: { type: Number, default: 0 },
  synced_at: { type: Date, default: null },
});
lockAccountSchema.plugin(basePlugin);
// One connection per vendor account and company: a second connect of it is a 409 (decided by the insert).
lockAccountSchema.index({ company_id: 1, provider: 1, label: 1 }, { unique: true });

function model<T>(conn: Connection, name: string, schema: Schema<T>, collection: string): Model<T> {
  return (conn.models[name] as Model<T> | undefined) ?? conn.model<T>(name, schema, collection);
}

export function identityModels(conn: Connection) {
  return {
    Company: model(conn, 'Company', companySchema, 'companies'),
    ApiKey: model(conn, 'ApiKey', apiKeySchema, 'api_keys'),
    IngestToken: model(conn, 'IngestToken', ingestTokenSchema, 'ingest_tokens'),
    CredentialUsage: model(conn, 'CredentialUsage', credentialUsageSchema, 'credential_usage'),
    PortalLink: model(conn, 'PortalLink', portalLinkSchema, 'portal_links'),
    PortalSession: model(conn, 'PortalSession', portalSessionSchema, 'portal_sessions'),
    LockOwner: model(conn, 'LockOwner', lockOwnerSchema, 'lock_owners'),
    LockAccount: model(conn, 'LockAccount', lockAccountSchema, 'lock_accounts'),
    /**
     * `<id>:revoked` of keys, tokens, portal links and sessions: which of concurrent revocations acts
     * (libs/db transitionOnce). Kept, not expired. A record is read only while its key, token, link or
     * session still has `revoked_at: null` (transitionOnce reads that first and, once it is set, never
     * looks here again; nothing sets it back), so one older than any revocation in progress could
     * go: removed at once, a revocation that read the record before the winner's write would claim
     * anew and publish a second time. A TTL index would be the way, and the development server
     * refuses one (docs/adr/0101: `expireAfterSeconds` "not implemented", code 238, measured
     * 2026-12-06); a sweep is a timer for one small record per revocation, which an operator or a
     * portal user makes by hand.
     */
    Transitions: transitionModel(conn, 'identity_transitions'),
  };
}
export type IdentityModels = ReturnType<typeof identityModels>;

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

const callbackEndpointSchema = new Schema<CallbackEndpointDoc>({
  company_id: { type: Schema.Types.ObjectId, required: true },
  url: { type: String, required: true },
  // The shape differs per auth type (validated with joi before any write): a plain sub-document.
  auth: { type: Schema.Types.Mixed, required: true },
  version: { type: Number, required: true },
});
callbackEndpointSchema.plugin(basePlugin);
// One endpoint per company; the unique index also settles two first PUTs racing (one wins, one retries as an update).
callbackEndpointSchema.index({ company_id: 1 }, { unique: true });

/**
 * admin-api's own records of the slice: the callback endpoints, and `<endpoint>:<version>`, whoever
 * inserts it makes that version of the endpoint (libs/db nextVersion). Apart from identityModels:
 * no other app reads them (the dispatcher keeps a replica from identity.events).
 */
export function callbackEndpointModels(conn: Connection) {
  return {
    CallbackEndpoint: model(conn, 'CallbackEndpoint', callbackEndpointSchema, 'callback_endpoints'),
    CallbackEndpointVersions: versionModel(conn, 'callback_endpoint_versions'),
  };
}
export type CallbackEndpointModels = ReturnType<typeof callbackEndpointModels>;
