/**
 * scripts/support/cli-args.ts — flag parsing for every script and benchmark (issue #18): `node:util`
 * `parseArgs` in strict mode, `--help`/`-h` printing the usage line, and any mistake (an unknown flag, a
 * missing value, a number out of range) printing the mistake and the usage line and exiting with 2.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Exit code of a usage error, the same in every script. */
export const EXIT_USAGE = 2;

type Parsed<C extends ParseArgsConfig> = ReturnType<typeof parseArgs<C>>;

/** What `parseCli` returns: parseArgs' result plus checked readers for numeric flags. */
export interface Cli<C extends ParseArgsConfig> {
  values: Parsed<C>['values'];
  positionals: string[];
  /**
   * The string flag `name` as a number in [min, max] (an integer with `integer`), or `fallback` when it
   * was not given; exits with the usage line otherwise.
   */
  number(name: string, fallback: number, min: number, max: number, opts?: { integer?: boolean }): number;
  /** Prints `message` and the usage line to stderr and exits with EXIT_USAGE. */
  fail(message: string): never;
}

/**
 * Parses `argv` (default `process.argv.slice(2)`) with `config` (strict unless it says otherwise;
 * positionals only when `allowPositionals`). `--help`/`-h` prints `usage` and exits 0 unless the
 * config defines `help` itself.
 */
export function parseCli<const C extends ParseArgsConfig>(usage: string, config: C, argv: readonly string[] = process.argv.slice(2)): Cli<C> {
  const fail = (message: string): never => {
    process.stderr.write(`${message}\n${usage}\n`);
    process.exit(EXIT_USAGE);
  };
  if (!config.options?.help && (argv.includes('--help') || argv.includes('-h'))) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  let parsed: Parsed<C>;
  try {
    parsed = parseArgs<C>({ strict: true, ...config, args: [...argv] });
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
  const values = parsed.values as Record<string, unknown>;
  return {
    values: parsed.values,
    positionals: (parsed as { positionals?: string[] }).positionals ?? [],
    number(name, fallback, min, max, opts = {}) {
      const raw = values[name];
      if (raw === undefined) return fallback;
      const n = Number(raw);
      const kind = opts.integer ? 'an integer' : 'a number';
      if (typeof raw !== 'string') return fail(`--${name} takes a value`);
      if (raw.trim() === '' || !Number.isFinite(n) || (opts.integer && !Number.isInteger(n)) || n < min || n > max) {
        return fail(`--${name} must be ${kind} from ${min} to ${max} (got ${raw})`);
      }
      return n;
    },
    fail,
  };
}
