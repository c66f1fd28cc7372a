import type { Request } from 'express';
import { Joi } from '@smartlock/config';
import { Types, isValidObjectId } from '@smartlock/db';
import { HttpError, badRequest } from '@smartlock/http';

/**
 * Validates a request body against a joi schema. joi's strings never coerce another type, so `123`
 * where a string belongs, or an operator object such as `{"$ne": null}`, is a 400 naming the field,
 * never a query; conversion only trims and normalises. Every problem is listed in the message.
 */
export function validate<T>(schema: Joi.Schema<T>, value: unknown, what = 'body'): T {
  if (what === 'body' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw badRequest('Request body must be a JSON object');
  }
  const { error, value: out } = schema.validate(value, {
    abortEarly: false,
    errors: { wrap: { label: false } },
  });
  if (error) {
    const details = error.details.map((d) => ({ path: d.path.map(String), message: d.message }));
    throw badRequest(details.map((d) => d.message).join('; '), details);
  }
  return out as T;
}

/** Query strings are strings: convert is on (limit=10), but objects (`?name[$ne]=x`) are still refused. */
export function validateQuery<T>(schema: Joi.Schema<T>, req: Request): T {
  const { error, value } = schema.validate(req.query, { abortEarly: false, convert: true, errors: { wrap: { label: false } } });
  if (error) {
    const details = error.details.map((d) => ({ path: d.path.map(String), message: d.message }));
    throw badRequest(details.map((d) => d.message).join('; '), details);
  }
  return value as T;
}

/** A path id: a malformed one is a 400 naming the parameter (never a cast error and a 500). */
export function objectIdParam(req: Request, name: string): Types.ObjectId {
  const value = req.params[name];
  if (typeof value !== 'string' || !/^[0-9a-fA-F]{24}$/.test(value) || !isValidObjectId(value)) {
    throw badRequest(`${name} must be a 24-character hexadecimal id`);
  }
  return new Types.ObjectId(value);
}

export const notFoundError = (what: string, id: Types.ObjectId | string) => new HttpError(404, `${what} ${String(id)} not found`);
