// `npm run lint` (in `npm test`, after Prettier): typescript-eslint's
// recommended rules with type information (recommendedTypeChecked) over the
// TypeScript, and ESLint's recommended rules over everything, the admin
// console's browser scripts and the config files included. A rule turned off
// says why; the typecheck (strict, noUnusedLocals) already catches the rest.
import { registerHooks } from 'node:module';
import js from '@eslint/js';
import globals from 'globals';

// typescript-eslint reads types through TypeScript's compiler API, which
// TypeScript 7 (our tsc) does not have. TypeScript 6, the same language with
// that API, is installed as @typescript/typescript6 for this alone: the modules
// of typescript-eslint that ask for `typescript` get 6, everything else (tsc,
// the tests) keeps 7. Remove when typescript-eslint runs on TypeScript 7.
registerHooks({
  resolve(specifier, context, nextResolve) {
    const fromTypescriptEslint = /\/node_modules\/(typescript-eslint|@typescript-eslint\/[^/]+|ts-api-utils)\//.test(
      context.parentURL ?? '',
    );
    if (fromTypescriptEslint && /^typescript(\/|$)/.test(specifier))
      return nextResolve(specifier.replace(/^typescript/, '@typescript/typescript6'), context);
    return nextResolve(specifier, context);
  },
});
const { default: tseslint } = await import('typescript-eslint');

// A name starting with _ is unused on purpose: a field left out of a rest
// (`const { secret: _secret, ...shown } = row`), a parameter a signature needs.
const unused = {
  argsIgnorePattern: '^_',
  varsIgnorePattern: '^_',
  caughtErrorsIgnorePattern: '^_',
  destructuredArrayIgnorePattern: '^_',
  ignoreRestSiblings: true,
};

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', 'dist/', 'coverage/', 'test/client/'] },
  js.configs.recommended,
  { files: ['**/*.js'], languageOptions: { globals: globals.node }, rules: { 'no-unused-vars': ['error', unused] } },
  { files: ['api/admin-ui/**/*.js'], languageOptions: { globals: globals.browser } },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', unused],
      // A function is often async without awaiting on purpose: it fits a type that returns a promise (a route's
      // handler, a task, a provider, a fake's answer) and turns a throw into a rejection, which its callers expect.
      // 171 of them; an await that matters is caught by no-floating-promises and no-misused-promises.
      '@typescript-eslint/require-await': 'off',
      // The services are records of closures (api.close, handler.finish), not classes: a method taken off one
      // needs no `this`. 21 such reads, none a bug.
      '@typescript-eslint/unbound-method': 'off',
      // These patterns mean control characters: they strip or refuse them in text, file names and URLs.
      'no-control-regex': 'off',
      // An abort's reason or a caught error is passed on as it came, whatever it is (a Problem, a JobError).
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
    },
  },
  {
    // Tests read supertest's bodies and the requests fakes receive, which are `any`, field by field (about
    // 3,700 reads): each response is checked against the OpenAPI document instead (test/setup/contract.ts).
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      // The fakes echo fields of the requests they get, whatever their type, as a vendor would.
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // A fake server's or a bench's request handler is async and answers every request itself.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }] },
  },
  {
    // The example builder walks JSON Schemas of any shape (Record<string, any>), as the document holds them.
    files: ['api/openapi-examples.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
    },
  },
  {
    // linkedom's document has no types TypeScript resolves without the DOM library (not in tsconfig's lib):
    // every read of it is an `error` type to the checker. The article and block extractors read nothing else.
    files: ['worker/posts/article.ts', 'worker/posts/blocks.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
