import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { Db } from '../../src/store/prisma.js';
import {
  createTestDb,
  createTestRedis,
  createWorkspaceAndGame,
  deleteRedisPrefix,
  deleteWorkspaces,
  listenInvalidations,
  okJson,
  randomPrefix,
  runAdmin,
  verifyArgon2,
} from './harness.js';

const KEY_RE = /^svc_live_([a-z0-9]{12})\.([A-Za-z0-9_-]{43})$/;

/** Everything stored about a game's keys and audit trail, as one string (bigints as decimals). */
async function storedText(db: Db, gameId: string): Promise<string> {
  const keys = await db.apiKey.findMany({ where: { gameId } });
  const audit = await db.auditLog.findMany({ where: { gameId } });
  return JSON.stringify({ keys, audit }, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

describe('admin CLI: keys and audit', function () {
  // Each CLI run is its own process (tsx compiles the CLI): seconds apiece on a busy machine.
  this.timeout(90_000);
  const prefix = randomPrefix();
  const workspaceIds: string[] = [];
  let db: Db;
  let redis: Redis;
  let gameId: string;
  /** The key created with --json: full key, prefix, secret. */
  let first: { key: string; prefix: string; secret: string };
  /** The key created in readable mode. */
  let second: { key: string; prefix: string; secret: string };

  before(async function () {
    db = createTestDb();
    redis = createTestRedis();
    const ids = await createWorkspaceAndGame(db, 'admin keys test');
    workspaceIds.push(ids.workspaceId);
    gameId = ids.gameId;
  });

  after(async function () {
    await deleteWorkspaces(db, workspaceIds);
    await deleteRedisPrefix(redis, prefix);
    await db.$disconnect();
    redis.disconnect();
  });

  it('keys create shows the full key once and stores only the prefix and an argon2id hash', async function () {
    const [json, readable] = await Promise.all([
      runAdmin(['keys', 'create', '--game', gameId, '--scopes', 'heartbeat,events,commands,doors,records:read,chat', '--json'], prefix),
      runAdmin(['keys', 'create', '--game', gameId, '--scopes', 'heartbeat, doors'], prefix),
    ]);

    const out = okJson<{ key: string; prefix: string; gameId: string; scopes: string[] }>(json);
    const m = KEY_RE.exec(out.key);
    expect(m, out.key).to.not.equal(null);
    first = { key: out.key, prefix: m![1]!, secret: m![2]! };
    expect(out.prefix).to.equal(first.prefix);
    expect(out.gameId).to.equal(gameId);
    expect(out.scopes).to.deep.equal(['heartbeat', 'events', 'commands', 'doors', 'records:read', 'chat']);
    expect(json.stderr).to.equal('');

    // Readable mode: the key appears exactly once on stdout; the warning goes to stderr.
    expect(readable.code, readable.stderr).to.equal(0);
    const keys = readable.stdout.match(/svc_live_[a-z0-9]{12}\.[A-Za-z0-9_-]{43}/g) ?? [];
    expect(keys).to.have.length(1);
    const m2 = KEY_RE.exec(keys[0]!)!;
    second = { key: keys[0]!, prefix: m2[1]!, secret: m2[2]! };
    expect(readable.stderr).to.match(/only time the full key is shown/);
    expect(readable.stderr).not.to.include(second.secret);

    const rows = await db.apiKey.findMany({ where: { gameId }, orderBy: { createdAt: 'asc' } });
    expect(rows.map((r) => r.prefix)).to.have.members([first.prefix, second.prefix]);
    const row = rows.find((r) => r.prefix === first.prefix)!;
    expect(row.secretHash.startsWith('$argon2id$'), row.secretHash).to.equal(true);
    expect(row.scopes).to.deep.equal(out.scopes);
    expect(row.revokedAt).to.equal(null);
    expect(rows.find((r) => r.prefix === second.prefix)!.scopes).to.deep.equal(['heartbeat', 'doors']);
    expect(await verifyArgon2(row.secretHash, first.secret)).to.equal(true);
    expect(await verifyArgon2(row.secretHash, second.secret)).to.equal(false);

    const stored = await storedText(db, gameId);
    expect(stored).not.to.include(first.secret);
    expect(stored).not.to.include(second.secret);

    const audit = await db.auditLog.findMany({ where: { gameId, action: 'key.create' } });
    expect(audit.map((a) => a.keyPrefix)).to.have.members([first.prefix, second.prefix]);
    expect(audit.every((a) => a.actor.startsWith('cli'))).to.equal(true);
  });

  it('keys list shows prefixes, scopes and dates but never a secret or hash', async function () {
    const [json, readable] = await Promise.all([
      runAdmin(['keys', 'list', '--game', gameId, '--json'], prefix),
      runAdmin(['keys', 'list', '--game', gameId], prefix),
    ]);
    const out = okJson<{ keys: Record<string, unknown>[] }>(json);
    expect(out.keys).to.have.length(2);
    for (const k of out.keys) expect(Object.keys(k).sort()).to.deep.equal(['createdAt', 'lastUsedAt', 'prefix', 'revokedAt', 'scopes']);
    expect(out.keys.map((k) => k.prefix)).to.have.members([first.prefix, second.prefix]);
    for (const text of [json.stdout, readable.stdout, json.stderr, readable.stderr]) {
      expect(text).not.to.include(first.secret);
      expect(text).not.to.include(second.secret);
      expect(text).not.to.include('$argon2');
    }
    expect(readable.stdout).to.match(/^PREFIX\s+SCOPES\s+CREATED\s+LAST USED\s+REVOKED\n/);
    expect(readable.stdout).to.include(first.prefix);
  });

  it('keys revoke without --yes exits 2 and leaves the key row and the audit trail untouched', async function () {
    const before = await db.apiKey.findUniqueOrThrow({ where: { prefix: first.prefix } });
    const refused = await runAdmin(['keys', 'revoke', '--prefix', first.prefix, '--json'], prefix);
    expect([refused.code, refused.stdout]).to.deep.equal([2, '']);
    expect(refused.stderr).to.equal('error: keys revoke revokes the key on every API process; nothing was changed: add --yes to confirm\n');
    expect(await db.apiKey.findUniqueOrThrow({ where: { prefix: first.prefix } })).to.deep.equal(before);
    expect(before.revokedAt).to.equal(null);
    expect(await db.auditLog.count({ where: { gameId, action: 'key.revoke' } })).to.equal(0);
  });

  it('keys revoke sets revokedAt, publishes the invalidation, writes one audit row and is idempotent', async function () {
    const listener = await listenInvalidations(prefix);
    let revokedAt: string;
    try {
      const out = okJson<{ prefix: string; revokedAt: string }>(await runAdmin(['keys', 'revoke', '--prefix', first.prefix, '--yes', '--json'], prefix));
      expect(out.prefix).to.equal(first.prefix);
      revokedAt = out.revokedAt;
      expect(Date.parse(revokedAt)).to.be.closeTo(Date.now(), 60_000);
      await listener.waitFor(`key:${first.prefix}`);
    } finally {
      await listener.close();
    }
    const row = await db.apiKey.findUnique({ where: { prefix: first.prefix } });
    expect(row?.revokedAt?.toISOString()).to.equal(revokedAt);
    expect((await db.apiKey.findUnique({ where: { prefix: second.prefix } }))?.revokedAt).to.equal(null);

    const again = okJson<{ prefix: string; revokedAt: string }>(await runAdmin(['keys', 'revoke', '--prefix', first.prefix, '--yes', '--json'], prefix));
    expect(again.revokedAt).to.equal(revokedAt);

    const audit = await db.auditLog.findMany({ where: { gameId, action: 'key.revoke' } });
    expect(audit).to.have.length(1);
    expect(audit[0]!.keyPrefix).to.equal(first.prefix);
  });

  it('audit list shows create and revoke entries by prefix, newest first', async function () {
    const out = okJson<{ entries: { id: string; action: string; keyPrefix: string | null; actor: string; createdAt: string; detail: unknown }[] }>(
      await runAdmin(['audit', 'list', '--game', gameId, '--json'], prefix),
    );
    expect(out.entries.map((e) => [e.action, e.keyPrefix])).to.have.deep.members([
      ['key.create', first.prefix],
      ['key.create', second.prefix],
      ['key.revoke', first.prefix],
    ]);
    expect(out.entries[0]!.action).to.equal('key.revoke');
    expect(out.entries.every((e) => /^\d+$/.test(e.id))).to.equal(true);
    const createdAts = out.entries.map((e) => Date.parse(e.createdAt));
    expect([...createdAts].sort((a, b) => b - a)).to.deep.equal(createdAts);
    expect(JSON.stringify(out)).not.to.include(first.secret);
  });

  it('refuses bad scopes, unknown prefixes and full keys without echoing the secret', async function () {
    const [badScope, unknownPrefix, fullKey, unknownGame] = await Promise.all([
      runAdmin(['keys', 'create', '--game', gameId, '--scopes', 'heartbeat,admin', '--json'], prefix),
      runAdmin(['keys', 'revoke', '--prefix', 'zzzzzzzzzzzz', '--yes', '--json'], prefix),
      runAdmin(['keys', 'revoke', '--prefix', second.key, '--yes', '--json'], prefix),
      runAdmin(['keys', 'list', '--game', '00000000-0000-4000-8000-000000000000', '--json'], prefix),
    ]);
    for (const r of [badScope, unknownPrefix, fullKey, unknownGame]) {
      expect(r.stdout).to.equal('');
      expect(r.stderr.trimEnd().split('\n')).to.have.length(1);
    }
    expect(badScope.code).to.equal(1);
    expect(badScope.stderr).to.match(/unknown scope\(s\): admin/);
    expect(unknownPrefix.code).to.equal(1);
    expect(unknownPrefix.stderr).to.match(/no key with prefix zzzzzzzzzzzz/);
    expect(fullKey.code).to.equal(2);
    expect(fullKey.stderr).not.to.include(second.secret);
    expect(unknownGame.code).to.equal(1);
    expect(unknownGame.stderr).to.match(/not found/);
    expect(await db.apiKey.count({ where: { gameId } })).to.equal(2);
    expect((await db.apiKey.findUnique({ where: { prefix: second.prefix } }))?.revokedAt).to.equal(null);
  });
});
