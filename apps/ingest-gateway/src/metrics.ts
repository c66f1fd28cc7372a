import { METRICS, Registry, counter, histogram } from '@smartlock/observability';

/** The gateway's own metrics (libs/observability METRICS); its routes' and its consumer's come from the libs. */
export function gatewayMetrics(registry: Registry) {
  return {
    ingest: counter(registry, METRICS.ingestEvents),
    transitions: counter(registry, METRICS.eventStatusTransitions),
    timeToCompleted: histogram(registry, METRICS.eventTimeToCompleted),
  };
}
export type GatewayMetrics = ReturnType<typeof gatewayMetrics>;
