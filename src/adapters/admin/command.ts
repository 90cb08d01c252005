/**
 * The contract between the operator CLI dispatcher (`cli.ts`) and its command modules
 * (`commands/*.ts`). A command declares its options and returns one result that the dispatcher prints
 * either as one JSON object (`--json`) or as readable text; it never writes to stdout itself.
 */
import type { Config } from '../../config.js';
import type { Db } from '../../store/prisma.js';
import type { AppRedis } from '../../store/redis.js';
import type { KeySpace } from '../../store/keyspace/key-space.js';

/**
 * One `--name value` or `--flag` option of a command (parsed with node:util parseArgs, strict). Every
 * boolean option is spelled `--name` / `--no-name` (the CLI's one yes/no style) and takes no value.
 */
export interface OptionSpec {
  type: 'string' | 'boolean';
  /** A yes/no setting whose absence means "leave as is": help shows it as `--[no-]name`. */
  negatable?: boolean;
  /** Missing required options are a usage error (exit 2) before anything connects. */
  required?: boolean;
  /** Placeholder shown in help, e.g. `ID` in `--game ID`. */
  valueName?: string;
  description: string;
}

/** What a command returns: `json` is printed as one object with `--json`, `text` otherwise. */
export interface CommandResult {
  /** Dates print as ISO 8601 strings, bigints as decimal strings. */
  json: Record<string, unknown>;
  /** Readable lines (tables, key: value); may be empty. */
  text: string;
  /**
   * Exit code after printing the result (default 0). A command whose answer is "no" (e.g. `audit verify`
   * finding a broken chain) still prints its one JSON object and exits 1, so scripts need not parse it.
   */
  exitCode?: number;
}

/** What a command gets to run with. Connections are opened on first use and closed by the dispatcher. */
export interface CommandContext {
  readonly args: ArgReader;
  readonly config: Readonly<Config>;
  /** The process's Redis key space (src/store/keyspace/key-space.ts), built once from `config`. */
  readonly keySpace: KeySpace;
  /** Server time the command runs at, ms since the epoch. */
  readonly nowMs: number;
  /** Who the audit trail names for changes made by this invocation, e.g. `cli:alice`. */
  readonly actor: string;
  /** True with `--json`. */
  readonly json: boolean;
  /** The process's Prisma client (created once, on first call). */
  db(): Db;
  /** The process's Redis client (created once, on first call). */
  redis(): AppRedis;
  /** Writes a line for a human to stderr; suppressed with `--json`. */
  notice(line: string): void;
  /** The process environment (secrets may come from it, never from argv). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Everything on stdin, as text (for secrets piped in, e.g. `--cloud-api-key-stdin`). */
  readStdin(): Promise<string>;
}

/** One CLI command, `gis-admin <group> <name> [options]`. */
export interface AdminCommand {
  group: string;
  name: string;
  summary: string;
  options: Record<string, OptionSpec>;
  /**
   * Set on commands that delete or revoke something: what is lost, e.g. `deletes the door and its
   * policies`. The dispatcher adds `--yes` and refuses to run without it (exit 2, nothing touched).
   */
  destructive?: string;
  /**
   * Options this command no longer takes, by name, with what to write instead (e.g. a secret that moved
   * to stdin). Giving one is a usage error naming the replacement; its value is never echoed.
   */
  retiredOptions?: Record<string, string>;
  /**
   * Does the work and returns what to print.
   * @throws {UsageError} for arguments the option parser cannot catch (exit 2).
   * @throws {DomainError} domain errors (exit 1, message printed).
   */
  run(ctx: CommandContext): Promise<CommandResult>;
}

/** A mistake in how the CLI was invoked: unknown command or option, missing or malformed value (exit 2). */
export class UsageError extends Error {
  readonly code = 'usage';
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Typed access to parsed option values; every conversion failure is a {@link UsageError}. */
export class ArgReader {
  constructor(private readonly values: Record<string, string | boolean | undefined>) {}

  /** The value of string option `name`, or undefined when absent. */
  optionalString(name: string): string | undefined {
    const v = this.values[name];
    return typeof v === 'string' ? v : undefined;
  }

  /** The value of string option `name`. @throws {UsageError} when absent. */
  string(name: string): string {
    const v = this.optionalString(name);
    if (v === undefined) throw new UsageError(`--${name} is required`);
    return v;
  }

  /** True when boolean option `name` was given (and not negated with `--no-name`). */
  flag(name: string): boolean {
    return this.values[name] === true;
  }

  /** Boolean option `name`: true for `--name`, false for `--no-name`, undefined when neither was given. */
  optionalFlag(name: string): boolean | undefined {
    const v = this.values[name];
    return typeof v === 'boolean' ? v : undefined;
  }

  /** Option `name` as a UUID (lower-cased). @throws {UsageError} when absent or not a UUID. */
  uuid(name: string): string {
    const v = this.string(name).trim();
    if (!UUID_RE.test(v)) throw new UsageError(`--${name} must be a UUID`);
    return v.toLowerCase();
  }

  /** Option `name` as a UUID, or undefined when absent. @throws {UsageError} when not a UUID. */
  optionalUuid(name: string): string | undefined {
    return this.optionalString(name) === undefined ? undefined : this.uuid(name);
  }

  /**
   * Option `name` as a base-10 integer, `fallback` when absent.
   * @throws {UsageError} when absent without a fallback, or not an integer.
   */
  int(name: string, fallback?: number): number {
    const v = this.optionalString(name);
    if (v === undefined) {
      if (fallback === undefined) throw new UsageError(`--${name} is required`);
      return fallback;
    }
    if (!/^-?\d+$/.test(v.trim())) throw new UsageError(`--${name} must be an integer`);
    return Number(v.trim());
  }

  /** Option `name` as an integer, or undefined when absent. @throws {UsageError} when not an integer. */
  optionalInt(name: string): number | undefined {
    return this.optionalString(name) === undefined ? undefined : this.int(name);
  }
}
