module.exports = { ...require('../../jest.preset.js'), displayName: 'edge', rootDir: __dirname };
