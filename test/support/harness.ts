/**
 * Shared fixtures: the real app over the real Redis and Postgres, a game with a key per test, signed
 * requests, and flushing the streams the way the workers do. Never test-only code in src/.
 */
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { loadConfig, type Config } from '../../src/config.js';
import { setLogLevel } from '../../src/log.js';
import { createRedis, type AppRedis } from '../../src/store/redis.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { createReplicaAck, type ReplicaAck } from '../../src/store/replica-ack.js';
import { createDb, type Db } from '../../src/store/prisma.js';
import { VerifiedDigests } from '../../src/auth/verified-digests.js';
import { KeyVerifier } from '../../src/auth/key-verifier.js';
import { KeyRecords } from '../../src/auth/key-records.js';
import { createApp } from '../../src/app.js';
import { createWorkspace, createGame } from '../../src/games/game-service.js';
import { createKey } from '../../src/auth/key-service.js';
import type { Scope } from '../../src/auth/scopes.js';
import { sign } from '../../src/auth/signature.js';
import { StreamConsumer } from '../../src/store/streams.js';
import { flushEvents } from '../../src/events/event-flusher.js';
import { flushSessions } from '../../src/presence/session-flusher.js';
import { flushCommandLog } from '../../src/commands/command-log-flusher.js';
import { flushAccessLog } from '../../src/doors/access-log-flusher.js';
import type { HeartbeatRequest } from '../../src/schemas/heartbeat.js';
import { locateUserCall } from '../../src/store/lua/locate-user.js';
import type { Express } from 'express';

export const ALL_SCOPES: Scope[] = ['heartbeat', 'events', 'doors', 'commands', 'records:read', 'chat'];

export interface TestGame {
  workspaceId: string;
  gameId: string;
  key: string;
  keyPrefix: string;
  secret: string;
}

export class Harness {
  readonly config: Readonly<Config>;
  /** The key space of the test's random prefix (test/setup.ts), as a process builds it at boot. */
  readonly keySpace: KeySpace;
  readonly redis: AppRedis;
  readonly db: Db;
  readonly verifier: KeyVerifier;
  readonly app: Express;
  readonly replicaAck: ReplicaAck | undefined;
  private readonly workspaces: string[] = [];

  /**
   * `overrides` are environment variables over `process.env` for the config. With `opts.patientRedis`
   * the harness's Redis client waits for a reconnect instead of failing a command after 800 ms (the API
   * client's bound): for fault tests that kill and restart Redis, whose own set-up and checks must not
   * fail while Redis is restarting or busy (a liveness sweep closing thousands of sessions).
   */
  constructor(overrides: Record<string, string> = {}, opts: { patientRedis?: boolean } = {}) {
    this.config = loadConfig({ ...process.env, ...overrides });
    setLogLevel(this.config.logLevel);
    this.keySpace = new KeySpace(this.config.redisPrefix, this.config);
    // As the API's own client (src/server.ts), unless the test asked for a patient one.
    this.redis = opts.patientRedis
      ? createRedis(this.config.redisUrl, { name: 'test', forWorker: true })
      : createRedis(this.config.redisUrl, { name: 'test' });
    this.db = createDb(this.config.databaseUrl, 4);
    this.verifier = new KeyVerifier(this.db, new VerifiedDigests(this.redis, this.keySpace), undefined, new KeyRecords(this.redis, this.keySpace));
    // REDIS_WAIT_REPLICAS in `overrides`: heartbeats wait for replicas, as in src/server.ts.
    this.replicaAck = createReplicaAck(this.config.redisUrl, this.config.redisWait);
    this.app = createApp({ config: this.config, keySpace: this.keySpace, redis: this.redis, db: this.db, verifier: this.verifier, replicaAck: this.replicaAck });
  }

  /** A fresh workspace + game + key with `scopes` (default: all). */
  async game(scopes: Scope[] = ALL_SCOPES, intervalSeconds = 20): Promise<TestGame> {
    const ws = await createWorkspace(this.db, `test-${Date.now()}`);
    this.workspaces.push(ws.id);
    const game = await createGame(this.db, { workspaceId: ws.id, name: 'test game', heartbeatIntervalSeconds: intervalSeconds });
    return { workspaceId: ws.id, gameId: game.id, ...(await this.key(game.id, scopes)) };
  }

  /** Another key for an existing game. */
  async key(gameId: string, scopes: Scope[] = ALL_SCOPES): Promise<{ key: string; keyPrefix: string; secret: string }> {
    const k = await createKey(this.db, gameId, scopes, 'operator', new VerifiedDigests(this.redis, this.keySpace), new KeyRecords(this.redis, this.keySpace));
    return { key: k.key, keyPrefix: k.prefix, secret: k.key.split('.')[1]! };
  }

