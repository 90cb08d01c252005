/**
 * Issue #21 "Tamper-evident audit": every moderation and key action is a link of its workspace's hash
 * chain; concurrent appends serialise per workspace; `admin audit verify` (a real CLI process) recomputes
 * the chain and names the first row altered, deleted or inserted with SQL behind the service's back; the
 * migration's SQL encoding of legacy rows is byte-for-byte the one the service uses.
 */
import { expect } from 'chai';
import { Prisma } from '@prisma/client';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import { runAdmin, type CliRun } from '../admin/harness.js';
import { appendAudit, recordAudit, verifyAuditChain, type AuditVerification } from '../../src/audit/audit-chain.js';
import { AUDIT_GENESIS_HASH, canonicalContent, contentHashOf, linkHash, type CanonicalFields } from '../../src/audit/audit-canonical.js';
import { createWorkspace } from '../../src/games/game-service.js';
import { issueCommand } from '../../src/commands/command-service.js';
import { createDoor, forceDoor } from '../../src/doors/door-admin-service.js';
import { revokeKey } from '../../src/auth/key-service.js';
import { banService } from '../bans/support.js';
import { PrismaClient } from '@prisma/client';
import { PrismaPg } from '@prisma/adapter-pg';

describe('tamper-evident audit trail', function () {
  this.timeout(60_000);
  const h = new Harness();
  const admin = (...args: string[]) => runAdmin(args, h.config.redisPrefix);
  const extraWorkspaces: string[] = [];

  after(async () => {
    await h.db.auditLog.deleteMany({ where: { workspaceId: { in: extraWorkspaces } } });
    await h.db.auditChainHead.deleteMany({ where: { workspaceId: { in: extraWorkspaces } } });
    await h.db.workspace.deleteMany({ where: { id: { in: extraWorkspaces } } });
    await h.close();
  });

  /** A fresh workspace with `n` audit rows appended through the service; returns the rows in seq order. */
  async function chainOf(n: number): Promise<{ workspaceId: string; rows: { id: bigint; seq: bigint; hash: string }[] }> {
    const ws = await createWorkspace(h.db, `audit ${Date.now()}`);
    extraWorkspaces.push(ws.id);
    for (let i = 1; i <= n; i++) {
      await recordAudit(h.db, { workspaceId: ws.id, actor: 'test:auditor', action: 'test.step', detail: { step: i, note: `ünïcode "quoted" ${i}\n`, nested: { b: [1, 2.5, null], a: true } } });
    }
    const rows = await h.db.auditLog.findMany({ where: { workspaceId: ws.id }, orderBy: { seq: 'asc' }, select: { id: true, seq: true, hash: true } });
    return { workspaceId: ws.id, rows };
  }

  /** `admin audit verify --workspace W --json` as a real process. */
  async function verifyCli(workspaceId: string, ...extra: string[]): Promise<{ run: CliRun; result: AuditVerification }> {
    const run = await admin('audit', 'verify', '--workspace', workspaceId, ...extra, '--json');
    const lines = run.stdout.split('\n').filter(Boolean);
    expect(lines, run.stderr).to.have.length(1);
    return { run, result: JSON.parse(lines[0]!) as AuditVerification };
  }

  it('appends every moderation and key action of a workspace to one unbroken chain', async () => {
    const g: TestGame = await h.game();
    const deps = { db: h.db, redis: h.redis, keySpace: h.keySpace };
    expect((await h.heartbeat(g, heartbeatBody(['p1'], { externalServerId: 'audit-s1' }))).status).to.equal(200);
    await issueCommand(deps, { gameId: g.gameId, type: 'kick', payload: { reason: 'spam' }, target: { externalId: 'p1' }, issuedBy: 'test:mod' });
    await createDoor(deps, { gameId: g.gameId, key: 'vault', name: 'Vault' }, 'test:mod');
    await forceDoor(deps, g.gameId, 'vault', 'locked', 'test:mod');
    const bans = banService(h);
    const { ban } = await bans.create({ workspaceId: g.workspaceId, externalId: 'p2', scope: 'game', gameId: g.gameId, reason: 'cheating', issuedBy: 'test:mod' });
    await bans.lift(ban.id, 'test:mod');
    await revokeKey(h.db, h.redis, h.keySpace, g.keyPrefix, 'test:mod');

    const rows = await h.db.auditLog.findMany({ where: { workspaceId: g.workspaceId }, orderBy: { seq: 'asc' } });
    expect(rows.map((r) => r.action)).to.include.members(['game.create', 'key.create', 'command.issue', 'door.create', 'door.force', 'ban.create', 'ban.lift', 'key.revoke']);
    // door.force issues door_set_state to the live server: that command is audited too.
    expect(rows.filter((r) => r.action === 'command.issue').map((r) => (r.detail as { type: string }).type)).to.have.members(['kick', 'door_set_state']);
    expect(rows.map((r) => Number(r.seq))).to.deep.equal(rows.map((_r, i) => i + 1));
    expect(rows[0]!.prevHash).to.equal(AUDIT_GENESIS_HASH);
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.prevHash).to.equal(rows[i - 1]!.hash);
    const head = await h.db.auditChainHead.findUniqueOrThrow({ where: { workspaceId: g.workspaceId } });
    expect(head.seq).to.equal(rows.at(-1)!.seq);
    expect(head.hash).to.equal(rows.at(-1)!.hash);

    const { run, result } = await verifyCli(g.workspaceId);
    expect(run.code).to.equal(0);
    expect(result).to.deep.include({ ok: true, rowsChecked: rows.length, problem: null });
    expect(result.head).to.deep.equal({ seq: String(head.seq), hash: head.hash });
  });

  it('serialises concurrent appends to one workspace: contiguous seqs, every link intact', async () => {
    const { workspaceId } = await chainOf(1);
    // Three clients, as three processes would be, each with as many connections as appends in flight, so
    // every append waits on the chain head's row lock in Postgres rather than for a pool connection.
    // (A patient connect timeout: opening 24 connections at once on a busy machine takes a while.)
    const clients = [1, 2, 3].map(() => new PrismaClient({ adapter: new PrismaPg({ connectionString: h.config.databaseUrl, max: 8, connectionTimeoutMillis: 30_000 }) }));
    try {
      await Promise.all(
        clients.flatMap((db, c) =>
          Array.from({ length: 8 }, (_v, i) => db.$transaction(async (tx) => appendAudit(tx, { workspaceId, actor: `test:writer-${c}-${i}`, action: 'test.concurrent', detail: { c, i } }), { maxWait: 30_000, timeout: 30_000 })),
        ),
      );
    } finally {
      await Promise.all(clients.map((db) => db.$disconnect()));
    }
    const seqs = (await h.db.auditLog.findMany({ where: { workspaceId }, select: { seq: true }, orderBy: { seq: 'asc' } })).map((r) => Number(r.seq));
    expect(seqs).to.deep.equal(Array.from({ length: 25 }, (_v, i) => i + 1));
    const v = await verifyAuditChain(h.db, workspaceId);
    expect(v, JSON.stringify(v.problem)).to.deep.include({ ok: true, rowsChecked: 25 });
  });

  it('a rolled-back action leaves no link behind', async () => {
    const { workspaceId } = await chainOf(2);
    await h.db
      .$transaction(async (tx) => {
        await appendAudit(tx, { workspaceId, actor: 'test:x', action: 'test.rolled-back' });
        throw new Error('abort');
      })
      .catch(() => undefined);
    await recordAudit(h.db, { workspaceId, actor: 'test:x', action: 'test.after' });
    const v = await verifyAuditChain(h.db, workspaceId);
    expect(v).to.deep.include({ ok: true, rowsChecked: 3 });
    expect(await h.db.auditLog.count({ where: { workspaceId, action: 'test.rolled-back' } })).to.equal(0);
  });

  it('verify names a row whose content was altered in Postgres (exit 1)', async () => {
    const { workspaceId, rows } = await chainOf(5);
    const victim = rows[2]!;
    await h.db.$executeRaw`UPDATE "AuditLog" SET "actor" = 'cli:someone-else' WHERE "id" = ${victim.id}`;
    const { run, result } = await verifyCli(workspaceId);
    expect(run.code).to.equal(1);
    expect(result.ok).to.equal(false);
    expect(result.problem).to.deep.include({ kind: 'altered', rowId: String(victim.id), seq: '3' });

    const text = await admin('audit', 'verify', '--workspace', workspaceId);
    expect(text.code).to.equal(1);
    expect(text.stdout).to.include('BROKEN (altered)').and.include(`row ${victim.id} (seq 3)`);
  });

  it('verify names a row that was altered and rehashed by the row after it', async () => {
    const { workspaceId, rows } = await chainOf(4);
    const victim = rows[1]!;
    await h.db.$executeRaw`UPDATE "AuditLog" SET "detail" = '{"step": 2, "note": "nothing happened"}'::jsonb WHERE "id" = ${victim.id}`;
    const [f] = await h.db.$queryRaw<(CanonicalFields & { prevHash: string })[]>`
      SELECT "prevHash", "seq"::text AS "seq", "workspaceId"::text AS "workspaceId", "gameId"::text AS "gameId", "actor", "action", "keyPrefix",
             floor(extract(epoch FROM "createdAt") * 1000)::bigint::text AS "createdMs", "detail"::text AS "detail"
      FROM "AuditLog" WHERE "id" = ${victim.id}`;
    const ch = contentHashOf(f!);
    await h.db.$executeRaw`UPDATE "AuditLog" SET "contentHash" = ${ch}, "hash" = ${linkHash(f!.prevHash, ch)} WHERE "id" = ${victim.id}`;
    const { result } = await verifyCli(workspaceId);
    expect(result.problem).to.deep.include({ kind: 'altered', rowId: String(victim.id), seq: '2' });
  });

  it('verify names the gap left by a deleted row, and a deleted newest row', async () => {
    const { workspaceId, rows } = await chainOf(5);
    await h.db.auditLog.delete({ where: { id: rows[1]!.id } });
    const { run, result } = await verifyCli(workspaceId);
    expect(run.code).to.equal(1);
    expect(result.problem).to.deep.include({ kind: 'deleted', rowId: String(rows[2]!.id), seq: '3' });
    expect(result.problem!.message).to.include('seq 2 deleted').and.include(`row ${rows[0]!.id}`);

    const tail = await chainOf(3);
    await h.db.auditLog.delete({ where: { id: tail.rows[2]!.id } });
    const v = await verifyAuditChain(h.db, tail.workspaceId);
    expect(v.problem).to.deep.include({ kind: 'deleted', rowId: null, seq: '3' });
  });

  it('verify names a row inserted into the middle of the chain, even with well-formed hashes', async () => {
    const { workspaceId, rows } = await chainOf(4);
    // The forger makes room at seq 3 and writes a self-consistent link after seq 2.
    await h.db.$executeRaw`UPDATE "AuditLog" SET "seq" = "seq" + 100 WHERE "workspaceId" = ${workspaceId}::uuid AND "seq" >= 3`;
    await h.db.$executeRaw`UPDATE "AuditLog" SET "seq" = "seq" - 99 WHERE "workspaceId" = ${workspaceId}::uuid AND "seq" >= 103`;
    const createdAt = new Date();
    const fields: CanonicalFields = { seq: '3', workspaceId, gameId: null, actor: 'cli:forger', action: 'ban.lift', keyPrefix: null, createdMs: String(createdAt.getTime()), detail: null };
    const ch = contentHashOf(fields);
    const [inserted] = await h.db.$queryRaw<{ id: bigint }[]>`
      INSERT INTO "AuditLog" ("workspaceId", "actor", "action", "createdAt", "seq", "prevHash", "contentHash", "hash")
      VALUES (${workspaceId}::uuid, 'cli:forger', 'ban.lift', (${createdAt.toISOString()}::timestamptz AT TIME ZONE 'UTC'), 3, ${rows[1]!.hash}, ${ch}, ${linkHash(rows[1]!.hash, ch)})
      RETURNING "id"`;
    const { run, result } = await verifyCli(workspaceId);
    expect(run.code).to.equal(1);
    expect(result.problem).to.deep.include({ kind: 'inserted', rowId: String(inserted!.id), seq: '3' });
  });

  it('verify names a row appended behind the service (beyond the chain head)', async () => {
    const { workspaceId, rows } = await chainOf(2);
    const [inserted] = await h.db.$queryRaw<{ id: bigint }[]>`
      INSERT INTO "AuditLog" ("workspaceId", "actor", "action", "seq", "prevHash", "contentHash", "hash")
      VALUES (${workspaceId}::uuid, 'cli:forger', 'key.create', 3, ${rows[1]!.hash}, 'x', 'y') RETURNING "id"`;
    const v = await verifyAuditChain(h.db, workspaceId);
    expect(v.problem).to.deep.include({ kind: 'inserted', rowId: String(inserted!.id), seq: '3' });
  });

  it('an anchor recorded earlier catches a chain rewritten consistently from a row onwards', async () => {
    const { workspaceId, rows } = await chainOf(3);
    const anchor = `3:${rows[2]!.hash}`;
    // Rewrite row 2 and everything after it, head included, with correct hashes.
    let prev = rows[0]!.hash;
    await h.db.$executeRaw`UPDATE "AuditLog" SET "actor" = 'cli:rewritten' WHERE "workspaceId" = ${workspaceId}::uuid AND "seq" >= 2`;
    const fields = await h.db.$queryRaw<(CanonicalFields & { id: bigint })[]>`
      SELECT "id", "seq"::text AS "seq", "workspaceId"::text AS "workspaceId", "gameId"::text AS "gameId", "actor", "action", "keyPrefix",
             floor(extract(epoch FROM "createdAt") * 1000)::bigint::text AS "createdMs", "detail"::text AS "detail"
      FROM "AuditLog" WHERE "workspaceId" = ${workspaceId}::uuid AND "seq" >= 2 ORDER BY "seq"`;
    for (const f of fields) {
      const ch = contentHashOf(f);
      const hash = linkHash(prev, ch);
      await h.db.$executeRaw`UPDATE "AuditLog" SET "prevHash" = ${prev}, "contentHash" = ${ch}, "hash" = ${hash} WHERE "id" = ${f.id}`;
      prev = hash;
    }
    await h.db.$executeRaw`UPDATE "AuditChainHead" SET "hash" = ${prev} WHERE "workspaceId" = ${workspaceId}::uuid`;
    expect((await verifyCli(workspaceId)).result.ok).to.equal(true);
    const { run, result } = await verifyCli(workspaceId, '--anchor', anchor);
    expect(run.code).to.equal(1);
    expect(result.problem).to.deep.include({ kind: 'altered', rowId: String(rows[2]!.id), seq: '3' });
  });

  it('the migration encodes legacy rows exactly as the service does (SQL gis_audit_canonical = canonicalContent)', async () => {
    const cases: { seq: number; ws: string; game: string | null; actor: string; action: string; key: string | null; at: string; detail: Prisma.InputJsonValue | null }[] = [
      { seq: 1, ws: '11111111-1111-4111-8111-111111111111', game: null, actor: 'cli:root', action: 'game.create', key: null, at: '2026-01-02T03:04:05.678Z', detail: null },
      { seq: 42, ws: '22222222-2222-4222-8222-222222222222', game: '33333333-3333-4333-8333-333333333333', actor: 'console:ünï "q" ~1:', action: 'key.create', key: 'abc123', at: '1999-12-31T23:59:59.999Z', detail: { z: [1, 2.5, 1e21, -0, null, true], a: 'line\nbreak\t"quote" \\ é 😀', nested: { y: {}, x: [] } } },
    ];
    for (const c of cases) {
      const detail = c.detail === null ? null : JSON.stringify(c.detail);
      const [sql] = await h.db.$queryRaw<{ canonical: string; fields: CanonicalFields }[]>`
        SELECT gis_audit_canonical(${c.seq}::bigint, ${c.ws}::uuid, ${c.game}::uuid, ${c.actor}, ${c.action}, ${c.key}, (${c.at}::timestamptz AT TIME ZONE 'UTC'), ${detail}::jsonb) AS canonical,
               json_build_object('seq', ${c.seq}::bigint::text, 'workspaceId', ${c.ws}::uuid::text, 'gameId', ${c.game}::uuid::text, 'actor', ${c.actor}::text,
                 'action', ${c.action}::text, 'keyPrefix', ${c.key}::text, 'createdMs', floor(extract(epoch FROM (${c.at}::timestamptz AT TIME ZONE 'UTC')) * 1000)::bigint::text,
                 'detail', (${detail}::jsonb)::text) AS fields`;
      expect(sql!.fields.createdMs).to.equal(String(Date.parse(c.at)));
      expect(canonicalContent(sql!.fields)).to.equal(sql!.canonical);
    }
  });
});
