/**
 * scripts/support/proc-stat.ts — CPU figures of the machine and of other processes from Linux's /proc,
 * for the simulator and the benchmarks (a process measures itself with `process.cpuUsage()`). Every
 * reader returns null where /proc is missing (not Linux) or the process is gone.
 */
import { readFileSync } from 'node:fs';

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
