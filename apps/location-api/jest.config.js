module.exports = { ...require('../../jest.preset.js'), displayName: 'location-api', rootDir: __dirname };
