/**
 * ajv instance shared by every request schema, compiled once at boot. A failed validation becomes a
 * 400 {@link ValidationError} naming the first failing field (spec: Errors, 400).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ValidationError } from '../errors.js';

// ajv-formats ships CommonJS with `exports.default`; under ESM interop the callable is either form.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => Ajv;

export const ajv = new Ajv({ allErrors: false, strict: false });
addFormats(ajv);

/** Compiles `schema` once and returns a function that returns `data` typed, or throws 400. */
export function compileValidator<T>(schema: object): (data: unknown) => T {
  const validate: ValidateFunction = ajv.compile(schema);
  return (data: unknown): T => {
    if (validate(data)) return data as T;
    const e = validate.errors?.[0];
    const where = e?.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'body';
    throw new ValidationError(`${where} ${e?.message ?? 'is invalid'}`);
  };
}
