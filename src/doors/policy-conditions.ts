/**
 * Validation of policy conditions (`DoorPolicy.conditions`), shared by the operator side when a policy is
 * added and by the catalog when policies are loaded. Schema: `policyConditionsSchema`
 * (src/schemas/doors.ts); the time zone must also be one the runtime knows.
 */
import { ValidationError } from '../errors.js';
import { compileValidator } from '../schemas/validator.js';
import { policyConditionsSchema } from '../schemas/doors.js';
import type { PolicyConditions } from './door-types.js';
import { isTimeZone } from './time-window.js';

const validate = compileValidator<PolicyConditions>(policyConditionsSchema);

/**
 * Returns `value` as {@link PolicyConditions}.
 * @throws {ValidationError} 400 naming the first bad field, or an unknown time zone.
 */
export function parseConditions(value: unknown): PolicyConditions {
  let conditions: PolicyConditions;
  try {
    conditions = validate(value ?? {});
  } catch (err) {
    if (err instanceof ValidationError) throw new ValidationError(`conditions: ${err.message.replace(/^body /, '')}`, 'invalid_conditions');
    throw err;
  }
  const tz = conditions.timeWindow?.timeZone;
  if (tz !== undefined && !isTimeZone(tz)) throw new ValidationError(`conditions.timeWindow.timeZone: unknown time zone "${tz}"`, 'invalid_conditions');
  return conditions;
}
