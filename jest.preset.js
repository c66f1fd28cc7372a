// Shared jest settings: swc for speed (type checking is `npm run typecheck`), tsconfig paths as module names.
const path = require('path');
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = {};
for (const [alias, [target]] of Object.entries(compilerOptions.paths)) {
  moduleNameMapper[`^${alias}$`] = path.join(__dirname, target);
}

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper,
  testMatch: ['<rootDir>/src/**/*.test.ts'],
  globalSetup: path.join(__dirname, 'libs/testing/src/global-setup.js'),
  setupFilesAfterEnv: [path.join(__dirname, 'libs/testing/src/jest-timeout.js')],
  maxWorkers: 2,
};
