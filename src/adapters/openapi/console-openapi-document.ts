/**
 * The OpenAPI 3.1 document of the moderator console's own API (issue #21: "the console API described …
 * with the auth it needs"): every route under `/console/api` of the console listener, plus `/metrics`.
 * Kept apart from `openapi.json`, which describes the five game endpoints and nothing else (spec:
 * "The whole surface is the five endpoints"). `npm run openapi` writes it to `console-openapi.json`; the
 * console serves it at `/console/openapi.json`; test/openapi/console-openapi.test.ts fails when it
 * drifts from the committed file or from the routes the console app registers.
 *
 * Request bodies are the JSON Schemas the console validates with (src/adapters/console/console-schemas.ts);
 * response bodies are written out here from the view types they serialize (Dates as RFC 3339 strings,
 * bigints as decimal strings).
 *
 * Each operation's permission (`x-permission`, and a sentence of its description) comes from the one
 * permission table, src/auth/moderators/console-permissions.ts.
 */
import { COMMAND_STATUSES, COMMAND_TYPES } from '../../schemas/commands.js';
import { createBanSchema, forceDoorSchema, gameSettingsSchema, issueCommandSchema, lockdownSchema } from '../console/console-schemas.js';
import { ACCESS_LOG_PAGE_DEFAULT, ACCESS_LOG_PAGE_MAX } from '../../doors/access-log-query.js';
import { toOpenApiSchema } from './openapi-document.js';
import { CONSOLE_ROUTES, MODERATOR_ROLES, PERMISSIONS } from '../../auth/moderators/console-permissions.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const str = (description?: string): Json => ({ type: 'string', ...(description ? { description } : {}) });
const time = (description?: string): Json => ({ type: 'string', format: 'date-time', ...(description ? { description } : {}) });
const nullable = (s: Json): Json => ({ anyOf: [s, { type: 'null' }] });
const int = (description?: string): Json => ({ type: 'integer', ...(description ? { description } : {}) });
const obj = (properties: Record<string, Json>, description?: string): Json => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
  ...(description ? { description } : {}),
});
const arr = (items: Json): Json => ({ type: 'array', items });
const withTime = (properties: Record<string, Json>, description?: string): Json => obj({ ...properties, serverTime: time() }, description);
const json = (schema: Json) => ({ 'application/json': { schema } });

