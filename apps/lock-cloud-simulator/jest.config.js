module.exports = { ...require('../../jest.preset.js'), displayName: 'lock-cloud-simulator', rootDir: __dirname };
