/**
 * The operator CLI: `gis-admin <group> <command> [options] [--json]` (entry: scripts/admin.ts, the
 * package's `bin`; the commands are registered in `commands/index.ts`).
 *
 * Conventions every command follows: yes/no options are `--x` / `--no-x` and take no value; secrets
 * come from stdin or the environment, never argv (see secret-input.ts); commands that delete or revoke
 * need `--yes`; `gis-admin --version` prints the package version.
 *
 * Output contract:
 * - success: with `--json`, exactly one JSON object on stdout and nothing else; without it, readable
 *   text. Notices for humans (and logs, which winston writes to stderr) go to stderr.
 * - failure: stdout stays empty; one line `error: ...` on stderr; exit 2 for usage errors (unknown
 *   command or option, missing or malformed value), 1 for everything else (domain errors such as an
 *   unknown game or an out-of-range interval print their message, never a stack trace).
 *
 * Connections to Postgres and Redis are opened on first use, once per process, and closed before exit.
 */
import { userInfo } from 'node:os';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { ConfigError, type Config } from '../../config.js';
import { DomainError } from '../../errors.js';
import { log, setLogLevel } from '../../log.js';
import { createDb, type Db } from '../../store/prisma.js';
import { createRedis, type AppRedis } from '../../store/redis.js';
import { KeySpace } from '../../store/keyspace/key-space.js';
import { ArgReader, UsageError, type AdminCommand, type CommandContext } from './command.js';
import { PROGRAM, commandHelp, commandUsage, overallHelp } from './help.js';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Postgres connections the CLI may hold: it runs one command at a time. */
const CLI_DB_POOL = 2;
/** How long closing Redis may take before the connection is dropped. */
const CLOSE_TIMEOUT_MS = 2000;

/** What {@link runCli} needs; everything process-wide is passed in so the entry stays the only global user. */
export interface CliDeps {
  commands: readonly AdminCommand[];
  /** Printed by `--version`. */
  version: string;
  /** Groups that were merged into another, old name → new name (refused with the new name). */
  renamedGroups?: Readonly<Record<string, string>>;
  /** Called once a command is known (so `--help` works without a valid environment). */
  loadConfig: () => Readonly<Config>;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  /** Where piped secrets are read from; default process.stdin. */
  stdin?: NodeJS.ReadableStream;
  /** Default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Server time in ms; default Date.now. */
  now?: () => number;
}

/** Opens each connection on first use and closes whatever was opened. */
class Connections {
  private dbClient?: Db;
  private redisClient?: AppRedis;
  /** The last connection error Redis reported (commands only say "max retries reached"). */
  lastRedisError?: string;

  constructor(private readonly config: Readonly<Config>) {}

  db(): Db {
    this.dbClient ??= createDb(this.config.databaseUrl, CLI_DB_POOL);
    return this.dbClient;
  }

  redis(): AppRedis {
    if (!this.redisClient) {
      const client = createRedis(this.config.redisUrl, { name: 'admin-cli' });
      // Command promises reject with the cause; without a listener ioredis prints every retry to stderr.
      client.on('error', (err: Error) => {
        this.lastRedisError = err.message;
        log.debug('redis connection error', { err: err.message });
      });
      this.redisClient = client;
    }
    return this.redisClient;
  }

  async close(): Promise<void> {
    const redis = this.redisClient;
    await Promise.allSettled([
      this.dbClient?.$disconnect(),
      redis &&
        Promise.race([redis.quit(), new Promise((r) => setTimeout(r, CLOSE_TIMEOUT_MS).unref())]).finally(() => redis.disconnect()),
    ]);
  }
}

function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  if (!text) return Promise.resolve();
  return new Promise((resolve) => {
    stream.write(text.endsWith('\n') ? text : `${text}\n`, () => resolve());
  });
}

/** Everything `stream` yields until it ends, as UTF-8 text. */
async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
  return text;
}

