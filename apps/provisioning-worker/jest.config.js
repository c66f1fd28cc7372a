module.exports = { ...require('../../jest.preset.js'), displayName: 'provisioning-worker', rootDir: __dirname };
