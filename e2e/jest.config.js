const preset = require('../jest.preset.js');

// The files that mostly wait out a fault they set up, with a few bookings in flight: the callback
// endpoint down for a minute (faults), a lock vendor cut for two minutes (lock-accounts).
// scripts/e2e-run.sh (npm test, npm run e2e) runs them (E2E_LANE=waits) beside the others
// (E2E_LANE=main); without E2E_LANE every file runs here, one at a time.
const WAITING = ['faults', 'lock-accounts'].map((name) => `/src/${name}\\.e2e\\.test\\.ts$`);
const lane = process.env.E2E_LANE;
if (lane && lane !== 'waits' && lane !== 'main') throw new Error(`E2E_LANE is "waits", "main" or unset, not "${lane}"`);

module.exports = {
  ...preset,
  displayName: 'e2e',
  rootDir: __dirname,
  maxWorkers: 1,
  ...(lane === 'waits' && { testRegex: WAITING, testMatch: undefined }),
  ...(lane === 'main' && { testPathIgnorePatterns: ['/node_modules/', ...WAITING] }),
  // Every response the suite receives is checked against the OpenAPI documents (libs/testing contract.ts).
  setupFilesAfterEnv: [...preset.setupFilesAfterEnv, '<rootDir>/src/support/contract.setup.ts', '<rootDir>/src/support/heap-watch.setup.ts'],
};
