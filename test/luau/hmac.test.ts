/**
 * Issue #19/#28: the pure-Luau SHA-256 and HMAC-SHA256 (sdk/luau/GameIntegration/Sha256.luau), run under
 * real Luau (interpreted and with --codegen, what its --!native asks for), against Node's crypto: fixed vectors (FIPS 180-4, RFC 4231) and 1,000 random messages including the empty
 * message, the 55/56/64-byte padding edges and a 512 KiB body, each HMAC fed as two parts (timestamp, body).
 */
import { expect } from 'chai';
import { createHash, createHmac, randomBytes, randomInt } from 'node:crypto';
import { runLuau } from './luau-runner.js';

interface Vector {
  key: Buffer;
  msg: Buffer;
  split: number;
}

const hex = (b: Buffer): string => (b.length ? b.toString('hex') : '-');

/** Runs every vector through Luau in one process; returns [sha256 hex, hmac hex] per vector. */
function luauDigests(vectors: Vector[], codegen = false): string[][] {
  const lines = vectors.map((v) => `\t"${hex(v.key)} ${hex(v.msg)} ${v.split}",\n`).join('');
  return runLuau('test/hash-vectors.luau', { codegen, extra: { 'vectors.luau': `return {\n${lines}}\n` } })
    .trim()
    .split('\n')
    .map((l) => l.split(' '));
}

const node = (v: Vector): string[] => [createHash('sha256').update(v.msg).digest('hex'), createHmac('sha256', v.key).update(v.msg).digest('hex')];

describe('Luau SDK: SHA-256 / HMAC-SHA256 under real Luau', function () {
  this.timeout(120_000);

  it('matches the published vectors', () => {
    const abc = Buffer.from('abc');
    const two = Buffer.from('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq');
    const rfc4231 = { key: Buffer.alloc(20, 0x0b), msg: Buffer.from('Hi There'), split: 2 };
    const [a, b, c] = luauDigests([{ key: Buffer.alloc(0), msg: abc, split: 0 }, { key: Buffer.from('key'), msg: two, split: 10 }, rfc4231]);
    expect(a![0]).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(b![0]).to.equal('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
    expect(c![1]).to.equal('b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7');
  });

  it('matches Node crypto on 1,000 messages: empty, padding edges, long keys, 512 KiB', () => {
    const lengths = [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 512 * 1024, 4096];
    while (lengths.length < 1000) lengths.push(randomInt(0, 700));
    const vectors: Vector[] = lengths.map((len, i) => {
      // Keys: empty, short, exactly 64 bytes, and longer than the block (hashed first).
      const keyLen = [0, 16, 64, 65, 100][i % 5]!;
      return { key: randomBytes(keyLen), msg: randomBytes(len), split: len ? randomInt(0, len + 1) : 0 };
    });
    for (const codegen of [false, true]) {
      const got = luauDigests(vectors, codegen);
      expect(got).to.have.length(1000);
      const mismatches = vectors.map((v, i) => ({ i, len: v.msg.length, ok: JSON.stringify(got[i]) === JSON.stringify(node(v)) })).filter((m) => !m.ok);
      expect(mismatches, `codegen ${codegen}`).to.deep.equal([]);
    }
  });
});
