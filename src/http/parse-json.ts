import { ValidationError } from '../errors.js';

/** A `\u0000` escape or a surrogate escape (`\uD800`–`\uDFFF`): rare, so the deep check runs only then. */
const SUSPECT_ESCAPE = /\\u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})/;

/**
 * Parses a raw JSON body (spec: Errors, 400).
 * Strings must be well-formed Unicode without NUL: PostgreSQL can store neither a lone surrogate in
 * JSONB nor NUL in text, so accepting one would leave an event the flusher can never write.
 * @throws {ValidationError} 400 `invalid_json` for empty or malformed bytes, `invalid_request` for such
 *   a string.
 */
export function parseJson(raw: Buffer): unknown {
  const text = raw.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ValidationError('body is not valid JSON', 'invalid_json');
  }
  if (SUSPECT_ESCAPE.test(text) && !storable(value)) {
    throw new ValidationError('strings must be well-formed Unicode without U+0000');
  }
  return value;
}

function storable(value: unknown): boolean {
  if (typeof value === 'string') return value.isWellFormed() && !value.includes('\u0000');
  if (Array.isArray(value)) return value.every(storable);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).every(([k, v]) => storable(k) && storable(v));
  }
  return true;
}