const SCHEMAS: Record<string, Json> = {
  Game: obj({ id: str('UUID'), name: str(), workspaceId: str('UUID'), heartbeatIntervalSeconds: int('seconds, 15-60') }),
  GameListed: obj({ id: str('UUID'), name: str(), workspaceId: str('UUID'), workspaceName: str(), heartbeatIntervalSeconds: int('seconds, 15-60') }),
  LiveServer: obj({
    externalServerId: str(),
    externalScopeId: nullable(str()),
    region: nullable(str()),
    playerCount: int(),
    maxPlayers: int(),
    sdkVersion: str(),
    stale: { type: 'boolean', description: 'sdkVersion older than the newest among live servers' },
    uptimeSeconds: { type: 'number', description: 'seconds, as reported in the last heartbeat' },
    heartbeatIntervalSeconds: int('seconds'),
    firstHeartbeatAt: time(),
    lastHeartbeatAt: time(),
    secondsSinceLastHeartbeat: int('whole seconds, as of serverTime'),
    rosterSize: int(),
  }),
  RosterEntry: obj({ externalId: str(), username: nullable(str()), team: nullable(str()), openedAt: time('session start'), sessionSeconds: int('whole seconds, as of serverTime') }),
  Transition: obj({ toStatus: { enum: [...COMMAND_STATUSES] }, at: time(), externalServerId: nullable(str()), reason: nullable(str()) }),
  CommandView: obj(
    {
      id: str('UUID'),
      gameId: str('UUID'),
      type: { enum: [...COMMAND_TYPES] },
      target: obj({ externalServerId: nullable(str()), externalId: nullable(str()) }),
      status: { enum: [...COMMAND_STATUSES] },
      statusAt: time('time of the transition that set status (always one of transitions)'),
      server: nullable(str()),
      issuedBy: str('e.g. console:alice, cli:bob'),
      issuedAt: time(),
      expiresAt: time(),
      failureReason: nullable(str()),
      transitions: arr(ref('Transition')),
      source: { enum: ['live', 'recorded'], description: 'status and transitions come from this one source (Redis command hash, or Postgres once it is gone)' },
    },
    'A command with its status and transitions read from one source, so the transition that set the status is always listed.',
  ),
  IssuedCommand: obj({
    id: str('UUID'),
    gameId: str('UUID'),
    type: { enum: [...COMMAND_TYPES] },
    status: { const: 'pending' },
    target: obj({ externalServerId: nullable(str()), externalId: nullable(str()) }),
    routedTo: nullable(str('server whose queue holds it; null while the user is offline')),
    issuedAt: time(),
    expiresAt: time(),
    nudgeRequested: { type: 'boolean' },
  }),
  DoorChange: obj({ key: str(), from: { enum: ['auto', 'locked', 'unlocked'] }, forcedState: { enum: ['auto', 'locked', 'unlocked'] }, doorsVersion: int() }, 'door_set_state only: recorded when issued'),
  Door: obj({
    key: str(),
    name: str(),
    kind: str(),
    defaultEffect: { enum: ['allow', 'deny'] },
    failMode: { enum: ['closed', 'open'] },
    forcedState: { enum: ['auto', 'locked', 'unlocked'] },
    policies: int('number of policies'),
    createdAt: time(),
    updatedAt: time(),
  }),
  ForceResult: obj({
    key: str(),
    forcedState: { enum: ['auto', 'locked', 'unlocked'] },
    doorsVersion: int(),
    commands: arr(obj({ externalServerId: str(), commandId: str('UUID') })),
    failures: arr(obj({ externalServerId: str(), error: str() })),
  }),
  Policy: obj({
    id: str('UUID'),
    doorKey: str(),
    effect: { enum: ['allow', 'deny'] },
    priority: int(),
    subjectType: { enum: ['positions', 'units', 'organizations', 'users', 'everyone'] },
    subjectIds: arr(str()),
    includeDescendants: { type: 'boolean' },
    conditions: { type: 'object', description: '{ clockedIn?, operationType?, noActiveRecordType?, timeWindow?: { days?, from, to, timeZone }, minTenureDays? }' },
    createdAt: time(),
  }),
  AccessLogEntry: obj({
    id: str('decimal (bigint)'),
    at: time('when the decision was answered'),
    externalServerId: nullable(str()),
    externalId: str('the user'),
    doorKey: str(),
    decision: { enum: ['allow', 'deny'] },
    reason: str('forced_locked, forced_unlocked, policy_deny:<id>, policy_allow:<id>, default_allow or default_deny'),
    policyId: nullable(str('the deciding policy (GET …/policies/{policyId}); null for forced states and defaults')),
  }),
  Ban: obj({
    id: str('UUID'),
    workspaceId: str('UUID'),
    externalId: str(),
    scope: { enum: ['server', 'game', 'workspace'] },
    gameId: nullable(str()),
    externalServerId: nullable(str()),
    reason: str(),
    issuedBy: str(),
    issuedAt: time(),
    expiresAt: nullable(time('null = permanent')),
    liftedAt: nullable(time()),
    liftedBy: nullable(str()),
    status: { enum: ['active', 'expired', 'lifted'] },
  }),
  QueuedWrite: obj({ id: str(), gameId: str(), externalId: str(), active: { type: 'boolean' }, durationSeconds: nullable(int('seconds; null = permanent')), state: { const: 'queued' } }),
  Kick: obj({ gameId: str(), externalServerId: str(), commandId: nullable(str()) }),
  HealthWarning: obj({ id: str(), gameId: str(), kind: str('e.g. persistent_throttling'), message: str(), firstAt: time(), lastAt: time(), count: int(), resolvedAt: nullable(time()) }),
  ThrottledMinute: obj({ minute: time('start of the minute'), throttled: int('requests answered 429'), by: { type: 'object', additionalProperties: { type: 'integer' }, description: '<kind>:<server or user> → count' } }),
  StreamBacklog: obj({ entries: int('entries not flushed yet'), lagSeconds: { type: 'number', description: 'seconds since the oldest unflushed entry' } }),
  Health: withTime({
    warnings: arr(ref('HealthWarning')),
    throttling: arr(ref('ThrottledMinute')),
    streams: { type: 'object', additionalProperties: ref('StreamBacklog'), description: 'events, sessions, command_log, access_log' },
  }),
  IssueCommandRequest: toOpenApiSchema(issueCommandSchema),
  ForceDoorRequest: toOpenApiSchema(forceDoorSchema),
  LockdownRequest: toOpenApiSchema(lockdownSchema),
  CreateBanRequest: toOpenApiSchema(createBanSchema),
  GameSettingsRequest: toOpenApiSchema(gameSettingsSchema),
  GameSettings: obj({
    id: str('UUID'),
    heartbeatIntervalSeconds: int('seconds, 15-60'),
    platform: nullable(str()),
    universeId: nullable(str()),
    cloudApiBaseUrl: nullable(str()),
    cloudApiKeySet: { type: 'boolean', description: 'whether a cloud API key is stored (the key is never returned)' },
    nativeBans: { type: 'boolean' },
  }),
  Moderator: obj({
    id: str('UUID'),
    workspaceId: str('UUID'),
    name: str('display name, recorded with the id on every change'),
    role: { enum: [...MODERATOR_ROLES] },
    tokenPrefix: str('public part of the personal access token'),
    disabledAt: nullable(time()),
    createdAt: time(),
    identities: arr(obj({ issuer: str(), subject: str() })),
  }),
  IssuedModerator: obj({ id: str('UUID'), name: str(), role: { enum: [...MODERATOR_ROLES] }, workspaceId: str('UUID'), token: str('gmod_<prefix>.<secret>, shown this once') }),
  Caller: {
    description: 'Who is signed in: the operator, or moderator accounts (one per workspace) with their role and permissions.',
    oneOf: [
      obj({ kind: { const: 'operator' }, permissions: arr(str()) }),
      obj({
        kind: { const: 'moderator' },
        via: { enum: ['token', 'oidc', 'bearer'] },
        accounts: arr(obj({ id: str(), name: str(), role: { enum: [...MODERATOR_ROLES] }, workspaceId: str(), workspaceName: nullable(str()), permissions: arr(str()) })),
      }),
    ],
  },
  ErrorEnvelope: obj({
    error: {
      type: 'object',
      required: ['code', 'message', 'requestId'],
      properties: {
        code: str('stable code'),
        message: str(),
        requestId: str(),
        pointer: str('Additive, 400 only: JSON Pointer (RFC 6901) of the first member that failed schema validation, e.g. /reason ("" = the whole body); absent when the 400 names no member.'),
      },
    },
    serverTime: time(),
  }),
};