  /**
   * Sends a signed request. `opts.timestamp` (seconds) and `opts.signature` override the computed ones;
   * `opts.raw` sends exact bytes; `opts.nonce` adds `?nonce=<random>` and signs it with the body (the
   * request nonce, docs/api.md "Replays on a shared key"), so identical requests never collide in the replay cache.
   */
  signed(g: { key: string; secret: string }, method: 'post' | 'get', path: string, body?: unknown, opts: { timestamp?: number; signature?: string; raw?: string; headers?: Record<string, string>; nonce?: boolean } = {}) {
    const raw = opts.raw ?? (body === undefined ? '' : JSON.stringify(body));
    const ts = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
    const query = opts.nonce ? `nonce=${randomBytes(16).toString('base64url')}` : undefined;
    const req = request(this.app)[method](query ? `${path}?${query}` : path)
      .set('Authorization', `Bearer ${g.key}`)
      .set('X-Service-Timestamp', ts)
      .set('X-Service-Signature', opts.signature ?? sign(g.secret, ts, raw, query))
      .set('Content-Type', 'application/json');
    for (const [k, v] of Object.entries(opts.headers ?? {})) req.set(k, v);
    return method === 'post' ? req.send(raw) : req;
  }

  /** POST /api/v1/game/heartbeat with `body`. */
  heartbeat(g: TestGame, body: HeartbeatRequest, opts: { timestamp?: number } = {}) {
    return this.signed(g, 'post', '/api/v1/game/heartbeat', body, opts);
  }

  /** The server whose roster holds user `externalId` in `gameId` by the user locations, or '' (what a ban's kick reads). */
  async locate(gameId: string, externalId: string): Promise<string> {
    const call = locateUserCall(this.keySpace.game(gameId), { externalId });
    return (await this.redis.runScript('locateUser', call.keys, call.args)) as string;
  }

  /** Drains every stream of `gameId` into Postgres, as the workers would. */
  async flush(gameId: string): Promise<void> {
    const { keySpace } = this;
    const ev = new StreamConsumer(this.redis, 'flush-events', 'test');
    const se = new StreamConsumer(this.redis, 'flush-sessions', 'test');
    const cl = new StreamConsumer(this.redis, 'flush-command-log', 'test');
    while ((await flushEvents(this.db, ev, keySpace, gameId)).entries) { /* drain */ }
    while ((await flushSessions(this.db, se, keySpace, gameId)).entries) { /* drain */ }
    while ((await flushCommandLog(this.db, cl, keySpace, gameId)).entries) { /* drain */ }
    const al = new StreamConsumer(this.redis, 'flush-access-log', 'test');
    while ((await flushAccessLog(this.db, al, keySpace, gameId)).entries) { /* drain */ }
  }

  /** Deletes the workspaces this harness created (cascade) and closes connections. */
  async close(): Promise<void> {
    if (this.workspaces.length) {
      await this.db.auditLog.deleteMany({ where: { workspaceId: { in: this.workspaces } } });
      await this.db.auditChainHead.deleteMany({ where: { workspaceId: { in: this.workspaces } } });
      await this.db.workspace.deleteMany({ where: { id: { in: this.workspaces } } });
    }
    await this.redis.quit();
    await this.replicaAck?.client.quit();
    await this.db.$disconnect();
  }
}

let seq = 0;
/**
 * A valid heartbeat body; `players` as externalIds, overrides merged on top. `uptimeSeconds` grows with
 * every call, as on a real server, so two heartbeats in one second never sign identical bytes.
 */
export function heartbeatBody(players: string[] = [], overrides: Partial<HeartbeatRequest> = {}): HeartbeatRequest {
  seq += 1;
  return {
    externalServerId: 'server-1',
    externalScopeId: 'place-1',
    playerCount: players.length,
    maxPlayers: 50,
    sdkVersion: '1.0.0',
    uptimeSeconds: 60 + seq,
    region: 'eu-west',
    players: players.map((p) => ({ externalId: p, username: `user_${p}` })),
    events: [],
    acks: [],
    ...overrides,
  };
}

/** An event entry with a fresh eventId. */
export function event(type: string, overrides: Record<string, unknown> = {}) {
  seq += 1;
  return { eventId: `ev-${Date.now()}-${seq}-${Math.random().toString(36).slice(2)}`, type, externalId: 'p1', occurredAt: new Date().toISOString(), payload: { n: seq }, ...overrides };
}
