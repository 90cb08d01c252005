/**
 * JSON Schema of the workspace import/export file (`admin workspace import --file F.json`, `workspace
 * export`; issue #4). One file holds a whole org chart; entries refer to each other by client-side keys
 * (`key` of organizations, units and positions; `externalId` of members), never by database ids, so a
 * file written by hand or exported from another workspace loads in one step. Game ids in
 * `clockInGameIds` are the only database ids: games of the target workspace.
 *
 * Unlike the heartbeat (spec: Versioning rule 2), this file is operator input, so unknown fields are
 * refused (`additionalProperties: false`) to catch typos such as `postions`. Structure is checked here;
 * cross-references, duplicates, cycles and rule limits are checked by src/workspace/workspace-import.ts.
 */

/** Most entries in one array of the file. */
export const MAX_IMPORT_ITEMS = 20_000;

const key = { type: 'string', minLength: 1, maxLength: 100 } as const;
const ref = { type: ['string', 'null'], minLength: 1, maxLength: 100 } as const;
const text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max }) as const;
const instant = { type: 'string', format: 'date-time' } as const;
const list = (items: object) => ({ type: 'array', maxItems: MAX_IMPORT_ITEMS, items }) as const;

/** The workspace file (version 1); see the module comment and {@link WorkspaceFile}. */
export const workspaceFileSchema = {
  $id: 'WorkspaceFile',
  type: 'object',
  additionalProperties: false,
  required: ['version'],
  properties: {
    version: { const: 1 },
    workspace: {
      type: 'object',
      additionalProperties: false,
      properties: {
        timeZone: text(64),
        weekStartsOn: { type: 'integer', minimum: 1, maximum: 7 },
      },
    },
    organizations: list({
      type: 'object',
      additionalProperties: false,
      required: ['key', 'name'],
      properties: { key, name: text(200) },
    }),
    units: list({
      type: 'object',
      additionalProperties: false,
      required: ['key', 'name'],
      properties: { key, name: text(200), parent: ref, organization: ref },
    }),
    positions: list({
      type: 'object',
      additionalProperties: false,
      required: ['key', 'unit', 'name'],
      properties: {
        key,
        unit: key,
        name: text(200),
        autoClockIn: { type: 'boolean' },
        clockInGameIds: { type: 'array', maxItems: 1000, items: { type: 'string', format: 'uuid' } },
        clockInScopeIds: { type: 'array', maxItems: 1000, items: text(128) },
        payoutRateMinor: { type: ['integer', 'null'], minimum: 0 },
        payoutUnit: { type: ['string', 'null'] },
        quotaMinutesPerWeek: { type: ['integer', 'null'] },
      },
    }),
    members: list({
      type: 'object',
      additionalProperties: false,
      required: ['externalId'],
      properties: {
        externalId: text(128),
        displayName: { type: ['string', 'null'], maxLength: 200 },
        joinedAt: instant,
        positions: { type: 'array', maxItems: 1000, items: key },
      },
    }),
    operations: list({
      type: 'object',
      additionalProperties: false,
      required: ['type', 'title', 'startsAt', 'endsAt'],
      properties: { type: text(64), title: text(200), startsAt: instant, endsAt: instant, unit: ref, organization: ref },
    }),
    records: list({
      type: 'object',
      additionalProperties: false,
      required: ['member', 'type', 'issuedAt'],
      properties: {
        member: text(128),
        type: text(64),
        reason: { type: ['string', 'null'], maxLength: 2000 },
        issuedAt: instant,
        expiresAt: { type: ['string', 'null'], format: 'date-time' },
        revoked: { type: 'boolean' },
      },
    }),
  },
} as const;

/** A valid workspace file (what {@link workspaceFileSchema} accepts). Times are RFC 3339 strings. */
export interface WorkspaceFile {
  version: 1;
  workspace?: { timeZone?: string; weekStartsOn?: number };
  organizations?: { key: string; name: string }[];
  units?: { key: string; name: string; parent?: string | null; organization?: string | null }[];
  positions?: {
    key: string;
    unit: string;
    name: string;
    autoClockIn?: boolean;
    clockInGameIds?: string[];
    clockInScopeIds?: string[];
    payoutRateMinor?: number | null;
    payoutUnit?: string | null;
    quotaMinutesPerWeek?: number | null;
  }[];
  members?: { externalId: string; displayName?: string | null; joinedAt?: string; positions?: string[] }[];
  operations?: { type: string; title: string; startsAt: string; endsAt: string; unit?: string | null; organization?: string | null }[];
  records?: { member: string; type: string; reason?: string | null; issuedAt: string; expiresAt?: string | null; revoked?: boolean }[];
}
