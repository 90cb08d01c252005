/**
 * The body parser of the five game endpoints (src/adapters/http/parse-json.ts; docs/api.md "JSON
 * limits"): depth, numbers, strings, duplicate member names, all without recursion on the input.
 */
import { expect } from 'chai';
import { MAX_BODY_DEPTH, parseJson } from '../../src/adapters/http/parse-json.js';
import { ValidationError } from '../../src/errors.js';
import { mulberry32 } from '../support/fuzz.js';

/** The error code parseJson throws for `text`, or 'ok'. */
function verdict(text: string): string {
  try {
    parseJson(Buffer.from(text, 'utf8'));
    return 'ok';
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return err.code;
  }
}

describe('request body parser', () => {
  const table: [string, string][] = [
    ['{"a":1,"b":{"a":1}}', 'ok'],
    ['{"a":1,"a":2}', 'invalid_json'],
    ['{"":1,"":2}', 'invalid_json'],
    ['{"a,":1,"a,":2}', 'invalid_json'],
    ['[",:x",{"k":1}]', 'ok'],
    ['{"k":" :x","j":":","i":"\\":"}', 'ok'],
    ['{"a\\u003a":1,"a:":2}', 'invalid_json'],
    ['{"x\\\\":1,"x\\\\":2}', 'invalid_json'],
    ['{ "a" : 1 ,\n "b" :\t2 }', 'ok'],
    ['{"__proto__":1,"__proto__":2}', 'invalid_json'],
    ['[1e308,-1e308,1e-400]', 'ok'],
    ['[1e400]', 'invalid_request'],
    ['{"a":-1e400}', 'invalid_request'],
    ['"a\\u0000b"', 'invalid_request'],
    ['{"\\udc00":1}', 'invalid_request'],
    ['["\\ud83d\\ude00"]', 'ok'],
    ['\ufeff{}', 'invalid_json'],
    ['', 'invalid_json'],
    [`${'['.repeat(MAX_BODY_DEPTH)}${']'.repeat(MAX_BODY_DEPTH)}`, 'ok'],
    [`${'['.repeat(MAX_BODY_DEPTH + 1)}${']'.repeat(MAX_BODY_DEPTH + 1)}`, 'invalid_request'],
    [`${'{"a":'.repeat(MAX_BODY_DEPTH + 1)}1${'}'.repeat(MAX_BODY_DEPTH + 1)}`, 'invalid_request'],
  ];
  for (const [text, expected] of table) {
    it(`${JSON.stringify(text).slice(0, 60)} → ${expected}`, () => expect(verdict(text)).to.equal(expected));
  }

  it('refuses 260,000 nested arrays (the most 512 KiB can hold) with a 400, no stack overflow', () => {
    expect(verdict(`${'['.repeat(260_000)}"\\u0000"${']'.repeat(260_000)}`)).to.equal('invalid_request');
  });

  it('finds a duplicate member name exactly when one was written (seeded corpus of 20,000 bodies)', () => {
    const rnd = mulberry32(8259);
    const alphabet = ['a', 'b', ':', ' ', '"', '\\', ',', '[', '{', '\n', 'é'];
    const word = () => Array.from({ length: Math.floor(rnd() * 4) }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
    let dupes = 0;
    const value = (depth: number): [string, boolean] => {
      const t = rnd();
      if (depth > 3 || t < 0.35) return [JSON.stringify(word()), false];
      if (t < 0.45) return [String(Math.floor(rnd() * 100)), false];
      const items: [string, boolean][] = Array.from({ length: Math.floor(rnd() * 4) }, () => value(depth + 1));
      if (t < 0.7) return [`[${items.map(([s]) => s).join(',')}]`, items.some(([, d]) => d)];
      const names = items.map(() => word());
      if (names.length > 1 && rnd() < 0.2) names[names.length - 1] = names[0]!; // written twice
      const sep = rnd() < 0.3 ? ' : ' : ':';
      const dup = new Set(names).size < names.length;
      return [`{${items.map(([s], i) => `${JSON.stringify(names[i])}${sep}${s}`).join(',')}}`, dup || items.some(([, d]) => d)];
    };
    for (let i = 0; i < 20_000; i++) {
      const [text, dup] = value(0);
      dupes += dup ? 1 : 0;
      const got = verdict(text);
      if (got === 'invalid_request') continue; // a random string hit a NUL/surrogate rule, not this one
      expect(got, text).to.equal(dup ? 'invalid_json' : 'ok');
    }
    expect(dupes).to.be.greaterThan(500);
  });
});