/** JSON.stringify that prints bigints (e.g. AuditLog ids) as decimal strings. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/** The one-line, stack-free description of a failure and the exit code it implies. */
export function describeError(err: unknown): { line: string; exitCode: number } {
  if (err instanceof UsageError) return { line: `error: ${err.message}`, exitCode: EXIT_USAGE };
  if (err instanceof DomainError) return { line: `error: ${oneLine(err.message)} [${err.code}]`, exitCode: EXIT_FAILURE };
  if (err instanceof ConfigError) return { line: `error: invalid configuration: ${err.problems.join('; ')}`, exitCode: EXIT_FAILURE };
  if (err instanceof Error) {
    // Prisma puts the invocation first and the cause on the last line.
    const lines = err.message.split('\n').map((l) => l.trim()).filter(Boolean);
    const text = err.name.startsWith('PrismaClient') ? (lines.at(-1) ?? err.name) : lines.join(' ');
    return { line: `error: ${oneLine(text || err.name)}`, exitCode: EXIT_FAILURE };
  }
  return { line: `error: ${oneLine(String(err))}`, exitCode: EXIT_FAILURE };
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 500 ? `${flat.slice(0, 497)}...` : flat;
}

function operatorName(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return 'cli';
  }
}

/** Values an old spelling gave a yes/no option (`--native-bans true`, `--clocked-in yes`). */
const OLD_BOOLEAN_VALUES = new Set(['true', 'false', 'yes', 'no', 'on', 'off']);

/**
 * Refuses retired options and yes/no options given a value, with the spelling to use instead; parseArgs
 * alone would only say "unexpected argument". Retired values (possibly secrets) are never echoed.
 * @throws {UsageError}
 */
function refuseOldSpellings(cmd: AdminCommand, args: string[]): void {
  args.forEach((token, i) => {
    if (!token.startsWith('--')) return;
    const [name = '', inline] = token.slice(2).split('=', 2);
    const retired = cmd.retiredOptions?.[name];
    if (retired !== undefined) throw new UsageError(`--${name} ${retired}`);
    const positive = name.startsWith('no-') && !cmd.options[name] ? name.slice(3) : name;
    if (cmd.options[positive]?.type !== 'boolean') return;
    const next = args[i + 1];
    if (inline !== undefined || (next !== undefined && OLD_BOOLEAN_VALUES.has(next.toLowerCase()))) {
      throw new UsageError(`--${positive} takes no value: write --${positive} for yes, --no-${positive} for no`);
    }
  });
}

function parseCommandArgs(cmd: AdminCommand, args: string[]): Record<string, string | boolean | undefined> {
  refuseOldSpellings(cmd, args);
  const options: ParseArgsOptionsConfig = { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } };
  for (const [name, spec] of Object.entries(cmd.options)) options[name] = { type: spec.type };
  if (cmd.destructive) options.yes = { type: 'boolean' };
  try {
    // allowNegative: every boolean option also reads `--no-<name>` as false (the CLI's one yes/no style).
    const { values } = parseArgs({ args, options, strict: true, allowPositionals: false, allowNegative: true });
    // No option is declared `multiple`, so no value is an array.
    return values as Record<string, string | boolean | undefined>;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) throw new UsageError((err as Error).message);
    throw err;
  }
}

/** What an invocation comes to: text to print (help, version) or a command to run. */
type Resolved = { kind: 'print'; text: string } | { kind: 'run'; cmd: AdminCommand; values: Record<string, string | boolean | undefined>; json: boolean };

