module.exports = { ...require('../jest.preset.js'), displayName: 'e2e', rootDir: __dirname, maxWorkers: 1 };
