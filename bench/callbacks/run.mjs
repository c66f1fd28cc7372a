// `npm run bench:callbacks`: bundles bench.ts (libs inlined through tsconfig paths) and runs it.
// Needs the infrastructure (`npm run infra`); builds the dispatcher itself.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
process.chdir(root);
execFileSync(process.execPath, ['tools/build.mjs', 'callback-dispatcher'], { stdio: 'inherit' });
// three levels under the root, like libs/testing/src: its paths (infra.env, dist/apps) resolve the same
mkdirSync('.data/bench/callbacks', { recursive: true });
await build({
  entryPoints: ['bench/callbacks/bench.ts'],
  outfile: '.data/bench/callbacks/bench.cjs',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  packages: 'external',
  tsconfig: 'tsconfig.base.json',
  logLevel: 'warning',
});
execFileSync(process.execPath, ['.data/bench/callbacks/bench.cjs'], { stdio: 'inherit' });
