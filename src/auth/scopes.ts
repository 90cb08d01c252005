/** Key scopes (spec: Authentication › Scopes). */
export const SCOPES = ['heartbeat', 'events', 'doors', 'commands', 'records:read', 'chat'] as const;
export type Scope = (typeof SCOPES)[number];

/** True when `s` is one of the spec's scope names. */
export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}