/** Finds the command and parses its options. @throws {UsageError} */
function resolve(argv: string[], deps: CliDeps): Resolved {
  const { commands } = deps;
  let i = 0;
  let json = false;
  let help = false;
  for (; i < argv.length && argv[i]!.startsWith('-'); i++) {
    const t = argv[i];
    if (t === '--json') json = true;
    else if (t === '--help' || t === '-h') help = true;
    else if (t === '--version') return { kind: 'print', text: deps.version };
    else throw new UsageError(`unexpected option ${t} before the command; run ${PROGRAM} --help`);
  }
  const group = argv[i];
  if (group === undefined || group === 'help') {
    if (help || group === 'help') return { kind: 'print', text: overallHelp(commands) };
    throw new UsageError(`no command given; run ${PROGRAM} --help for the list`);
  }
  const renamed = deps.renamedGroups?.[group];
  if (renamed !== undefined) throw new UsageError(`the "${group}" group was merged into "${renamed}": run ${PROGRAM} ${renamed} ${argv[i + 1] ?? '--help'} ...`);
  const inGroup = commands.filter((c) => c.group === group);
  if (!inGroup.length) {
    const groups = [...new Set(commands.map((c) => c.group))].join(', ');
    throw new UsageError(`unknown command group "${group}" (one of: ${groups})`);
  }
  let name = argv[i + 1];
  const names = inGroup.map((c) => c.name).join(', ');
  // A group with a single command runs it as `gis-admin <group> [options]` (`gis-admin health`, `gis-admin quotas`).
  const bare = name === undefined || name.startsWith('-');
  const only = inGroup.length === 1 ? inGroup[0]! : undefined;
  if (bare && only && !(help && only.name !== '')) name = only.name;
  else if (bare) {
    if (help || name === '--help' || name === '-h') return { kind: 'print', text: overallHelp(commands, group) };
    throw new UsageError(`"${group}" needs a command (one of: ${names})`);
  }
  const cmd = inGroup.find((c) => c.name === name);
  if (!cmd) throw new UsageError(`unknown command "${group} ${name}" (one of: ${names})`);
  const values = parseCommandArgs(cmd, argv.slice(i + (bare ? 1 : 2)));
  if (help || values.help) return { kind: 'print', text: commandHelp(cmd) };
  const missing = Object.entries(cmd.options).filter(([n, s]) => s.required && values[n] === undefined);
  if (missing.length) {
    throw new UsageError(`${missing.map(([n]) => `--${n}`).join(', ')} required; usage: ${commandUsage(cmd)}`);
  }
  // Refused before anything connects, so nothing can have changed.
  if (cmd.destructive && values.yes !== true) {
    throw new UsageError(`${cmd.group} ${cmd.name} ${cmd.destructive}; nothing was changed: add --yes to confirm`);
  }
  return { kind: 'run', cmd, values, json: json || values.json === true };
}

/**
 * Runs one CLI invocation (`argv` without the node and script paths) and returns the exit code:
 * 0 success, 1 failure, 2 usage error. Never throws; never calls process.exit (the entry does).
 */
export async function runCli(argv: string[], deps: CliDeps): Promise<number> {
  const stdout = deps.stdout ?? process.stdout;
  const stderr = deps.stderr ?? process.stderr;
  let connections: Connections | undefined;
  try {
    const resolved = resolve(argv, deps);
    if (resolved.kind === 'print') {
      await write(stdout, resolved.text);
      return EXIT_OK;
    }
    const config = deps.loadConfig();
    setLogLevel(config.logLevel);
    const conns = new Connections(config);
    connections = conns;
    const { cmd, json } = resolved;
    const ctx: CommandContext = {
      args: new ArgReader(resolved.values),
      config,
      keySpace: new KeySpace(config.redisPrefix, config),
      nowMs: (deps.now ?? Date.now)(),
      actor: operatorName(),
      json,
      db: () => conns.db(),
      redis: () => conns.redis(),
      notice: (line) => {
        if (!json) stderr.write(`${line}\n`);
      },
      env: deps.env ?? process.env,
      readStdin: () => readAll(deps.stdin ?? process.stdin),
    };
    const result = await cmd.run(ctx);
    await write(stdout, json ? toJson(result.json) : result.text);
    return result.exitCode ?? EXIT_OK;
  } catch (caught) {
    const err =
      caught instanceof Error && caught.name === 'MaxRetriesPerRequestError' && connections?.lastRedisError
        ? new Error(`Redis unreachable: ${connections.lastRedisError}`)
        : caught;
    const { line, exitCode } = describeError(err);
    if (exitCode !== EXIT_USAGE && !(err instanceof DomainError)) {
      log.debug('admin command failed', { err: err instanceof Error ? err.stack : String(err) });
    }
    await write(stderr, line);
    return exitCode;
  } finally {
    await connections?.close();
  }
}
