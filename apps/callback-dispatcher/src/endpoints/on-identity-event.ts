import type { CallbackEndpointConfig, IdentityEventMessage } from '@smartlock/contracts';
import type { MessageContext } from '@smartlock/messaging';
import { PermanentError } from '@smartlock/messaging';
import type { EndpointStore } from './store';

export const CALLBACK_EVENTS: ReadonlySet<string> = new Set(['callback.updated', 'callback.secret_rotated']);

/**
 * identity.events → the replica of callback endpoints. Each version is inserted under its own key
 * (`<company>:<version>`: a redelivered one is already there), never written over another, so two
 * versions handled at once by two processes both land and the highest is the endpoint; an older one
 * arriving late changes nothing. Versions below the highest are then deleted.
 */
export async function onIdentityEvent(store: EndpointStore, msg: IdentityEventMessage, ctx: MessageContext): Promise<void> {
  if (!CALLBACK_EVENTS.has(msg.type)) return;
  const endpoint = (msg.data as { endpoint?: CallbackEndpointConfig } | undefined)?.endpoint;
  if (!endpoint || typeof endpoint.version !== 'number' || typeof endpoint.url !== 'string' || !endpoint.auth) {
    throw new PermanentError(`${msg.type} without a valid data.endpoint`);
  }
  const companyId = String(endpoint.company_id ?? msg.company_id);
  const added = await store.addVersion(companyId, { ...endpoint, company_id: companyId });
  const head = await store.current(companyId);
  if (head) await store.dropBelow(companyId, head.version);
  ctx.logger.info('callback endpoint replica updated', {
    companyId,
    version: endpoint.version,
    current: head?.version ?? null,
    changed: added && head?.version === endpoint.version,
  });
}
