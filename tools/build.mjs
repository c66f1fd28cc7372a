// Bundles one app (its libs inlined through tsconfig paths, npm packages left external) into
// dist/apps/<app>/main.js, one command-line tool (`tools/<tool>`, e.g. tools/cli) into
// dist/tools/<tool>.js, or one example (`examples/<name>`) into dist/examples/<name>.js. Type
// checking is separate: `npm run typecheck`.
import { build } from 'esbuild';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const target = process.argv[2] ?? '';
const tool = /^tools\/([a-z0-9-]+)$/.exec(target)?.[1];
const example = /^examples\/([a-z0-9-]+)$/.exec(target)?.[1];
const entry = tool ? `tools/${tool}/src/main.ts` : example ? `examples/src/${example}/main.ts` : `apps/${target}/src/main.ts`;
if (!target || !existsSync(entry)) {
  console.error(`usage: node tools/build.mjs <app> | tools/<tool> | examples/<name>  (no ${entry})`);
  process.exit(2);
}
const outfile = tool ? `dist/tools/${tool}.js` : example ? `dist/examples/${example}.js` : `dist/apps/${target}/main.js`;
const result = await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node20',
  packages: 'external',
  tsconfig: 'tsconfig.base.json',
  sourcemap: true,
  logLevel: 'warning',
  ...(tool ? { banner: { js: '#!/usr/bin/env node' } } : {}),
  write: false,
});
// Written to a temporary file and renamed: a process starting (or a second build running, as test
// files in parallel do) never sees a half-written bundle.
for (const file of result.outputFiles) {
  mkdirSync(dirname(file.path), { recursive: true });
  const tmp = `${file.path}.${process.pid}.tmp`;
  writeFileSync(tmp, file.contents, { mode: tool && file.path.endsWith('.js') ? 0o755 : 0o644 });
  renameSync(tmp, file.path);
}
console.log(`built ${outfile}`);
