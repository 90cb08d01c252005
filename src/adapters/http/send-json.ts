import type { Response } from 'express';

/**
 * Answers `status` (200 unless given: error answers pass theirs) with `json`, a body already serialized.
 * Written with `writeHead`/`end`: Express's `send` would re-parse the content type and run a freshness
 * check (turning a matching If-None-Match into a bodiless 304, which could not carry serverTime) on every
 * game request.
 * Headers set earlier (X-Request-Id) are kept; `headers` adds more (the manifest's ETag).
 */
export function sendJson(res: Response, json: string, headers?: Record<string, string>, status = 200): void {
  const head = { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(json) };
  res.writeHead(status, headers ? { ...head, ...headers } : head).end(json);
}
