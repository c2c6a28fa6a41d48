// Tests are TypeScript compiled by swc (TypeScript 7 has no compiler API for
// ts-jest) and run as native ES modules (npm test passes --experimental-vm-modules).
export default {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2024' },
        module: { type: 'es6' },
      },
    ],
  },
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  // Every response a test gets is checked against the OpenAPI document.
  setupFilesAfterEnv: ['<rootDir>/test/setup/contract.ts'],
  // Two cores: more workers only queue for the same CPUs and database.
  maxWorkers: 2,
  testTimeout: 60_000,
};
