export { createLogger } from './logger';
export type { Logger, LoggerOptions } from './logger';
export { redact, redactQuery, redactUrl } from './redact';
export { createMetrics, counter, histogram, collectedGauge, outboxAge } from './metrics';
export type { Registry, Counter, Histogram, Gauge, Sample } from './metrics';
export { METRICS } from './catalogue';
export type { MetricDef, MetricType, MetricName } from './catalogue';
export { createReadiness } from './health';
export type { Readiness } from './health';
