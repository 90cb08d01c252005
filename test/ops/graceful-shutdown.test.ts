/**
 * Graceful shutdown under load loses no accepted event (issue #7 Operations; DESIGN: a 200 means the
 * heartbeat script ran, and flushers XACK only after the rows are committed). Heartbeats with events
 * stream into a real API process while a real worker process flushes them; both get SIGTERM in the
 * middle of the load, exit cleanly, and are started again while the load goes on. At the end every event
 * of every heartbeat answered 200 is a PlayerEvent row, and no row exists that was never sent. A SIGTERM
 * that reaches the workers while they are still starting stops them too (exit 0, not death by the signal).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { freePort } from '../../scripts/support/free-port.js';
import { createDb, type Db } from '../../src/store/prisma.js';
import { createGame, createWorkspace } from '../../src/games/game-service.js';
import { createKey } from '../../src/auth/key-service.js';
import { sign } from '../../src/auth/signature.js';
import { Stack } from '../support/stack.js';

/** Concurrent senders, each one simulated server at a time. */
const SENDERS = 8;
/** Events per heartbeat. */
const EVENTS_PER_HEARTBEAT = 10;
/** A sender moves to a new externalServerId after this many heartbeats (stays under the per-server quota). */
const HEARTBEATS_PER_SERVER = 40;

interface Load {
  accepted: Set<string>;
  sent: Set<string>;
  statuses: Record<string, number>;
  stop(): Promise<void>;
}

/** Starts `SENDERS` loops posting signed heartbeats with fresh events to `url` until stopped. */
function startLoad(url: string, key: string, tag: string): Load {
  const secret = key.split('.')[1]!;
  const load = { accepted: new Set<string>(), sent: new Set<string>(), statuses: {} as Record<string, number> };
  let running = true;
  const loop = async (sender: number) => {
    for (let seq = 0; running; seq++) {
      const events = Array.from({ length: EVENTS_PER_HEARTBEAT }, () => ({ eventId: randomUUID(), type: 'load', occurredAt: new Date().toISOString(), payload: { sender, seq } }));
      const raw = JSON.stringify({
        externalServerId: `${tag}-${sender}-${Math.floor(seq / HEARTBEATS_PER_SERVER)}`,
        playerCount: 0,
        maxPlayers: 10,
        sdkVersion: 'load/1',
        uptimeSeconds: seq,
        players: [],
        events,
        acks: [],
      });
      const ts = String(Math.floor(Date.now() / 1000));
      for (const e of events) load.sent.add(e.eventId);
      let status = 'network';
      try {
        const res = await fetch(`${url}/api/v1/game/heartbeat`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'X-Service-Timestamp': ts, 'X-Service-Signature': sign(secret, ts, raw), 'Content-Type': 'application/json' },
          body: raw,
        });
        status = String(res.status);
        await res.arrayBuffer();
        if (res.status === 200) for (const e of events) load.accepted.add(e.eventId);
      } catch {
        // the API is down (being restarted): not accepted, so nothing is owed
        await new Promise((r) => setTimeout(r, 50));
      }
      load.statuses[status] = (load.statuses[status] ?? 0) + 1;
    }
  };
  const loops = Array.from({ length: SENDERS }, (_, i) => loop(i));
  return {
    ...load,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Resolves once `n` heartbeats more than now were answered 200. */
async function acceptedMore(load: Load, heartbeats: number): Promise<void> {
  const target = load.accepted.size + heartbeats * EVENTS_PER_HEARTBEAT;
  while (load.accepted.size < target) await new Promise((r) => setTimeout(r, 50));
}

describe('graceful shutdown under load', function () {
  this.timeout(240_000);
  let stack: Stack;
  let db: Db;
  let workspaceId: string;
  let gameId: string;
  let key: string;

  before(async () => {
    db = createDb(process.env.DATABASE_URL!, 2);
    workspaceId = (await createWorkspace(db, 'graceful shutdown')).id;
    gameId = (await createGame(db, { workspaceId, name: 'graceful shutdown' })).id;
    key = (await createKey(db, gameId, ['heartbeat', 'events'], 'test')).key;
    stack = await Stack.start();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.error(stack?.logs());
  });

  after(async () => {
    await stack?.stop();
    if (workspaceId) {
      await db.auditLog.deleteMany({ where: { workspaceId } });
      await db.auditChainHead.deleteMany({ where: { workspaceId } });
      await db.workspace.deleteMany({ where: { id: workspaceId } });
    }
    await db?.$disconnect();
  });

  it('SIGTERM of the API and the workers mid-load, then a restart: every event answered 200 is stored once', async () => {
    const load = startLoad(stack.url, key, `gs-${Date.now().toString(36)}`);
    try {
      await acceptedMore(load, 100);
      // Both stop while requests are in flight and streams hold unflushed entries.
      const [apiExit, workersExit] = await Promise.all([Stack.stopChild(stack.api), Stack.stopChild(stack.workers)]);
      expect(apiExit, 'API exit code').to.equal(0);
      expect(workersExit, 'workers exit code').to.equal(0);
      const acceptedBeforeRestart = load.accepted.size;
      await Promise.all([stack.startApi(), stack.startWorkers()]);
      await acceptedMore(load, 100);
      expect(load.accepted.size).to.be.greaterThan(acceptedBeforeRestart);
    } finally {
      await load.stop();
    }
    expect(load.statuses.network ?? 0, 'requests refused while the API was down').to.be.greaterThan(0);

    // The restarted workers flush what the stopped ones left; wait (bounded) for Postgres to catch up.
    const deadline = Date.now() + 90_000;
    let stored = new Set<string>();
    while (Date.now() < deadline) {
      const rows = await db.playerEvent.findMany({ where: { gameId }, select: { eventId: true } });
      stored = new Set(rows.map((r) => r.eventId));
      if ([...load.accepted].every((id) => stored.has(id))) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const lost = [...load.accepted].filter((id) => !stored.has(id));
    expect(lost, `${lost.length} accepted events missing of ${load.accepted.size} (statuses ${JSON.stringify(load.statuses)})`).to.deep.equal([]);
    const unknown = [...stored].filter((id) => !load.sent.has(id));
    expect(unknown).to.deep.equal([]);
    expect(await db.playerEvent.count({ where: { gameId } })).to.equal(stored.size);
  });
});

describe('workers SIGTERM while starting', function () {
  this.timeout(60_000);

  it('a SIGTERM while the roles are still starting (Redis unreachable) stops the workers with exit 0, not by the signal', async () => {
    // A port nothing listens on: the workers log the refused connection and wait at start-up.
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'workers/index.ts'], {
      env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${port}`, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`workers never reported the refused Redis: ${output.slice(-500)}`)), 30_000);
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('redis connection down')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
    });
    const code = await Stack.stopChild(child);
    expect(code, `exit code (null: killed by a signal); output ${output.slice(-500)}`).to.equal(0);
    expect(child.signalCode).to.equal(null);
  });
});
