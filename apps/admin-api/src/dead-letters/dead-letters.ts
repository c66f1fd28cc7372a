import type { Request, RequestHandler, Response, Router } from 'express';
import { deadLetterListQuerySchema, deadLetterOperationsQuerySchema, deadLetterPurgeSchema, deadLetterReplaySchema } from '@smartlock/contracts';
import { Actor, DeadLetterError, DeadLetterFilter, DeadLetters } from '@smartlock/dead-letters';
import { asyncHandler, HttpError } from '@smartlock/http';
import { validate, validateQuery } from '../shared/validation';

const STATUS: Record<DeadLetterError['kind'], number> = { invalid: 400, not_found: 404, conflict: 409 };

/** The route's use case; a refusal of libs/dead-letters becomes its HTTP status in the admin envelope. */
const handle = (fn: (req: Request, res: Response) => Promise<void>): RequestHandler =>
  asyncHandler(async (req, res) => {
    try {
      await fn(req, res);
    } catch (err) {
      throw err instanceof DeadLetterError ? new HttpError(STATUS[err.kind], err.message) : err;
    }
  });

/** Who replays or purges, as recorded: the operator named in the body (admin token), or the on-call portal session's. */
export type ActorOf = (req: Request, operator: string | undefined) => Actor;

/** The admin token's caller: the `operator` of the body, else "admin token". */
const adminActor: ActorOf = (req, operator) => ({ operator: operator ?? 'admin token', via: 'admin-api', correlation_id: req.correlationId });

/** An on-call portal session: the name it was issued to, whatever the body says. */
export const onCallActor: ActorOf = (req) => ({
  operator: req.principal?.kind === 'on-call' ? req.principal.operator : 'on-call',
  via: 'portal',
  correlation_id: req.correlationId,
});

/**
 * `/admin/v1/dead-letters` (and the on-call portal's `/portal/api/dead-letters`, without purge): what
 * is stuck, why, replayed (libs/dead-letters, the same code as `tools/dlq`). `:queue` is a work queue
 * of the topology, or its dead-letter queue (`Q` or `Q.dlq`).
 */
export function deadLetterRoutes(
  router: Router,
  deadLetters: DeadLetters,
  opts: { actor: ActorOf; purge: boolean } = { actor: adminActor, purge: true },
): void {
  const actor = opts.actor;
  router.get(
    '/dead-letters',
    handle(async (_req, res) => {
      res.json(await deadLetters.queues());
    }),
  );

  router.get(
    '/dead-letters/operations',
    handle(async (req, res) => {
      res.json(await deadLetters.operations(validateQuery(deadLetterOperationsQuerySchema, req)));
    }),
  );

  router.get(
    '/dead-letters/operations/:operationId',
    handle(async (req, res) => {
      res.json(await deadLetters.operation(req.params.operationId));
    }),
  );

  router.get(
    '/dead-letters/:queue/messages',
    handle(async (req, res) => {
      const { ids, limit, ...filter } = validateQuery(deadLetterListQuerySchema, req);
      const f: DeadLetterFilter = {
        ...filter,
        ...(ids
          ? {
              ids: ids
                .split(',')
                .map((s) => s.trim())
                .filter(Boolean),
            }
          : {}),
      };
      res.json(await deadLetters.list(req.params.queue, f, limit));
    }),
  );

  router.post(
    '/dead-letters/:queue/replay',
    handle(async (req, res) => {
      const { all, operator, ...filter } = validate(deadLetterReplaySchema, req.body);
      const result = await deadLetters.replay(req.params.queue, { all, filter }, actor(req, operator));
      req.log.info('dead letters replayed', { queue: result.queue, operationId: result.operation_id, replayed: result.replayed, matched: result.matched });
      // Asked for by id and none there: the replay of one message that is not there is a 404 (still recorded, 0 replayed).
      if (filter.ids?.length && result.not_found_ids.length === filter.ids.length) {
        throw new HttpError(404, `No dead letter ${filter.ids.join(', ')} in ${result.dead_letter_queue}`);
      }
      res.json(result);
    }),
  );

  if (!opts.purge) return;
  router.post(
    '/dead-letters/:queue/purge',
    handle(async (req, res) => {
      const { confirm, operator } = validate(deadLetterPurgeSchema, req.body);
      const result = await deadLetters.purge(req.params.queue, confirm, actor(req, operator));
      req.log.warn('dead-letter queue purged', { queue: result.dead_letter_queue, operationId: result.operation_id, purged: result.purged });
      res.json(result);
    }),
  );
}
