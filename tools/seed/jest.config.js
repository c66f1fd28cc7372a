module.exports = { ...require('../../jest.preset.js'), displayName: 'tools-seed', rootDir: __dirname };
