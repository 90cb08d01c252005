/**
 * scripts/services/targets.ts — which Redis and PostgreSQL `npm run services:*` works on: the URLs from the
 * environment, or the defaults, and whether each was set explicitly (an explicit URL is never replaced
 * by a project-local server; see index.ts).
 */
import { envSet } from './common.js';

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/gis';
const DEFAULT_TEST_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/gis_test';

export interface Targets {
  redisUrl: string;
  redisExplicit: boolean;
  databaseUrl: string;
  databaseExplicit: boolean;
  /** DATABASE_URL, or TEST_DATABASE_URL with `--test`. */
  databaseVar: string;
}

/** REDIS_URL and DATABASE_URL (TEST_DATABASE_URL when `test`), with their defaults. */
export function resolveTargets(test: boolean): Targets {
  const redis = envSet('REDIS_URL');
  const dbVar = test ? 'TEST_DATABASE_URL' : 'DATABASE_URL';
  const db = envSet(dbVar);
  return {
    redisUrl: redis ?? DEFAULT_REDIS_URL,
    redisExplicit: redis !== undefined,
    databaseUrl: db ?? (test ? DEFAULT_TEST_DATABASE_URL : DEFAULT_DATABASE_URL),
    databaseExplicit: db !== undefined,
    databaseVar: dbVar,
  };
}
