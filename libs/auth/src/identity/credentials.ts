import { Model, Types, boundedCache, freshReads, insertUnlessHeld, transitionOnce } from '@smartlock/db';
import type { ApiKeyDoc, CompanyDoc, IdentityModels, IngestTokenDoc } from './models';

/** What an API key is stored with (its plaintext never). */
type NewApiKey = Pick<ApiKeyDoc, 'company_id' | 'name' | 'prefix' | 'hash' | 'expires_at' | 'portal_session_id'>;
/** What an ingest token is stored with (its plaintext never). */
type NewIngestToken = Pick<IngestTokenDoc, 'company_id' | 'site_id' | 'provider' | 'hash' | 'expires_at' | 'portal_session_id'>;

/**
 * Sets `revoked_at` once (libs/db transitionOnce: the insert of `<id>:revoked` decides, so of
 * concurrent revocations exactly one is `won`, the one that publishes or logs); null for an unknown
 * id, or another company's when `owner` names the one it must belong to.
 */
export function revokeRecord<D extends { revoked_at: Date | null }>(
  m: IdentityModels,
  records: Model<D>,
  id: Types.ObjectId,
  at: Date,
  owner?: Types.ObjectId,
) {
  return transitionOnce({ records, transitions: m.Transitions }, id, {
    name: 'revoked',
    from: { revoked_at: null },
    set: { revoked_at: at },
    guard: owner ? { company_id: owner } : {},
  });
}

/** Companies, API keys, ingest tokens, when each key or token was last used, and their revocations. */
export function credentialStore(m: IdentityModels) {
  return {
    createCompany: async (name: string): Promise<CompanyDoc> => (await m.Company.create({ name })).toObject(),

    company: (id: Types.ObjectId | string) => m.Company.findById(id).lean<CompanyDoc>().exec(),

    /** Oldest first; `name` (exact) when given. */
    companies: (q: { name?: string; page: number; limit: number }) =>
      m.Company.find(q.name === undefined ? {} : { name: q.name })
        .sort({ created_at: 1, _id: 1 })
        .skip((q.page - 1) * q.limit)
        .limit(q.limit)
        .lean<CompanyDoc[]>()
        .exec(),

    /** Stores a key; null when its prefix is another key's already (the unique prefix index decides). */
    issueApiKey: (key: NewApiKey) => insertUnlessHeld<ApiKeyDoc>(m.ApiKey, key),

    apiKey: (id: Types.ObjectId | string) => m.ApiKey.findById(id).lean<ApiKeyDoc>().exec(),

    /** Newest first. */
    apiKeysOf: (companyId: Types.ObjectId) => m.ApiKey.find({ company_id: companyId }).sort({ created_at: -1, _id: -1 }).lean<ApiKeyDoc[]>().exec(),

    revokeApiKey: (id: Types.ObjectId, at: Date, owner?: Types.ObjectId) => revokeRecord(m, m.ApiKey, id, at, owner),

    issueIngestToken: async (token: NewIngestToken): Promise<IngestTokenDoc> => (await m.IngestToken.create(token)).toObject(),

    /** Newest first. */
    ingestTokensOf: (companyId: Types.ObjectId) =>
      m.IngestToken.find({ company_id: companyId }).sort({ created_at: -1, _id: -1 }).lean<IngestTokenDoc[]>().exec(),

    revokeIngestToken: (id: Types.ObjectId, at: Date, owner?: Types.ObjectId) => revokeRecord(m, m.IngestToken, id, at, owner),

    /**
     * Records a key's or token's use (credential_usage, apart from the key or token: see
     * CredentialUsageDoc). An upsert that may race another process's: the later timestamp or the
     * earlier, either is a use.
     */
    recordUse: async (id: string, at: Date): Promise<void> => {
      await m.CredentialUsage.updateOne({ _id: id }, { $set: { last_used_at: at } }, { upsert: true }).exec();
    },

    /** `last_used_at` of each of these keys or tokens that was ever used: one read for a listing (an `_id: {$in}` a server may answer by reading the small usage collection whole, docs/adr/0101). */
    lastUsedAt: async (ids: string[]): Promise<Map<string, Date>> => {
      const usage = await m.CredentialUsage.find({ _id: { $in: ids } }).lean();
      return new Map(usage.map((u) => [u._id, u.last_used_at]));
    },
  };
}

/**
 * The reads of every authenticated request: a key by its prefix, an ingest token by its hash. The
 * value's `_id` is remembered (at most `max`), so that every request after the first reads its
 * document by primary key, the one lookup every supported server answers from an index (docs/adr/0101:
 * a `hash` or `prefix` query may read the whole collection). Only the id is kept: each request still
 * reads the document, so a revocation holds on the next request; the read checks the lookup value,
 * so a stale entry can never admit anyone. Concurrent requests with one value share a read sent
 * after they arrived (libs/db freshReads). Read through the driver: every ingest event and API
 * request pays this read, the values are already of the stored types, and the answer is the stored
 * document, as `lean()` gives it (measured warm: 0.49–0.52 ms of the caller's CPU per read against
 * 0.62–0.72 through Mongoose's query).
 */
export function credentialLookups(m: IdentityModels, max: number) {
  function byRememberedId<D extends { _id: Types.ObjectId }>(model: Model<D>, field: 'hash' | 'prefix') {
    // A lookup value's id never changes; a deleted document's is dropped when its read misses.
    const ids = boundedCache<string, Types.ObjectId>({ max, ttlMs: Infinity });
    return freshReads(async (value: string): Promise<D | null> => {
      const id = ids.peek(value);
      if (id) {
        const byId = await model.collection.findOne<D>({ _id: id });
        if (byId && (byId as Record<string, unknown>)[field] === value) return byId;
        ids.delete(value);
        if (!byId) return null; // deleted
      }
      const doc = await model.collection.findOne<D>({ [field]: value });
      if (doc) ids.set(value, doc._id);
      return doc;
    });
  }
  return {
    apiKeyByPrefix: byRememberedId<ApiKeyDoc>(m.ApiKey, 'prefix'),
    ingestTokenByHash: byRememberedId<IngestTokenDoc>(m.IngestToken, 'hash'),
  };
}
