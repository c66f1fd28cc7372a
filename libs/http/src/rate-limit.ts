import { createHash } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { HttpError } from './errors';

export interface RateLimitSpec {
  /** The policy's name in the RateLimit-Policy and RateLimit headers. */
  name: string;
  /** Requests allowed per window, across all instances of the app. */
  limit: number;
  windowS: number;
  /**
   * Instances of the app sharing the limit: each process allows its share (limit / instances,
   * rounded up), so the limit holds without shared state and costs no database statement per
   * request. Load balancers spread a client's requests evenly enough for this.
   */
  instances: number;
}

const digest = (s: string) => createHash('sha256').update(s).digest('base64url');

/**
 * The key of a client address in per-address limits: an IPv4 address (an IPv4-mapped IPv6 one is
 * its IPv4 address), or an IPv6 address's /64, which one subscriber commonly holds whole: counted
 * per address, a client would get a fresh bucket per address of its prefix.
 */
export function clientKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  return ip.kind() === 'ipv6'
    ? `${(ip as ipaddr.IPv6).parts
        .slice(0, 4)
        .map((p) => p.toString(16))
        .join(':')}::/64`
    : ip.toString();
}

/**
 * One limit over keys (an API key, an ingest token, a company, a client address), on
 * rate-limiter-flexible's in-memory limiter. Every response it sees carries the IETF httpapi headers
 * (`RateLimit-Policy: "name";q=100;w=60`, `RateLimit: "name";r=42;t=17`); one over the limit is a
 * 429 in the route's own envelope with `Retry-After`.
 */
export function rateLimiter(spec: RateLimitSpec) {
  const points = Math.max(1, Math.ceil(spec.limit / spec.instances));
  const limiter = new RateLimiterMemory({ points, duration: spec.windowS, keyPrefix: spec.name });
  const policy = `"${spec.name}";q=${points};w=${spec.windowS}`;

  function headers(res: Response, state: RateLimiterRes) {
    res.setHeader('RateLimit-Policy', policy);
    res.setHeader('RateLimit', `"${spec.name}";r=${Math.max(0, state.remainingPoints)};t=${Math.ceil(state.msBeforeNext / 1000)}`);
  }

  function refused(res: Response, state: RateLimiterRes): HttpError {
    headers(res, state);
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(state.msBeforeNext / 1000))));
    return new HttpError(429, 'Too many requests; retry after the time in Retry-After');
  }

  return {
    points,
    /** Counts one use under `key` outside HTTP (a guest message): false once over the limit. */
    take: (key: string) =>
      limiter.consume(digest(key)).then(
        () => true,
        (state: unknown) => {
          if (state instanceof RateLimiterRes) return false;
          throw state;
        },
      ),
    /** Counts one request under `key` (hashed: secrets never sit in memory in clear); no key, no limit. */
    consume(key: (req: Request) => string | undefined): RequestHandler {
      return (req: Request, res: Response, next: NextFunction) => {
        const k = key(req);
        if (k === undefined) return next();
        limiter.consume(digest(k)).then(
          (state) => {
            headers(res, state);
            next();
          },
          (state: unknown) => next(state instanceof RateLimiterRes ? refused(res, state) : state),
        );
      };
    },
    /**
     * Counts only the requests that fail authentication (401/403), per `key` (the client address):
     * once over the limit, the address is refused before anything is checked. Guessing a key, a
     * token or the admin token gets a handful of tries per window.
     */
    failures(key: (req: Request) => string): RequestHandler {
      return (req: Request, res: Response, next: NextFunction) => {
        const k = digest(key(req));
        limiter.get(k).then((state) => {
          if (state && state.consumedPoints >= points) return next(refused(res, state));
          res.on('finish', () => {
            if (res.statusCode === 401 || res.statusCode === 403) void limiter.penalty(k, 1).catch(() => undefined);
          });
          next();
        }, next);
      };
    },
  };
}
