/**
 * Operator CLI entry: `npm run admin -- <group> <command> [options] [--json]`
 * (e.g. `npm run --silent admin -- keys list --game <id> --json | jq`). Configuration comes from the
 * environment (src/config.ts); commands live in src/admin/commands/, the dispatcher in src/admin/cli.ts.
 * Exit codes: 0 ok, 1 failure, 2 usage error.
 */
import { loadConfig } from '../src/config.js';
import { runCli } from '../src/admin/cli.js';
import { ADMIN_COMMANDS } from '../src/admin/commands/index.js';

const code = await runCli(process.argv.slice(2), { commands: ADMIN_COMMANDS, loadConfig: () => loadConfig() });
process.exit(code);
