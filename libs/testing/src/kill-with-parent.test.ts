import { buildSync } from 'esbuild';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from './infra';
import { isAlive } from './launcher';

// The launcher as a plain script, for a stand-in test process to require: three levels under the
// root, like this directory, so that its paths (kill-with-parent.js) resolve the same.
const LAUNCHER = path.resolve(__dirname, '../../../.data/test/launcher/launcher.cjs');
beforeAll(() => {
  buildSync({ entryPoints: [path.join(__dirname, 'launcher.ts')], outfile: LAUNCHER, bundle: true, platform: 'node', format: 'cjs', packages: 'external', logLevel: 'warning' });
});

/**
 * A stand-in for a test process: starts a long-lived process (`sleep`, as a broker node is not a
 * Node app) guarded by launcher.ts killWithParent (a detached guard with its stdin a pipe); prints both pids.
 */
function testProcess(dir: string) {
  const script = `
    const { spawn } = require('node:child_process');
    const target = spawn('sleep', ['600'], { stdio: 'ignore', detached: true });
    const guard = require(${JSON.stringify(LAUNCHER)}).killWithParent(target.pid, ${JSON.stringify(dir)});
    console.log(JSON.stringify({ target: target.pid, guard: guard.pid }));
    setInterval(() => undefined, 1000);`;
  const parent = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let printed = '';
  parent.stdout.setEncoding('utf8').on('data', (d: string) => (printed += d));
  const pids = waitFor(() => (printed.includes('\n') ? (JSON.parse(printed) as { target: number; guard: number }) : undefined), { what: "the test process's pids" });
  return { parent, pids };
}

describe('a process a test starts, guarded by kill-with-parent.js', () => {
  let dir: string;
  const started: number[] = [];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'guarded-'));
  });
  afterEach(() => {
    for (const pid of started.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is killed and its folder removed when the test process dies, however it dies (SIGKILL here)', async () => {
    const { parent, pids } = testProcess(dir);
    const { target, guard } = await pids;
    started.push(target, guard, parent.pid as number);
    await new Promise((r) => setTimeout(r, 300));
    expect(isAlive(target)).toBe(true);
    parent.kill('SIGKILL');
    await waitFor(() => !isAlive(target), { what: 'the guarded process to be killed', timeoutMs: 5000 });
    await waitFor(() => !fs.existsSync(dir), { what: 'its folder to be removed', timeoutMs: 5000 });
  });

  it('lives on once its guard is ended (a test that stops it itself), whatever becomes of the test process', async () => {
    const { parent, pids } = testProcess(dir);
    const { target, guard } = await pids;
    started.push(target, guard, parent.pid as number);
    process.kill(guard, 'SIGTERM');
    await waitFor(() => !isAlive(guard), { what: 'the guard to end' });
    parent.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 1000));
    expect(isAlive(target)).toBe(true);
    expect(fs.existsSync(dir)).toBe(true);
  });
});
