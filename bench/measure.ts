import { readFileSync } from 'node:fs';

/** Small measuring helpers the benches share (`npm run bench`, `bench:import`). */

/** A process's CPU time in seconds (user + system), from /proc; null where unavailable. */
export function procCpuSeconds(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 Hz).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export const round3 = (x: number) => Math.round(x * 1000) / 1000;
export const round2 = (x: number) => Math.round(x * 100) / 100;
export const round1 = (x: number) => Math.round(x * 10) / 10;
