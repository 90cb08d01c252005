// Lint: typescript-eslint's recommended type-checked rules over every TypeScript file (`npm run lint`,
// which also runs the import-direction check of .dependency-cruiser.cjs).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Issue #18, "One key space": every Redis key comes from the KeySpace a process builds once at boot
// (src/store/keyspace/key-space.ts). No file but that one builds a key view of its own…
const KEY_VIEWS = {
  selector: 'NewExpression[callee.name=/^(GameKeys|WorkspaceKeys|GlobalKeys)$/]',
  message: 'Keys come from the KeySpace built at boot (keySpace.game(id), keySpace.workspace(id), keySpace.global): src/store/keyspace/key-space.ts.',
};
// …and no service holds the Redis prefix: it is read from the config only where a process builds its KeySpace.
const REDIS_PREFIX = {
  selector: "Identifier[name='redisPrefix']",
  message: 'Take the KeySpace (src/store/keyspace/key-space.ts), not the Redis prefix; only the entry points that build it read config.redisPrefix.',
};
const KEY_SPACE_MODULE = 'src/store/keyspace/key-space.ts';
/** Where a process builds its KeySpace from the config (scripts/*.ts are entry points too; scripts/support/ is not). */
const KEY_SPACE_BUILDERS = ['src/config.ts', 'src/server.ts', 'src/adapters/admin/cli.ts', 'workers/index.ts', 'packages/simulator/src/simulate.ts'];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'sdk/', 'src/adapters/console/public/', '.data/', 'packages/*/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  { languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } } },
  { files: ['**/*.js', '**/*.cjs'], ...tseslint.configs.disableTypeChecked },
  // CommonJS config files (.dependency-cruiser.cjs) assign `module.exports`.
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } } },
  {
    rules: {
      // `_`-prefixed parameters are kept on purpose (Express error middleware needs four).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  { files: ['**/*.ts'], ignores: [KEY_SPACE_MODULE], rules: { 'no-restricted-syntax': ['error', KEY_VIEWS] } },
  {
    files: ['src/**/*.ts', 'workers/**/*.ts', 'scripts/support/**/*.ts', 'packages/simulator/src/**/*.ts'],
    ignores: [KEY_SPACE_MODULE, ...KEY_SPACE_BUILDERS],
    rules: { 'no-restricted-syntax': ['error', KEY_VIEWS, REDIS_PREFIX] },
  },
  {
    // supertest's `res.body` and JSON fixtures are `any` by design: tests assert on them with chai.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // Stubs implement async interfaces with synchronous bodies.
      '@typescript-eslint/require-await': 'off',
    },
  },
);
