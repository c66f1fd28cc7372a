module.exports = { ...require('../../jest.preset.js'), displayName: 'dead-letters', rootDir: __dirname };
