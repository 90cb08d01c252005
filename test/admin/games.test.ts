import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { Db } from '../../src/store/prisma.js';
import { createTestDb, createTestRedis, deleteRedisPrefix, deleteWorkspaces, listenInvalidations, okJson, randomPrefix, runAdmin, type CliRun } from './harness.js';

/** Failure contract: exit code, nothing on stdout, exactly one stderr line. */
function expectFailure(r: CliRun, code: number, stderrPattern: RegExp): void {
  expect(r.code, r.stderr).to.equal(code);
  expect(r.stdout).to.equal('');
  expect(r.stderr.trimEnd().split('\n')).to.have.length(1);
  expect(r.stderr).to.match(/^error: /);
  expect(r.stderr).to.match(stderrPattern);
  expect(r.stderr).not.to.match(/\n\s+at /);
}

describe('admin CLI: workspaces and games', function () {
  // Each CLI run is its own process (tsx compiles the CLI): seconds apiece on a busy machine.
  this.timeout(90_000);
  const prefix = randomPrefix();
  const workspaceIds: string[] = [];
  let db: Db;
  let redis: Redis;
  let workspaceId: string;
  let defaultGameId: string;
  let customGameId: string;

  before(function () {
    db = createTestDb();
    redis = createTestRedis();
  });

  after(async function () {
    await deleteWorkspaces(db, workspaceIds);
    await deleteRedisPrefix(redis, prefix);
    await db.$disconnect();
    redis.disconnect();
  });

  it('workspaces create prints { id, name } and stores the workspace', async function () {
    const out = okJson<{ id: string; name: string }>(await runAdmin(['workspaces', 'create', '--name', '  Admin test WS ', '--json'], prefix));
    workspaceIds.push(out.id);
    workspaceId = out.id;
    expect(out.name).to.equal('Admin test WS');
    const row = await db.workspace.findUnique({ where: { id: out.id } });
    expect(row?.name).to.equal('Admin test WS');
  });

  it('games create defaults the interval to 20, accepts 15–60 and refuses 14 and 61', async function () {
    const [plain, custom, low, high, empty] = await Promise.all([
      runAdmin(['games', 'create', '--workspace', workspaceId, '--name', 'Default interval', '--json'], prefix),
      runAdmin(['games', 'create', '--workspace', workspaceId, '--name', 'Custom interval', '--heartbeat-interval', '45', '--json'], prefix),
      runAdmin(['games', 'create', '--workspace', workspaceId, '--name', 'Too fast', '--heartbeat-interval', '14', '--json'], prefix),
      runAdmin(['games', 'create', '--workspace', workspaceId, '--name', 'Too slow', '--heartbeat-interval', '61', '--json'], prefix),
      runAdmin(['games', 'create', '--workspace', workspaceId, '--name', '   ', '--json'], prefix),
    ]);
    const a = okJson<{ id: string; heartbeatIntervalSeconds: number; workspaceId: string }>(plain);
    const b = okJson<{ id: string; heartbeatIntervalSeconds: number }>(custom);
    defaultGameId = a.id;
    customGameId = b.id;
    expect(a).to.include({ heartbeatIntervalSeconds: 20, workspaceId });
    expect(b.heartbeatIntervalSeconds).to.equal(45);
    expectFailure(low, 1, /15 to 60/);
    expectFailure(high, 1, /15 to 60/);
    expectFailure(empty, 1, /name is required/);

    const rows = await db.game.findMany({ where: { workspaceId }, orderBy: { name: 'asc' } });
    expect(rows.map((g) => [g.name, g.heartbeatIntervalSeconds])).to.deep.equal([
      ['Custom interval', 45],
      ['Default interval', 20],
    ]);
  });

  it('games set-interval changes the interval and publishes the game invalidation; 14 and 61 are refused', async function () {
    const listener = await listenInvalidations(prefix);
    try {
      const [ok, low, high, unknown] = await Promise.all([
        runAdmin(['games', 'set-interval', '--game', defaultGameId, '--seconds', '30', '--json'], prefix),
        runAdmin(['games', 'set-interval', '--game', customGameId, '--seconds', '14', '--json'], prefix),
        runAdmin(['games', 'set-interval', '--game', customGameId, '--seconds', '61', '--json'], prefix),
        runAdmin(['games', 'set-interval', '--game', '00000000-0000-4000-8000-000000000000', '--seconds', '30', '--json'], prefix),
      ]);
      expect(okJson(ok)).to.deep.equal({ id: defaultGameId, heartbeatIntervalSeconds: 30 });
      expectFailure(low, 1, /15 to 60/);
      expectFailure(high, 1, /15 to 60/);
      expectFailure(unknown, 1, /not found/);
      await listener.waitFor(`game:${defaultGameId}`);
      expect(listener.messages).not.to.include(`game:${customGameId}`);
    } finally {
      await listener.close();
    }
    const rows = await db.game.findMany({ where: { workspaceId }, select: { id: true, heartbeatIntervalSeconds: true } });
    expect(Object.fromEntries(rows.map((g) => [g.id, g.heartbeatIntervalSeconds]))).to.deep.equal({ [defaultGameId]: 30, [customGameId]: 45 });
  });

  it('games list and workspaces list print JSON lists; without --json a readable table', async function () {
    const [games, workspaces, table] = await Promise.all([
      runAdmin(['games', 'list', '--workspace', workspaceId, '--json'], prefix),
      runAdmin(['workspaces', 'list', '--json'], prefix),
      runAdmin(['games', 'list', '--workspace', workspaceId], prefix),
    ]);
    const g = okJson<{ games: { id: string; name: string; workspaceId: string; heartbeatIntervalSeconds: number; createdAt: string }[] }>(games);
    expect(g.games.map((x) => [x.id, x.heartbeatIntervalSeconds])).to.have.deep.members([
      [defaultGameId, 30],
      [customGameId, 45],
    ]);
    expect(g.games.every((x) => x.workspaceId === workspaceId && !Number.isNaN(Date.parse(x.createdAt)))).to.equal(true);

    const w = okJson<{ workspaces: { id: string; name: string; games: number }[] }>(workspaces);
    expect(w.workspaces.find((x) => x.id === workspaceId)).to.deep.include({ name: 'Admin test WS', games: 2 });

    expect(table.code).to.equal(0);
    expect(table.stdout).to.match(/^ID\s+WORKSPACE\s+NAME\s+INTERVAL\s+CREATED\n/);
    expect(table.stdout).to.include('Default interval').and.include('30s');
    expect(() => JSON.parse(table.stdout)).to.throw();
  });

  it('usage errors exit 2 and domain errors exit 1, with empty stdout and one stderr line (more cases in cli.test.ts)', async function () {
    const [missing, badUuid, noWorkspace, unknownCmd] = await Promise.all([
      runAdmin(['games', 'create', '--name', 'x', '--json'], prefix),
      runAdmin(['games', 'create', '--workspace', 'not-a-uuid', '--name', 'x', '--json'], prefix),
      runAdmin(['games', 'list', '--workspace', '00000000-0000-4000-8000-000000000000', '--json'], prefix),
      runAdmin(['games', 'frobnicate', '--json'], prefix),
    ]);
    expectFailure(missing, 2, /--workspace required/);
    expectFailure(badUuid, 2, /--workspace must be a UUID/);
    expectFailure(noWorkspace, 1, /workspace 00000000-0000-4000-8000-000000000000 not found/);
    expectFailure(unknownCmd, 2, /unknown command "games frobnicate"/);
  });
});
