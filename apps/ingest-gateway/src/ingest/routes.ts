import { Router, Request, Response } from 'express';
import { AuthMessages } from '@smartlock/auth';
import type { IngestAccepted } from '@smartlock/contracts';
import { HttpError, asyncHandler, badRequest } from '@smartlock/http';
import type { Deps } from '../deps';
import { Acceptance, IngestSource, acceptEvent } from './accept';
import { noteIngestOutcome } from './outcomes';
import { validateBookingEvent } from './validate';

export const IngestMessages = {
  queued: 'Event accepted and queued for processing',
  publishDelayed: 'Event accepted; it is stored and will be queued automatically as soon as the message broker accepts it',
  duplicate:
    'Duplicate event detected: the same reference_id and action were received less than 60 seconds ago; the original eventId is returned and this request is not processed again',
  invalid: 'Invalid booking event',
  siteMissing: 'X-Site-Id header is required',
  siteMalformed: 'X-Site-Id must be 1 to 128 letters, digits or . _ : -',
} as const;

/** The generic provider name for events sent with an API key (a token names its own provider). */
const GENERIC_PROVIDER = 'generic';
const SITE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function reply(res: Response, result: Acceptance) {
  noteIngestOutcome(res, result.kind);
  const body: IngestAccepted = {
    success: true,
    eventId: result.kind === 'duplicate' ? result.originalId : result.eventId,
    // SPEC: a 202 (duplicate or not) reports QUEUED; a delayed publish is retried by the relay.
    status: 'QUEUED',
    message: result.kind === 'queued' ? IngestMessages.queued : result.kind === 'duplicate' ? IngestMessages.duplicate : IngestMessages.publishDelayed,
  };
  res.status(202).json(body);
}

async function ingest(deps: Deps, req: Request, res: Response, source: Omit<IngestSource, 'correlationId'>) {
  const v = validateBookingEvent(req.body);
  if (!v.ok) {
    noteIngestOutcome(res, 'invalid_event');
    throw badRequest(
      IngestMessages.invalid,
      v.errors.map((message) => ({ path: [], message })),
    );
  }
  reply(res, await acceptEvent(deps, { ...source, correlationId: req.correlationId }, v.value));
}

/**
 * SPEC "Ingest": `POST /webhook/t/:token` (the token names company, site and provider) and
 * `POST /webhook/generic` (`apikey`, `X-Site-Id`, and `X-Company-Id` which, when sent, must be the
 * key's company; the site must be the company's: ingest/site.ts). A token's site was fixed when the
 * token was made; should it be gone since, the worker ends the event FAILED `Site not found` (SPEC
 * Errors).
 */
export function ingestRoutes(deps: Deps): Router {
  const r = Router();
  r.post(
    '/webhook/t/:token',
    asyncHandler(async (req, res) => {
      const t = await deps.auth.verifyIngestToken(req.params.token);
      await ingest(deps, req, res, { companyId: t.companyId, siteId: t.siteId, provider: t.provider });
    }),
  );
  r.post(
    '/webhook/generic',
    asyncHandler(async (req, res) => {
      const { companyId } = await deps.auth.verifyApiKey(req.headers.apikey);
      const company = req.headers['x-company-id'];
      if (company !== undefined && company !== companyId) throw new HttpError(403, AuthMessages.companyMismatch);
      const site = req.headers['x-site-id'];
      if (site === undefined || site === '') throw badRequest(IngestMessages.siteMissing);
      if (typeof site !== 'string' || !SITE_ID.test(site)) throw badRequest(IngestMessages.siteMalformed);
      const siteId = await deps.knownSite(companyId, site, req.correlationId);
      await ingest(deps, req, res, { companyId, siteId, provider: GENERIC_PROVIDER });
    }),
  );
  return r;
}
