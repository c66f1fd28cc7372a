module.exports = { ...require('../../jest.preset.js'), displayName: 'tools-docs', rootDir: __dirname };
