// Every test file's default timeout: a project config may not set `testTimeout` (jest warns
// "Unknown option" in a multi-project run), but each test file runs this.
jest.setTimeout(60000);
