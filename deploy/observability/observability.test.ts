import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { METRICS, createMetrics } from '@smartlock/observability';

/*
 * deploy/observability checked against the apps: the alert rules pass `promtool check rules` and
 * their unit tests (`promtool test rules`), every dashboard query is valid PromQL, and every metric
 * and label the rules and dashboards name is one an app exports: the catalogue every app registers
 * its metrics from (libs/observability METRICS) and prom-client's process metrics, which every app's
 * registry collects (createMetrics). Each alert links to its section of docs/operations.md.
 */

const DIR = __dirname;
const ROOT = path.resolve(DIR, '../..');
const RULES = path.join(DIR, 'prometheus/rules.yml');
const RULE_TESTS = path.join(DIR, 'prometheus/rules.test.yml');
const DASHBOARDS = path.join(DIR, 'grafana/dashboards');
const RUNBOOK = path.join(ROOT, 'docs/operations.md');

function promtool(...args: string[]): string {
  try {
    return execFileSync('promtool', args, { encoding: 'utf8', cwd: DIR, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    if (e.code === 'ENOENT') throw new Error("promtool not found: install Debian's prometheus package (scripts/setup.sh does: apt-get install -y prometheus)");
    throw new Error(`promtool ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

// ---- what the apps export -------------------------------------------------------------------------

/** Labels every series has besides its own: the app's (createMetrics) and Prometheus's target labels. */
const TARGET_LABELS = ['service', 'instance', 'job'];

async function exported(): Promise<Map<string, Set<string>>> {
  const names = new Map<string, Set<string>>();
  const add = (name: string, type: string, labels: Iterable<string>) => {
    const own = new Set([...labels, ...TARGET_LABELS]);
    if (type !== 'histogram') return void names.set(name, own);
    names.set(`${name}_bucket`, new Set([...own, 'le']));
    names.set(`${name}_sum`, own);
    names.set(`${name}_count`, own);
  };
  for (const d of Object.values(METRICS)) add(d.name, d.type, d.labels);
  // prom-client's default metrics, as an app's registry has them.
  for (const m of await createMetrics('check').getMetricsAsJSON()) {
    add(
      m.name,
      String(m.type),
      m.values.flatMap((v) => Object.keys(v.labels ?? {})),
    );
  }
  return names;
}

// ---- PromQL: the metrics and labels an expression names ----------------------------------------------

const AGGREGATIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'limitk',
  'limit_ratio',
]);
const GROUPING = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'atan2', 'inf', 'nan']);

interface Selector {
  metric: string;
  labels: string[];
}

/** Grafana's interval variables, as a duration Prometheus reads. */
const withoutGrafanaVariables = (expr: string) => expr.replace(/\$__rate_interval|\$__interval|\$__range/g, '5m');

/** The metric selectors of an expression (each with the labels it matches on) and its grouping labels. */
function parsePromql(expr: string): { selectors: Selector[]; grouping: string[] } {
  const tokens =
    withoutGrafanaVariables(expr).match(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\[[^\]]*\]|\{[^}]*\}|[A-Za-z_:][A-Za-z0-9_:]*|\d+(?:\.\d+)?(?:e[+-]?\d+)?|\S/g) ??
    [];
  const selectors: Selector[] = [];
  const grouping: string[] = [];
  const matchers = (block: string) => [...block.matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)\s*"/g)].map((m) => m[1]);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (!/^[A-Za-z_:]/.test(t)) continue;
    const next = tokens[i + 1];
    if (GROUPING.has(t)) {
      if (next === '(') for (i += 2; i < tokens.length && tokens[i] !== ')'; i++) if (/^[A-Za-z_]/.test(tokens[i])) grouping.push(tokens[i]);
      continue;
    }
    if (next === '(' || AGGREGATIONS.has(t) || KEYWORDS.has(t)) continue;
    selectors.push({ metric: t, labels: next?.startsWith('{') ? matchers(next) : [] });
  }
  return { selectors, grouping };
}

// ---- the rules and dashboards -------------------------------------------------------------------

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
}
const groups = (parse(fs.readFileSync(RULES, 'utf8')) as { groups: { name: string; rules: Rule[] }[] }).groups;
const rules = groups.flatMap((g) => g.rules);
const recorded = new Set(rules.flatMap((r) => (r.record ? [r.record] : [])));
const alerts = rules.filter((r) => r.alert);

interface Target {
  expr?: string;
}
interface Panel {
  id: number;
  title: string;
  datasource?: { uid?: string };
  targets?: Target[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query?: unknown; definition?: string }[] };
}
const dashboards = fs
  .readdirSync(DASHBOARDS)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => ({ file, d: JSON.parse(fs.readFileSync(path.join(DASHBOARDS, file), 'utf8')) as Dashboard }));
const queries = dashboards.flatMap(({ file, d }) =>
  d.panels.flatMap((p) => (p.targets ?? []).flatMap((t) => (t.expr ? [{ where: `${file}: ${p.title}`, expr: t.expr }] : []))),
);

describe('deploy/observability: alert rules and dashboards', () => {
  let names: Map<string, Set<string>>;
  beforeAll(async () => {
    names = await exported();
  });

  it('the rules pass promtool check rules', () => {
    expect(promtool('check', 'rules', RULES)).toMatch(/SUCCESS: \d+ rules found/);
  });

  it("the rules' unit tests pass (promtool test rules): each alert fires on its condition, the burn rates on a slow hour, none on a good one", () => {
    expect(promtool('test', 'rules', RULE_TESTS)).toContain('SUCCESS');
  });

  it("every dashboard query is valid PromQL (checked by promtool as recording rules, Grafana's variables given values)", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'dashboards-')), 'queries.yml');
    const checks = queries.map((q, i) => ({ record: `dashboard:query:${i}`, expr: withoutGrafanaVariables(q.expr) }));
    fs.writeFileSync(file, stringify({ groups: [{ name: 'dashboard-queries', rules: checks }] }));
    expect(promtool('check', 'rules', file)).toContain(`SUCCESS: ${queries.length} rules found`);
  });

  it('five dashboards (service overview, booking pipeline, callbacks, lock cloud, broker), each with unique panel ids and the Prometheus datasource variable', () => {
    expect(dashboards.map(({ file }) => file)).toEqual(['booking-pipeline.json', 'broker.json', 'callbacks.json', 'lock-cloud.json', 'service-overview.json']);
    expect(new Set(dashboards.map(({ d }) => d.uid)).size).toBe(dashboards.length);
    for (const { d } of dashboards) {
      expect(new Set(d.panels.map((p) => p.id)).size).toBe(d.panels.length);
      expect(d.templating.list.find((v) => v.name === 'datasource')?.type).toBe('datasource');
      for (const p of d.panels) expect({ panel: p.title, uid: p.datasource?.uid }).toEqual({ panel: p.title, uid: '${datasource}' });
    }
  });

  it('every metric and label the rules and dashboards use is exported by an app (or recorded by the rules)', () => {
    const exprs = [...rules.map((r) => ({ where: `rules.yml: ${r.record ?? r.alert}`, expr: r.expr })), ...queries];
    // A variable's label_values(metric, label) query names a metric and a label too.
    for (const { file, d } of dashboards) {
      for (const v of d.templating.list) {
        const m = /^label_values\((\w+),\s*(\w+)\)$/.exec(v.definition ?? '');
        if (m) exprs.push({ where: `${file}: $${v.name}`, expr: `group by (${m[2]}) (${m[1]})` });
      }
    }
    const problems: string[] = [];
    for (const { where, expr } of exprs) {
      const { selectors, grouping } = parsePromql(expr);
      if (!selectors.length) problems.push(`${where}: no metric found in ${expr}`);
      const available = new Set<string>([...TARGET_LABELS, 'le']);
      for (const s of selectors) {
        if (recorded.has(s.metric)) continue;
        const labels = names.get(s.metric);
        if (!labels) {
          problems.push(`${where}: ${s.metric} is exported by no app`);
          continue;
        }
        for (const l of labels) available.add(l);
        for (const l of s.labels) if (!labels.has(l)) problems.push(`${where}: ${s.metric} has no label ${l}`);
      }
      for (const l of grouping) if (!available.has(l)) problems.push(`${where}: grouped by ${l}, which none of its metrics has`);
    }
    expect(problems).toEqual([]);
    // The parser itself: a name is found, functions, aggregations and grouping are not taken for metrics.
    expect(
      parsePromql('histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{service=~"$service"}[$__rate_interval])))'),
    ).toEqual({
      selectors: [{ metric: 'http_request_duration_seconds_bucket', labels: ['service'] }],
      grouping: ['le', 'route'],
    });
  });

  it('docs/operations.md lists every metric of the catalogue, and no other', () => {
    const listed = [...fs.readFileSync(RUNBOOK, 'utf8').matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]).sort();
    expect(listed).toEqual(
      Object.values(METRICS)
        .map((d) => d.name)
        .sort(),
    );
  });

  it('every alert has a severity, a summary and a runbook_url naming a section of docs/operations.md', () => {
    const runbook = fs.readFileSync(RUNBOOK, 'utf8');
    // GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens.
    const anchors = new Set(
      [...runbook.matchAll(/^#{2,4} (.+)$/gm)].map((m) =>
        m[1]
          .trim()
          .toLowerCase()
          .replace(/[^a-z0-9 _-]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    expect(alerts.length).toBeGreaterThanOrEqual(6);
    for (const a of alerts) {
      expect({ alert: a.alert, severity: a.labels?.severity }).toEqual({ alert: a.alert, severity: expect.stringMatching(/^(page|ticket|warning)$/) });
      expect(a.annotations?.summary).toBeTruthy();
      const anchor = /^docs\/operations\.md#([a-z0-9_-]+)$/.exec(a.annotations?.runbook_url ?? '')?.[1];
      expect({ alert: a.alert, runbook: anchor && anchors.has(anchor) ? 'found' : a.annotations?.runbook_url }).toEqual({ alert: a.alert, runbook: 'found' });
    }
  });
});
