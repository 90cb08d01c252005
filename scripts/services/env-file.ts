/**
 * scripts/services/env-file.ts — `.data/services.env`, the Redis `npm run services:up` chose, for the npm
 * scripts: `npm start`, `npm run workers`, `admin`, `simulate` and `demo` load it with Node's
 * `--env-file-if-exists`, and variables set in the shell win over it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DATA_DIR, redact, rel } from './common.js';

/** The URLs `up` chose, for the npm scripts; git-ignored with the rest of .data/. */
export const SERVICES_ENV = path.join(DATA_DIR, 'services.env');

/**
 * Writes `.data/services.env`: REDIS_URL, and REDIS_DURABILITY=required when that Redis is `durable`
 * (so the API and workers refuse to start should it ever be less), best-effort otherwise. Mode 0600: an
 * explicit REDIS_URL may carry a password. Returns the line to print.
 */
export function writeServicesEnv(redisUrl: string, durable: boolean): string {
  const durability = durable ? 'required' : 'best-effort';
  fs.mkdirSync(DATA_DIR, { recursive: true });
  fs.writeFileSync(
    SERVICES_ENV,
    `# Written by \`npm run services:up\` (scripts/services/) at ${new Date().toISOString()}.\n` +
      '# Loaded by npm start, workers, admin, simulate and demo (node --env-file-if-exists); variables set in the shell win.\n' +
      `REDIS_URL=${redisUrl}\nREDIS_DURABILITY=${durability}\n`,
    { mode: 0o600 },
  );
  return `redis: the stack uses REDIS_URL=${redact(redisUrl)} with REDIS_DURABILITY=${durability} (written to ${rel(SERVICES_ENV)}; a REDIS_URL set in the shell wins)`;
}

/** KEY=VALUE lines of `.data/services.env` (empty when there is none). */
export function readServicesEnv(): Record<string, string> {
  try {
    const out: Record<string, string> = {};
    for (const line of fs.readFileSync(SERVICES_ENV, 'utf8').split('\n')) {
      const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
      if (m) out[m[1]!] = m[2]!;
    }
    return out;
  } catch {
    return {};
  }
}

/** Removes `.data/services.env`; returns the line to print. */
export function removeServicesEnv(): string {
  if (!fs.existsSync(SERVICES_ENV)) return 'services.env: none';
  fs.rmSync(SERVICES_ENV, { force: true });
  return `services.env: removed ${rel(SERVICES_ENV)}`;
}
