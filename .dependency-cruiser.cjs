/**
 * Import-direction rules (`npm run lint`): adapters (src/adapters/: http, console, admin CLI, metrics,
 * openapi; the entry points, workers, scripts and the simulator) →
 * domain services → ports (store) and the shared base (config, log, errors, schemas). Nothing imports
 * upward, and no file takes part in an import cycle.
 */
const DOMAIN = '^src/(auth|presence|commands|doors|bans|workspace|derived|events|games|limits|queues|runtime)/';
const ADAPTERS = '^(src/adapters/|src/(app|server)\\.ts$|workers/|scripts/|packages/simulator/)';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'Files that import each other in a loop cannot be understood (or tested) one at a time.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-not-to-adapters',
      severity: 'error',
      comment: 'Domain services return values; only the adapters know HTTP, the console, the CLI and the worker processes.',
      from: { path: DOMAIN },
      to: { path: ADAPTERS },
    },
    {
      name: 'store-not-to-domain',
      severity: 'error',
      comment: 'Ports (Redis, Postgres access) know nothing of the domain or the adapters.',
      from: { path: '^src/store/' },
      to: { path: `${DOMAIN}|${ADAPTERS}` },
    },
    {
      name: 'script-calls-through-builders',
      severity: 'error',
      comment: 'A Lua script\'s KEYS and arguments are built by its typed builder beside it (src/store/lua/<name>.ts); the parts several scripts share (replay claim, quota count: src/store/lua/lib/) are used by the builders only, so no service assembles positional keys of its own.',
      from: { path: '^(src|workers|scripts|packages)/', pathNot: '^src/store/lua/' },
      to: { path: '^src/store/lua/lib/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'base-not-upward',
      severity: 'error',
      comment: 'config, log, errors and schemas are the ground floor: they import only each other and libraries.',
      from: { path: '^src/(config|log|errors)\\.ts$|^src/schemas/' },
      to: { path: '^(src/|workers/|scripts/)', pathNot: '^src/(config|log|errors)\\.ts$|^src/schemas/' },
    },
    {
      name: 'src-not-to-workers',
      comment: 'Worker processes are entry points: they use src/, never the other way round.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^workers/' },
    },
    {
      name: 'src-not-to-scripts-or-tests',
      severity: 'error',
      comment: 'The service never depends on its tools or tests.',
      from: { path: '^(src|workers)/' },
      to: { path: '^(scripts|test)/' },
    },
    {
      name: 'client-is-standalone',
      severity: 'error',
      comment: 'The reference client (packages/client, @gis/client) ships to game developers on its own: it imports nothing of the service, its tools or its tests.',
      from: { path: '^packages/client/' },
      to: { path: '^(src|workers|scripts|test)/' },
    },
    {
      name: 'client-only-node-builtins',
      severity: 'error',
      comment: 'The reference client has no runtime dependencies: Node built-ins and its own files only.',
      from: { path: '^packages/client/src/' },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'client-by-package-name',
      severity: 'error',
      comment: 'Scripts and tests use the reference client as a game developer does: by its package name, @gis/client, not by a path into packages/.',
      from: { path: '^(scripts|test)/' },
      to: { path: '^packages/', dependencyTypesNot: ['aliased-tsconfig-paths'] },
    },
    {
      name: 'simulator-not-to-tools-or-tests',
      severity: 'error',
      comment: 'The simulator (packages/simulator, @gis/simulator) is what the benches and tests play a fleet with: it uses the service (src/, to set its game up) and the reference client, never the benches, scripts or tests.',
      from: { path: '^packages/simulator/' },
      to: { path: '^(workers|scripts|test)/' },
    },
    {
      name: 'service-not-to-client',
      severity: 'error',
      comment: 'The service speaks HTTP to clients; it never runs the reference client or the simulator (scripts and tests may, by their package names).',
      from: { path: '^(src|workers)/' },
      to: { path: '^packages/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // node_modules is not excluded, only not followed: its entry files stay visible as the targets of
    // imports, which client-only-node-builtins needs to see.
    exclude: { path: '^(dist|sdk|packages/[^/]+/dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
