// Every unit and integration test project (apps/*, libs/*, tools/*, deploy; not e2e) in one jest run, as
// `npm test` runs them: one pool of two workers across all test files instead of a jest start per
// project, which measured 129 s against 196 s for the same files. Still two files at a time, the
// parallelism the suite is known to be steady at on 2 cores. One project alone:
// `npx jest -c <project>/jest.config.js`.
const fs = require('fs');
const path = require('path');

const projects = [
  ...['apps', 'libs', 'tools'].flatMap((dir) =>
    fs
      .readdirSync(path.join(__dirname, dir), { withFileTypes: true })
      .filter((e) => e.isDirectory() && fs.existsSync(path.join(__dirname, dir, e.name, 'jest.config.js')))
      .map((e) => `<rootDir>/${dir}/${e.name}/jest.config.js`),
  ),
  // The deployment's checks (deploy/k8s rendered and checked against the apps' config schemas).
  '<rootDir>/deploy/jest.config.js',
  // The examples integrators copy, each run against the whole system.
  '<rootDir>/examples/jest.config.js',
];

// maxWorkers and testTimeout are settings of the whole run: a project's own (jest.preset.js) count
// only when it runs alone.
// workerIdleMemoryLimit: a worker whose heap has grown past it after a file is replaced. Jest's
// workers grow by each file's module registry (to about 800 MB over 45 files), and a process that
// large took 650 ms to end on these VMs, past the 500 ms Jest allows at the end of the run: it then
// printed "A worker process has failed to exit gracefully" although nothing leaked.
module.exports = { projects, maxWorkers: 2, testTimeout: 60000, workerIdleMemoryLimit: '500MB' };
