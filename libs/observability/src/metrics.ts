import client from 'prom-client';

export type Registry = client.Registry;

export function createMetrics(service: string): Registry {
  const registry = new client.Registry();
  registry.setDefaultLabels({ service });
  client.collectDefaultMetrics({ register: registry });
  return registry;
}

export function counter(registry: Registry, name: string, help: string, labelNames: string[] = []) {
  return new client.Counter({ name, help, labelNames, registers: [registry] });
}

export function histogram(
  registry: Registry,
  name: string,
  help: string,
  labelNames: string[] = [],
  buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
) {
  return new client.Histogram({ name, help, labelNames, buckets, registers: [registry] });
}

export function gauge(registry: Registry, name: string, help: string, labelNames: string[] = []) {
  return new client.Gauge({ name, help, labelNames, registers: [registry] });
}