const ERRORS: Record<string, string> = {
  '400': 'Invalid body or parameter (invalid_request, invalid_payload, invalid_target, invalid_expiry, invalid_command_type, invalid_since, invalid_cursor, …).',
  '401': 'No or a wrong credential: console_unauthorized, malformed_token, unknown_token, bad_token, token_throttled, moderator_disabled, session_expired, session_revoked.',
  '403': 'The role lacks the operation\'s permission (forbidden, naming it), or a cookie-authenticated change without the CSRF token or from another site (csrf_refused).',
  '404': 'Unknown game, door, policy, ban, workspace, moderator or live server; a game, ban or workspace where the caller holds no account answers the same (unknown_game, unknown_door, unknown_policy, unknown_ban, not_found, server_not_live).',
  '409': 'The game changed since the moderator confirmed (doors_changed): ask again.',
  '429': 'Command queue full (command_queue_full); Retry-After in seconds.',
  '503': 'Redis or PostgreSQL unreachable (unavailable); Retry-After in seconds.',
};

function responses(ok: Json | null, description: string, errors: string[], status = '200'): Record<string, Json> {
  const out: Record<string, Json> = { [status]: { description, ...(ok ? { content: json(ok) } : {}) } };
  for (const e of ['401', '403', ...errors, '503']) out[e] = { $ref: `#/components/responses/Error${e}` };
  return out;
}

