import { ValidationError } from './errors';

/** Parses a raw JSON body. @throws {ValidationError} 400 `invalid_json` for empty or malformed bytes. */
export function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ValidationError('body is not valid JSON', 'invalid_json');
  }
}
