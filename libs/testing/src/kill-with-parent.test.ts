import { buildSync } from 'esbuild';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from './infra';
import { isAlive } from './launcher';

// The launcher and private-rabbit.ts as plain scripts, for a stand-in test process to require: three
// levels under the root, like this directory, so that their paths (kill-with-parent.js) resolve the same.
const BUNDLES = path.resolve(__dirname, '../../../.data/test/guards');
const LAUNCHER = path.join(BUNDLES, 'launcher.js');
const PRIVATE_RABBIT = path.join(BUNDLES, 'private-rabbit.js');
beforeAll(() => {
  const entryPoints = ['launcher.ts', 'private-rabbit.ts'].map((f) => path.join(__dirname, f));
  buildSync({ entryPoints, outdir: BUNDLES, bundle: true, platform: 'node', format: 'cjs', packages: 'external', logLevel: 'warning' });
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
  // A node booting beside a loaded test run took more than 10 s to print them (npm test, load 16).
  const pids = waitFor(() => (printed.includes('\n') ? (JSON.parse(printed) as { target: number; guard: number }) : undefined), {
    what: "the test process's pids",
    timeoutMs: 30_000,
  });
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
    // Ended after the test whatever happens: it runs until killed, and its stderr is Jest's, which waits for it to close.
    started.push(parent.pid as number);
    const { target, guard } = await pids;
    started.push(target, guard);
    await new Promise((r) => setTimeout(r, 300));
    expect(isAlive(target)).toBe(true);
    parent.kill('SIGKILL');
    await waitFor(() => !isAlive(target), { what: 'the guarded process to be killed', timeoutMs: 5000 });
    await waitFor(() => !fs.existsSync(dir), { what: 'its folder to be removed', timeoutMs: 5000 });
  });

  it('lives on once its guard is ended (a test that stops it itself), whatever becomes of the test process', async () => {
    const { parent, pids } = testProcess(dir);
    // Ended after the test whatever happens: it runs until killed, and its stderr is Jest's, which waits for it to close.
    started.push(parent.pid as number);
    const { target, guard } = await pids;
    started.push(target, guard);
    process.kill(guard, 'SIGTERM');
    await waitFor(() => !isAlive(guard), { what: 'the guard to end' });
    parent.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 1000));
    expect(isAlive(target)).toBe(true);
    expect(fs.existsSync(dir)).toBe(true);
  });
});

/** The pids of the kill-with-parent.js guards running now, by the pid each guards. */
function guards(): Map<number, number> {
  const found = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const at = argv.findIndex((a) => a.endsWith('kill-with-parent.js'));
      if (at >= 0) found.set(Number(argv[at + 1]), Number(entry));
    } catch {
      /* ended meanwhile */
    }
  }
  return found;
}

describe('a private RabbitMQ node (private-rabbit.ts)', () => {
  it('is guarded from the moment it writes its pid: a test process that dies while the node boots leaves no node and no folder', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rabbit-guarded-'));
    const script = `
      const { createRabbitNode } = require(${JSON.stringify(PRIVATE_RABBIT)});
      createRabbitNode({ name: 'rabbit-guarded', dir: ${JSON.stringify(dir)}, plugins: [] }).then((n) => {
        console.log(JSON.stringify({ port: n.port }));
        return n.start();
      });`;
    const parent = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let printed = '';
    parent.stdout.setEncoding('utf8').on('data', (d: string) => (printed += d));
    let node = 0;
    try {
      const { port } = await waitFor(() => (printed.includes('\n') ? (JSON.parse(printed) as { port: number }) : undefined), {
        what: 'the node to be created',
      });
      node = await waitFor(
        () => (fs.existsSync(path.join(dir, 'pid')) ? Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8').trim()) || undefined : undefined),
        { what: 'the node to write its pid', timeoutMs: 60_000, intervalMs: 20 },
      );
      await waitFor(() => guards().has(node) || undefined, { what: 'a guard of the node', timeoutMs: 10_000, intervalMs: 20 });
      // still booting: it does not accept AMQP connections yet (its listener opens seconds after the pid)
      const accepting = await new Promise<boolean>((resolve) =>
        net
          .connect(port, '127.0.0.1')
          .once('connect', function (this: net.Socket) {
            this.destroy();
            resolve(true);
          })
          .once('error', () => resolve(false)),
      );
      expect(accepting).toBe(false);
      parent.kill('SIGKILL');
      await waitFor(() => !isAlive(node), { what: 'the node to be killed', timeoutMs: 10_000 });
      await waitFor(() => !fs.existsSync(dir), { what: 'its folder to be removed', timeoutMs: 15_000 });
    } finally {
      if (isAlive(parent.pid as number)) parent.kill('SIGKILL');
      if (node && isAlive(node)) process.kill(node, 'SIGKILL');
    }
  }, 90_000);
});
