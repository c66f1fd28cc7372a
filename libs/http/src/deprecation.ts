import type { RequestHandler } from 'express';
import { deprecatedFamily, deprecationHeaders } from '@smartlock/contracts';

/**
 * `Deprecation`, `Sunset` and the successor `Link` on every answer of a deprecated route family
 * (libs/contracts DEPRECATED_FAMILIES), errors included: a client that only ever sees its 400s
 * still learns. Set before any route or check runs, in every app.
 */
export function deprecations(): RequestHandler {
  return (req, res, next) => {
    const family = deprecatedFamily(req.path);
    if (family) res.set(deprecationHeaders(family, req.path, req.query as Record<string, unknown>));
    next();
  };
}
