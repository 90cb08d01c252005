/**
 * Command types, their targets and their payload JSON Schemas (spec: Command types; "per-type payload:
 * not shown", decided here). A payload is checked with ajv when the command is issued, so a bad one is
 * refused before anything is stored; the game receives it unchanged as `payload` of the command entry
 * (`commandEntrySchema` in ./heartbeat.ts).
 *
 * | type                | target          | payload (fields marked ? are optional)                         |
 * |---------------------|-----------------|----------------------------------------------------------------|
 * | kick                | user            | `{ reason }`                                                    |
 * | mute                | user            | `{ durationSeconds, reason? }` (1 s to 30 days)                 |
 * | unmute              | user            | `{ reason? }`                                                   |
 * | freeze              | user            | `{ reason? }`                                                   |
 * | teleport            | user            | exactly one of `{ position: { x, y, z } }` or `{ place }`       |
 * | message             | user or server  | `{ text }`: to the user, or to everyone on the server           |
 * | door_set_state      | server          | `{ doorKey, state: "locked" \| "unlocked" \| "auto" }`           |
 * | refresh_permissions | user or server  | `{}`: that user's cached door decisions, or all of the server's |
 * | shutdown            | server          | `{ reason? }`                                                   |
 * | custom              | user or server  | any JSON object (the integration decides what it means)         |
 *
 * Fixed types reject unknown payload fields (a typo such as `reasn` is an error, not a silent drop).
 * Every payload is a JSON object of at most {@link MAX_PAYLOAD_BYTES} bytes.
 */
import { ajv } from './validator.js';
import { ValidationError } from '../errors.js';
import type { ErrorObject, ValidateFunction } from 'ajv';

export const COMMAND_TYPES = [
  'kick',
  'mute',
  'unmute',
  'freeze',
  'teleport',
  'message',
  'door_set_state',
  'refresh_permissions',
  'shutdown',
  'custom',
] as const;

export type CommandType = (typeof COMMAND_TYPES)[number];

/** Command states (spec: States › Command lifecycle). */
export const COMMAND_STATUSES = ['pending', 'dispatched', 'acked', 'failed', 'expired'] as const;
export type CommandStatus = (typeof COMMAND_STATUSES)[number];

/** What a command may be aimed at: one user (routed to the server hosting them), a server, or either. */
export type TargetKind = 'user' | 'server' | 'either';

export const COMMAND_TARGETS: Readonly<Record<CommandType, TargetKind>> = {
  kick: 'user',
  mute: 'user',
  unmute: 'user',
  freeze: 'user',
  teleport: 'user',
  message: 'either',
  door_set_state: 'server',
  refresh_permissions: 'either',
  shutdown: 'server',
  custom: 'either',
};

/** Largest payload, bytes of its JSON: keeps a heartbeat response with a full queue bounded. */
export const MAX_PAYLOAD_BYTES = 2048;
/** Longest mute, seconds (30 days). */
export const MAX_MUTE_SECONDS = 30 * 24 * 3600;

const reason = { type: 'string', minLength: 1, maxLength: 500 } as const;
const name = { type: 'string', minLength: 1, maxLength: 128 } as const;
const fixed = (properties: Record<string, object>, required: string[] = []) =>
  ({ type: 'object', additionalProperties: false, required, properties }) as const;

/** The payload schema of each type (draft-07, as ajv compiles it). */
export const commandPayloadSchemas: Readonly<Record<CommandType, object>> = {
  kick: fixed({ reason }, ['reason']),
  mute: fixed({ durationSeconds: { type: 'integer', minimum: 1, maximum: MAX_MUTE_SECONDS }, reason }, ['durationSeconds']),
  unmute: fixed({ reason }),
  freeze: fixed({ reason }),
  teleport: {
    ...fixed({
      position: fixed({ x: { type: 'number' }, y: { type: 'number' }, z: { type: 'number' } }, ['x', 'y', 'z']),
      place: name,
    }),
    oneOf: [{ required: ['position'] }, { required: ['place'] }],
  },
  message: fixed({ text: { type: 'string', minLength: 1, maxLength: 1000 } }, ['text']),
  door_set_state: fixed({ doorKey: name, state: { enum: ['locked', 'unlocked', 'auto'] } }, ['doorKey', 'state']),
  refresh_permissions: fixed({}),
  shutdown: fixed({ reason }),
  custom: { type: 'object' },
};

const validators = new Map<CommandType, ValidateFunction>(COMMAND_TYPES.map((t) => [t, ajv.compile(commandPayloadSchemas[t])]));

/** True when `type` is one of {@link COMMAND_TYPES}. */
export function isCommandType(type: string): type is CommandType {
  return (COMMAND_TYPES as readonly string[]).includes(type);
}

/** One readable sentence for the first ajv error, naming the field as `payload.<path>`. */
function describe(type: CommandType, e: ErrorObject | undefined): string {
  const where = `payload${e?.instancePath ? e.instancePath.replace(/\//g, '.') : ''}`;
  if (!e) return `${where} is invalid for ${type}`;
  if (e.keyword === 'additionalProperties') return `${where} has unknown field "${String(e.params.additionalProperty)}" for ${type}`;
  if (e.keyword === 'oneOf') return `${where} of ${type} needs exactly one of: position, place`;
  if (e.keyword === 'enum') return `${where} must be one of: ${(e.params.allowedValues as unknown[]).join(', ')}`;
  return `${where} ${e.message ?? 'is invalid'}`;
}

/**
 * Checks the type and payload of a command about to be issued and returns the payload to store.
 * @param payload parsed JSON; `undefined` means `{}`.
 * @throws {ValidationError} `invalid_command_type` for an unknown type; `invalid_payload` when the payload
 *   is not an object, fails the type's schema, or exceeds {@link MAX_PAYLOAD_BYTES}.
 */
export function validateCommandPayload(type: string, payload: unknown): { type: CommandType; payload: Record<string, unknown> } {
  if (!isCommandType(type)) {
    throw new ValidationError(`unknown command type "${type}"; one of: ${COMMAND_TYPES.join(', ')}`, 'invalid_command_type');
  }
  const value = payload === undefined ? {} : payload;
  const validate = validators.get(type)!;
  if (!validate(value)) {
    // A failed oneOf also reports each branch's own error first; the oneOf one says what is wanted.
    const errors = validate.errors ?? [];
    throw new ValidationError(describe(type, errors.find((e) => e.keyword === 'oneOf') ?? errors[0]), 'invalid_payload');
  }
  const bytes = Buffer.byteLength(JSON.stringify(value));
  if (bytes > MAX_PAYLOAD_BYTES) throw new ValidationError(`payload is ${bytes} bytes; at most ${MAX_PAYLOAD_BYTES}`, 'invalid_payload');
  return { type, payload: value as Record<string, unknown> };
}
