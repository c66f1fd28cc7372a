module.exports = { ...require('../../jest.preset.js'), displayName: 'tools-cli', rootDir: __dirname };
