export { createLogger, serializeError } from './logger';
export type { Logger, LoggerOptions } from './logger';
export { redact, redactUrl, isSecretKey, REDACTED } from './redact';
export { createMetrics, counter, histogram, gauge } from './metrics';
export type { Registry } from './metrics';
export { createReadiness } from './health';
export type { Readiness } from './health';
