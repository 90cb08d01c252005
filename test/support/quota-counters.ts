/**
 * The layout of quota counters as src/store/lua/lib/quota.lua (`overQuota`) writes it, for tests that
 * fill or inspect a counter: a subject's field is 2⁴⁸ + the first 48 bits of its SHA-1 in decimal (15
 * digits); while a window's counters have a single shard (at most 40 subjects) that field lives in the
 * head hash `GameKeys.rateWindow(kind, window, keyId)` itself.
 */
import { createHash } from 'node:crypto';

const sha1 = (subject: string) => createHash('sha1').update(subject).digest('hex');

/** The counter field of `subject` (a server id, a user id, `d:<user>:<door>:<doorsVersion>:<subjectVersion>`, ...). */
export function quotaCounterField(subject: string): string {
  return (2n ** 48n + BigInt(`0x${sha1(subject).slice(0, 12)}`)).toString();
}

/** The field of `subject` as versions before 2026-11-29 wrote it: the first 12 hex digits of its SHA-1. */
export function legacyQuotaCounterField(subject: string): string {
  return sha1(subject).slice(0, 12);
}
