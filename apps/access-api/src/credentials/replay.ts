import { Router, type RequestHandler } from 'express';
import { sealAccessEvent } from '@smartlock/auth';
import { AccessEventMessage, SuccessCodes, ok } from '@smartlock/contracts';
import { asyncHandler, companyIdParam } from '@smartlock/http';
import { Broker, QUEUES, sendAllToQueue } from '@smartlock/messaging';
import type { Logger } from '@smartlock/observability';
import { AccessLog, AccessLogDoc, bookingCredentialEntries, openEntry } from './store';

export interface ReplayDeps {
  log: AccessLog;
  broker: Broker;
  /** The stored credentials travel sealed, as the worker's originals do. */
  messageKey: Buffer;
  logger: Logger;
  admin: RequestHandler;
}

/** The access.events message an entry was made from, as far as location-api reads it (no guest, no validity). */
function toMessage(e: AccessLogDoc, correlationId: string): AccessEventMessage {
  return {
    type: e.kind as AccessEventMessage['type'],
    company_id: e.company_id,
    reference_id: e.reference_id,
    event_id: e.event_id,
    occurred_at: new Date(e.occurred_at).toISOString(),
    sequence: e.sequence,
    subject: 'booking',
    credentials: e.credentials,
    correlation_id: correlationId,
  };
}

/**
 * Sends the company's booking credential messages (provisioned and revoked; employee schedules are
 * no guests, failures change no lock) once more, to location-api's queue only. location-api's
 * credential log keys an entry by what the message carries, so a replay adds only what its queue
 * lost. One pass with a cursor over the company's entries.
 */
async function replayToLocationApi(deps: ReplayDeps, companyId: string, correlationId: string): Promise<number> {
  const entries = bookingCredentialEntries(deps.log, companyId);
  const sent = await sendAllToQueue(deps.broker, QUEUES.locationApiAccessEvents.name, entries, (e: AccessLogDoc) => ({
    payload: sealAccessEvent(toMessage(openEntry(deps.log, e), correlationId), deps.messageKey),
    options: { correlationId, messageId: `${e._id}:replay` },
  }));
  deps.logger.info('credential messages replayed to location-api', { companyId, messages: sent, correlationId });
  return sent;
}

/** `POST /admin/v1/companies/:companyId/access-events/replay` (admin token): location-api's occupancy re-sync calls it. */
export function replayRoutes(deps: ReplayDeps): Router {
  const r = Router();
  r.post(
    '/admin/v1/companies/:companyId/access-events/replay',
    deps.admin,
    asyncHandler(async (req, res) => {
      const companyId = companyIdParam(req);
      const replayed = await replayToLocationApi(deps, companyId, req.correlationId);
      res.json(ok('Access events replayed to location-api', SuccessCodes.ACCESS_EVENTS_REPLAYED, { company_id: companyId, replayed }));
    }),
  );
  return r;
}
