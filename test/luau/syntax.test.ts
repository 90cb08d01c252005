/**
 * Every Luau file of the SDK (library, test drivers, shim, benchmark) parses with StyLua's Luau parser.
 * Issue #28 moved the SDK from the subset Luau and Lua 5.2 share to typed Luau (`--!strict`, type
 * annotations, compound assignment), run under real Luau; the library modules are also type-checked by
 * test/luau/analyze.test.ts. The drivers are only run, so this catches a syntax error in them early.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Config, formatCode, LuaVersion, OutputVerification } from '@johnnymorganz/stylua';
import { ROOT } from '../support/stack.js';

const SDK = path.join(ROOT, 'sdk/luau');

/** Every .lua/.luau file under sdk/luau (library, shims, drivers, benchmark). */
function luaFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? luaFiles(path.join(dir, e.name)) : /\.luau?$/.test(e.name) ? [path.join(dir, e.name)] : [],
  );
}

/** Parses `code` as `syntax`; returns the parse error message, or null when it parses. */
function parseError(code: string, syntax: LuaVersion): string | null {
  // formatCode takes ownership of the config (frees it), so every call gets a fresh one.
  const config = Config.new();
  config.syntax = syntax;
  try {
    formatCode(code, config, undefined, OutputVerification.None);
    return null;
  } catch (err) {
    return String(err);
  }
}

describe('Luau SDK: syntax (StyLua parsers)', () => {
  const files = luaFiles(SDK);

  it('finds the library modules', () => {
    const names = files.map((f) => path.relative(SDK, f));
    expect(names).to.include.members(['GameIntegration/init.luau', 'GameIntegration/Sha256.luau', 'GameIntegration/Transport.luau', 'GameIntegration/Doors.luau', 'test/shim.luau', 'test/chaos.luau']);
    // no file of the lua5.2 era is left behind (the CLI's require would find two candidates for a name)
    expect(names.filter((n) => n.endsWith('.lua'))).to.deep.equal([]);
  });

  it('parses every SDK file as Luau', () => {
    const failures = files.map((f) => [path.relative(SDK, f), parseError(readFileSync(f, 'utf8'), LuaVersion.Luau)]).filter(([, e]) => e !== null);
    expect(failures).to.deep.equal([]);
  });

  it('rejects what Luau does not accept (the check can fail)', () => {
    expect(parseError('local n: number = 1\nn += 1\n', LuaVersion.Luau)).to.equal(null);
    expect(parseError('goto done\n::done::\n', LuaVersion.Luau)).to.be.a('string');
  });
});
