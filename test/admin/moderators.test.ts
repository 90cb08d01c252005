/**
 * Issue #31: `admin moderators add|list|disable|enable|set-role|rotate-token|link` (each with --json), run
 * as real CLI processes against the test Postgres and Redis: the token is printed once and stored only
 * as a prefix and an argon2id hash, every change is an audit row and publishes `moderator:<id>`, and
 * bad input exits non-zero without changing anything.
 */
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { Db } from '../../src/store/prisma.js';
import { verifyAuditChain } from '../../src/audit/audit-chain.js';
import { createTestDb, createTestRedis, createWorkspaceAndGame, deleteRedisPrefix, deleteWorkspaces, listenInvalidations, okJson, randomPrefix, runAdmin, verifyArgon2 } from './harness.js';

const TOKEN_RE = /^gmod_([a-z0-9]{12})\.([A-Za-z0-9_-]{43})$/;

interface Issued {
  id: string;
  name: string;
  role: string;
  workspaceId: string;
  token: string;
}

describe('admin CLI: moderators (issue #31)', function () {
  this.timeout(120_000);
  const prefix = randomPrefix();
  const workspaceIds: string[] = [];
  let db: Db;
  let redis: Redis;
  let workspaceId: string;
  let ann: Issued;

  before(async () => {
    db = createTestDb();
    redis = createTestRedis();
    workspaceId = (await createWorkspaceAndGame(db, 'admin moderators test')).workspaceId;
    workspaceIds.push(workspaceId);
  });
  after(async () => {
    await deleteWorkspaces(db, workspaceIds);
    await deleteRedisPrefix(redis, prefix);
    await db.$disconnect();
    redis.disconnect();
  });

  it('add --json prints {id, name, role, workspaceId, token} once; only the prefix and an argon2id hash are stored', async () => {
    const run = await runAdmin(['moderators', 'add', '--workspace', workspaceId, '--name', 'Ann Admin', '--role', 'admin', '--json'], prefix);
    ann = okJson<Issued>(run);
    expect(Object.keys(ann).sort()).to.deep.equal(['id', 'name', 'role', 'token', 'workspaceId']);
    expect(ann).to.include({ name: 'Ann Admin', role: 'admin', workspaceId });
    const [, tokenPrefix, secret] = TOKEN_RE.exec(ann.token)!;
    const row = await db.moderator.findUniqueOrThrow({ where: { id: ann.id } });
    expect(row.tokenPrefix).to.equal(tokenPrefix);
    expect(row.tokenHash.startsWith('$argon2id$')).to.equal(true);
    expect(await verifyArgon2(row.tokenHash, secret!)).to.equal(true);
    expect(JSON.stringify(row)).to.not.include(secret);
    const audit = await db.auditLog.findMany({ where: { workspaceId, action: 'moderator.add' } });
    expect(audit).to.have.length(1);
    expect(JSON.stringify(audit[0]!.detail)).to.not.include(secret);
    expect(audit[0]!.actor.startsWith('cli')).to.equal(true);
  });

  it('list shows the accounts without a token or hash', async () => {
    const out = okJson<{ moderators: Record<string, unknown>[] }>(await runAdmin(['moderators', 'list', '--workspace', workspaceId, '--json'], prefix));
    expect(out.moderators.map((m) => m.id)).to.deep.equal([ann.id]);
    const text = JSON.stringify(out);
    expect(text).to.not.include('$argon2');
    expect(text).to.not.include(ann.token.split('.')[1]!);
  });

  it('disable, enable, set-role, rotate-token and link change the account, write audit rows and publish moderator:<id>', async () => {
    const listener = await listenInvalidations(prefix);
    try {
      const disabled = okJson<{ disabledAt: string | null }>(await runAdmin(['moderators', 'disable', '--id', ann.id, '--yes', '--json'], prefix));
      expect(disabled.disabledAt).to.be.a('string');
      await listener.waitFor(`moderator:${ann.id}`);
      expect(okJson<{ disabledAt: string | null }>(await runAdmin(['moderators', 'enable', '--id', ann.id, '--json'], prefix)).disabledAt).to.equal(null);
      expect(okJson<{ role: string }>(await runAdmin(['moderators', 'set-role', '--id', ann.id, '--role', 'viewer', '--json'], prefix)).role).to.equal('viewer');
      const rotated = okJson<Issued>(await runAdmin(['moderators', 'rotate-token', '--id', ann.id, '--yes', '--json'], prefix));
      expect(rotated.token).to.match(TOKEN_RE);
      expect(rotated.token).to.not.equal(ann.token);
      const row = await db.moderator.findUniqueOrThrow({ where: { id: ann.id } });
      expect(row.tokenPrefix).to.equal(TOKEN_RE.exec(rotated.token)![1]);
      expect(row.credentialEpoch).to.equal(2); // disabled once, rotated once
      const linked = okJson<{ identities: { issuer: string; subject: string }[] }>(
        await runAdmin(['moderators', 'link', '--id', ann.id, '--issuer', 'https://apis.roblox.com/oauth/', '--subject', '123456', '--json'], prefix),
      );
      expect(linked.identities).to.deep.equal([{ issuer: 'https://apis.roblox.com/oauth/', subject: '123456' }]);
    } finally {
      await listener.close();
    }
    const actions = (await db.auditLog.findMany({ where: { workspaceId }, orderBy: { seq: 'asc' } })).map((a) => a.action);
    expect(actions).to.deep.equal(['moderator.add', 'moderator.disable', 'moderator.enable', 'moderator.set-role', 'moderator.rotate-token', 'moderator.link']);
    expect((await verifyAuditChain(db, workspaceId)).ok).to.equal(true);
  });

  it('refuses a bad role, an empty name, an unknown account or workspace: non-zero exit, nothing stored', async () => {
    const before = await db.moderator.count({ where: { workspaceId } });
    const runs = await Promise.all([
      runAdmin(['moderators', 'add', '--workspace', workspaceId, '--name', 'X', '--role', 'owner', '--json'], prefix),
      runAdmin(['moderators', 'add', '--workspace', workspaceId, '--name', '  ', '--role', 'viewer', '--json'], prefix),
      runAdmin(['moderators', 'disable', '--id', '00000000-0000-4000-8000-000000000000', '--yes', '--json'], prefix),
      runAdmin(['moderators', 'add', '--workspace', '00000000-0000-4000-8000-000000000000', '--name', 'X', '--role', 'viewer', '--json'], prefix),
    ]);
    expect(runs.map((r) => r.code)).to.deep.equal([1, 1, 1, 1]);
    expect(runs.map((r) => r.stdout + r.stderr).join('\n')).to.match(/invalid_role[\s\S]*invalid_moderator_name[\s\S]*unknown_moderator[\s\S]*unknown_workspace/);
    expect(await db.moderator.count({ where: { workspaceId } })).to.equal(before);
  });
});
