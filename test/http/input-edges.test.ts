/**
 * Issue #16, input edges: what the API answers 200 is what the flushers can store (strict RFC 3339,
 * bounded nesting, finite numbers, no duplicate member names), and the body's media type and content
 * coding are checked as the spec's Authentication table and rule 1 say (README "Failure behaviour").
 */
import { expect } from 'chai';
import { deflateSync, gzipSync } from 'node:zlib';
import request from 'supertest';
import { Harness, heartbeatBody, event, type TestGame } from '../support/harness.js';
import { sign } from '../../src/auth/signature.js';
import { MAX_PAYLOAD_DEPTH } from '../../src/schemas/heartbeat.js';

const HB = '/api/v1/game/heartbeat';

function expectEnvelope(res: request.Response, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.error).to.include({ code });
  expect(res.body.error.message).to.be.a('string').and.not.equal('');
  expect(res.body.error.requestId).to.be.a('string').and.not.equal('');
  expect(res.body.serverTime).to.be.a('string');
}

/** A nested array `depth` levels deep around 1, as JSON text (never built as a value: no recursion here). */
const nested = (depth: number) => '['.repeat(depth) + '1' + ']'.repeat(depth);

describe('input edges (issue #16)', () => {
  const h = new Harness({ MAX_ENVELOPE_BYTES: '65536' });
  let g: TestGame;
  before(async () => {
    g = await h.game();
  });
  after(() => h.close());

  /** Sends `raw` signed as it is, with optional headers and a pre-encoded body. */
  function send(raw: string | Buffer, headers: Record<string, string> = {}, signOver?: Buffer | string) {
    const ts = String(Math.floor(Date.now() / 1000));
    const req = request(h.app).post(HB)
      .set('Authorization', `Bearer ${g.key}`)
      .set('X-Service-Timestamp', ts)
      .set('X-Service-Signature', sign(g.secret, ts, signOver ?? raw))
      .set('Content-Type', 'application/json');
    for (const [k, v] of Object.entries(headers)) req.set(k, v);
    // superagent would JSON-serialise a Buffer sent as application/json; these bytes go out as they are
    return req.serialize((bytes: unknown) => bytes as string).send(raw);
  }

  describe('timestamps (RFC 3339, storable)', () => {
    const refused: [string, RegExp][] = [
      ['2024-01-01T12:00:00+01', /offset needs minutes/],
      ['0000-01-01T00:00:00Z', /year 0001/],
      ['9999-12-31T23:59:59-23:59', /between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z/],
      ['0001-01-01T00:30:00+01:00', /between/],
      ['2016-12-30T23:59:60Z', /leap second/],
      ['2024-01-01 12:00:00Z', /not a space/],
      ['2023-02-29T00:00:00Z', /calendar date/],
      ['2024-01-01T24:00:00Z', /hours 00-23/],
      ['2024-01-01T12:00:00+24:00', /at most ±23:59/],
      ['yesterday', /RFC 3339/],
    ];
    for (const [value, why] of refused) {
      it(`400 for occurredAt ${value}, naming the field and the rule`, async () => {
        const res = await h.heartbeat(g, heartbeatBody([], { externalServerId: `ts-${value}`, events: [event('x', { occurredAt: value })] }));
        expectEnvelope(res, 400, 'invalid_request');
        expect(res.body.error.message).to.match(/^events\.0\.occurredAt must be an RFC 3339 date-time/).and.match(why);
      });
    }

    it('400 for a joinedAt that breaks the same rules', async () => {
      const body = heartbeatBody(['p1'], { externalServerId: 'ts-joined' });
      body.players[0]!.joinedAt = '2024-01-01T12:00:00+01';
      const res = await h.heartbeat(g, body);
      expectEnvelope(res, 400, 'invalid_request');
      expect(res.body.error.message).to.match(/^players\.0\.joinedAt must be an RFC 3339 date-time/);
    });

    it('stores a leap second as the next second, lower-case t/z, offsets, and truncates fractions past milliseconds', async () => {
      const cases: [string, string][] = [
        ['2016-12-31T23:59:60Z', '2017-01-01T00:00:00.000Z'],
        ['2016-12-31T15:59:60.5-08:00', '2017-01-01T00:00:00.500Z'],
        ['2024-05-01t12:30:00z', '2024-05-01T12:30:00.000Z'],
        ['2024-05-01T14:30:00.123987+02:00', '2024-05-01T12:30:00.123Z'],
        ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
        ['9999-12-31T23:59:59.999999Z', '9999-12-31T23:59:59.999Z'],
      ];
      const events = cases.map(([occurredAt]) => event('edge', { occurredAt }));
      expect((await h.heartbeat(g, heartbeatBody([], { externalServerId: 'ts-ok', events }))).status).to.equal(200);
      await h.flush(g.gameId);
      const rows = await h.db.playerEvent.findMany({ where: { gameId: g.gameId, eventId: { in: events.map((e) => e.eventId) } } });
      const byId = new Map(rows.map((r) => [r.eventId, r.occurredAt.toISOString()]));
      expect(events.map((e) => byId.get(e.eventId))).to.deep.equal(cases.map(([, stored]) => stored));
    });
  });

  describe('pathological JSON → 400, never 5xx', () => {
    it(`accepts an event payload nested ${MAX_PAYLOAD_DEPTH} deep and refuses ${MAX_PAYLOAD_DEPTH + 1}`, async () => {
      const make = (depth: number) => JSON.stringify(heartbeatBody([], { externalServerId: `deep-${depth}`, events: [event('x', { payload: 'P' })] })).replace('"P"', nested(depth));
      expect((await send(make(MAX_PAYLOAD_DEPTH))).status).to.equal(200);
      const res = await send(make(MAX_PAYLOAD_DEPTH + 1));
      expectEnvelope(res, 400, 'invalid_request');
      expect(res.body.error.message).to.match(/nest at most/);
    });

    it('refuses 5,000 nested payload arrays and 20,000 nested arrays around "\\u0000" in an ignored field', async () => {
      const deepPayload = JSON.stringify(heartbeatBody([], { externalServerId: 'deep-5000', events: [event('x', { payload: 'P' })] })).replace('"P"', nested(5000));
      expectEnvelope(await send(deepPayload), 400, 'invalid_request');
      const deepNul = JSON.stringify(heartbeatBody([], { externalServerId: 'deep-nul' })).replace('{', `{"ignored":${'['.repeat(20000)}"\\u0000"${']'.repeat(20000)},`);
      expectEnvelope(await send(deepNul), 400, 'invalid_request');
    });

    it('refuses numbers outside the double range (1e400) wherever they are', async () => {
      for (const [at, replacement] of [['"uptimeSeconds":', '"uptimeSeconds":1e400,"was":'], ['{', '{"ignored":[-1e400],']]) {
        const raw = JSON.stringify(heartbeatBody([], { externalServerId: 'num' })).replace(at!, replacement!);
        const res = await send(raw);
        expectEnvelope(res, 400, 'invalid_request');
        expect(res.body.error.message).to.match(/double range/);
      }
    });

    it('refuses an object with the same member name twice (also spelt with escapes), accepts colons inside strings', async () => {
      const base = JSON.stringify(heartbeatBody([], { externalServerId: 'dup' }));
      expectEnvelope(await send(base.replace('{', '{"externalServerId":"other",')), 400, 'invalid_json');
      expectEnvelope(await send(base.replace('{', '{"a\\u003a":1,"a:":2,')), 400, 'invalid_json');
      const ok = JSON.stringify(heartbeatBody([], { externalServerId: 'dup:ok', region: '::1 "quoted" \\ :' }));
      expect((await send(ok.replace('{', '{"x\\u003a":":","\\"":"a:b",'))).status).to.equal(200);
    });

    it('refuses lone surrogates and NUL in member names as in values', async () => {
      const base = JSON.stringify(heartbeatBody([], { externalServerId: 'names' }));
      expectEnvelope(await send(base.replace('{', '{"\\ud800":1,')), 400, 'invalid_request');
      expectEnvelope(await send(base.replace('{', '{"a\\u0000":1,')), 400, 'invalid_request');
    });

    it('400 for a body that is not JSON: truncated, a byte-order mark, empty', async () => {
      const base = JSON.stringify(heartbeatBody([], { externalServerId: 'bad' }));
      for (const raw of [base.slice(0, -1), `\ufeff${base}`, '']) expectEnvelope(await send(raw), 400, 'invalid_json');
    });
  });

  describe('Content-Type and Content-Encoding (415)', () => {
    const body = () => JSON.stringify(heartbeatBody([], { externalServerId: 'media' }));

    it('415 unsupported_media_type for a POST that is not application/json (UTF-8)', async () => {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'application/jsonx']) {
        expectEnvelope(await send(body(), { 'Content-Type': type }), 415, 'unsupported_media_type');
      }
      const ts = String(Math.floor(Date.now() / 1000));
      const raw = body();
      const none = await request(h.app).post(HB).set('Authorization', `Bearer ${g.key}`).set('X-Service-Timestamp', ts)
        .set('X-Service-Signature', sign(g.secret, ts, raw)).send(Buffer.from(raw)).unset('Content-Type');
      expectEnvelope(none, 415, 'unsupported_media_type');
    });

    it('accepts application/json with a UTF-8 charset, in any case', async () => {
      for (const type of ['application/json; charset=utf-8', 'Application/JSON;Charset="UTF-8"']) {
        expect((await send(body(), { 'Content-Type': type })).status, type).to.equal(200);
      }
    });

    it('415 unsupported_encoding for br, compress, stacked codings and unknown ones, before authentication', async () => {
      for (const coding of ['br', 'compress', 'gzip, gzip', 'zstd']) {
        expectEnvelope(await send(body(), { 'Content-Encoding': coding }), 415, 'unsupported_encoding');
      }
      const anon = await request(h.app).post(HB).set('Content-Type', 'application/json').set('Content-Encoding', 'br').send('{}');
      expectEnvelope(anon, 415, 'unsupported_encoding');
    });

    it('gzip and deflate: the signature covers the compressed bytes as sent, and the events are stored', async () => {
      for (const [coding, compress] of [['gzip', gzipSync], ['deflate', deflateSync]] as const) {
        const e = event(`coded-${coding}`);
        const json = JSON.stringify(heartbeatBody([], { externalServerId: `coded-${coding}`, events: [e] }));
        const coded = compress(Buffer.from(json));
        expect((await send(coded, { 'Content-Encoding': coding })).status, coding).to.equal(200);
        // a signature over the decoded JSON is not a signature over the bytes as sent
        expectEnvelope(await send(coded, { 'Content-Encoding': coding }, json), 401, 'bad_signature');
        await h.flush(g.gameId);
        expect(await h.db.playerEvent.count({ where: { gameId: g.gameId, eventId: e.eventId } })).to.equal(1);
      }
    });

    it('400 unreadable_body for bytes that are not gzip; 413 when the inflated body is over the envelope', async () => {
      expectEnvelope(await send(Buffer.from('not gzip at all'), { 'Content-Encoding': 'gzip' }), 400, 'unreadable_body');
      const bomb = gzipSync(Buffer.from(`{"x":"${'a'.repeat(200_000)}"}`));
      expect(bomb.length).to.be.lessThan(65536);
      expectEnvelope(await send(bomb, { 'Content-Encoding': 'gzip' }), 413, 'envelope_too_large');
    });

    it('the GET manifest does not look at Content-Type', async () => {
      const res = await h.signed(g, 'get', '/api/v1/game/doors/manifest', undefined, { headers: { 'Content-Type': 'text/plain' } });
      expect(res.status).to.equal(200);
    });
  });
});
