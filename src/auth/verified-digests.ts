/**
 * The shared memory of "this secret was verified": a keyed digest per key prefix in Redis, so a correct
 * secret is recognised after an API restart, on any process, without argon2 (issue #16, key flood).
 *
 * Threat model: the key prefix is public (it is in every Authorization header); the secret is 32 random
 * bytes. A digest of a 256-bit secret needs no slow hash to resist guessing (the reason key services store
 * SHA-256 of high-entropy tokens); argon2id stays the stored credential in Postgres. The digest is
 * HMAC-SHA256 keyed with the key's stored argon2 hash, so it binds to that credential: a key re-hashed or
 * replaced never matches an old digest. Since issue #29 Redis also holds that hash (the key's record,
 * src/auth/key-records.ts), so a reader of Redis can check a guess offline: against a 256-bit secret that
 * is as hopeless as against a Postgres dump; it is why Redis must stay private all the same.
 * Revocation is checked on the Postgres row before any digest, and the revoke deletes the digest too.
 *
 * Written when the key is created (operator CLI) and again after every successful argon2 verify (which
 * repairs a digest a volatile Redis lost); no TTL: one ~100-byte string per live key.
 * Redis: string `<prefix>:key-digest:<keyPrefix>` (hex); single-key commands only, so it works unchanged
 * on a Redis Cluster.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import { GlobalKeys } from '../store/keys.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** HMAC-SHA256(key = stored argon2 hash, message = secret): 32 bytes. */
export function keyedDigest(secretHash: string, secret: string): Buffer {
  return createHmac('sha256', secretHash).update(secret).digest();
}

/** Constant-time equality of two digests (false when lengths differ). */
export function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Reads, writes and forgets the verified digest of a key prefix. */
export class VerifiedDigests {
  private readonly keys: GlobalKeys;

  constructor(private readonly redis: Redis, keySpace: KeySpace) {
    this.keys = keySpace.global;
  }

  /** The stored digest of `keyPrefix`, or null. Redis errors propagate (the caller falls back to argon2). */
  async get(keyPrefix: string): Promise<Buffer | null> {
    const hex = await this.redis.get(this.keys.verifiedKeyDigest(keyPrefix));
    return hex && /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : null;
  }

  /** Records `digest` as verified for `keyPrefix`. */
  async set(keyPrefix: string, digest: Buffer): Promise<void> {
    await this.redis.set(this.keys.verifiedKeyDigest(keyPrefix), digest.toString('hex'));
  }

  /** Forgets the digest (key revoked). */
  async delete(keyPrefix: string): Promise<void> {
    await this.redis.del(this.keys.verifiedKeyDigest(keyPrefix));
  }
}
