import type { Request } from 'express';
import type { HttpError } from './errors';

/** Turns an error into the body of the endpoint's own SPEC envelope. */
export type ErrorRenderer = (err: HttpError, req: Request) => unknown;

/** API host: `{ message, code, error: true, data }`. */
export const apiEnvelope: ErrorRenderer = (err) => ({ message: err.message, code: err.code, error: true, data: err.data });

/** Ingest host: `{ success: false, errors: string[], message }`. */
export const ingestEnvelope: ErrorRenderer = (err) => ({
  success: false,
  errors: err.details.length ? err.details.map((d) => d.message) : [err.message],
  message: err.message,
});

/** Employee access: `{ error, details: [{ path, message }] }`. */
export const employeeEnvelope: ErrorRenderer = (err) => ({
  error: err.message,
  details: err.details.length ? err.details : [{ path: [], message: err.message }],
});

/** Picks the envelope by path, for apps that serve more than one (access-api). */
export type EnvelopeFor = (req: Request) => ErrorRenderer;
