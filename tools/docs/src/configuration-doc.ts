import path from 'node:path';
import type { ObjectSchema, Schema } from 'joi';
import type { GeneratedFile } from './generated-file';

/** The apps with a config schema (apps/portal is pages, served by admin-api), in the order of the tables. */
const CONFIGURED_APPS = [
  'ingest-gateway',
  'location-api',
  'access-api',
  'provisioning-worker',
  'callback-dispatcher',
  'admin-api',
  'edge',
  'lock-cloud-simulator',
] as const;

/**
 * Each app's own schema, the one it validates its environment with at boot. An app is not a library,
 * hence not an import: esbuild bundles every file the pattern matches, jest resolves it at run time.
 */
export async function loadSchemas(): Promise<Record<string, ObjectSchema>> {
  const schemas: Record<string, ObjectSchema> = {};
  for (const app of CONFIGURED_APPS) schemas[app] = ((await import(`../../../apps/${app}/src/config.ts`)) as { configSchema: ObjectSchema }).configSchema;
  return schemas;
}

/** The parts of joi's describe() this page reads. */
interface Described {
  type?: string;
  flags?: { default?: unknown; description?: string; presence?: string; only?: boolean };
  allow?: unknown[];
  whens?: { ref?: { path: string[] }; is?: Described; then?: Described; otherwise?: Described }[];
}

const HOUR = 3_600_000;
/** `86400000` reads better with its unit. */
function duration(ms: number): string {
  if (ms >= 48 * HOUR && ms % (24 * HOUR) === 0) return `${ms / (24 * HOUR)} days`;
  if (ms >= HOUR && ms % HOUR === 0) return `${ms / HOUR} h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return '';
}

function value(name: string, v: unknown): string {
  if (Array.isArray(v)) return `\`${v.join(',')}\``;
  if (v === '') return 'empty';
  const unit = typeof v === 'number' && name.endsWith('_MS') ? duration(v) : '';
  return `\`${String(v)}\`${unit ? ` (${unit})` : ''}`;
}

/** "NODE_ENV is development or test", from a when's `is`. */
function condition(ref: string, is: Described | undefined): string {
  const values = (is?.allow ?? []).filter((v) => typeof v !== 'object');
  return values.length ? `${ref} is ${values.join(' or ')}` : `${ref} is set`;
}

/** What a key is when unset, following its when-branches: "`dev-admin-token` when NODE_ENV is development or test; otherwise required". */
function defaultOf(name: string, d: Described | undefined, base = 'unset'): string {
  let own = base;
  if (d?.flags?.default !== undefined) own = value(name, d.flags.default);
  else if (d?.flags?.presence === 'required') own = 'required';
  const when = d?.whens?.[0];
  if (!when) return own;
  const then = defaultOf(name, when.then, own);
  const otherwise = defaultOf(name, when.otherwise, own);
  if (then === otherwise) return then;
  const cond = condition(when.ref?.path.join('.') ?? '?', when.is);
  return then === own ? `${otherwise} unless ${cond}, then ${then}` : `${then} when ${cond}; otherwise ${otherwise}`;
}

export interface Variable {
  name: string;
  apps: string[];
  /** One default for all its apps, or per app when they differ. */
  default: string;
  meaning: string;
}

/**
 * Every variable of every app: one row per variable and meaning, its apps together; where the apps
 * share a meaning but not a default (PORT, MONGO_DB) the default is given per app.
 */
