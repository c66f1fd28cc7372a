import express, { Router } from 'express';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { HttpError } from '@smartlock/http';

// The portal's pages load only their own scripts and styles and talk only to their own origin.
const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * `{base_url}/portal`: the single-page app of apps/portal, built (`npm run build`) into `dir`. The
 * page itself is never cached (a new build takes effect at once); its assets carry a content hash
 * in their names and are cached for a year. Middleware, not routes: pages, not API operations.
 */
export function portalPages(app: Router, dir: string): void {
  const index = path.resolve(dir, 'index.html');
  const assets = express.static(path.resolve(dir, 'assets'), { index: false, redirect: false, immutable: true, maxAge: '365d' });
  app.use('/portal', (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (req.path.startsWith('/assets/')) {
      req.url = req.url.slice('/assets'.length);
      return assets(req, res, next);
    }
    if (req.path !== '/' && req.path !== '/index.html') return next();
    if (!existsSync(index)) return next(new HttpError(404, 'The portal is not built here (npm run build writes it)'));
    res.setHeader('Content-Security-Policy', PAGE_POLICY);
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
}
