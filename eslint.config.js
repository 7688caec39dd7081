// @ts-check
import eslint from '@eslint/js'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {ignores: ['dist/**', 'node_modules/**', 'oclif.manifest.json', 'runbook.schema.json', '**/*.cjs']},
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        // Not projectService: it only opens files named tsconfig.json, and tsconfig.json leaves out test/.
        // tsconfig.test.json extends it and includes commands, src, bench, test and vitest.config.ts, so one
        // program covers every .ts file (listing both tsconfigs gives the same findings but builds two: ~40% slower).
        project: ['./tsconfig.test.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Ports, sim adapters and fakes implement Promise-returning interfaces; many have nothing to await.
      '@typescript-eslint/require-await': 'off',
      // Deliberate: stripping ANSI escapes and control characters before printing.
      'no-control-regex': 'off',
      // `const {seq: _seq, ...data} = entry` omits keys on purpose; tsc's noUnusedLocals covers the rest.
      '@typescript-eslint/no-unused-vars': ['error', {ignoreRestSiblings: true, argsIgnorePattern: '^_'}],
      // Both hits forward a caught error or an AbortSignal's reason unchanged.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', {allowThrowingAny: true, allowThrowingUnknown: true}],
    },
  },
  {
    // Tests assert on JSON.parse of the CLI's --json output and on parsed YAML: `any` is the point there.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // bin/*.js, test/helpers/*.mjs and this file are in neither tsconfig: lint them without type information.
    // Last, so that it also switches off the type-aware rules configured above.
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // The page `sluice serve` sends: it runs in the browser, not in Node.
    files: ['assets/**/*.js'],
    languageOptions: {globals: globals.browser, sourceType: 'script'},
  },
)
