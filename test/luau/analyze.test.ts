/**
 * Issue #28 "Typed and packaged": `luau-analyze --mode=strict` (../shared/tools/luau/luau-analyze, the
 * type checker and linter of the Luau the platform runs) over the SDK's modules reports nothing. The
 * Roblox globals the SDK uses are declared in sdk/luau/.luaurc; every module starts with `--!strict` and
 * the hash with `--!native`. The last test shows the check can fail: a type error in a copy is reported.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { assertLuauTools, LUAU_ANALYZE, SDK_DIR } from './luau-runner.js';

const MODULES = path.join(SDK_DIR, 'GameIntegration');

/** Runs luau-analyze --mode=strict on `dir` (with the .luaurc above it); returns status and output. */
function analyze(cwd: string, target: string): { status: number | null; output: string } {
  assertLuauTools();
  const out = spawnSync(LUAU_ANALYZE, ['--mode=strict', target], { cwd, encoding: 'utf8' });
  if (out.error) throw out.error;
  return { status: out.status, output: `${out.stdout}${out.stderr}` };
}

describe('Luau SDK: luau-analyze --mode=strict', function () {
  this.timeout(60_000);

  it('reports nothing for GameIntegration/', () => {
    const { status, output } = analyze(SDK_DIR, 'GameIntegration/');
    expect(output).to.equal('');
    expect(status).to.equal(0);
  });

  it('every module is --!strict, the hash also --!native, and the public types are exported', () => {
    const files = readdirSync(MODULES).filter((f) => f.endsWith('.luau'));
    expect(files).to.include.members(['init.luau', 'Transport.luau', 'Doors.luau', 'Sha256.luau', 'Budget.luau', 'Types.luau']);
    for (const f of files) expect(readFileSync(path.join(MODULES, f), 'utf8').startsWith('--!strict\n'), f).to.equal(true);
    expect(readFileSync(path.join(MODULES, 'Sha256.luau'), 'utf8')).to.match(/^--!strict\n--!native\n/);
    const init = readFileSync(path.join(MODULES, 'init.luau'), 'utf8');
    for (const t of ['Options', 'Command', 'BanResult', 'DoorDecision', 'Problem', 'SetupError', 'HeartbeatInfo']) {
      expect(init, t).to.match(new RegExp(`^export type ${t} = `, 'm'));
    }
  });

  it('is packaged for Wally and Rojo: one ModuleScript GameIntegration, the version the SDK reports', () => {
    const project = JSON.parse(readFileSync(path.join(SDK_DIR, 'default.project.json'), 'utf8')) as { name: string; tree: { $path: string } };
    expect(project).to.deep.equal({ name: 'GameIntegration', tree: { $path: 'GameIntegration' } });
    const wally = readFileSync(path.join(SDK_DIR, 'wally.toml'), 'utf8');
    expect(wally).to.match(/^name = "gis\/game-integration"$/m).and.match(/^realm = "server"$/m);
    const version = /^version = "([^"]+)"$/m.exec(wally)?.[1];
    expect(readFileSync(path.join(MODULES, 'init.luau'), 'utf8')).to.include(`Client.VERSION = "gis-luau/${version}"`);
  });

  it('fails on a type error (the check is not vacuous)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'luau-analyze-'));
    try {
      cpSync(SDK_DIR, dir, { recursive: true });
      const file = path.join(dir, 'GameIntegration', 'Backoff.luau');
      writeFileSync(file, readFileSync(file, 'utf8').replace('return ceiling / 2 +', 'return "half" .. ceiling / 2 +'));
      const { status, output } = analyze(dir, 'GameIntegration/');
      expect(status).to.not.equal(0);
      expect(output).to.match(/Backoff\.luau\(\d+,\d+\): TypeError/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
