// After each test: any response that broke the OpenAPI contract (see
// test/helpers/contract.ts) fails the test that got it.
import { takeViolations } from '../helpers/contract.ts';

afterEach(() => {
  const violations = takeViolations();
  if (violations.length > 0) {
    throw new Error(
      `Responses the OpenAPI document does not describe:\n${violations.map((v) => `  - ${v}`).join('\n')}`,
    );
  }
});
