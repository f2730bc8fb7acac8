// ESLint (flat config) with typescript-eslint; Prettier formats (`npm run format`), so style
// rules are off here (eslint-config-prettier). `npm test` runs both with zero warnings allowed.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/**
 * The layering of docs/architecture.md ("Target layering"), top to bottom, arrows only downward:
 * a module may import from its own layer and the layers below it. Each zone names the folders a
 * layer may not import from.
 */
const layers = [
  { layer: ['src/cli', 'src/main.ts', 'src/app.ts'], may: 'everything below' },
  { layer: ['src/surfaces'], above: ['src/cli', 'src/main.ts', 'src/app.ts'] },
  // The background workers sit beside the endpoint table: NEIS sync and webhook delivery (src/events).
  { layer: ['src/rest', 'src/neis', 'src/events'], above: ['src/cli', 'src/main.ts', 'src/app.ts', 'src/surfaces'] },
  {
    layer: ['src/oauth'],
    above: ['src/cli', 'src/main.ts', 'src/app.ts', 'src/surfaces', 'src/rest', 'src/neis', 'src/events', 'src/graphql'],
  },
  {
    layer: ['src/http'],
    above: ['src/cli', 'src/main.ts', 'src/app.ts', 'src/surfaces', 'src/rest', 'src/neis', 'src/events', 'src/oauth'],
  },
  {
    layer: ['src/graphql'],
    above: ['src/cli', 'src/main.ts', 'src/app.ts', 'src/surfaces', 'src/rest', 'src/neis', 'src/events', 'src/oauth', 'src/http'],
  },
  {
    layer: [
      'src/auth',
      'src/data',
      'src/errors',
      'src/config',
      'src/logger.ts',
      'src/calendar.ts',
      'src/limits.ts',
      'src/compare.ts',
      'src/plural.ts',
    ],
    above: [
      'src/cli',
      'src/main.ts',
      'src/app.ts',
      'src/surfaces',
      'src/rest',
      'src/neis',
      'src/events',
      'src/oauth',
      'src/http',
      'src/graphql',
    ],
  },
];
const zones = layers.flatMap(({ layer, above = [] }) => layer.flatMap((target) => above.map((from) => ({ target, from }))));

/**
 * Inside the data layer, the database platform (src/data/platform: versions, leases, telemetry,
 * caches, the embedded launcher) stands apart from the domains' stores: it knows none of them.
 * The domains (school, neis, accounts, apps, keys, events, operations) and the composition of the
 * database handle (database.ts, runtime.ts, migrations.ts) build on it.
 */
const DATA_DOMAINS = ['school', 'neis', 'accounts', 'apps', 'keys', 'events', 'operations'];
zones.push(
  ...[...DATA_DOMAINS.map((domain) => `src/data/${domain}`), 'src/data/database.ts', 'src/data/runtime.ts', 'src/data/migrations.ts'].map(
    (from) => ({ target: 'src/data/platform', from }),
  ),
);

export default tseslint.config(
  { ignores: ['dist/', '**/dist/', 'node_modules/', '.data/', '**/__generated__/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver()] },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': ['error', { zones }],
    },
  },
  {
    // graphql/ knows nothing of HTTP frameworks (docs/architecture.md).
    files: ['src/graphql/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['koa', 'koa-*', '@koa/*'] }] },
  },
  {
    files: ['**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    // The pages' scripts run in the browser.
    files: ['web/**/*.js'],
    languageOptions: {
      globals: {
        document: 'readonly',
        navigator: 'readonly',
        window: 'readonly',
        Element: 'readonly',
        fetch: 'readonly',
        URLSearchParams: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
  },
  prettier,
);
