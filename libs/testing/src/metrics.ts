import axios from 'axios';

export interface Scrape {
  text: string;
  /**
   * The sum of the samples of `name` whose labels include `labels` (0 when there is none): a counter
   * over every label value not named, a histogram's `_count`, `_sum` or one `_bucket` (`le`).
   */
  value(name: string, labels?: Record<string, string>): number;
  /** Whether `name` has any sample at all. */
  has(name: string): boolean;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The app's `/metrics` (the Prometheus text format), as Prometheus reads it. */
export async function scrapeMetrics(baseUrl: string): Promise<Scrape> {
  const text = (await axios.get<string>(`${baseUrl}/metrics`, { responseType: 'text', timeout: 10_000 })).data;
  const samples = text
    .split('\n')
    .map((line) => SAMPLE.exec(line))
    .filter((m): m is RegExpExecArray => !!m)
    .map(([, name, labels = '', value]) => ({
      name,
      labels: Object.fromEntries([...labels.matchAll(LABEL)].map(([, k, v]) => [k, v.replace(/\\(.)/g, '$1')])),
      value: Number(value),
    }));
  return {
    text,
    value: (name, labels = {}) =>
      samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0),
    has: (name) => samples.some((s) => s.name === name),
  };
}
