/**
 * Help and usage text of the operator CLI (`gis-admin --help`, `gis-admin <group> --help`,
 * `gis-admin <group> <command> --help`), generated from the command declarations so it cannot drift.
 */
import type { AdminCommand, OptionSpec } from './command.js';

/** The name the CLI is installed and documented under (package.json `bin`). */
export const PROGRAM = 'gis-admin';

function optionUsage(name: string, spec: OptionSpec): string {
  const flag = spec.negatable ? `--[no-]${name}` : `--${name}`;
  const text = spec.type === 'string' ? `${flag} ${spec.valueName ?? 'VALUE'}` : flag;
  return spec.required ? text : `[${text}]`;
}

/** `gis-admin <group> <name> --opt V [--flag] [--yes] [--json]`. */
export function commandUsage(cmd: AdminCommand): string {
  const opts = Object.entries(cmd.options).map(([n, s]) => optionUsage(n, s));
  if (cmd.destructive) opts.push('--yes');
  return [PROGRAM, cmd.group, cmd.name, ...opts, '[--json]'].filter(Boolean).join(' ');
}

/** The help of one command: usage, summary and every option with its description. */
export function commandHelp(cmd: AdminCommand): string {
  const rows = Object.entries(cmd.options).map(([n, s]) => [optionUsage(n, s).replace(/^\[|\]$/g, ''), s.description]);
  if (cmd.destructive) rows.push(['--yes', `confirm: this ${cmd.destructive}`]);
  rows.push(['--json', 'print exactly one JSON object on stdout']);
  const width = Math.max(...rows.map(([u]) => u!.length));
  return [`usage: ${commandUsage(cmd)}`, '', cmd.summary, '', 'options:', ...rows.map(([u, d]) => `  ${u!.padEnd(width)}  ${d}`)].join('\n');
}

/** The list of commands, of every group or of `group`; destructive ones are marked. */
export function overallHelp(commands: readonly AdminCommand[], group?: string): string {
  const shown = commands.filter((c) => !group || c.group === group);
  const width = Math.max(...shown.map((c) => `${c.group} ${c.name}`.length));
  return [
    `usage: ${PROGRAM} <group> <command> [options] [--json]`,
    `       ${PROGRAM} --version`,
    '',
    ...shown.map((c) => `  ${`${c.group} ${c.name}`.padEnd(width)}  ${c.summary}${c.destructive ? ' (needs --yes)' : ''}`),
    '',
    `Run \`${PROGRAM} <group> <command> --help\` for the options of one command.`,
    'Yes/no options are --x / --no-x; secrets are read from stdin or the environment, never from arguments.',
  ].join('\n');
}
