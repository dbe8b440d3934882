// Type-aware linting: the promise rules catch floating and misused promises, the bugs
// that lose work silently in a queue-backed service.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'data/**',
      'bench/corpora/**',
      '**/*.d.ts',
      '**/fixtures/**',
      'packages/core/assembly/**',
      'apps/api/public/core-format.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', '*.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/require-await': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Apps are entry points: what two of them need lives in a package under packages/, so no
    // app, package, script or bench file imports an app, by its name or into its sources.
    // (Tests may still start a real API through apps/api/test/support.)
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^@reposcan/(api|worker|cli)(/|$)',
              message: 'Apps never import apps: move what is shared into a package under packages/.',
            },
            {
              regex: '(^|/)apps/(api|worker|cli)/src(/|$)',
              message: 'Apps never import apps: move what is shared into a package under packages/.',
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ImportExpression[source.value=/^@reposcan\\u002F(api|worker|cli)(\\u002F|$)/]',
          message: 'Apps never import apps: move what is shared into a package under packages/.',
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The browser page: tsc (checkJs, DOM lib) checks names and types there, and the promise
    // rules apply as in the TypeScript code.
    files: ['apps/api/public/**/*.js'],
    languageOptions: {
      parserOptions: {
        projectService: false,
        project: ['apps/api/public/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      'no-undef': 'off',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/require-await': 'error',
    },
  },
  {
    files: ['**/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
