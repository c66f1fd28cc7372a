module.exports = { ...require('../../jest.preset.js'), displayName: 'lock-cloud', rootDir: __dirname };
