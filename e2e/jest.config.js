const preset = require('../jest.preset.js');

module.exports = {
  ...preset,
  displayName: 'e2e',
  rootDir: __dirname,
  maxWorkers: 1,
  // Every response the suite receives is checked against the OpenAPI documents (libs/testing contract.ts).
  setupFilesAfterEnv: [...preset.setupFilesAfterEnv, '<rootDir>/src/support/contract.setup.ts', '<rootDir>/src/support/heap-watch.setup.ts'],
};
