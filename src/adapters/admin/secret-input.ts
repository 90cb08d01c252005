/**
 * Secrets given to the operator CLI (e.g. a platform cloud API key). They never come from argv, where
 * they would land in shell history and in `ps` output: a command reads one from stdin when given
 * `--<name>-stdin`, or else from a documented environment variable.
 */
import { UsageError, type CommandContext, type OptionSpec } from './command.js';

/** Where one secret of a command may come from. */
export interface SecretSource {
  /** The retired argv option, e.g. `cloud-api-key`; `--<option>-stdin` reads it from stdin. */
  option: string;
  /** The environment variable read when `--<option>-stdin` is absent, e.g. `GIS_CLOUD_API_KEY`. */
  envVar: string;
  /** What the secret is, for help and messages, e.g. `platform cloud API key`. */
  label: string;
}

/** The `--<option>-stdin` flag of `source`, to spread into a command's options. */
export function secretOptions(source: SecretSource): Record<string, OptionSpec> {
  return {
    [`${source.option}-stdin`]: {
      type: 'boolean',
      description: `read the ${source.label} from stdin (or set ${source.envVar}); never on the command line`,
    },
  };
}

/** The refusal of the old `--<option> VALUE`, to spread into a command's `retiredOptions`. */
export function retiredSecretOption(source: SecretSource): Record<string, string> {
  return {
    [source.option]: `is refused: a secret on the command line ends up in shell history and ps; pipe it to --${source.option}-stdin or set ${source.envVar}`,
  };
}

/**
 * The secret of `source`: stdin (trailing newline dropped) with `--<option>-stdin`, else the
 * environment variable, else undefined (not being changed). A notice names where it came from.
 * @throws {UsageError} both sources given, or an empty secret.
 */
export async function readSecret(ctx: CommandContext, source: SecretSource): Promise<string | undefined> {
  const fromEnv = ctx.env[source.envVar];
  if (ctx.args.flag(`${source.option}-stdin`)) {
    // Two sources at once is most likely an exported variable the operator forgot: refuse to guess.
    if (fromEnv !== undefined) throw new UsageError(`--${source.option}-stdin and ${source.envVar} are both set; give the ${source.label} one way`);
    return nonEmpty(source, (await ctx.readStdin()).replace(/\r?\n$/, ''), 'stdin');
  }
  if (fromEnv === undefined) return undefined;
  ctx.notice(`${source.label} taken from ${source.envVar}`);
  return nonEmpty(source, fromEnv, source.envVar);
}

function nonEmpty(source: SecretSource, value: string, from: string): string {
  if (!value.trim()) throw new UsageError(`the ${source.label} from ${from} is empty`);
  return value;
}
