module.exports = { ...require('../../jest.preset.js'), displayName: 'callback-dispatcher', rootDir: __dirname };
