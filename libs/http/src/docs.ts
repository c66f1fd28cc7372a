import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';

/** Redoc's standalone bundle, from the project's own node_modules (nothing from a CDN). */
const RENDERER = 'redoc/bundles/redoc.standalone.js';

// The page loads only its own script and document; Redoc styles inline and runs its search in a blob worker.
const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

let renderer: Buffer | undefined;

export interface ApiDocs {
  /** Answers `GET /openapi.json`, `/docs` and the renderer's script; false for any other request. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** The same as Express middleware. */
  middleware: RequestHandler;
}

/**
 * A host's contract and its reference: `/openapi.json` (the document) and `/docs` (Redoc rendering
 * it). Plain node:http, so the edge (no Express) and the apps serve them alike.
 */
export function apiDocs(document: object): ApiDocs {
  const json = Buffer.from(JSON.stringify(document));
  const title = escapeHtml(String((document as { info?: { title?: string } }).info?.title ?? 'API reference'));
  const page = Buffer.from(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head>` +
      `<body><redoc spec-url="openapi.json" hide-hostname="false"></redoc><script src="docs/redoc.standalone.js"></script></body></html>`,
  );
  const send = (res: ServerResponse, head: boolean, type: string, body: Buffer, headers: Record<string, string> = {}) => {
    res.writeHead(200, { 'Content-Type': type, 'Content-Length': String(body.length), 'Cache-Control': 'no-cache', ...headers });
    res.end(head ? undefined : body);
  };
  const handle = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const head = req.method === 'HEAD';
    const path = (req.url ?? '/').split('?')[0];
    switch (path) {
      case '/openapi.json':
        // Any origin may read the contract (client generators, other hosts' references).
        send(res, head, 'application/json; charset=utf-8', json, { 'Access-Control-Allow-Origin': '*' });
        return true;
      case '/docs':
        send(res, head, 'text/html; charset=utf-8', page, { 'Content-Security-Policy': PAGE_POLICY });
        return true;
      case '/docs/redoc.standalone.js':
        renderer ??= readFileSync(require.resolve(RENDERER));
        send(res, head, 'application/javascript; charset=utf-8', renderer, { 'Cache-Control': 'public, max-age=86400' });
        return true;
      default:
        return false;
    }
  };
  return { handle, middleware: (req, res, next) => (handle(req, res) ? undefined : next()) };
}
