import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';

const boundaries = (testing) => [
  'error',
  {
    enforceBuildableLibDependency: false,
    allow: [],
    depConstraints: [
      { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['type:contracts', 'type:data', 'type:util', 'type:client', 'type:testing'] },
      // examples/: what integrators copy; the typed client is all they use of ours (tests: the system too).
      { sourceTag: 'type:example', onlyDependOnLibsWithTags: ['type:client', ...testing] },
      // deploy/: checks of the manifests against the libs' topology and config schemas.
      { sourceTag: 'type:deploy', onlyDependOnLibsWithTags: ['type:contracts', 'type:data', 'type:util'] },
      { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:contracts', 'type:data', 'type:util', 'type:client', ...testing] },
      // libs/client: the typed client of the public contract; its own code imports nothing of ours.
      { sourceTag: 'type:client', onlyDependOnLibsWithTags: [...testing] },
      { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:contracts', 'type:data', 'type:util'] },
      { sourceTag: 'type:data', onlyDependOnLibsWithTags: ['type:contracts', 'type:data', 'type:util', ...testing] },
      { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: ['type:util', ...testing] },
      { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util', ...testing] },
    ],
  },
];

const duplicateKeyRestriction = {
  name: '@smartlock/db',
  importNames: ['isDuplicateKeyError'],
  message: 'Decide the race with a libs/db primitive (claimOnce, insertUnlessHeld, unlessHeld, nextVersion, claimExpiring).',
};

export default [
  { ignores: ['**/dist', '**/node_modules', '.data/**', '.nx/**', 'coverage/**'] },
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  {
    files: ['**/*.ts'],
    rules: {
      // Apps talk over the broker, never by import: an app may only depend on libs, and each lib
      // only on the kinds below it. Nx itself forbids importing an app project. Only tests may use
      // libs/testing.
      '@nx/enforce-module-boundaries': boundaries([]),
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // Races are decided in libs/db (claimOnce, insertUnlessHeld, unlessHeld, nextVersion, claimExpiring),
    // where what FerretDB 1.x and MongoDB guarantee is written beside each; an app catches no duplicate key.
    files: ['**/*.ts'],
    ignores: ['libs/db/**'],
    rules: {
      'no-restricted-imports': ['error', { paths: [duplicateKeyRestriction] }],
      // A conditional findOneAndUpdate lets several writers "win" on FerretDB 1.x (docs/adr/0101): say which case it is.
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='findOneAndUpdate']",
          message:
            'findOneAndUpdate only in libs/db: updateAsOwner where one writer owns the document; transitionOnce, nextVersion or claimOnce where several race; updateOne/findById where nothing is conditional.',
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', '**/test-support/**/*.ts', 'e2e/**/*.ts', 'bench/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': boundaries(['type:testing']) },
  },
  {
    // A project's test that launches the whole system runs after the others, one at a time
    // (scripts/test.sh): the name says so.
    files: ['apps/**/*.test.ts', 'libs/**/*.test.ts', 'tools/**/*.test.ts', 'examples/**/*.test.ts', 'deploy/**/*.test.ts'],
    ignores: ['**/*.system.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            duplicateKeyRestriction,
            {
              name: '@smartlock/testing',
              importNames: ['launchSystem'],
              message: 'A test that launches the whole system is named *.system.test.ts (npm test runs those one at a time).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // Layout is Prettier's (npm run format): no ESLint rule may disagree with it.
  prettier,
];
