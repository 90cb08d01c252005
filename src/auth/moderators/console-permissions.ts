/**
 * The one permission table of the console (issue #31): which role may do what. Every console route asks
 * for exactly one permission (src/adapters/console/api/*.ts call `access(…, permission)`), the console's OpenAPI
 * document names it per operation (src/adapters/openapi/console-openapi-document.ts reads {@link CONSOLE_ROUTES}),
 * and the role tests walk {@link CONSOLE_ROUTES}, so the table, the docs and the checks cannot drift apart.
 *
 * Roles are ordered: each holds every permission of the ones before it. The operator (CONSOLE_TOKEN,
 * break-glass) holds every permission on every workspace, including the operator-only ones that no role
 * has: settings that make the service call out or hold a third party's secret (the platform's cloud API
 * base URL and API key: a workspace admin must not point the workers at an internal address) and /metrics.
 */

/** Console roles, weakest first. */
export const MODERATOR_ROLES = ['viewer', 'moderator', 'admin'] as const;
export type ModeratorRole = (typeof MODERATOR_ROLES)[number];

/** True when `value` names a role. */
export function isModeratorRole(value: unknown): value is ModeratorRole {
  return typeof value === 'string' && (MODERATOR_ROLES as readonly string[]).includes(value);
}

/** Each permission and the weakest role that holds it; `null`: the operator only. */
export const PERMISSIONS = {
  /** Live servers, rosters, commands, doors, bans, access log, policies, health, charts, the live feed. */
  'console.read': 'viewer',
  /** Roster actions and commands: kick, mute, freeze, teleport, message. */
  'commands.issue': 'moderator',
  /** Ban a player. */
  'bans.create': 'moderator',
  /** Lift a ban. */
  'bans.lift': 'moderator',
  /** Force one door's state (also a `door_set_state` command). */
  'doors.force': 'admin',
  /** Lock or release every door of a game. */
  'doors.lockdown': 'admin',
  /** Game settings that call nowhere new: heartbeat interval, platform name, universe id, native bans on/off. */
  'games.settings': 'admin',
  /** List, add, disable, enable, change the role of, rotate the token of and invite the workspace's moderators. */
  'moderators.manage': 'admin',
  /** Prometheus metrics of the process, platform cloud API settings: operator only. */
  'operator.only': null,
} as const satisfies Record<string, ModeratorRole | null>;
export type Permission = keyof typeof PERMISSIONS;

/** True when `role` holds `permission`. */
export function roleAllows(role: ModeratorRole, permission: Permission): boolean {
  const needed = PERMISSIONS[permission];
  return needed !== null && MODERATOR_ROLES.indexOf(role) >= MODERATOR_ROLES.indexOf(needed);
}

/** Every permission `role` holds (what the page uses to hide what the role cannot do). */
export function permissionsOf(role: ModeratorRole): Permission[] {
  return (Object.keys(PERMISSIONS) as Permission[]).filter((p) => roleAllows(role, p));
}

/**
 * One console route: method, Express path under /console/api (or absolute when it starts with `//`),
 * permission. `fieldPermissions`: body members that need a further permission when present (the route's
 * own still applies), for a route that changes settings of different weight together.
 */
export interface ConsoleRoute {
  method: 'get' | 'post' | 'patch';
  path: string;
  permission: Permission;
  fieldPermissions?: Readonly<Record<string, Permission>>;
}

/**
 * Game settings a workspace admin must not change: the platform's cloud API base URL (the workers would
 * call whatever address it names) and its API key (a third party's secret).
 */
export const OPERATOR_GAME_SETTINGS = { cloudApiBaseUrl: 'operator.only', cloudApiKey: 'operator.only' } as const satisfies Record<string, Permission>;

/** Every console route that needs a signed-in caller, with its permission. */
export const CONSOLE_ROUTES: readonly ConsoleRoute[] = [
  { method: 'get', path: '/games', permission: 'console.read' },
  { method: 'get', path: '/games/:gameId/live', permission: 'console.read' },
  { method: 'get', path: '/games/:gameId/live/stream', permission: 'console.read' },
  { method: 'post', path: '/games/:gameId/commands', permission: 'commands.issue' },
  { method: 'get', path: '/games/:gameId/doors', permission: 'console.read' },
  { method: 'post', path: '/games/:gameId/doors/:doorKey/state', permission: 'doors.force' },
  { method: 'get', path: '/games/:gameId/access-log', permission: 'console.read' },
  { method: 'get', path: '/games/:gameId/policies/:policyId', permission: 'console.read' },
  { method: 'post', path: '/games/:gameId/lockdown', permission: 'doors.lockdown' },
  { method: 'get', path: '/games/:gameId/bans', permission: 'console.read' },
  { method: 'post', path: '/games/:gameId/bans', permission: 'bans.create' },
  { method: 'post', path: '/bans/:banId/lift', permission: 'bans.lift' },
  { method: 'get', path: '/games/:gameId/health', permission: 'console.read' },
  { method: 'get', path: '/games/:gameId/charts', permission: 'console.read' },
  { method: 'patch', path: '/games/:gameId/settings', permission: 'games.settings', fieldPermissions: OPERATOR_GAME_SETTINGS },
  { method: 'get', path: '/workspaces/:workspaceId/moderators', permission: 'moderators.manage' },
  { method: 'post', path: '/workspaces/:workspaceId/moderators', permission: 'moderators.manage' },
  { method: 'patch', path: '/workspaces/:workspaceId/moderators/:moderatorId', permission: 'moderators.manage' },
  { method: 'post', path: '/workspaces/:workspaceId/moderators/:moderatorId/token', permission: 'moderators.manage' },
  { method: 'post', path: '/workspaces/:workspaceId/moderators/:moderatorId/invitations', permission: 'moderators.manage' },
  { method: 'get', path: '//metrics', permission: 'operator.only' },
];
