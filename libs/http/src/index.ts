export { createHttpApp, asyncHandler, BODY_LIMIT } from './app';
export type { HttpAppOptions } from './app';
export { HttpError, badRequest, unauthorized, forbidden, notFound, conflict, codeForStatus } from './errors';
export type { ErrorDetail } from './errors';
export { apiEnvelope, ingestEnvelope, employeeEnvelope } from './envelopes';
export type { ErrorRenderer, EnvelopeFor } from './envelopes';
export { startService, runMain, serviceLogger } from './service';
export type { ServiceContext, ServiceSpec, RunningService } from './service';
export { OBJECT_ID, companyIdParam } from './params';
