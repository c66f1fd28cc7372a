import path from 'node:path';
import { parseArgs } from 'node:util';
import { CLIENT_TYPES } from './client-types';
import { CONFIGURATION_DOC } from './configuration-doc';
import { ERRORS_DOC } from './errors-doc';
import { GUIDE } from './guide';
import { GeneratedFile, generate } from './generated-file';

const USAGE = `usage: npm run docs -- [--check] [client] [errors] [configuration] [guide]
  client   libs/client/src/generated/*.ts from the OpenAPI documents (openapi-typescript)
  errors   docs/errors.md from the codes and error strings of libs/contracts
  configuration
           docs/configuration.md from the apps' joi config schemas (every variable, its default, its meaning)
  guide    docs/integration-guide.md: walks the integration loop against a running system
           (npm start; SMARTLOCK_URL, WEBHOOK_URL, ADMIN_TOKEN) and records what it answers
  (none: client, errors and configuration)
  --check  write nothing; exit 1 when a file is not what the code generates (all but guide)`;

const ROOT = path.resolve(__dirname, '../..');
const TARGETS: Record<string, GeneratedFile[]> = { client: CLIENT_TYPES, errors: [ERRORS_DOC], configuration: [CONFIGURATION_DOC], guide: [GUIDE] };
/** The guide needs a running system and differs on every run (ids, dates): only when named. */
const DEFAULT_TARGETS = ['client', 'errors', 'configuration'];

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { check: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const unknown = positionals.filter((t) => !TARGETS[t]);
  if (unknown.length) {
    process.stderr.write(`error: unknown target ${unknown.join(', ')}\n${USAGE}\n`);
    return 2;
  }
  let stale = 0;
  for (const target of positionals.length ? positionals : DEFAULT_TARGETS) {
    if (target === 'guide' && values.check) continue;
    for (const g of TARGETS[target]) {
      const current = await generate(ROOT, g, values.check);
      if (!current) stale++;
      process.stdout.write(`${g.file} ${current ? 'is current' : values.check ? 'is STALE' : 'written'}\n`);
    }
  }
  return values.check && stale ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (err: Error) => {
    process.stderr.write(`error: ${err.message}\n`);
    process.exitCode = 1;
  },
);
