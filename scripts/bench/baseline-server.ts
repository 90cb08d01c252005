/**
 * scripts/bench/baseline-server.ts — the ceiling a heartbeat handler is measured against
 * (/work/shared/ENVIRONMENT.md, "Costs measured here"): a bare Express 5 endpoint that only reads the raw
 * body, checks HMAC-SHA256 over `timestamp + raw body` (constant-time compare) and `JSON.parse`s it, then
 * replies with a small JSON. No key lookup, no validation, no Redis.
 *
 * Answers every POST under /api/v1/game/ that way (the p99 ratios of issue #20 pair each endpoint with
 * it: scripts/bench/tail-ratio.ts). Env: PORT (listen port, 127.0.0.1), BENCH_SECRET (the HMAC key).
 * Started by the bench scripts exactly the way the API child is started (same Node, same tsx loader). Not part of the service.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import express from 'express';

const secret = process.env.BENCH_SECRET ?? '';
const port = Number(process.env.PORT ?? 0);
if (!secret) {
  console.error('BENCH_SECRET is required');
  process.exit(2);
}

const app = express();
// Same two settings as the real app (src/app.ts): they remove work, so the ceiling is not flattered.
app.disable('x-powered-by');
app.set('etag', false);

app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});

// Every game POST (heartbeat, doors, bans/check): the ceiling is the same work whatever the endpoint.
app.post('/api/v1/game/*endpoint', express.raw({ type: () => true, limit: 524288 }), (req, res) => {
  const ts = req.get('x-service-timestamp') ?? '';
  const given = Buffer.from(req.get('x-service-signature') ?? '', 'hex');
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const expected = createHmac('sha256', secret).update(ts).update(raw).digest();
  if (given.length !== expected.length || !timingSafeEqual(expected, given)) {
    res.status(401).json({ error: 'bad_signature' });
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    res.status(400).json({ error: 'invalid_json' });
    return;
  }
  res.json({ commands: [], config: { heartbeatIntervalSeconds: 20 }, serverTime: new Date().toISOString(), ok: body !== null });
});

const server = app.listen(port, '127.0.0.1');
server.keepAliveTimeout = 65_000;
const stop = () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
