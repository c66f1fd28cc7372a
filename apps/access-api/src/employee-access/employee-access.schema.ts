import type Joi from 'joi';
import { EmployeeAccessInput, EmployeeListQuery, employeeAccessSchema, employeeListQuerySchema } from '@smartlock/contracts';
import { badRequest, HttpError } from '@smartlock/http';

export type { EmployeeAccessInput };

const OBJECT_ID = /^[0-9a-fA-F]{24}$/;

const details = (error: Joi.ValidationError) => error.details.map((d) => ({ path: d.path.map(String), message: d.message.replace(/"/g, '') }));

/** A date alone (YYYY-MM-DD) as it is, or null for a date-time. */
export const dayOf = (value: string): string | null => (/^\d{4}-\d{2}-\d{2}$/.test(value) ? value : null);

/** Validates, or throws the SPEC validation failure `{ error, details: [{ path, message }] }` (400). */
export function parseEmployeeAccess(body: unknown): EmployeeAccessInput {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw badRequest('Validation failed', [{ path: [], message: 'the body must be a JSON object' }]);
  const { value, error } = employeeAccessSchema.validate(body, { abortEarly: false, convert: false });
  const problems = error ? details(error) : [];
  // Two dates are whole days: a schedule of one day ends the day it starts.
  const days = !error && dayOf(value.startDate ?? '') !== null && dayOf(value.endDate ?? '') !== null;
  if (
    !error &&
    value.type === 'TIMED' &&
    value.startDate &&
    value.endDate &&
    (days ? value.endDate < value.startDate : Date.parse(value.endDate) <= Date.parse(value.startDate))
  ) {
    problems.push({ path: ['endDate'], message: 'endDate must be after startDate' });
  }
  if (problems.length) throw new HttpError(400, 'Validation failed', undefined, problems);
  return value;
}

/** Query of the schedule list: strings converted to numbers; arrays and objects refused. */
export function parseListQuery(query: unknown): EmployeeListQuery {
  const { value, error } = employeeListQuerySchema.validate(query, { abortEarly: false, convert: true });
  if (error) throw new HttpError(400, 'Validation failed', undefined, details(error));
  return value;
}

export function scheduleIdParam(value: string): string {
  if (!OBJECT_ID.test(value))
    throw badRequest('Validation failed', [{ path: ['scheduleId'], message: 'scheduleId must be an ObjectId (24 hexadecimal characters)' }]);
  return value.toLowerCase();
}
