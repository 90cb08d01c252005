/**
 * The part every `<marker><prefix>.<secret>` credential shares when it is checked against a stored argon2id
 * hash (issue #16): server keys (src/auth/key-verifier.ts) and moderator tokens
 * (src/auth/moderators/moderator-verifier.ts) are thin users of it. It decides a secret that the caller's
 * own process cache of verified secrets did not, in this order:
 * 1. the shared keyed digest in Redis (src/auth/verified-digests.ts), written when the credential was
 *    issued and by whichever process last verified it with argon2: it is keyed by the stored hash and a
 *    credential has one secret, so a secret that does not match it is wrong, refused with one HMAC, no
 *    argon2, no budget spent;
 * 2. only for a prefix with no shared digest (issued without Redis, or a Redis that lost it): argon2id
 *    inside a {@link VerifyBudget} (counted before it starts, bounded per prefix and per process),
 *    single-flight per (prefix, secret); a wrong secret is remembered for {@link NEGATIVE_TTL_MS} and
 *    refused again without argon2, a right one writes the shared digest back.
 * Only secrets that reach step 2 can be throttled, so a flood of wrong secrets on a (public) prefix never
 * refuses the right one once it is known, and never runs argon2 for the flood while the digest exists.
 * A prefix's record and shared digest are read once per {@link RECORD_TTL_MS}, single-flight, and shared by
 * every request on it (unknown prefixes too), in bounded LRU maps: a random-prefix flood costs bounded memory.
 */
import argon2 from 'argon2';
import { LRUCache } from 'lru-cache';
import { keyedDigest, sameDigest, type VerifiedDigests } from './verified-digests.js';
import { BudgetExceeded, VerifyBudget, type BudgetRefusal } from './verify-budget.js';

/** How long a prefix's record and shared digest are reused before reading them again, ms. */
export const RECORD_TTL_MS = 5_000;
/** How long a secret argon2 found wrong is refused without argon2, ms. */
export const NEGATIVE_TTL_MS = 60_000;
/** Entries of each bounded map (prefix states, wrong secrets). */
const MAX_ENTRIES = 10_000;

/** Where the credentials of one kind live and how they are told apart (record type `R`). */
export interface SecretSource<R> {
  /** The record of `prefix`, or null when there is none. Errors propagate to the caller of {@link SecretVerifier.verify}. */
  load(prefix: string): Promise<R | null>;
  /** The argon2id hash of the record's secret, as stored. */
  secretHash(record: R): string;
  /** The name of the prefix's digest in {@link VerifiedDigests} (a marker keeps kinds apart). */
  sharedName(prefix: string): string;
  /** Throws to refuse a record before its secret is looked at (a revoked key); absent: every record may be checked. */
  admit?(record: R): void;
}

/** The errors a refusal throws: each kind of credential answers with its own codes. */
export interface SecretRefusals {
  /** No record has the prefix. */
  unknown(): Error;
  /** The secret is wrong. */
  bad(): Error;
  /** The secret needed argon2 and the prefix's or the process's budget is spent. */
  throttled(): Error;
}

/** Notified of how secrets are decided (metrics, tests); every method is optional. */
export interface SecretCheckObserver {
  /** A request's secret was decided: `via` the shared digest or argon2, `ok` whether it was right. */
  checked?(via: 'shared-digest' | 'argon2', ok: boolean): void;
  /** An argon2 verify was asked of the budget (once per single flight; the budget may still refuse it). */
  argon2Started?(): void;
  /** A secret was refused without argon2 because the budget was spent. */
  refused?(reason: BudgetRefusal): void;
  /** The shared digests became unreachable (`up` false, with the error) or reachable again: called on changes only. */
  sharedReachable?(up: boolean, err?: unknown): void;
}

/** A prefix as its store and Redis know it: its record (false: none) and the shared digest. */
interface PrefixState<R> {
  record: R | false;
  shared: Buffer | null;
}

/** Checks secrets of one kind of credential as the module comment describes; one per process and kind. */
export class SecretVerifier<R> {
  private readonly prefixes = new LRUCache<string, PrefixState<R>>({ max: MAX_ENTRIES, ttl: RECORD_TTL_MS });
  private readonly badSecrets = new LRUCache<string, true>({ max: MAX_ENTRIES, ttl: NEGATIVE_TTL_MS });
  private readonly loads = new Map<string, Promise<PrefixState<R>>>();
  private readonly inflight = new Map<string, Promise<boolean>>();
  private readonly budget = new VerifyBudget();
  private sharedDown = false;

