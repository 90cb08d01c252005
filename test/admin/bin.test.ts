/**
 * The `gis-admin` bin as shipped: `npm run build` once, then the built entry runs by its path (shebang,
 * executable bit) and through `npx gis-admin`, printing the package version. One build and three short
 * processes; `--version` touches neither Postgres nor Redis.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT, type CliRun } from './harness.js';

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
/** Node 24 (node_modules/.bin/node) first on PATH, as npm and npx put it for bins and scripts. */
const env = { ...process.env, PATH: `${path.join(ROOT, 'node_modules/.bin')}${path.delimiter}${process.env.PATH ?? ''}` };

function exec(command: string, args: string[]): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('gis-admin bin after npm run build', function () {
  // tsc of the whole service: about a minute on a busy 2-core machine.
  this.timeout(300_000);
  const bin = path.join(ROOT, pkg.bin['gis-admin'] ?? 'missing');

  before(async () => {
    const build = await exec('npm', ['run', 'build']);
    expect(build.code, build.stderr).to.equal(0);
  });

  it('package.json names the built entry; it is executable with a node shebang', () => {
    expect(pkg.bin).to.deep.equal({ 'gis-admin': 'dist/scripts/admin.js' });
    accessSync(bin, constants.X_OK);
    expect(readFileSync(bin, 'utf8').split('\n')[0]).to.equal('#!/usr/bin/env node');
  });

  it('prints the package version run by its path, with node, and through npx', async () => {
    for (const [command, args] of [[bin, ['--version']], ['node', [bin, '--version']], ['npx', ['gis-admin', '--version']]] as const) {
      const r = await exec(command, [...args]);
      expect([r.code, r.stdout], `${command} ${args.join(' ')}: ${r.stderr}`).to.deep.equal([0, `${pkg.version}\n`]);
    }
  });
});
