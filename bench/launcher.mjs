// The benchmarks' .mjs runners launch what they measure as the tests do: libs/testing's launcher
// (launchApp, freePort, killWithParent), so an app or FerretDB they start stops with them however
// they end. Bundled (the launcher is TypeScript) into a file three levels under the root, like
// libs/testing/src, so that its paths (infra.env, dist/apps, the exit-with-parent scripts) resolve.
import { build } from 'esbuild';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outfile = path.join(root, '.data/bench/launcher/launcher.cjs');
await build({
  entryPoints: [path.join(root, 'libs/testing/src/launcher.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  packages: 'external',
  tsconfig: path.join(root, 'tsconfig.base.json'),
  logLevel: 'warning',
});

/** @type {typeof import('../libs/testing/src/launcher')} */
const launcher = createRequire(import.meta.url)(outfile);
export const { launchApp, freePort, killWithParent } = launcher;
