import type { CallbackEndpointConfig } from '@smartlock/contracts';
import { Connection, Schema, basePlugin, claimOnce, unlessHeld } from '@smartlock/db';
import type { EndpointDoc, EndpointHealthDoc, EndpointState } from '../models';

/**
 * The callback endpoints' data: the replica of each company's endpoint (a log of its versions) and
 * the endpoint's health. The use cases call the functions below and never the models (the rule:
 * CONTRIBUTING.md, "One data module per aggregate"; deliveries/store.ts holds the deliveries').
 *
 * What the writes rely on:
 * - a version is inserted under its own key (`<company>:<version>`) against the unique `_id`, the
 *   one write every supported server makes atomic, and never written over another: two versions
 *   handled at once by two processes both land, and the highest is the endpoint;
 * - a health record is written by whoever sees the endpoint change; a server may apply a
 *   conditional update as a read then a write (docs/adr/0101), so two processes changing the state
 *   at once leave one of the two: either is a state the endpoint was in, and the next delivery or
 *   dead letter moves it on.
 */

/** The aggregate's models on a connection (called once per connection, by models.ts dispatcherModels). */
export function endpointModels(conn: Connection) {
  const endpoint = new Schema<EndpointDoc>({
    _id: { type: String },
    company_id: { type: String, required: true },
    version: { type: Number, required: true },
    config: { type: Schema.Types.Mixed, required: true },
  });
  endpoint.plugin(basePlugin);
  // current: a company's highest version; dropBelow: its older ones.
  endpoint.index({ company_id: 1, version: -1 });

  const health = new Schema<EndpointHealthDoc>({
    _id: { type: String },
    state: { type: String, required: true },
    failing_since: { type: Date, default: null },
    last_failure: { type: String, default: null },
    disabled_at: { type: Date, default: null },
    disabled_reason: { type: String, default: null },
  });
  health.plugin(basePlugin);
  // countInState (callback_endpoint_states): the endpoints in each state, counted at scrape time
  health.index({ state: 1 });

  return {
    Endpoint: conn.model<EndpointDoc>('CallbackEndpoint', endpoint, 'callback_endpoint_versions'),
    EndpointHealth: conn.model<EndpointHealthDoc>('EndpointHealth', health, 'endpoint_health'),
  };
}

type EndpointModels = ReturnType<typeof endpointModels>;

/** The replica of one document per company, before the version log. */
const SINGLE_DOCUMENT_REPLICA = 'callback_endpoints';

/** The endpoints aggregate's operations (see the module's comment); every read and write of its records. */
export function endpointStore({ Endpoint, EndpointHealth }: EndpointModels) {
  const addVersion = (companyId: string, version: number, config: CallbackEndpointConfig, at: { created_at: Date; updated_at: Date }) =>
    claimOnce(Endpoint, `${companyId}:${version}`, { company_id: companyId, version, config, ...at });

  return {
    /** A company's callback endpoint as the replica holds it: its highest version. */
    current: (companyId: string) => Endpoint.findOne({ company_id: companyId }).sort({ version: -1 }).lean<EndpointDoc>().exec(),

    /** Stores a version of a company's endpoint: true when this call stored it, false when it was there already. */
    addVersion: (companyId: string, config: CallbackEndpointConfig) => {
      const now = new Date();
      return addVersion(companyId, config.version, config, { created_at: now, updated_at: now });
    },

    /** Deletes a company's versions below `version`. */
    dropBelow: async (companyId: string, version: number): Promise<void> => {
      await Endpoint.deleteMany({ company_id: companyId, version: { $lt: version } });
    },

    /**
     * Upgrade from the replica of one document per company: each becomes its version in the log, then
     * the old collection goes. Idempotent (a version already there is kept); nothing to do once the
     * old collection is gone. How many were adopted.
     */
    adoptSingleDocumentReplica: async (): Promise<number> => {
      const db = Endpoint.db;
      if (!(await db.listCollections()).some((c) => c.name === SINGLE_DOCUMENT_REPLICA)) return 0;
      const old = db.collection<EndpointDoc & { created_at?: Date; updated_at?: Date }>(SINGLE_DOCUMENT_REPLICA);
      let adopted = 0;
      for await (const doc of old.find()) {
        const now = new Date();
        if (await addVersion(doc.company_id, doc.version, doc.config, { created_at: doc.created_at ?? now, updated_at: doc.updated_at ?? now })) adopted++;
      }
      await old.drop();
      return adopted;
    },

    /** A company's endpoint health record, or null (healthy, never recorded). */
    health: (companyId: string) => EndpointHealth.findById(companyId).lean<EndpointHealthDoc>().exec(),

    /**
     * Writes a company's health record: with `from` only while it is in that state, else whatever it
     * holds (created when missing; a first write racing another's retries as an update). Whether it changed.
     */
    writeHealth: async (companyId: string, from: EndpointState | null, set: Partial<EndpointHealthDoc>): Promise<boolean> => {
      const filter = { _id: companyId, ...(from ? { state: from } : {}) };
      const upserted = await unlessHeld(EndpointHealth.updateOne(filter, { $set: set }, { upsert: from === null }).exec());
      if (upserted) return upserted.modifiedCount + upserted.upsertedCount > 0;
      const r = await EndpointHealth.updateOne(filter, { $set: set });
      return r.modifiedCount > 0;
    },

    /** How many endpoints are in `state`. */
    countInState: (state: EndpointState) => EndpointHealth.countDocuments({ state }).exec(),
  };
}

export type EndpointStore = ReturnType<typeof endpointStore>;
