module.exports = { ...require('../../jest.preset.js'), displayName: 'ingest-gateway', rootDir: __dirname };
