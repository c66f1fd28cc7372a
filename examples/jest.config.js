module.exports = { ...require('../jest.preset.js'), displayName: 'examples', rootDir: __dirname };
