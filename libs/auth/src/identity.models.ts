import { Connection, Model, Schema, Types, basePlugin } from '@smartlock/db';

/**
 * The identity slice (database `smartlock_identity`), written by admin-api. libs/auth reads it
 * directly (the one shared read of ARCHITECTURE.md) so a revoked key fails on the very next request.
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
  created_at: Date;
  updated_at: Date;
}

/**
 * When an API key or ingest token was last used (`_id` = its id). Kept apart from the key or token:
 * FerretDB 1.x applies an update as a read then a write of the whole document, so a `last_used_at`
 * write racing a revocation of the same document could write `revoked_at: null` back, and the
 * revoked credential would keep working. Here a lost race loses a timestamp, nothing else.
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
});
ingestTokenSchema.plugin(basePlugin);
// Every ingest request finds its token by the hash of the URL's token.
ingestTokenSchema.index({ hash: 1 }, { unique: true });
// The admin listing of a company's tokens.
ingestTokenSchema.index({ company_id: 1, created_at: -1 });

const credentialUsageSchema = new Schema<CredentialUsageDoc>({ _id: String, last_used_at: { type: Date, required: true } }, { versionKey: false });

function model<T>(conn: Connection, name: string, schema: Schema<T>, collection: string): Model<T> {
  return (conn.models[name] as Model<T> | undefined) ?? conn.model<T>(name, schema, collection);
}

export function identityModels(conn: Connection) {
  return {
    Company: model(conn, 'Company', companySchema, 'companies'),
    ApiKey: model(conn, 'ApiKey', apiKeySchema, 'api_keys'),
    IngestToken: model(conn, 'IngestToken', ingestTokenSchema, 'ingest_tokens'),
    CredentialUsage: model(conn, 'CredentialUsage', credentialUsageSchema, 'credential_usage'),
  };
}
export type IdentityModels = ReturnType<typeof identityModels>;

/** Default name of the identity database; apps read `IDENTITY_DB`. */
export const IDENTITY_DB = 'smartlock_identity';
