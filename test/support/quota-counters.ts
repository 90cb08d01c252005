/**
 * The layout of quota counters as src/store/lua/lib/common.lua (`overQuota`) writes it, for tests that
 * fill or inspect a counter: a subject's field is the first 12 hex digits of its SHA-1; while a window's
 * counters have a single shard (at most 40 subjects) that field lives in the head hash
 * `GameKeys.rateWindow(kind, window, keyId)` itself.
 */
import { createHash } from 'node:crypto';

/** The counter field of `subject` (a server id, a user id, `d:<user>:<door>:<doorsVersion>:<subjectVersion>`, ...). */
export function quotaCounterField(subject: string): string {
  return createHash('sha1').update(subject).digest('hex').slice(0, 12);
}
