import { ErrorCodes } from '@smartlock/contracts';

export interface ErrorDetail {
  path: string[];
  message: string;
}

/** An error with the HTTP status and message the client should see. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: number = codeForStatus(status),
    /** Every problem found, for envelopes that list them (ingest `errors[]`, employee `details[]`). */
    readonly details: ErrorDetail[] = [],
    /** Extra fields some endpoints add to the envelope's data (e.g. the holder of a conflicting id). */
    readonly data: Record<string, unknown> | null = null,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export function codeForStatus(status: number): number {
  switch (status) {
    case 400:
      return ErrorCodes.VALIDATION;
    case 401:
      return ErrorCodes.UNAUTHORIZED;
    case 403:
      return ErrorCodes.FORBIDDEN;
    case 404:
      return ErrorCodes.NOT_FOUND;
    case 409:
      return ErrorCodes.CONFLICT;
    case 413:
      return ErrorCodes.PAYLOAD_TOO_LARGE;
    case 429:
      return ErrorCodes.TOO_MANY_REQUESTS;
    case 415:
      return ErrorCodes.UNSUPPORTED_MEDIA_TYPE;
    case 503:
      return ErrorCodes.UNAVAILABLE;
    default:
      return status >= 500 ? ErrorCodes.INTERNAL : status * 10;
  }
}

export const badRequest = (message: string, details: ErrorDetail[] = []) => new HttpError(400, message, undefined, details);
export const unauthorized = (message: string) => new HttpError(401, message);
export const notFound = (message: string) => new HttpError(404, message);
export const conflict = (message: string, data: Record<string, unknown> | null = null) => new HttpError(409, message, undefined, [], data);
