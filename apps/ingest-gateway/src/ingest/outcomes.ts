import type { Request, Response } from 'express';
import type { GatewayMetrics } from '../metrics';
import type { Acceptance } from './accept';

/** What the ingest routes tell the count about a request (noteIngestOutcome), beyond its status. */
type IngestNote = Acceptance['kind'] | 'invalid_event';

const notes = new WeakMap<Response, IngestNote>();

/** Told by the ingest routes as they answer: read by countIngestOutcome once the response is sent. */
export function noteIngestOutcome(res: Response, note: IngestNote): void {
  notes.set(res, note);
}

const INGEST_ROUTES = new Set(['/webhook/t/:token', '/webhook/generic']);
/** An ingest path refused before routing (rate limit, body parser): Express matches it case-blind. */
const INGEST_PATH = /^\/webhook\/+(?:t\/+[^/]+|generic)\/*$/i;

/** Why a request to an ingest route was refused, from its status: a small fixed set (a label). */
function rejection(status: number, note: IngestNote | undefined): string {
  if (status === 400) return note === 'invalid_event' ? 'invalid_event' : 'bad_request';
  const reasons: Record<number, string> = {
    401: 'unauthenticated',
    403: 'forbidden',
    404: 'unknown_site',
    413: 'too_large',
    415: 'bad_request',
    429: 'rate_limited',
    503: 'unavailable',
  };
  return reasons[status] ?? (status >= 500 ? 'error' : 'bad_request');
}

/**
 * Counts each answer of the ingest routes (ingest_events_total): accepted (queued, or stored with its
 * publish delayed), duplicate, or rejected by reason, those refused before routing included.
 */
export function countIngestOutcome(metrics: GatewayMetrics, req: Request, res: Response, route: string): void {
  if (!INGEST_ROUTES.has(route) && !(route === 'unmatched' && req.method === 'POST' && INGEST_PATH.test(req.path))) return;
  const note = notes.get(res);
  if (res.statusCode === 202) {
    if (note === 'duplicate') metrics.ingest.inc({ outcome: 'duplicate', reason: 'within_window' });
    else metrics.ingest.inc({ outcome: 'accepted', reason: note === 'publish-delayed' ? 'publish_delayed' : 'queued' });
    return;
  }
  metrics.ingest.inc({ outcome: 'rejected', reason: rejection(res.statusCode, note) });
}