export function variables(schemas: Record<string, ObjectSchema>): Variable[] {
  const rows: { name: string; meaning: string; defaults: [string, string][] }[] = [];
  for (const [app, schema] of Object.entries(schemas)) {
    const keys = (schema.describe() as { keys: Record<string, Described> }).keys;
    for (const [name, d] of Object.entries(keys)) {
      const meaning = d.flags?.description ?? '';
      // A default computed at start (a function) is not in describe(): its description says what it is.
      const computed = typeof (schema.extract(name) as Schema).$_getFlag('default') === 'function';
      const dflt = computed ? 'computed at start' : defaultOf(name, d);
      const row = rows.find((r) => r.name === name && r.meaning === meaning);
      if (row) row.defaults.push([app, dflt]);
      else rows.push({ name, meaning, defaults: [[app, dflt]] });
    }
  }
  // A name's rows together, where the name first appears.
  const names = [...new Set(rows.map((r) => r.name))];
  return names
    .flatMap((name) => rows.filter((r) => r.name === name))
    .map((r) => {
      const distinct = new Set(r.defaults.map(([, d]) => d));
      return {
        name: r.name,
        apps: r.defaults.map(([app]) => app),
        default: distinct.size === 1 ? r.defaults[0][1] : r.defaults.map(([app, d]) => `${app}: ${d}`).join('; '),
        meaning: r.meaning,
      };
    });
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function renderConfiguration(schemas: Record<string, ObjectSchema>): string {
  const vars = variables(schemas);
  const all = CONFIGURED_APPS.length;
  const appsOf = (v: Variable) => {
    const missing = CONFIGURED_APPS.filter((app) => !v.apps.includes(app));
    return missing.length === 0 ? 'all' : missing.length === 1 && all > 2 ? `all but ${missing[0]}` : v.apps.join(', ');
  };
  return [
    '# Configuration',
    '',
    '<!-- Generated by `npm run docs -- configuration` from the joi schemas the apps validate their environment with',
    '     (apps/<app>/src/config.ts, with the fragments of libs/config and libs/lock-cloud). Do not edit: change the',
    "     schema's `.description()`, then regenerate; `npm test` fails while this file is stale. -->",
    '',
    'Every app validates its environment once at boot; a missing or malformed variable stops start-up with a',
    'message naming it (exit code 1), every problem at once. Only an explicit `NODE_ENV=development` or `test`',
    'gives the secrets their development defaults (`npm start` sets `development`); any other value, unset',
    'included, is production: the apps refuse to start without their secrets.',
    '',
    '## Every variable',
    '',
    '| Variable | Apps | Default | Meaning |',
    '|---|---|---|---|',
    ...vars.map((v) => `| \`${v.name}\` | ${cell(appsOf(v))} | ${cell(v.default)} | ${cell(v.meaning)} |`),
    '',
    '## Per app',
    '',
    ...CONFIGURED_APPS.map(
      (app) =>
        `- [${app}](../apps/${app}/README.md): ${vars
          .filter((v) => v.apps.includes(app))
          .map((v) => `\`${v.name}\``)
          .join(', ')}`,
    ),
    '',
    ...NOT_IN_SCHEMAS,
  ].join('\n');
}

/** Variables no app schema reads: the deployment's and the scripts'. Kept here so the page is whole. */
const NOT_IN_SCHEMAS = [
  '## Deployment only',
  '',
  'docker-compose and `deploy/rabbitmq/render-definitions.js`: `RABBITMQ_PASSWORD_<APP>`',
  '(`RABBITMQ_PASSWORD_INGEST_GATEWAY`, `_LOCATION_API`, `_ACCESS_API`, `_PROVISIONING_WORKER`,',
  "`_CALLBACK_DISPATCHER`, `_ADMIN_API`; required, no default: each app's broker password, also put in its",
  '`AMQP_URL`, so URL-safe, e.g. `openssl rand -hex 24`), `RABBITMQ_ADMIN_USER` (default `admin`) and',
  "`RABBITMQ_ADMIN_PASSWORD` (required): the operators' management user.",
  '',
  '## Scripts and tools',
  '',
  '| Variable | Read by | Default | Meaning |',
  '|---|---|---|---|',
  '| `WORKERS`, `DISPATCHERS` | `npm start` | `1` | processes of the provisioning worker and of the callback dispatcher |',
  "| `FERRETDB_BACKEND` | `npm run infra` | `postgresql` (SQLite on a machine without PostgreSQL) | `sqlite` forces FerretDB's SQLite backend |",
  "| `FERRETDB_POSTGRESQL_URL` | `npm run infra` | `postgres://postgres@127.0.0.1:5432/ferretdb?sslmode=disable` | the PostgreSQL FerretDB runs on (no TLS on this machine's loopback; say `sslmode=verify-full` for a remote server) |",
  "| `FERRETDB_PG_POOL` | `npm run infra` | `90` | FerretDB's PostgreSQL connection pool (its own default is 50; FerretDB 1.x stalls for good when every pooled connection is held) |",
  "| `FERRETDB_GOMAXPROCS` | `npm run infra`, `npm run bench:system` | `1` | FerretDB's Go scheduler threads (`GOMAXPROCS`); one costs less CPU per booking here than one per core, see scripts/infra.sh |",
  '| `FERRETDB_BIN`, `FERRETDB_VERSION`, `MONGO_PORT` | `npm run infra` | `$(go env GOPATH)/bin/ferretdb-<version>`, `v1.24.2`, `27017` | the FerretDB binary and version, the local MongoDB-wire port |',
  '| `TEST_LEFTOVER_MAX_AGE_H` | `npm run infra` | `6` | test vhosts and databases older than this many hours (left by killed test runs) are removed |',
  '| `MONGO_URL` | `npm run infra` | | a MongoDB-wire server to use if it answers a ping |',
  '| `SMARTLOCK_URL` | CLI, seed | `http://127.0.0.1:8080` | the admin API (the edge) |',
  "| `SMARTLOCK_WEBHOOK_URL` | seed | `http://127.0.0.1:8090` | the printed ingest URL's host |",
  '| `ADMIN_TOKEN` | CLI, seed | `dev-admin-token` | the admin token they send |',
  '| `AMQP_URL`, `MONGO_URL`, `MONGO_DB`, `DLQ_OPERATOR` | `tools/dlq` | `.data/infra.env`, else the local defaults; `smartlock_identity`; `<user>@<host>` | see [tools/dlq](../tools/dlq/README.md) |',
  '| `FUZZ_RUNS`, `FUZZ_SEED` | `e2e/src/fuzz.e2e.test.ts` | `10000`; the fixed seed `20261122` and a fresh one | requests generated by both properties together (85 % hand-written targets, 15 % from the OpenAPI documents); `FUZZ_SEED=<seed>` replays that seed alone with the whole budget, `random` a new one |',
  '| `LIFECYCLE_SEED`, `LIFECYCLE_RUNS` | `e2e/src/lifecycle-model.e2e.test.ts` | a fresh seed; `8` | replay a seed; scale the run |',
  '| `CHROMIUM_PATH` | `e2e/src/portal.e2e.test.ts` | `/usr/bin/chromium` | the browser of the portal test |',
  '| `PORTAL_API_URL` | `vite` dev server of apps/portal | `http://127.0.0.1:8080` | where `/portal/api` is sent |',
  '| `UPDATE_DEFINITIONS` | `libs/messaging` broker-users test | | `1` rewrites `deploy/rabbitmq/definitions.json` |',
  "| `BENCH_*` | `npm run bench:*` | | see [docs/operations.md](operations.md#benchmarks) and each app's benchmark |",
  '',
];

export const CONFIGURATION_DOC: GeneratedFile = {
  file: path.join('docs', 'configuration.md'),
  render: async () => renderConfiguration(await loadSchemas()),
};
