/**
 * Parses a request body into a value every later step can handle and PostgreSQL can store (spec:
 * Errors, 400; README "Failure behaviour" › "What a 200 can store"). Nothing here recurses on the
 * attacker's structure: V8's `JSON.parse` is iterative (500,000 nested arrays parse fine; the 512 KiB
 * envelope allows at most ~262,000), and the check below walks the parsed value with an explicit stack,
 * refusing it at the first node past {@link MAX_BODY_DEPTH}. Only after that may anything recursive
 * (ajv, `JSON.stringify`) touch the value.
 *
 * Refused with 400:
 * - `invalid_json`: not JSON (RFC 8259; a byte-order mark is not JSON either), or an object with the
 *   same member name twice (RFC 8259 §4 leaves the meaning open; the signature covers the bytes, so two
 *   readers of one signed body must not see different values);
 * - `invalid_request`: arrays/objects nested deeper than {@link MAX_BODY_DEPTH}; a number outside the
 *   IEEE-754 double range (`1e400` would become Infinity, which JSON cannot carry onward); a string or
 *   member name holding U+0000 or a lone surrogate (PostgreSQL stores neither in text or JSONB).
 */
import { ValidationError } from '../../errors.js';
import { MAX_PAYLOAD_DEPTH } from '../../schemas/heartbeat.js';

/**
 * Deepest nesting of arrays and objects a request body may have (the body object itself is level 1).
 * The heartbeat body → `events` → event object take three levels, so an event `payload` may nest
 * {@link MAX_PAYLOAD_DEPTH} (32) levels deep.
 */
export const MAX_BODY_DEPTH = MAX_PAYLOAD_DEPTH + 3;

/** A `\u0000` escape or a surrogate escape (`\uD800`–`\uDFFF`): rare, so strings are checked only then. */
const SUSPECT_ESCAPE = /\\u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})/;

/**
 * Parses `raw` (UTF-8 JSON, already decoded from any Content-Encoding) and checks it as described in the
 * module comment. Cost: one native parse plus one pass over the parsed nodes (a 3.9 KB heartbeat: a few µs).
 * @throws {ValidationError} 400 `invalid_json` or `invalid_request` with a message naming the rule.
 */
export function parseJson(raw: Buffer): unknown {
  const text = raw.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ValidationError('body is not valid JSON', 'invalid_json');
  }
  checkParsed(value, text);
  return value;
}

/** Colons outside strings in JSON text `text`: exactly one per object member. Linear scan, no recursion. */
export function structuralColons(text: string): number {
  let n = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 58 /* : */) n++;
  }
  return n;
}

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;

/**
 * {@link structuralColons} of valid JSON `text`, looking only behind each colon (the fast path: one native
 * `indexOf` per colon). A structural colon follows, after optional whitespace, the unescaped quote that
 * closes a member name; a colon inside a string follows string content, an escaped quote, or the opening
 * quote of a string that starts with it. Behind a quote preceded by `[ { , :`, whitespace or nothing,
 * both readings are possible (the key `"a,"` or the value `":x"`): then -1, and the caller scans.
 */
function structuralColonsByLookBehind(text: string): number {
  let n = 0;
  for (let i = text.indexOf(':'); i !== -1; i = text.indexOf(':', i + 1)) {
    let j = i - 1;
    while (isSpace(text.charCodeAt(j))) j--;
    if (text.charCodeAt(j) !== 34) continue; // after content: inside a string
    let k = j - 1;
    while (text.charCodeAt(k) === 92) k--;
    const backslashes = j - 1 - k;
    if (backslashes % 2 === 1) continue; // an escaped quote: inside a string
    if (backslashes === 0) {
      const before = text.charCodeAt(k); // NaN before the start of the text
      if (before === 91 || before === 123 || before === 44 || before === 58 || isSpace(before) || Number.isNaN(before)) return -1;
    }
    n++; // the quote closes a member name (a quote before it can only be the opening of an empty name)
  }
  return n;
}

const BAD_STRING = 'strings and member names must be well-formed Unicode (no lone surrogate) without U+0000';

function badString(s: string): boolean {
  return !s.isWellFormed() || s.includes('\u0000');
}

/**
 * Walks `root` (the parse of `text`) iteratively: depth, numbers, strings, and duplicate member names.
 * Duplicates: JSON.parse keeps the last of equal names, so the parsed members are fewer than the
 * members written, and every member written has exactly one colon outside strings
 * ({@link structuralColonsByLookBehind}, else {@link structuralColons}).
 */
function checkParsed(root: unknown, text: string): void {
  if (root === null || typeof root !== 'object') {
    if (typeof root === 'number' && !Number.isFinite(root)) throw new ValidationError('numbers must be within the IEEE-754 double range');
    if (typeof root === 'string' && badString(root)) throw new ValidationError(BAD_STRING);
    return;
  }
  const checkStrings = SUSPECT_ESCAPE.test(text);
  let members = 0;
  const string = (s: string) => {
    if (checkStrings && badString(s)) throw new ValidationError(BAD_STRING);
  };
  const values: object[] = [root];
  const depths: number[] = [1];
  let depth = 1;
  const visit = (v: unknown) => {
    if (typeof v === 'string') string(v);
    else if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new ValidationError('numbers must be within the IEEE-754 double range (about ±1.8e308)');
    } else if (v !== null && typeof v === 'object') {
      values.push(v);
      depths.push(depth + 1);
    }
  };
  while (values.length) {
    const node = values.pop()!;
    depth = depths.pop()!;
    if (depth > MAX_BODY_DEPTH) {
      throw new ValidationError(`arrays and objects may nest at most ${MAX_BODY_DEPTH} levels deep (an event payload at most ${MAX_PAYLOAD_DEPTH})`);
    }
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) visit(node[i]);
    } else {
      for (const k in node) {
        members++;
        string(k);
        visit((node as Record<string, unknown>)[k]);
      }
    }
  }
  let written = structuralColonsByLookBehind(text);
  if (written < 0) written = structuralColons(text);
  if (members !== written) throw new ValidationError('an object has the same member name twice', 'invalid_json');
}
