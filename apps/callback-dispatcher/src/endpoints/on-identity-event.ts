import type { CallbackEndpointConfig, IdentityEventMessage } from '@smartlock/contracts';
import { claimOnce } from '@smartlock/db';
import type { MessageContext } from '@smartlock/messaging';
import { PermanentError } from '@smartlock/messaging';
import type { DispatcherModels, EndpointDoc } from '../models';

export const CALLBACK_EVENTS: ReadonlySet<string> = new Set(['callback.updated', 'callback.secret_rotated']);

/** A company's callback endpoint as the replica holds it: its highest version. */
export function currentEndpoint(models: DispatcherModels, companyId: string): Promise<EndpointDoc | null> {
  return models.Endpoint.findOne({ company_id: companyId }).sort({ version: -1 }).lean<EndpointDoc>().exec();
}

/**
 * identity.events → the replica of callback endpoints. Each version is inserted under its own key
 * (`<company>:<version>`: a redelivered one is already there), never written over another, so two
 * versions handled at once by two processes both land and the highest is the endpoint; an older one
 * arriving late changes nothing. Versions below the highest are then deleted.
 */
export async function onIdentityEvent(models: DispatcherModels, msg: IdentityEventMessage, ctx: MessageContext): Promise<void> {
  if (!CALLBACK_EVENTS.has(msg.type)) return;
  const endpoint = (msg.data as { endpoint?: CallbackEndpointConfig } | undefined)?.endpoint;
  if (!endpoint || typeof endpoint.version !== 'number' || typeof endpoint.url !== 'string' || !endpoint.auth) {
    throw new PermanentError(`${msg.type} without a valid data.endpoint`);
  }
  const companyId = String(endpoint.company_id ?? msg.company_id);
  const now = new Date();
  const added = await claimOnce(models.Endpoint, `${companyId}:${endpoint.version}`, {
    company_id: companyId,
    version: endpoint.version,
    config: { ...endpoint, company_id: companyId },
    created_at: now,
    updated_at: now,
  });
  const head = await currentEndpoint(models, companyId);
  if (head) await models.Endpoint.deleteMany({ company_id: companyId, version: { $lt: head.version } });
  ctx.logger.info('callback endpoint replica updated', { companyId, version: endpoint.version, current: head?.version ?? null, changed: added && head?.version === endpoint.version });
}

/**
 * Upgrade from the replica of one document per company (collection `callback_endpoints`, before
 * the version log): each becomes its version in the log, then the old collection goes. Idempotent
 * (a version already there is kept); nothing to do once the old collection is gone.
 */
export async function adoptSingleDocumentReplica(models: DispatcherModels): Promise<number> {
  const db = models.Endpoint.db;
  if (!(await db.listCollections()).some((c) => c.name === 'callback_endpoints')) return 0;
  const old = db.collection<EndpointDoc & { created_at?: Date; updated_at?: Date }>('callback_endpoints');
  let adopted = 0;
  for await (const doc of old.find()) {
    const now = new Date();
    const fields = { company_id: doc.company_id, version: doc.version, config: doc.config, created_at: doc.created_at ?? now, updated_at: doc.updated_at ?? now };
    if (await claimOnce(models.Endpoint, `${doc.company_id}:${doc.version}`, fields)) adopted++;
  }
  await old.drop();
  return adopted;
}
