module.exports = { ...require('../../jest.preset.js'), displayName: 'access-api', rootDir: __dirname };
