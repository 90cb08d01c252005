/**
 * scripts/bench/canned-game-api.ts — a stand-in for the game API that answers at once with fixed
 * bodies, for `npm run bench:simulator` (the simulator's own cost per request, without a service to
 * compete with for the CPU). Not part of the service; it checks nothing (no key, no signature, no
 * replay cache) and stores nothing.
 *
 * Answers, shaped as the service's (spec: the five game endpoints): heartbeat `{commands: [], config:
 * {heartbeatIntervalSeconds, doorsVersion}, serverTime}`; bans/check `{banned: false, ...}`; doors/bulk four
 * decisions with a 60 s TTL; doors/check one decision; doors/manifest the four doors the simulator's game
 * has. Anything else: 404 with the error envelope.
 *
 * Started with fork(): env INTERVAL (heartbeat interval, s); it listens on 127.0.0.1 on a free port and
 * sends `{ port }` to its parent; exits when the parent disconnects.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const interval = Number(process.env.INTERVAL ?? 15);
const DOORS = [
  ['front-gate', 'door', 'allow', 'open', 'allow', 'default_allow'],
  ['armory', 'locker', 'deny', 'closed', 'deny', 'default_deny'],
  ['lounge', 'zone', 'deny', 'open', 'allow', 'policy_allow:p1'],
  ['heli-spawner', 'spawner', 'allow', 'closed', 'deny', 'policy_deny:p2'],
] as const;
const decisions = DOORS.map(([key, , , , decision, reason]) => ({ doorKey: key, decision, reason, ttlSeconds: 60 }));
const manifest = { version: 7, doors: DOORS.map(([key, kind, defaultEffect, failMode]) => ({ key, name: key, kind, defaultEffect, failMode, forcedState: 'auto' })) };

/** The body of a 200 for `path` (without serverTime), or null for an unknown path. */
function answer(path: string): Record<string, unknown> | null {
  switch (path) {
    case '/api/v1/game/heartbeat':
      return { commands: [], config: { heartbeatIntervalSeconds: interval, doorsVersion: 7 } };
    case '/api/v1/game/bans/check':
      return { banned: false, scope: null, expiresAt: null, reason: null };
    case '/api/v1/game/doors/bulk':
      return { doorsVersion: 7, decisions };
    case '/api/v1/game/doors/check':
      return { ...decisions[1], doorsVersion: 7 };
    case '/api/v1/game/doors/manifest':
      return manifest;
    default:
      return null;
  }
}

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const q = req.url!.indexOf('?');
    const body = answer(q < 0 ? req.url! : req.url!.slice(0, q));
    const status = body ? 200 : 404;
    const json = JSON.stringify(body ? { ...body, serverTime: new Date().toISOString() } : { error: { code: 'not_found', message: 'no such endpoint' } });
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) });
    res.end(json);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
process.on('disconnect', () => process.exit(0));