const gameId: Json = { name: 'gameId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const workspaceId: Json = { name: 'workspaceId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const moderatorId: Json = { name: 'moderatorId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };

/**
 * Adds each operation's permission from the table: `x-permission` and a sentence of its description.
 * Paths are matched as the console registers them (`/console/api` stripped, `{p}` as `:p`).
 */
function withPermissions(paths: Record<string, Record<string, Record<string, Json>>>): Record<string, Record<string, Record<string, Json>>> {
  for (const [p, methods] of Object.entries(paths)) {
    const route = p.startsWith('/console/api') ? p.slice('/console/api'.length).replace(/\{(\w+)\}/g, ':$1') : `/${p}`;
    for (const [method, op] of Object.entries(methods)) {
      const entry = CONSOLE_ROUTES.find((r) => r.method === method && r.path === route);
      if (!entry) continue;
      const needed = PERMISSIONS[entry.permission];
      const fields = Object.entries(entry.fieldPermissions ?? {});
      const sentence = `Permission: ${entry.permission} (${needed === null ? 'the operator only' : `role ${needed} or above; the operator always`}).` +
        (fields.length ? ` The members ${fields.map(([f, perm]) => `${f} (${perm})`).join(', ')} also need the permission named.` : '');
      op['x-permission'] = entry.permission;
      if (fields.length) op['x-field-permissions'] = Object.fromEntries(fields);
      op.description = typeof op.description === 'string' ? `${op.description}\n\n${sentence}` : sentence;
    }
  }
  return paths;
}
const query = (name: string, description: string, schema: Json = { type: 'string' }): Json => ({ name, in: 'query', required: false, description, schema });

/** Builds the console API document. Pure. */
export function buildConsoleOpenApiDocument(): Record<string, unknown> {
  const errorResponses: Record<string, Json> = {};
  for (const [status, description] of Object.entries(ERRORS)) {
    errorResponses[`Error${status}`] = {
      description,
      ...(status === '429' || status === '503' ? { headers: { 'Retry-After': { description: 'seconds', schema: { type: 'integer', minimum: 1 } } } } : {}),
      content: json(ref('ErrorEnvelope')),
    };
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'Moderator console API',
      version: '1.0.0',
      description: [
        'The JSON API behind the moderator console page, on the console listener (CONSOLE_HOST:CONSOLE_PORT, loopback by default), never on the game listener.',
        'Auth (issue #31): a session cookie (sign in with POST /console/api/session, or OpenID Connect at /console/auth/oidc/start when configured), `Authorization: Bearer gmod_<prefix>.<secret>` (a moderator\'s personal access token, for scripts and bots), or `Authorization: Bearer <operator token>` (CONSOLE_TOKEN: the operator\'s break-glass for every workspace, recorded as `operator`). With the cookie, every change (POST, PATCH, DELETE) also needs `X-CSRF-Token: <csrfToken of GET /console/api/session>` and a same-origin request, else 403 csrf_refused.',
        `Roles and tenancy: each operation names its permission (x-permission); roles hold them as follows: ${Object.entries(PERMISSIONS).map(([p, role]) => `${p}: ${role ?? 'operator only'}`).join('; ')}. Each role holds every permission of the roles below it (viewer < moderator < admin). A game, ban or workspace where the caller holds no account answers 404 as a missing one; a role without the permission answers 403 forbidden naming it. Every change is recorded as made by \`moderator:<id> (<name>)\` or \`operator\`; X-Moderator is ignored.`,
        'Errors use the game API envelope { error: { code, message, requestId, pointer? }, serverTime } (pointer: a 400\'s first failing member as a JSON Pointer).',
        'The page itself (/, /assets/*, /vendor/*), /healthz, /openapi.json (the game API) and /console/openapi.json (this document) need no token.',
      ].join('\n\n'),
    },
    servers: [{ url: 'http://127.0.0.1:3001', description: 'the console listener (CONSOLE_HOST:CONSOLE_PORT)' }],
    security: [{ sessionCookie: [] }, { moderatorToken: [] }, { operatorToken: [] }],
    paths: withPermissions({
      '/console/api/session': {
        post: {
          operationId: 'signIn',
          summary: 'Sign in with a personal access token: exchanged for a session cookie (HttpOnly; SameSite=Strict; Path=/; Secure over TLS)',
          description: 'Needs no credential; refused from another origin (403 csrf_refused). The token is not kept by the page.',
          security: [],
          requestBody: { required: true, content: json(obj({ token: str('gmod_<prefix>.<secret>') })) },
          responses: responses(withTime({ caller: ref('Caller'), csrfToken: str('send as X-CSRF-Token on every change') }), 'Signed in (Set-Cookie).', ['400'], '201'),
        },
        get: {
          operationId: 'whoAmI',
          summary: 'Who is signed in: the operator or the moderator accounts, their roles and permissions, and the CSRF token of a session',
          responses: responses(withTime({ caller: ref('Caller'), csrfToken: nullable(str('null without a session')) }), 'The caller.', []),
        },
        delete: {
          operationId: 'signOut',
          summary: 'Sign out: the session is deleted and the cookie cleared',
          responses: { '204': { description: 'Signed out.' }, '401': { $ref: '#/components/responses/Error401' }, '403': { $ref: '#/components/responses/Error403' }, '503': { $ref: '#/components/responses/Error503' } },
        },
      },
      '/console/api/workspaces/{workspaceId}/moderators': {
        get: {
          operationId: 'listModerators',
          summary: 'The workspace\'s moderator accounts (never a token or hash)',
          parameters: [workspaceId],
          responses: responses(withTime({ moderators: arr(ref('Moderator')) }), 'The accounts.', ['404']),
        },
        post: {
          operationId: 'addModerator',
          summary: 'Add a moderator to the workspace; the personal access token is returned this once',
          parameters: [workspaceId],
          requestBody: { required: true, content: json({ type: 'object', additionalProperties: false, required: ['name', 'role'], properties: { name: { type: 'string', minLength: 1, maxLength: 64 }, role: { enum: [...MODERATOR_ROLES] } } }) },
          responses: responses(withTime({ moderator: ref('IssuedModerator') }), 'Added.', ['400', '404'], '201'),
        },
      },
      '/console/api/workspaces/{workspaceId}/moderators/{moderatorId}': {
        patch: {
          operationId: 'changeModerator',
          summary: 'Change a moderator\'s role or disable / enable them; in force on every API process at the next request',
          parameters: [workspaceId, moderatorId],
          requestBody: { required: true, content: json({ type: 'object', additionalProperties: false, properties: { role: { enum: [...MODERATOR_ROLES] }, disabled: { type: 'boolean' } } }) },
          responses: responses(withTime({ moderator: ref('Moderator') }), 'Changed.', ['400', '404']),
        },
      },
      '/console/api/workspaces/{workspaceId}/moderators/{moderatorId}/token': {
        post: {
          operationId: 'rotateModeratorToken',
          summary: 'Replace a moderator\'s personal access token; the new one is returned this once, the old one and its sessions end on every API process at their next request',
          parameters: [workspaceId, moderatorId],
          responses: responses(withTime({ moderator: ref('IssuedModerator') }), 'Rotated.', ['404'], '201'),
        },
      },
      '/console/api/workspaces/{workspaceId}/moderators/{moderatorId}/invitations': {
        post: {
          operationId: 'inviteModerator',
          summary: 'A one-time invitation code (returned this once, valid 3 days) that links the identity of the person\'s first OpenID Connect sign-in to the account',
          parameters: [workspaceId, moderatorId],
          responses: responses(withTime({ invitation: obj({ code: str('pass as ?invite= to /console/auth/oidc/start'), expiresAt: time() }) }), 'Invited.', ['404'], '201'),
        },
      },
      '/console/api/games/{gameId}/settings': {
        patch: {
          operationId: 'changeGameSettings',
          summary: 'Change a game\'s heartbeat interval (15-60 s) and platform settings, as admin games set-interval / set-platform do; absent members keep their value',
          parameters: [gameId],
          requestBody: { required: true, content: json(ref('GameSettingsRequest')) },
          responses: responses(withTime({ settings: ref('GameSettings') }), 'Changed (the game\'s cached record is refreshed on every API process).', ['400', '404']),
        },
      },
      '/console/api/games': {
        get: { operationId: 'listGames', summary: 'Every game (newest first, up to 500)', responses: responses(withTime({ games: arr(ref('GameListed')) }), 'The games.', []) },
      },
      '/console/api/games/{gameId}/live': {
        get: {
          operationId: 'liveView',
          summary: 'Live servers, the roster of one server and the 50 newest commands (the polling fallback of the live feed)',
          parameters: [gameId, query('server', 'externalServerId whose roster to include')],
          responses: responses(withTime({ game: ref('Game'), servers: arr(ref('LiveServer')), roster: nullable(obj({ externalServerId: str(), players: arr(ref('RosterEntry')) })), commands: arr(ref('CommandView')) }), 'The live view.', ['404']),
        },
      },
      '/console/api/games/{gameId}/live/stream': {
        get: {
          operationId: 'liveStream',
          summary: 'The live feed as Server-Sent Events (servers, commands, roster, health)',
          description:
            'text/event-stream, open until the client leaves. Events: `hello` {serverTime, gameId, server, refreshSeconds} once; then `servers` {serverTime, servers: LiveServer[]}, `commands` {serverTime, commands: CommandView[]}, `roster` {serverTime, externalServerId, players: RosterEntry[]} (with ?server=), `health` (Health) at once and whenever they change. `id` = snapshot sequence number. `: ping` comments every 15 s. Views are built once per change per process and shared by every open stream of the game. Read it with fetch (EventSource cannot send Authorization).',
          parameters: [gameId, query('server', 'externalServerId whose roster to stream')],
          responses: {
            '200': { description: 'The event stream.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
            '401': { $ref: '#/components/responses/Error401' },
            '403': { $ref: '#/components/responses/Error403' },
            '404': { $ref: '#/components/responses/Error404' },
            '503': { $ref: '#/components/responses/Error503' },
          },
        },
      },
      '/console/api/games/{gameId}/commands': {
        post: {
          operationId: 'issueCommand',
          summary: 'Issue a moderation command (kick, mute, freeze, teleport, message, door_set_state, …) as the signed-in moderator',
          description: 'door_set_state records the door forced state when issued (doors version raised, cached decisions retired) and returns it as `door`; it needs doors.force instead.',
          parameters: [gameId],
          requestBody: { required: true, content: json(ref('IssueCommandRequest')) },
          responses: responses(withTime({ command: { allOf: [ref('IssuedCommand'), { type: 'object', properties: { door: ref('DoorChange') } }] } }), 'Issued (pending).', ['400', '404', '429'], '201'),
        },
      },
      '/console/api/games/{gameId}/doors': {
        get: {
          operationId: 'listDoors',
          summary: 'Doors with their forced state; lockdown = every door forced locked',
          parameters: [gameId],
          responses: responses(withTime({ doors: arr(ref('Door')), lockdown: { type: 'boolean' } }), 'The doors.', ['404']),
        },
      },
      '/console/api/games/{gameId}/doors/{doorKey}/state': {
        post: {
          operationId: 'forceDoor',
          summary: 'Force one door locked or unlocked, or return it to auto (door_set_state to every live server)',
          parameters: [gameId, { name: 'doorKey', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: { required: true, content: json(ref('ForceDoorRequest')) },
          responses: responses(withTime({ result: ref('ForceResult') }), 'Recorded and sent.', ['400', '404']),
        },
      },
      '/console/api/games/{gameId}/lockdown': {
        post: {
          operationId: 'lockdown',
          summary: 'Lock every door of the game (locked: true) or return every door to auto (false)',
          description: 'With doorCount (the number of doors the moderator confirmed), a game whose door count changed meanwhile is refused with 409 doors_changed and nothing is forced.',
          parameters: [gameId],
          requestBody: { required: true, content: json(ref('LockdownRequest')) },
          responses: responses(withTime({ lockdown: { type: 'boolean' }, results: arr(ref('ForceResult')) }), 'Done.', ['400', '404', '409']),
        },
      },
      '/console/api/games/{gameId}/access-log': {
        get: {
          operationId: 'accessLog',
          summary: 'Grants and denials, newest first, with reason and deciding policy (keyset pagination)',
          parameters: [
            gameId,
            query('door', 'only this door key'),
            query('user', 'only this user (externalId)'),
            query('decision', 'only allow or deny', { enum: ['allow', 'deny'] }),
            query('since', 'RFC 3339 time, a date, or a span back from now (15m, 2h, 7d)'),
            query('limit', `rows per page, 1-${ACCESS_LOG_PAGE_MAX} (default ${ACCESS_LOG_PAGE_DEFAULT})`, { type: 'integer', minimum: 1, maximum: ACCESS_LOG_PAGE_MAX }),
            query('cursor', 'nextCursor of the previous page'),
          ],
          responses: responses(withTime({ entries: arr(ref('AccessLogEntry')), nextCursor: nullable(str('pass as cursor for older rows')), since: nullable(time('the resolved since')) }), 'One page.', ['400', '404']),
        },
      },
      '/console/api/games/{gameId}/policies/{policyId}': {
        get: {
          operationId: 'getPolicy',
          summary: 'One door policy (the one an access-log row names)',
          parameters: [gameId, { name: 'policyId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          responses: responses(withTime({ policy: ref('Policy') }), 'The policy.', ['404']),
        },
      },
      '/console/api/games/{gameId}/bans': {
        get: {
          operationId: 'listBans',
          summary: 'Bans of the game\'s workspace in force (all=1: also lifted and expired)',
          parameters: [gameId, query('all', '1 to include lifted and expired bans')],
          responses: responses(withTime({ bans: arr(ref('Ban')) }), 'The bans.', ['404']),
        },
        post: {
          operationId: 'createBan',
          summary: 'Ban a user (server, game or workspace scope); an online user is kicked',
          parameters: [gameId],
          requestBody: { required: true, content: json(ref('CreateBanRequest')) },
          responses: responses(withTime({ ban: ref('Ban'), kicks: arr(ref('Kick')), platformWrites: arr(ref('QueuedWrite')) }), 'Created.', ['400', '404'], '201'),
        },
      },
      '/console/api/bans/{banId}/lift': {
        post: {
          operationId: 'liftBan',
          summary: 'Lift a ban (the row is kept)',
          parameters: [{ name: 'banId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          responses: responses(withTime({ ban: ref('Ban'), alreadyLifted: { type: 'boolean' }, platformWrites: arr(ref('QueuedWrite')) }), 'Lifted.', ['400', '404']),
        },
      },
      '/console/api/games/{gameId}/health': {
        get: { operationId: 'health', summary: 'Ingest health: warnings, 429s per minute, stream backlogs', parameters: [gameId], responses: responses(ref('Health'), 'The health view.', ['404']) },
      },
      '/console/api/games/{gameId}/charts': {
        get: {
          operationId: 'charts',
          summary: 'Concurrent players over the last hour and events per type',
          parameters: [gameId],
          responses: responses(
            withTime({
              concurrency: arr(obj({ at: time('minute (last point: now)'), players: int(), servers: int() })),
              eventsByType: arr(obj({ type: str(), count: int() })),
              windowSeconds: int('seconds'),
            }),
            'The chart data.',
            ['404'],
          ),
        },
      },
      '/metrics': {
        get: {
          operationId: 'metrics',
          summary: 'Prometheus metrics of this API process',
          responses: {
            '200': { description: 'Prometheus text format.', content: { 'text/plain': { schema: { type: 'string' } } } },
            '401': { $ref: '#/components/responses/Error401' },
            '403': { $ref: '#/components/responses/Error403' },
          },
        },
      },
    }),
    components: {
      schemas: SCHEMAS,
      securitySchemes: {
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'gis_console_session', description: 'Server-side session (idle 12 h, absolute 7 d). Changes also need X-CSRF-Token.' },
        moderatorToken: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer gmod_<prefix>.<secret>: a moderator\'s personal access token (admin moderators add / rotate-token).' },
        operatorToken: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <operator token> (CONSOLE_TOKEN, 24-256 printable characters): break-glass, every workspace, recorded as operator.' },
      },
      responses: errorResponses,
    },
  };
}
