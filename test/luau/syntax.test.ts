/**
 * Issue #19, "Portable subset, checked both ways" (first half): every file of the Luau SDK parses with
 * StyLua's Luau parser AND its Lua 5.2 parser, so it is in the syntax the platform's Luau and Debian's
 * lua5.2 share (no goto, no `//`, no type annotations, no compound assignment). The second half, running
 * under lua5.2, is test/luau/hmac.test.ts and test/luau/e2e.test.ts.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Config, formatCode, LuaVersion, OutputVerification } from '@johnnymorganz/stylua';
import { ROOT } from '../support/stack.js';

const SDK = path.join(ROOT, 'sdk/luau');

/** Every .lua file under sdk/luau (library, shims, drivers, benchmark). */
function luaFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? luaFiles(path.join(dir, e.name)) : e.name.endsWith('.lua') ? [path.join(dir, e.name)] : [],
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
    expect(names).to.include.members(['GameIntegration/init.lua', 'GameIntegration/Sha256.lua', 'GameIntegration/Transport.lua', 'GameIntegration/Doors.lua']);
  });

  for (const syntax of [LuaVersion.Luau, LuaVersion.Lua52]) {
    it(`parses every SDK file as ${LuaVersion[syntax]}`, () => {
      const failures = files.map((f) => [path.relative(SDK, f), parseError(readFileSync(f, 'utf8'), syntax)]).filter(([, e]) => e !== null);
      expect(failures).to.deep.equal([]);
    });
  }

  it('rejects what only one of the two dialects accepts (the check can fail)', () => {
    expect(parseError('local n: number = 1\n', LuaVersion.Luau)).to.equal(null);
    expect(parseError('local n: number = 1\n', LuaVersion.Lua52)).to.be.a('string');
    expect(parseError('goto done\n::done::\n', LuaVersion.Lua52)).to.equal(null);
    expect(parseError('goto done\n::done::\n', LuaVersion.Luau)).to.be.a('string');
    expect(parseError('local x = 1\nx += 1\n', LuaVersion.Lua52)).to.be.a('string');
  });
});
