import Joi from 'joi';

/**
 * Request bodies and queries of the dead-letter routes (/admin/v1/dead-letters, admin-api), validated
 * there with these objects and described by the OpenAPI document from them. The CLI (tools/dlq)
 * takes the same fields as options.
 */

/** A duration of a filter: `500ms`, `90s`, `30m`, `2h`, `7d`. */
export const DURATION_PATTERN = /^(\d{1,9})(ms|s|m|h|d)$/;
export const DURATION_MESSAGE = 'must be a duration such as 90s, 30m, 2h or 7d';

const text = Joi.string().trim().min(1).max(200);
const duration = Joi.string()
  .trim()
  .pattern(DURATION_PATTERN)
  .messages({ 'string.pattern.base': `{#label} ${DURATION_MESSAGE}` });

/** What selects dead letters; every given field must hold. */
const filterKeys = {
  company_id: text,
  /** A part of the reason, any case. */
  reason: text,
  reference_id: text,
  /** Dead-lettered at least this long ago. */
  older_than: duration,
  /** Dead-lettered at most this long ago. */
  newer_than: duration,
};

/** Who is acting, recorded with a replay or purge (the admin token names nobody). */
const operator = Joi.string().trim().min(1).max(100);

/** `GET /admin/v1/dead-letters/:queue/messages`: `ids` is a comma-separated list of message or event ids. */
export const deadLetterListQuerySchema = Joi.object<{
  company_id?: string;
  reason?: string;
  reference_id?: string;
  older_than?: string;
  newer_than?: string;
  ids?: string;
  limit: number;
}>({
  ...filterKeys,
  ids: Joi.string().trim().min(1).max(20_000),
  limit: Joi.number().integer().min(1).max(1000).default(100),
});

/** `POST /admin/v1/dead-letters/:queue/replay`: `all`, or ids, or a filter (or ids and a filter). */
export const deadLetterReplaySchema = Joi.object<{
  all?: boolean;
  ids?: string[];
  company_id?: string;
  reason?: string;
  reference_id?: string;
  older_than?: string;
  newer_than?: string;
  operator?: string;
}>({
  all: Joi.boolean(),
  ids: Joi.array().items(text).min(1).max(10_000),
  ...filterKeys,
  operator,
});

/** `POST /admin/v1/dead-letters/:queue/purge`: `confirm` must be the dead-letter queue's name. */
export const deadLetterPurgeSchema = Joi.object<{ confirm?: string; operator?: string }>({
  confirm: Joi.string().max(300),
  operator,
});

/** `GET /admin/v1/dead-letters/operations`: newest first. */
export const deadLetterOperationsQuerySchema = Joi.object<{ queue?: string; action?: 'replay' | 'purge'; limit: number; page: number }>({
  queue: Joi.string().max(300),
  action: Joi.string().valid('replay', 'purge'),
  limit: Joi.number().integer().min(1).max(1000).default(50),
  page: Joi.number().integer().min(1).default(1),
});
