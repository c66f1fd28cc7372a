module.exports = { ...require('../../jest.preset.js'), displayName: 'layout', rootDir: __dirname };
