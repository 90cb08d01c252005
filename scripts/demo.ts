/**
 * The main job on real input, for the README quick start (`npm run demo`): makes Redis and Postgres
 * reachable (scripts/services/), starts one API process and one worker process, waits for /readyz,
 * prints the Redis persistence mode the API read (what a 200 survives, README "Durability"), runs the
 * simulated fleet against them (packages/simulator/src/simulate.ts) and stops everything. Exit code is the simulator's
 * (non-zero when events sent and rows in Postgres differ).
 * The children load `.data/services.env` (the Redis services:up chose; variables set in the shell win),
 * read after services:up has written it, so this process itself does not load it.
 * Flags: --servers N (default 10) --players M (default 12) --duration S (default 30)
 * --allow-volatile-redis (passed to services:up: use a Redis without persistence, saying so).
 */
import { freePort } from './support/free-port.js';
import { ROOT, runInherited, startChild, type ManagedChild } from './support/child-process.js';
import { parseCli } from './support/cli-args.js';
import { GUARANTEES, type PersistenceMode } from '../src/store/redis-persistence.js';

const { values } = parseCli('usage: npm run demo -- [--servers 10] [--players 12] [--duration 30] [--allow-volatile-redis]', {
  options: {
    servers: { type: 'string', default: '10' },
    players: { type: 'string', default: '12' },
    duration: { type: 'string', default: '30' },
    'allow-volatile-redis': { type: 'boolean', default: false },
  },
});

const tsx = `${ROOT}/node_modules/.bin/tsx`;
/** Written by services:up; `--env-file-if-exists` lets a variable set in the shell win over it. */
const ENV_FILE = `--env-file-if-exists=${ROOT}/.data/services.env`;

/** A long-running `tsx` child whose every output line is echoed prefixed with `label`. */
function start(label: string, args: string[], env: Record<string, string>): ManagedChild {
  return startChild({ name: label, command: tsx, args, env, echo: 'all' });
}

async function main(): Promise<number> {
  console.log('== 1/4 services: Redis and PostgreSQL, migrations');
  if ((await runInherited(tsx, ['scripts/services/index.ts', 'up', ...(values['allow-volatile-redis'] ? ['--allow-volatile-redis'] : [])])) !== 0) return 1;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = { PORT: String(port), LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' };
  console.log(`== 2/4 starting the API on ${url} and the workers`);
  const api = start('api', [ENV_FILE, 'src/server.ts'], env);
  const workers = start('workers', [ENV_FILE, 'workers/index.ts'], env);
  try {
    await api.waitForUrl(`${url}/readyz`);
    const ready = (await fetch(`${url}/readyz`).then((r) => r.json())) as { redisPersistence?: { mode: PersistenceMode; durable: boolean; durability: string } };
    const p = ready.redisPersistence ?? { mode: 'unknown', durable: false, durability: '?' };
    console.log(`   Redis persistence ${p.mode}${p.durable ? '' : ' (NOT durable)'}, REDIS_DURABILITY=${p.durability}: ${GUARANTEES[p.mode]}`);
    console.log(`== 3/4 simulated fleet: ${values.servers} servers × ~${values.players} players for ${values.duration} s`);
    // A short demo: servers boot over 5 s and fill with players over 10 s (the simulator's defaults, 10 and
    // 30 s, model a real restart and would leave a 30 s demo half empty).
    const code = await runInherited(tsx, [ENV_FILE, 'packages/simulator/src/simulate.ts', '--url', url, '--servers', values.servers, '--players', values.players, '--duration', values.duration, '--ramp', '5', '--fill', '10'], { env });
    console.log(code === 0 ? '== 4/4 done: every event sent is in Postgres' : `== 4/4 simulator exited with ${code}`);
    return code;
  } finally {
    await Promise.all([api.stop(), workers.stop()]);
  }
}

main().then((code) => process.exit(code), (err: unknown) => {
  console.error(String(err));
  process.exit(1);
});
