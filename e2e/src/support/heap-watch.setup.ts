import path from 'node:path';

// The e2e suite runs in one process (--runInBand). If that process dies of "JavaScript heap out of
// memory" Jest prints no test name (seen once in CI, 320 s into the suite); this names the file and
// the test that was running while the heap grew past the mark, every 5 s it stays there.
const MARK_MB = 1500;
const file = path.relative(process.cwd(), expect.getState().testPath ?? '');
const timer = setInterval(() => {
  const mb = Math.round(process.memoryUsage().heapUsed / 1024 / 1024);
  if (mb > MARK_MB) process.stderr.write(`e2e: heap at ${mb} MB in ${file}, test "${expect.getState().currentTestName ?? '(setup)'}"\n`);
}, 5000);
timer.unref();
afterAll(() => clearInterval(timer));
