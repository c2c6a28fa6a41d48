// `npm run test:unit`: the tests of pure logic, files named *.unit.test.ts, in
// seconds: no database to start and migrate (no global setup) and no HTTP
// answers to check against the OpenAPI document (no contract setup). `npm test`
// runs them too, once, with the rest (jest.config.js matches every *.test.ts).
import base from './jest.config.js';

const { globalSetup: _setup, globalTeardown: _teardown, setupFilesAfterEnv: _contract, ...shared } = base;

export default { ...shared, testMatch: ['<rootDir>/test/**/*.unit.test.ts'] };
