import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';
import os from 'node:os';
import { EXIT_WITH_PARENT, isAlive, launchApp, outputBuffer } from './launcher';
import { waitFor } from './infra';

describe("a launched app's output", () => {
  it('is kept whole up to the limit', () => {
    const out = outputBuffer('app', 100);
    out.push('{"message":"a"}\n');
    out.push('{"message":"b"}\n');
    expect(out.text()).toBe('{"message":"a"}\n{"message":"b"}\n');
  });

  it("past the limit keeps the latest half from a line's start, says how much was dropped, and warns once on stderr", () => {
    const warnings: string[] = [];
    const write = jest.spyOn(process.stderr, 'write').mockImplementation((s) => {
      warnings.push(String(s));
      return true;
    });
    try {
      const out = outputBuffer('noisy-app', 100);
      for (let i = 0; i < 30; i++) out.push(`line ${String(i).padStart(3, '0')}\n`); // 9 characters each
      const text = out.text();
      const [head, ...rest] = text.split('\n');
      const kept = rest.join('\n');
      expect(head).toMatch(/^\[launcher: \d+ characters of earlier output dropped\]$/);
      expect(Number(/\d+/.exec(head)?.[0]) + kept.length).toBe(30 * 9);
      expect(kept.length).toBeLessThanOrEqual(100);
      expect(kept).toMatch(/^(line \d{3}\n)+$/); // whole lines
      expect(kept.endsWith('line 029\n')).toBe(true);
      expect(warnings.filter((w) => w.includes('noisy-app wrote more than 100 characters'))).toHaveLength(1);
    } finally {
      write.mockRestore();
    }
  });
});

describe('a launched app and the process that launched it', () => {
  /** `node -e <app>` with the launcher's preload and a stdin pipe, as launchApp starts an app. */
  const appArgs = (app: string) => ['--require', EXIT_WITH_PARENT, '-e', app];

  it('stops on SIGTERM when that process dies, however it dies (SIGKILL here), and not before', async () => {
    const app = "process.on('SIGTERM', () => process.exit(0)); setInterval(() => undefined, 1000);";
    const parent = spawn(
      process.execPath,
      [
        '-e',
        `const app = require('node:child_process').spawn(process.execPath, ${JSON.stringify(appArgs(app))}, { stdio: ['pipe', 'ignore', 'ignore'] }); console.log(app.pid); setInterval(() => undefined, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let printed = '';
    parent.stdout.setEncoding('utf8').on('data', (d: string) => (printed += d));
    const pid = await waitFor(() => Number(printed.trim()) || undefined, { what: "the app's pid" });
    try {
      await new Promise((r) => setTimeout(r, 500));
      expect(isAlive(pid)).toBe(true);
      parent.kill('SIGKILL');
      await waitFor(() => !isAlive(pid), { what: 'the app to stop after its launcher died', timeoutMs: 5000 });
    } finally {
      parent.kill('SIGKILL');
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('never keeps an app alive: one with nothing left to do exits while its launcher lives', async () => {
    const child = spawn(process.execPath, appArgs('setTimeout(() => undefined, 100);'), { stdio: ['pipe', 'ignore', 'ignore'] });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
  });
});

it('reports an app that exits before it is ready at once, with its output, not at the readiness timeout', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'launcher-test-'));
  const main = path.join(dir, 'main.js');
  fs.writeFileSync(main, "console.error('boom: no configuration'); process.exit(3);");
  try {
    const startedAt = Date.now();
    await expect(launchApp('failing-app', {}, { main, timeoutMs: 20_000 })).rejects.toThrow(
      /failing-app exited \(3\) before it was ready: boom: no configuration/,
    );
    expect(Date.now() - startedAt).toBeLessThan(10_000);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('reports an app that never gets ready with what it last said', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'launcher-test-'));
  const main = path.join(dir, 'main.js');
  fs.writeFileSync(main, "console.log('connecting to the database'); setInterval(() => undefined, 1000);");
  try {
    await expect(launchApp('stuck-app', {}, { main, timeoutMs: 1500 })).rejects.toThrow(
      /timed out after 1500 ms waiting for stuck-app to be ready; last: .*; its last output: connecting to the database/,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('finds its preload when bundled three levels under the root, as the benchmarks bundle it (.data/bench/<name>/)', () => {
  const dir = path.resolve(__dirname, '../../../.data/bench/launcher-test');
  const outfile = path.join(dir, 'bundle.cjs');
  fs.mkdirSync(dir, { recursive: true });
  try {
    buildSync({
      entryPoints: [path.join(__dirname, 'launcher.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      packages: 'external',
      logLevel: 'silent',
    });
    const bundled = require(outfile) as { EXIT_WITH_PARENT: string };
    expect(bundled.EXIT_WITH_PARENT).toBe(EXIT_WITH_PARENT);
    expect(fs.existsSync(bundled.EXIT_WITH_PARENT)).toBe(true);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
