import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import type { RouteScope } from '@smartlock/auth';
import { CALLBACK_TEST_EVENT, CallbackTestBody, SuccessCodes, ok } from '@smartlock/contracts';
import { asyncHandler, notFound, rateLimiter } from '@smartlock/http';
import type { EndpointCache } from '../endpoints/cache';
import { DeliverDeps, postCallback } from '../deliveries/deliver';

/** How much of the receiver's answer is shown: enough to read an error page's first lines. */
const ANSWER_SHOWN_MAX = 2048;

export interface TestEventDeps extends Pick<DeliverDeps, 'destinations' | 'key' | 'timeoutMs'> {
  /** This process's endpoints, as its deliveries sign with them. */
  endpoints: EndpointCache;
  /** Test events per company per hour, across the instances. */
  limit: ReturnType<typeof rateLimiter>;
}

/**
 * "Send a test event": one `callback.test` callback to the company's endpoint, now, signed and sent
 * exactly as a delivery is (postCallback: the configured authentication, the destination policy, no
 * redirect, the timeout), and the receiver's answer returned: status, latency, the recorded error,
 * the start of its body. Nothing is stored and nothing is retried: it concerns no booking.
 * The endpoint is the one this process's deliveries use (its endpoint cache, over the replica).
 */
export function testEventRoutes(deps: TestEventDeps, scope: RouteScope): Router {
  const r = Router();
  r.post(
    scope.path('/callback/test'),
    ...scope.may('callback'),
    deps.limit.consume((req) => scope.companyId(req)),
    asyncHandler(async (req, res) => {
      const companyId = scope.companyId(req);
      const endpoint = await deps.endpoints.get(companyId);
      if (!endpoint) throw notFound('No callback endpoint is set for this company');
      const id = randomUUID().replace(/-/g, '');
      const at = new Date();
      const sent: CallbackTestBody = {
        event: CALLBACK_TEST_EVENT,
        referenceId: 'TEST',
        eventId: `test_${id}`,
        deliveryId: `test_${id}`,
        occurredAt: at.toISOString(),
        data: { test: true, message: 'A test event from the administration portal: it concerns no booking. Answer 2xx as to any callback.' },
      };
      const answer = await postCallback(deps, endpoint.config, { id: sent.deliveryId, event: CALLBACK_TEST_EVENT, body: JSON.stringify(sent) }, at);
      req.log.info('callback test event sent', {
        companyId,
        version: endpoint.version,
        statusCode: answer.statusCode,
        latencyMs: answer.latencyMs,
        error: answer.error,
      });
      const body = answer.body ?? null;
      res.json(
        ok('Test event sent', SuccessCodes.CALLBACK_TEST_SENT, {
          url: endpoint.config.url,
          version: endpoint.version,
          auth: endpoint.config.auth.type,
          sent,
          delivered: answer.statusCode !== null && answer.statusCode >= 200 && answer.statusCode < 300,
          status_code: answer.statusCode,
          latency_ms: answer.latencyMs,
          error: answer.error,
          response: {
            content_type: answer.contentType,
            body: body === null ? null : body.slice(0, ANSWER_SHOWN_MAX),
            truncated: body !== null && body.length > ANSWER_SHOWN_MAX,
          },
        }),
      );
    }),
  );
  return r;
}
