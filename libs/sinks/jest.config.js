module.exports = { ...require('../../jest.preset.js'), displayName: 'sinks', rootDir: __dirname };
