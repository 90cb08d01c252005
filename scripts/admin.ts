#!/usr/bin/env node
/**
 * Operator CLI entry, installed as the package's `gis-admin` bin (dist/scripts/admin.js after
 * `npm run build`): `npx gis-admin <group> <command> [options] [--json]`, e.g.
 * `npx gis-admin keys list --game <id> --json | jq`. Configuration comes from the environment
 * (src/config.ts); run from the repository, `.data/services.env` (written by `npm run services:up`) is
 * loaded too, like the npm scripts do (variables already set win). Commands live in src/adapters/admin/commands/,
 * the dispatcher in src/adapters/admin/cli.ts. Exit codes: 0 ok, 1 failure, 2 usage error.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config.js';
import { runCli } from '../src/adapters/admin/cli.js';
import { ADMIN_COMMANDS, RENAMED_GROUPS } from '../src/adapters/admin/commands/index.js';

/** The version of the nearest package.json above this file: scripts/ in the source tree, dist/scripts/ once built. */
function packageVersion(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) return String((JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version);
    if (path.dirname(dir) === dir) return 'unknown';
  }
}

/** The quick start's service addresses, when run from the repository; silent elsewhere (unlike --env-file-if-exists). */
const SERVICES_ENV = '.data/services.env';
if (existsSync(SERVICES_ENV)) process.loadEnvFile(SERVICES_ENV);

const code = await runCli(process.argv.slice(2), {
  commands: ADMIN_COMMANDS,
  version: packageVersion(),
  renamedGroups: RENAMED_GROUPS,
  loadConfig: () => loadConfig(),
});
process.exit(code);
