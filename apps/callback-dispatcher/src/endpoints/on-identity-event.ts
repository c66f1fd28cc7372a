import type { CallbackEndpointConfig, IdentityEventMessage } from '@smartlock/contracts';
import { isDuplicateKeyError } from '@smartlock/db';
import type { MessageContext } from '@smartlock/messaging';
import { PermanentError } from '@smartlock/messaging';
import type { DispatcherModels } from '../models';

export const CALLBACK_EVENTS: ReadonlySet<string> = new Set(['callback.updated', 'callback.secret_rotated']);

/**
 * identity.events → the replica of callback endpoints. Keeps the highest `version` per company: the
 * filter matches only an older (or no) document, so an older event either updates nothing or
 * collides with the unique company index on upsert, which means "we already have newer".
 */
export async function onIdentityEvent(models: DispatcherModels, msg: IdentityEventMessage, ctx: MessageContext): Promise<void> {
  if (!CALLBACK_EVENTS.has(msg.type)) return;
  const endpoint = (msg.data as { endpoint?: CallbackEndpointConfig } | undefined)?.endpoint;
  if (!endpoint || typeof endpoint.version !== 'number' || typeof endpoint.url !== 'string' || !endpoint.auth) {
    throw new PermanentError(`${msg.type} without a valid data.endpoint`);
  }
  const companyId = String(endpoint.company_id ?? msg.company_id);
  try {
    const res = await models.Endpoint.updateOne(
      { company_id: companyId, version: { $lt: endpoint.version } },
      { $set: { version: endpoint.version, config: { ...endpoint, company_id: companyId } } },
      { upsert: true },
    );
    ctx.logger.info('callback endpoint replica updated', { companyId, version: endpoint.version, changed: res.modifiedCount + res.upsertedCount > 0 });
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    ctx.logger.info('callback endpoint event older than the replica; ignored', { companyId, version: endpoint.version });
  }
}
