/**
 * Issue #18: every key a script call receives lies in one Redis Cluster slot, and no Lua file spells a key
 * suffix (they come from src/store/keyspace/suffixes.ts). The slot check wraps the harness client's
 * `runScript` to record each call's KEYS while real flows run against the real Redis and Postgres.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import calculateSlot from 'cluster-key-slot';
import { Harness, heartbeatBody, event } from '../support/harness.js';
import { GAME_SUFFIXES } from '../../src/store/keyspace/suffixes.js';
import type { ScriptName } from '../../src/store/redis.js';

describe('script keys: one slot per call, suffixes in one file', () => {
  const h = new Harness();
  const calls: { name: ScriptName; keys: string[] }[] = [];
  before(() => {
    const run = h.redis.runScript.bind(h.redis);
    h.redis.runScript = (name, keys, args) => {
      calls.push({ name, keys });
      return run(name, keys, args);
    };
  });
  after(() => h.close());

  it('sends each script call keys of a single slot (heartbeat, doors, bans, commands)', async () => {
    const g = await h.game();
    await h.heartbeat(g, heartbeatBody(['a', 'b'], { events: [event('join')] }));
    await h.signed(g, 'post', '/api/v1/game/doors/bulk', { externalId: 'a', externalServerId: 's' });
    await h.signed(g, 'post', '/api/v1/game/bans/check', { externalId: 'a', externalServerId: 's' });
    await h.heartbeat(g, heartbeatBody(['a']));
    const seen = new Set(calls.map((c) => c.name));
    for (const name of ['heartbeat', 'doorLookup', 'banCheckClaim', 'banLookup'] as const) expect(seen.has(name)).to.equal(true, name);
    for (const c of calls) {
      const slots = new Set(c.keys.map((k) => calculateSlot(k)));
      expect(slots.size).to.equal(1, `${c.name}: ${c.keys.join(' ')}`);
    }
  });

  it('no Lua file spells a key suffix', () => {
    const dir = new URL('../../src/store/lua/', import.meta.url);
    const files = readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith('.lua'));
    expect(files.length).to.be.greaterThan(10);
    for (const f of files) {
      const code = readFileSync(new URL(f, dir), 'utf8').replace(/--\[\[[\s\S]*?\]\]/g, '').replace(/--.*$/gm, '');
      for (const sfx of Object.values(GAME_SUFFIXES)) {
        expect(code.includes(`'${sfx}`) || code.includes(`"${sfx}`), `${f} spells ${sfx}`).to.equal(false);
      }
    }
  });
});
