module.exports = { ...require('../../jest.preset.js'), displayName: 'tools-dlq', rootDir: __dirname };
