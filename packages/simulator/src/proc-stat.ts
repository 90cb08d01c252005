/**
 * packages/simulator/src/proc-stat.ts — CPU figures of the machine and of other processes from Linux's /proc,
 * for the simulator and the benchmarks (a process measures itself with `process.cpuUsage()`). Every
 * reader returns null where /proc is missing (not Linux) or the process is gone.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** Total CPU jiffies of the machine: [busy, all] from /proc/stat. */
export function machineJiffies(): [number, number] | null {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const all = cpu.reduce((a, b) => a + b, 0);
    const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
    return [all - idle, all];
  } catch {
    return null;
  }
}

/** CPU seconds used so far by `pid`, all its threads: user and system (/proc/<pid>/stat utime, stime). */
export function processCpu(pid: number): { user: number; system: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / TICKS_PER_SECOND, system: Number(fields[12]) / TICKS_PER_SECOND };
  } catch {
    return null;
  }
}

/** CPU seconds (user + system) used so far by `pid`, or null. */
export function processCpuSeconds(pid: number): number | null {
  const cpu = processCpu(pid);
  return cpu ? cpu.user + cpu.system : null;
}

/**
 * Voluntary context switches of `pid`'s main thread so far (/proc/<pid>/status): each is its event
 * loop going to sleep, so the difference over a window counts its wake-ups. Null when unreadable.
 */
export function voluntarySwitches(pid: number): number | null {
  try {
    const m = /voluntary_ctxt_switches:\s*(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** utime + stime and cutime + cstime of `pid` (seconds) and its parent pid, from /proc/<pid>/stat; null when gone. */
function statTimes(pid: number): { own: number; reaped: number; ppid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { own: (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND, reaped: (Number(f[13]) + Number(f[14])) / TICKS_PER_SECOND, ppid: Number(f[1]) };
  } catch {
    return null;
  }
}

/** Every live descendant of `pid` (children, their children, ...), from the parent pids in /proc. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return [];
  }
  for (const e of entries) {
    const t = statTimes(Number(e));
    if (!t) continue;
    const siblings = children.get(t.ppid);
    if (siblings) siblings.push(Number(e));
    else children.set(t.ppid, [Number(e)]);
  }
  const out: number[] = [];
  for (let queue = [pid]; queue.length; ) {
    const next = children.get(queue.pop()!) ?? [];
    out.push(...next);
    queue.push(...next);
  }
  return out;
}

/**
 * CPU seconds used so far by `pid` and all its descendants, those that exited included: each live
 * process's own time plus what the kernel credits to it for its reaped children (cutime + cstime). A
 * PostgreSQL postmaster's figure thus covers every backend it forked: a backend alive at both readings
 * counts its own time, one that exited in between moves into the postmaster's reaped time whole, so the
 * difference of two readings is exact either way. Null when `pid` is gone.
 */
export function processTreeCpuSeconds(pid: number): number | null {
  const root = statTimes(pid);
  if (!root) return null;
  let total = root.own + root.reaped;
  for (const child of descendants(pid)) {
    const t = statTimes(child);
    if (t) total += t.own + t.reaped;
  }
  return total;
}
