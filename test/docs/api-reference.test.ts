/**
 * docs/api.md is the project's own API reference: its hand-signed request (curl + openssl), which the
 * README repeats, is run here against a real API on real Redis and PostgreSQL so the example cannot rot;
 * its worked signature is the service's; and it covers every "not shown" decision the OpenAPI document lists.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { sign } from '../../src/auth/signature.js';
import { getRoster } from '../../src/presence/server-view.js';
import { Harness } from '../support/harness.js';
import { ROOT } from '../support/stack.js';
import { doorWith } from '../doors/door-fixtures.js';

const MARKER = '<!-- signed-request-example';

/** The ```sh block that follows the signed-request marker in `file` (relative to the repository root). */
function signedRequestExample(file: string): string {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const at = text.indexOf(MARKER);
  expect(at, `${file} marks its signed-request example`).to.be.greaterThan(-1);
  const block = /```sh\n([\s\S]*?)\n```/.exec(text.slice(at));
  expect(block, `${file}: a sh block after the marker`).to.not.equal(null);
  return block![1]!;
}

describe('docs/api.md: the API reference and its hand-signed request', function () {
  this.timeout(30_000);

  it('the README repeats the example of docs/api.md byte for byte', () => {
    expect(signedRequestExample('README.md')).to.equal(signedRequestExample('docs/api.md'));
  });

  it('the example, run by bash with curl and openssl, gets 200 from the heartbeat and the door check', async () => {
    const h = new Harness();
    let server: Server | undefined;
    try {
      const g = await h.game(['heartbeat', 'events', 'commands', 'doors']);
      await doorWith(h, g.gameId, [], { key: 'armory', defaultEffect: 'allow' });
      server = createServer(h.app);
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', signedRequestExample('docs/api.md')], {
        env: { PATH: process.env.PATH, GIS_URL: url, GIS_KEY: g.key },
      });
      const lines = stdout.trim().split('\n');
      expect(lines, stdout).to.have.length(4);
      expect([lines[1], lines[3]], stdout).to.deep.equal(['HTTP 200', 'HTTP 200']);
      const beat = JSON.parse(lines[0]!) as { commands: unknown[]; config: { heartbeatIntervalSeconds: number } };
      expect(beat.commands).to.deep.equal([]);
      expect(beat.config.heartbeatIntervalSeconds).to.equal(20);
      expect(JSON.parse(lines[2]!)).to.deep.include({ doorKey: 'armory', decision: 'allow', externalId: 'u1' });
      // The heartbeat really registered the server with its roster (not some other 200).
      const roster = await getRoster(h.redis, h.keySpace, g.gameId, 'curl-1', Date.now());
      expect(roster.map((p) => p.externalId)).to.deep.equal(['u1']);
    } finally {
      server?.close();
      await h.close();
    }
  });

  it('its worked example is the signature the service computes over exactly those bytes', () => {
    const text = readFileSync(path.join(ROOT, 'docs/api.md'), 'utf8');
    const key = /^HMAC key \((\d+) bytes\): +(\S+)$/m.exec(text);
    const signed = /^signed \((\d+) bytes\): +(\S+)$/m.exec(text);
    const sig = /^X-Service-Signature: +([0-9a-f]{64})$/m.exec(text);
    expect(key && signed && sig, 'the worked example').to.not.equal(null);
    expect(Buffer.byteLength(key![2]!)).to.equal(Number(key![1]));
    expect(Buffer.byteLength(signed![2]!)).to.equal(Number(signed![1]));
    const ts = signed![2]!.slice(0, 10);
    expect(sign(key![2]!, ts, signed![2]!.slice(10))).to.equal(sig![1]);
    expect(text).to.include(`svc_live_abcdefgh2345.${key![2]}`);
  });

  it('covers every "not shown" decision of openapi.json by its topic id', () => {
    const text = readFileSync(path.join(ROOT, 'docs/api.md'), 'utf8');
    const doc = JSON.parse(readFileSync(path.join(ROOT, 'openapi.json'), 'utf8')) as { 'x-not-shown-decisions': { topic: string }[] };
    const topics = doc['x-not-shown-decisions'].map((d) => d.topic);
    expect(topics.length).to.be.greaterThan(20);
    for (const topic of topics) expect(text, topic).to.match(new RegExp(`^### .*\\(\`${topic}\`\\)`, 'm'));
  });
});
