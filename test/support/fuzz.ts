/**
 * A seeded fuzzer of the five game endpoints (issue #16): signed requests whose bodies, headers and
 * codings are mutated from valid ones, sent over HTTP/1.1 keep-alive to an app listening in-process. The
 * same seed gives the same requests (timestamps and the ids the harness makes aside), so a failure is
 * replayed with `FUZZ_SEED=<seed>`.
 *
 * Mutations (one to three per request; about one request in ten is left valid so the 200 path runs
 * under the fuzz too): deep nesting (up to 20,000 levels), wide arrays and objects (up to 100,000
 * members), NUL / lone surrogates / raw control characters / invalid UTF-8 bytes, huge strings (up to
 * 600 KB, past the envelope), wrong types, bad timestamps, bad numbers (1e400, NaN, 01, …), duplicate and
 * `__proto__` member names, removed fields, truncated JSON, flipped and inserted bytes, a byte-order mark,
 * Content-Type and Content-Encoding variants (gzip and deflate signed as sent or signed decoded, gzip
 * bombs, br, garbage), and, rarely, a stale timestamp or a wrong signature.
 */
import { request as httpRequest, Agent, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import { sign } from '../../src/auth/signature.js';
import type { TestGame } from './harness.js';

/** A small, fast, seedable PRNG (mulberry32): uniform in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Endpoint = 'heartbeat' | 'doors/check' | 'doors/bulk' | 'doors/manifest' | 'bans/check';
export const ENDPOINTS: readonly Endpoint[] = ['heartbeat', 'doors/check', 'doors/bulk', 'doors/manifest', 'bans/check'];

/** One fuzzed request, ready to send. */
export interface FuzzCase {
  endpoint: Endpoint;
  method: 'GET' | 'POST';
  /** Mutations applied, for the report. */
  mutations: string[];
  headers: Record<string, string>;
  body: Buffer;
}

/** One response. */
export interface FuzzResult {
  status: number;
  body: string;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** 4 MiB of spaces, gzipped to ~4 KB: inflates past any envelope limit. Built once. */
let bomb: Buffer | null = null;
function gzipBomb(): Buffer {
  bomb ??= gzipSync(Buffer.alloc(4 * 1024 * 1024, 0x20));
  return bomb;
}

/** Raw JSON text that replaces a placeholder string after serialisation (deep nesting, odd numbers). */
const RAW = '\u0001raw:';

/** Raw texts that are slow to build (deep, wide, huge), built once per shape. */
const built = new Map<string, string>();
function memo(key: string, build: () => string): string {
  let text = built.get(key);
  if (text === undefined) built.set(key, (text = build()));
  return text;
}

class CaseMaker {
  private readonly raws: string[] = [];
  private n = 0;
  private manifests = 0;
  constructor(private readonly rnd: () => number, private readonly doorKey: string) {}

  int(max: number): number {
    return Math.floor(this.rnd() * max);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.rnd() < p;
  }
  id(prefix: string): string {
    this.n += 1;
    return `${prefix}-${this.n}-${this.int(1e9).toString(36)}`;
  }
  /** A placeholder for raw JSON text, substituted after JSON.stringify. */
  raw(text: string): string {
    this.raws.push(text);
    return `${RAW}${this.raws.length - 1}`;
  }
  serialise(value: Json): string {
    let text = JSON.stringify(value);
    // Placeholders are whole JSON strings: "\u0001raw:<n>" (JSON.stringify escapes \u0001).
    text = text.replace(/"\\u0001raw:(\d+)"/g, (_, i: string) => this.raws[Number(i)]!);
    this.raws.length = 0;
    return text;
  }

  isoNow(): string {
    return new Date(Date.now() - this.int(3_600_000)).toISOString();
  }

  base(endpoint: Endpoint): Json {
    const server = this.id('fz-srv');
    switch (endpoint) {
      case 'heartbeat': {
        const players = Array.from({ length: this.int(6) }, () => {
          const p: { [k: string]: Json } = { externalId: this.id('u'), username: this.id('name') };
          if (this.chance(0.5)) p.team = this.pick(['red', 'blue', null]);
          if (this.chance(0.5)) p.joinedAt = this.isoNow();
          return p;
        });
        const events = Array.from({ length: this.int(6) }, () => {
          const e: { [k: string]: Json } = { eventId: this.id('ev'), type: this.pick(['join', 'leave', 'death', 'spawn', 'team_change', 'quest_done']), occurredAt: this.isoNow() };
          if (this.chance(0.5)) e.externalId = this.id('u');
          if (this.chance(0.7)) e.payload = { weapon: 'sword', damage: this.int(100), pos: { x: this.rnd(), y: 1, z: -2 }, tags: ['a', 'b'] };
          return e;
        });
        return { externalServerId: server, externalScopeId: 'place-1', playerCount: players.length, maxPlayers: 50, sdkVersion: 'fuzz-1.0', uptimeSeconds: this.int(100000), region: 'eu', players, events, acks: [] };
      }
      case 'doors/check':
        return { doorKey: this.chance(0.8) ? this.doorKey : this.id('door'), externalId: this.id('u'), externalServerId: server, n: this.n };
      case 'doors/bulk':
        return { externalId: this.id('u'), externalServerId: server, n: this.n };
      case 'bans/check':
        return { externalId: this.id('u'), externalServerId: server, n: this.n };
      case 'doors/manifest':
        return null;
    }
  }

  /** Every (parent, key) slot of `root`, so a mutation can replace or remove any node. */
  slots(root: Json): { parent: Json[] | { [k: string]: Json }; key: string | number }[] {
    const out: { parent: Json[] | { [k: string]: Json }; key: string | number }[] = [];
    const stack: Json[] = [root];
    while (stack.length) {
      const node = stack.pop()!;
      if (Array.isArray(node)) {
        node.forEach((v, i) => {
          out.push({ parent: node, key: i });
          stack.push(v);
        });
      } else if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          out.push({ parent: node, key: k });
          stack.push(v);
        }
      }
    }
    return out;
  }

  nested(depth: number, leaf: string): string {
    const open = this.chance(0.5) ? '[' : '{"k":';
    const close = open === '[' ? ']' : '}';
    return memo(`nest:${open}:${depth}:${leaf}`, () => open.repeat(depth) + leaf + close.repeat(depth));
  }

  oddString(): string {
    return this.raw(this.pick(['"a\\u0000b"', '"\\ud800"', '"x\\udc00y"', '"\\udc00\\ud800"', '"\\ud83d\\ude00"', '"\\uffff"', '"\\u2028"', '"tab\tin string"', '"\\u003a\\""', '"\\\\"']));
  }

  badTimestamp(): string {
    return this.pick([
      '2016-12-31T23:59:60Z', '2016-12-30T23:59:60Z', '2024-01-01T12:00:00+01', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59-23:59',
      '2024-01-01 12:00:00Z', '2024-13-01T00:00:00Z', '2024-02-30T00:00:00Z', '2024-01-01T24:00:00Z', '2024-01-01T12:00:00+24:00',
      '2024-01-01T12:00:00.' + '9'.repeat(40) + 'Z', '-0001-01-01T00:00:00Z', '+275760-09-13T00:00:00Z', '1e10', '', 'now', '2024-01-01',
      '2024-01-01T12:00Z', '0001-01-01T00:00:00+00:01', '9999-12-31T23:59:59.999Z', '2016-12-31t23:59:60z',
    ]);
  }

  badNumber(): string {
    return this.raw(this.pick(['1e400', '-1e400', '1e-400', '1e308', '-0', '123456789012345678901234567890', '0.1e-999', '9007199254740993', 'NaN', 'Infinity', '01', '1.', '.5', '0x10', '+1', '1e', '--1']));
  }

  /** Applies one value-level mutation to `root` (a heartbeat or door/ban body), in place when it can. */
  mutateValue(root: Json): [Json, string] {
    const slots = this.slots(root);
    const slot = slots.length ? this.pick(slots) : null;
    const set = (v: Json) => {
      if (!slot) return v;
      (slot.parent as Record<string | number, Json>)[slot.key] = v;
      return root;
    };
    const kind = this.pick(['deep', 'deep', 'wide-array', 'wide-object', 'odd-string', 'huge-string', 'wrong-type', 'wrong-type', 'bad-timestamp', 'bad-timestamp', 'bad-number', 'remove', 'unknown-field', 'proto']);
    switch (kind) {
      case 'deep': {
        const depth = this.pick([31, 32, 33, 34, 35, 36, 40, 100, 1000, 5000, 20000]);
        return [set(this.raw(this.nested(depth, this.pick(['1', '"\\u0000"', '"x"', '[]', '{}'])))), `deep:${depth}`];
      }
      case 'wide-array': {
        const n = this.pick([1000, 10000, 100000]);
        const item = this.pick(['0', '"a"', '[]', 'null']);
        return [set(this.raw(memo(`wide:${n}:${item}`, () => `[${Array(n).fill(item).join(',')}]`))), `wide-array:${n}`];
      }
      case 'wide-object': {
        const n = this.pick([1000, 20000]);
        return [set(this.raw(memo(`object:${n}`, () => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`))), `wide-object:${n}`];
      }
      case 'odd-string':
        return [set(this.oddString()), 'odd-string'];
      case 'huge-string': {
        const n = this.pick([10_000, 100_000, 600_000]);
        return [set(this.raw(memo(`huge:${n}`, () => JSON.stringify('x'.repeat(n))))), `huge-string:${n}`];
      }
      case 'wrong-type':
        return [set(this.pick<Json>([null, true, 0, -1, 3.5, '', 'str', [], {}, [1, 'a'], { a: 1 }])), 'wrong-type'];
      case 'bad-timestamp': {
        const stamps = slots.filter((s) => s.key === 'occurredAt' || s.key === 'joinedAt');
        const target = stamps.length ? this.pick(stamps) : slot;
        const v = this.badTimestamp();
        if (target) (target.parent as Record<string | number, Json>)[target.key] = v;
        return [target ? root : v, `bad-timestamp:${v.slice(0, 40)}`];
      }
      case 'bad-number':
        return [set(this.badNumber()), 'bad-number'];
      case 'remove':
        if (slot) {
          if (Array.isArray(slot.parent)) slot.parent.splice(Number(slot.key), 1);
          else delete slot.parent[slot.key as string];
        }
        return [root, 'remove'];
      case 'unknown-field':
        if (root && typeof root === 'object' && !Array.isArray(root)) root[this.id('extra')] = { nested: [1, 2, { x: 'y' }] };
        return [root, 'unknown-field'];
      default:
        if (root && typeof root === 'object' && !Array.isArray(root)) root[this.id('p')] = this.raw('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}');
        return [root, 'proto'];
    }
  }

  /** Applies one text-level mutation to serialised `text`. */
  mutateText(text: string): [string | Buffer, string] {
    const kind = this.pick(['truncate', 'flip', 'insert-byte', 'bom', 'trailing', 'duplicate-key', 'empty', 'invalid-utf8']);
    const at = this.int(Math.max(1, text.length));
    switch (kind) {
      case 'truncate':
        return [text.slice(0, at), 'truncate'];
      case 'flip': {
        const b = Buffer.from(text);
        if (b.length) {
          const i = this.int(b.length);
          b[i] = b[i]! ^ (1 << this.int(8));
        }
        return [b, 'flip'];
      }
      case 'insert-byte': {
        const b = Buffer.from(text);
        const pos = this.int(b.length + 1);
        return [Buffer.concat([b.subarray(0, pos), Buffer.from([this.int(256)]), b.subarray(pos)]), 'insert-byte'];
      }
      case 'bom':
        return [`\ufeff${text}`, 'bom'];
      case 'trailing':
        return [text + this.pick([' ', '\n', 'x', '{}', ',', '\u0000']), 'trailing'];
      case 'duplicate-key': {
        const m = /"([A-Za-z]+)":/.exec(text.slice(1));
        return [m ? text.replace('{', `{"${m[1]}":${this.pick(['1', '"dup"', 'null', '[]'])},`) : text, 'duplicate-key'];
      }
      case 'empty':
        return ['', 'empty'];
      default: {
        const b = Buffer.from(text);
        const pos = Math.max(0, text.indexOf('"', this.int(text.length)) + 1);
        return [Buffer.concat([b.subarray(0, pos), Buffer.from(this.pick([[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82]])), b.subarray(pos)]), 'invalid-utf8'];
      }
    }
  }

  /** One fuzzed request for `endpoint`, signed with `g`'s key (unless a mutation breaks the signature). */
  next(endpoint: Endpoint, g: TestGame, nowS: number): FuzzCase {
    const mutations: string[] = [];
    const method = endpoint === 'doors/manifest' ? 'GET' : 'POST';
    let value = this.base(endpoint);
    let body: string | Buffer;
    const valid = this.chance(0.1);
    const rounds = valid ? 0 : 1 + this.int(3);
    let textMutation = false;
    for (let i = 0; i < rounds; i++) {
      if (endpoint !== 'doors/manifest' && this.chance(0.7)) {
        const [v, m] = this.mutateValue(value);
        value = v;
        mutations.push(m);
      } else textMutation = true;
    }
    const text = value === null ? '' : this.serialise(value);
    body = text;
    if (textMutation) {
      const [t, m] = this.mutateText(text);
      body = t;
      mutations.push(m);
    }
    let bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    let signOver = bytes;
    if (!valid && this.chance(0.25)) {
      const t = this.pick(['none', 'text/plain', 'application/json; charset=utf-16', 'application/json;charset=UTF-8', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'APPLICATION/JSON', 'application/json, text/plain']);
      if (t === 'none') delete headers['content-type'];
      else headers['content-type'] = t;
      mutations.push(`content-type:${t}`);
    }
    if (!valid && this.chance(0.2)) {
      const c = this.pick(['gzip', 'gzip-signed-decoded', 'deflate', 'br', 'garbage-gzip', 'gzip-bomb', 'identity', 'gzip, gzip', 'x-gzip', 'compress']);
      mutations.push(`content-encoding:${c}`);
      if (c === 'gzip' || c === 'x-gzip') {
        bytes = gzipSync(bytes);
        signOver = bytes;
        headers['content-encoding'] = c;
      } else if (c === 'gzip-signed-decoded') {
        bytes = gzipSync(bytes);
        headers['content-encoding'] = 'gzip';
      } else if (c === 'deflate') {
        bytes = deflateSync(bytes);
        signOver = bytes;
        headers['content-encoding'] = 'deflate';
      } else if (c === 'garbage-gzip') {
        bytes = Buffer.from('definitely not gzip');
        signOver = bytes;
        headers['content-encoding'] = 'gzip';
      } else if (c === 'gzip-bomb') {
        bytes = gzipBomb();
        signOver = bytes;
        headers['content-encoding'] = 'gzip';
      } else {
        headers['content-encoding'] = c;
      }
    }
    // Distinct timestamps for the empty-bodied manifest, rising by one per call from 280 s back, so two
    // calls rarely sign the same bytes (409 replayed_signature).
    this.manifests += endpoint === 'doors/manifest' ? 1 : 0;
    let ts = String(endpoint === 'doors/manifest' ? nowS - 280 + (this.manifests % 280) : nowS);
    let signature = sign(g.secret, ts, signOver);
    if (!valid && this.chance(0.03)) {
      const a = this.pick(['stale', 'wrong-signature', 'no-signature', 'garbage-timestamp']);
      mutations.push(`auth:${a}`);
      if (a === 'stale') {
        ts = String(nowS - 400);
        signature = sign(g.secret, ts, signOver);
      } else if (a === 'wrong-signature') signature = 'f'.repeat(64);
      else if (a === 'no-signature') signature = '';
      else ts = '12e3';
    }
    headers.authorization = `Bearer ${g.key}`;
    headers['x-service-timestamp'] = ts;
    if (signature) headers['x-service-signature'] = signature;
    headers['content-length'] = String(bytes.length);
    if (!mutations.length) mutations.push('valid');
    return { endpoint, method, mutations, headers, body: bytes };
  }
}

/** Sends cases to an app listening on `port` over keep-alive connections. */
export class FuzzClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 16 });
  constructor(private readonly port: number) {}

  send(c: FuzzCase): Promise<FuzzResult> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: this.port, method: c.method, path: `/api/v1/game/${c.endpoint}`, headers: c.headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(c.body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Starts listening on a free local port; returns the port. */
export async function listen(server: Server): Promise<number> {
  if (!server.listening) {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  }
  return (server.address() as AddressInfo).port;
}

/** What is wrong with a response, or null: never 5xx; every non-200 is the error envelope with serverTime. */
export function responseProblem(r: FuzzResult): string | null {
  if (r.status >= 500) return `status ${r.status}`;
  let json: unknown;
  try {
    json = JSON.parse(r.body);
  } catch {
    return `status ${r.status} with a body that is not JSON`;
  }
  const o = json as { error?: { code?: unknown; message?: unknown; requestId?: unknown }; serverTime?: unknown };
  if (typeof o.serverTime !== 'string' || Number.isNaN(Date.parse(o.serverTime))) return `status ${r.status} without serverTime`;
  if (r.status === 200) return null;
  const e = o.error;
  if (!e || typeof e.code !== 'string' || !e.code || typeof e.message !== 'string' || typeof e.requestId !== 'string' || !e.requestId) return `status ${r.status} without the error envelope`;
  return null;
}

/** Generates the fuzz cases of one endpoint from `seed`. */
export function* fuzzCases(seed: number, endpoint: Endpoint, count: number, g: TestGame, doorKey: string): Generator<FuzzCase> {
  const gen = new CaseMaker(mulberry32(seed ^ (ENDPOINTS.indexOf(endpoint) * 0x9e3779b1)), doorKey);
  for (let i = 0; i < count; i++) yield gen.next(endpoint, g, Math.floor(Date.now() / 1000));
}
