// The deployment's checks (deploy/**/*.test.ts): they render manifests and read the apps' config
// schemas, and need no broker or database, so no infrastructure check before them.
module.exports = {
  ...require('../jest.preset.js'),
  displayName: 'deploy',
  rootDir: __dirname,
  testMatch: ['<rootDir>/**/*.test.ts'],
  globalSetup: undefined,
};
