/**
 * The key door decisions are cached under (issue #32 item 4): a digest of a user's subject context
 * (src/doors/subject-context.ts) rather than the user, so every user whose evaluation inputs are equal
 * shares one cached entry (src/doors/decision-cache.ts). In a game most players are no member of the
 * workspace and are named by no policy: they all share one context, and a user costs the cache a pointer
 * to it (~35 B) instead of their own copy of every decision (~200 B for four doors).
 *
 * The digest covers every field of the context except `externalId`, whatever fields the context has
 * (Sets and arrays in a canonical order), so an input added to the evaluation later cannot be left out of
 * it. `externalId` is covered only when a policy of the game names the user (subject type `users`): the
 * one evaluation input that is the user's identity itself.
 */
import { createHash } from 'node:crypto';
import type { DoorDef } from './door-types.js';
import type { SubjectContext } from './subject-context.js';

/** A value in canonical form: Sets and arrays as arrays sorted by their JSON, objects with sorted keys. */
function canonical(v: unknown): unknown {
  if (v instanceof Set || Array.isArray(v)) {
    return [...(v as Iterable<unknown>)].map(canonical).sort((a, b) => {
      const [x, y] = [JSON.stringify(a), JSON.stringify(b)];
      return x < y ? -1 : x > y ? 1 : 0;
    });
  }
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  }
  return v;
}

const named = new WeakMap<ReadonlyMap<string, DoorDef>, ReadonlySet<string>>();

/** The users named by any `users` policy of `doors` (one game's doors at one doors version), computed once per map. */
export function usersNamedBy(doors: ReadonlyMap<string, DoorDef>): ReadonlySet<string> {
  let users = named.get(doors);
  if (!users) {
    const set = new Set<string>();
    for (const door of doors.values()) for (const p of door.policies) if (p.subjectType === 'users') for (const id of p.subjectIds) set.add(id);
    users = set;
    named.set(doors, users);
  }
  return users;
}

/**
 * The context key of `ctx`: 22 characters (base64url of 128 bits of SHA-256), equal for two contexts
 * exactly when every evaluation input but the user's id is equal, and the id too when `namedUsers`
 * (see {@link usersNamedBy}) holds it.
 */
export function contextKey(ctx: SubjectContext, namedUsers: ReadonlySet<string>): string {
  const { externalId, ...rest } = ctx;
  const text = JSON.stringify([namedUsers.has(externalId) ? externalId : null, canonical(rest)]);
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}