  /**
   * @param shared the Redis digests every process shares; null only where no Redis exists (then every
   *   process verifies each credential once with argon2).
   */
  constructor(
    private readonly source: SecretSource<R>,
    private readonly shared: VerifiedDigests | null,
    private readonly refusals: SecretRefusals,
    private readonly observer: SecretCheckObserver = {},
  ) {}

  /**
   * The record whose secret `secret` is.
   * @param digest SHA-256 of `secret` (the caller's process cache already computed it): names the attempt.
   * @throws the {@link SecretRefusals} errors, whatever {@link SecretSource.admit} throws, and the
   *   source's load errors.
   */
  async verify(prefix: string, secret: string, digest: Buffer): Promise<R> {
    const state = await this.prefixState(prefix);
    if (!state.record) throw this.refusals.unknown();
    const record = state.record;
    this.source.admit?.(record);
    const storedHash = this.source.secretHash(record);
    const keyed = keyedDigest(storedHash, secret);
    if (state.shared) {
      // The digest is keyed by this record's hash and a credential has one secret: a mismatch is a wrong secret.
      const ok = sameDigest(state.shared, keyed);
      this.observer.checked?.('shared-digest', ok);
      if (!ok) throw this.refusals.bad();
      return record;
    }

    const attempt = `${prefix}:${digest.toString('hex')}`;
    if (this.badSecrets.has(attempt)) throw this.refusals.bad();
    let pending = this.inflight.get(attempt);
    if (!pending) {
      this.observer.argon2Started?.();
      pending = this.budget
        .run(prefix, () => argon2.verify(storedHash, secret).catch(() => false))
        .finally(() => this.inflight.delete(attempt));
      this.inflight.set(attempt, pending);
    }
    let ok: boolean;
    try {
      ok = await pending;
    } catch (err) {
      if (!(err instanceof BudgetExceeded)) throw err;
      this.observer.refused?.(err.reason);
      throw this.refusals.throttled();
    }
    this.observer.checked?.('argon2', ok);
    if (!ok) {
      this.badSecrets.set(attempt, true);
      throw this.refusals.bad();
    }
    state.shared = keyed;
    this.shared?.set(this.source.sharedName(prefix), keyed).then(
      () => this.noteShared(true),
      (err: unknown) => this.noteShared(false, err),
    );
    return record;
  }

  /** Drops the prefix's record and shared digest, so the next request reads them again. */
  forget(prefix: string): void {
    this.prefixes.delete(prefix);
  }

  /** Drops every prefix whose record `matches` (a game's keys, an account's token). */
  forgetWhere(matches: (record: R) => boolean): void {
    for (const [prefix, state] of this.prefixes.entries()) if (state.record && matches(state.record)) this.prefixes.delete(prefix);
  }

  /** Drops every prefix's record and shared digest. */
  forgetAll(): void {
    this.prefixes.clear();
  }

  /** The prefix's record and shared digest: read once per {@link RECORD_TTL_MS}, single-flight. */
  private async prefixState(prefix: string): Promise<PrefixState<R>> {
    const known = this.prefixes.get(prefix);
    if (known) return known;
    let loading = this.loads.get(prefix);
    if (!loading) {
      loading = (async () => {
        const [record, shared] = await Promise.all([this.source.load(prefix), this.readShared(prefix)]);
        const state: PrefixState<R> = { record: record ?? false, shared };
        this.prefixes.set(prefix, state);
        return state;
      })().finally(() => this.loads.delete(prefix));
      this.loads.set(prefix, loading);
    }
    return loading;
  }

  /** The shared digest, or null when there is none or Redis cannot say (argon2 then decides). */
  private async readShared(prefix: string): Promise<Buffer | null> {
    if (!this.shared) return null;
    try {
      const digest = await this.shared.get(this.source.sharedName(prefix));
      this.noteShared(true);
      return digest;
    } catch (err) {
      this.noteShared(false, err);
      return null;
    }
  }

  /** Tells the observer when the shared digests' reachability changes, not once per request. */
  private noteShared(up: boolean, err?: unknown): void {
    if (up === !this.sharedDown) return;
    this.sharedDown = !up;
    this.observer.sharedReachable?.(up, err);
  }
}
