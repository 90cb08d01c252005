/**
 * JSON Schemas of the console's own request bodies (`/console/api/*`, operator input). Unlike the game
 * endpoints these refuse unknown fields: a moderator's typo must not silently drop part of an action.
 * Per-type command payloads are checked by the commands service (src/schemas/commands.ts).
 */
import { BAN_SCOPES } from '../../bans/ban-types.js';
import { FORCED_STATES } from '../../schemas/doors.js';
import { MAX_INTERVAL_SECONDS, MIN_INTERVAL_SECONDS } from '../../games/game-service.js';

const id = { type: 'string', minLength: 1, maxLength: 128 } as const;

/** POST /console/api/games/:gameId/commands. */
export const issueCommandSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'target'],
  properties: {
    type: { type: 'string', minLength: 1, maxLength: 64 },
    target: {
      type: 'object',
      additionalProperties: false,
      properties: { externalServerId: id, externalId: id },
    },
    payload: { type: 'object' },
    expiresInSeconds: { type: 'integer' },
  },
} as const;

export interface IssueCommandBody {
  type: string;
  target: { externalServerId?: string; externalId?: string };
  payload?: Record<string, unknown>;
  expiresInSeconds?: number;
}

/** POST /console/api/games/:gameId/doors/:doorKey/state. */
export const forceDoorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['state'],
  properties: { state: { enum: FORCED_STATES } },
} as const;

export interface ForceDoorBody {
  state: (typeof FORCED_STATES)[number];
}

/**
 * POST /console/api/games/:gameId/lockdown: `locked: true` forces every door locked, `false` returns every
 * door to auto. `doorCount`: the number of doors the moderator confirmed; when the game has a different
 * number now, nothing is forced (409 `doors_changed`).
 */
export const lockdownSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['locked'],
  properties: { locked: { type: 'boolean' }, doorCount: { type: 'integer', minimum: 0 } },
} as const;

export interface LockdownBody {
  locked: boolean;
  doorCount?: number;
}

/** POST /console/api/games/:gameId/bans (the ban belongs to the game's workspace). */
export const createBanSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['externalId', 'scope', 'reason'],
  properties: {
    externalId: id,
    scope: { enum: BAN_SCOPES },
    externalServerId: { type: ['string', 'null'], maxLength: 128 },
    /** Whole seconds; null or absent = permanent. */
    expiresInSeconds: { type: ['integer', 'null'] },
    reason: { type: 'string', minLength: 1, maxLength: 500 },
  },
} as const;

export interface CreateBanBody {
  externalId: string;
  scope: (typeof BAN_SCOPES)[number];
  externalServerId?: string | null;
  expiresInSeconds?: number | null;
  reason: string;
}

/**
 * PATCH /console/api/games/:gameId/settings: the settings `admin games set-interval` and `admin games
 * set-platform` change (absent members keep their value; null clears a text setting). `cloudApiBaseUrl`
 * and `cloudApiKey` are the operator's alone (src/auth/moderators/console-permissions.ts).
 */
export const gameSettingsSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    /** Seconds (spec: POST heartbeat, 15–60). */
    heartbeatIntervalSeconds: { type: 'integer', minimum: MIN_INTERVAL_SECONDS, maximum: MAX_INTERVAL_SECONDS },
    platform: { type: ['string', 'null'], minLength: 1, maxLength: 64 },
    universeId: { type: ['string', 'null'], minLength: 1, maxLength: 64 },
    nativeBans: { type: 'boolean' },
    cloudApiBaseUrl: { type: ['string', 'null'], minLength: 1, maxLength: 2048 },
    cloudApiKey: { type: ['string', 'null'], minLength: 1, maxLength: 4096 },
  },
} as const;

export interface GameSettingsBody {
  heartbeatIntervalSeconds?: number;
  platform?: string | null;
  universeId?: string | null;
  nativeBans?: boolean;
  cloudApiBaseUrl?: string | null;
  cloudApiKey?: string | null;
}
