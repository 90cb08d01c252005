/**
 * ajv instance shared by every request schema, compiled once at boot. A failed validation becomes a
 * 400 {@link ValidationError} naming the first failing field (spec: Errors, 400).
 *
 * Its `date-time` format is this service's strict RFC 3339 (src/schemas/date-time.ts), not ajv-formats'
 * (which accepts hour-only offsets, a space for `T`, year 0000 and any `:60`): what it accepts is exactly
 * what the flushers can store, and its 400 message says which rule a timestamp broke.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ValidationError } from '../errors.js';
import { rfc3339Problem } from './date-time.js';

// ajv-formats ships CommonJS with `exports.default`; under ESM interop the callable is either form.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => Ajv;

export const ajv = new Ajv({ allErrors: false, strict: false });
addFormats(ajv);
ajv.addFormat('date-time', { type: 'string', validate: (value: string) => rfc3339Problem(value) === null });

/** The value at JSON pointer `pointer` (ajv's instancePath) inside `data`; undefined when absent. */
function at(data: unknown, pointer: string): unknown {
  let v = data;
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, part)) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** The 400 message of ajv error `e` on `data`: the field, then what is wrong with it. */
function describe(e: ErrorObject | undefined, data: unknown): string {
  const where = e?.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'body';
  if (e?.keyword === 'format' && e.params.format === 'date-time') {
    return `${where} ${rfc3339Problem(at(data, e.instancePath)) ?? 'must be an RFC 3339 date-time'}`;
  }
  return `${where} ${e?.message ?? 'is invalid'}`;
}

/**
 * The JSON Pointer of the member ajv error `e` is about: its instancePath, plus the missing member's name
 * for `required` (so a missing `events[1].type` is `/events/1/type`, like a bad one).
 */
export function failedPointer(e: ErrorObject | undefined): string {
  if (!e) return '';
  const missing = e.keyword === 'required' ? (e.params as { missingProperty?: unknown }).missingProperty : undefined;
  return typeof missing === 'string' ? `${e.instancePath}/${missing.replace(/~/g, '~0').replace(/\//g, '~1')}` : e.instancePath;
}

/**
 * Compiles `schema` once and returns a function that returns `data` typed, or throws a 400
 * {@link ValidationError} whose message and `pointer` name the first failing member.
 */
export function compileValidator<T>(schema: object): (data: unknown) => T {
  const validate: ValidateFunction = ajv.compile(schema);
  return (data: unknown): T => {
    if (validate(data)) return data as T;
    const first = validate.errors?.[0];
    throw new ValidationError(describe(first, data), 'invalid_request', failedPointer(first));
  };
}
