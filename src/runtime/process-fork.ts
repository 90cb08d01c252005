/**
 * `--processes N` for the API (`npm start -- --processes N`) and the workers (`npm run workers --
 * --processes N`), issue #17: a `node:cluster` primary forks N copies of the same entry point (same
 * script, Node flags and environment) and does nothing else. The API copies share the game and console
 * ports through the primary (Node's cluster module hands connections out round-robin on Linux); the
 * worker copies share the BullMQ queues and the stream consumer groups (each has its own consumer name,
 * host-pid). Everything the copies share lives in Redis: key revocation and cache invalidation travel on
 * the pub/sub channel every process subscribes to, job schedulers add one job per tick whoever runs it.
 *
 * The primary re-forks a copy that dies after it started; one that exits non-zero within
 * {@link STARTUP_GRACE_MS} of its fork is a start-up failure (bad config, REDIS_DURABILITY refused) and
 * stops the whole group with that exit code instead of re-forking forever. SIGTERM/SIGINT to the primary
 * go to every copy (each shuts down gracefully as a single process would); the primary exits 0 once all
 * have exited.
 */
import cluster, { type Worker } from 'node:cluster';
import { parseArgs } from 'node:util';
import { log } from '../log.js';

/** Upper bound of `--processes` (a typo like 1000 would exhaust Postgres connections: DB_POOL_SIZE each). */
export const MAX_PROCESSES = 64;
/** A copy exiting non-zero within this many milliseconds of its fork failed to start. */
export const STARTUP_GRACE_MS = 10_000;
/** Delay before a copy that died is forked again, in milliseconds. */
const REFORK_DELAY_MS = 1_000;

/**
 * N of `--processes N` in `argv` (the entry point's arguments), default 1.
 * @throws Error naming the mistake for an unknown flag or an N that is not an integer from 1 to MAX_PROCESSES.
 */
export function processCount(argv: readonly string[]): number {
  const { values } = parseArgs({ args: [...argv], strict: true, options: { processes: { type: 'string' } } });
  if (values.processes === undefined) return 1;
  const n = Number(values.processes);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PROCESSES) throw new Error(`--processes takes an integer from 1 to ${MAX_PROCESSES} (got ${values.processes})`);
  return n;
}

/**
 * Runs `start` here when `n` is 1 or this process is a forked copy; otherwise becomes the primary of
 * `n` copies (module comment) and, once they are forked, runs `primary` (given the number of copies
 * alive now and later; e.g. the workers' aggregated metrics endpoint). `name` labels the primary's log
 * lines (`api`, `workers`).
 */
export async function runProcesses(n: number, name: string, start: () => Promise<void>, primary?: (alive: () => number) => Promise<void>): Promise<void> {
  if (n <= 1 || cluster.isWorker) return start();
  let stopping = false;
  const forkedAt = new Map<Worker, number>();
  const fork = (): void => {
    forkedAt.set(cluster.fork(), Date.now());
  };
  cluster.on('exit', (worker, code, signal) => {
    const age = Date.now() - (forkedAt.get(worker) ?? 0);
    forkedAt.delete(worker);
    if (stopping) {
      if (forkedAt.size === 0) process.exit(); // process.exitCode: 0, or a failed start's code
      return;
    }
    if (code !== 0 && age < STARTUP_GRACE_MS) {
      log.error('a process failed to start; stopping the others', { process: name, pid: worker.process.pid, code });
      stopAll('start-up failure');
      process.exitCode = code ?? 1;
      return;
    }
    log.warn('a process exited; forking a new one', { process: name, pid: worker.process.pid, code, signal });
    setTimeout(fork, REFORK_DELAY_MS);
  });
  const stopAll = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('stopping every process', { process: name, reason, processes: forkedAt.size });
    for (const worker of forkedAt.keys()) worker.process.kill('SIGTERM');
    if (forkedAt.size === 0) process.exit();
  };
  process.on('SIGTERM', () => stopAll('SIGTERM'));
  process.on('SIGINT', () => stopAll('SIGINT'));
  for (let i = 0; i < n; i++) fork();
  log.info('primary up', { process: name, processes: n, pid: process.pid });
  // A primary that cannot do its part (its metrics port taken) stops the group rather than run half-observed.
  await primary?.(() => forkedAt.size).catch((err: unknown) => {
    log.error('the primary failed to start; stopping every process', { process: name, err: String(err) });
    process.exitCode = 1;
    stopAll('primary failure');
  });
}
