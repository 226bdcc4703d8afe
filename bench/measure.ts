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

/** A V8 CPU profile (`--cpu-prof`, or the inspector's Profiler.stop), as much as is read. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber?: number };
    children?: number[];
  }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * Self and inclusive time per frame and self time per package, over one or more
 * profiles. With `window` (monotonic microseconds, the clock V8 stamps profiles with and
 * `process.hrtime` reads) only the samples inside it count, so start-up stays out.
 * `lineNumbers: false` leaves them out of frame names (under tsx they point into the
 * transpiled output, not the sources).
 */
export function summarizeCpuProfiles(
  profiles: CpuProfile[],
  options: {
    window?: { startUs: number; endUs: number };
    lineNumbers?: boolean;
    top?: number;
  } = {},
) {
  const { window, lineNumbers = true, top = 15 } = options;
  const where = (url: string) => {
    const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    if (nm) return nm[1]!;
    if (url.startsWith('node:')) return 'node (internal)';
    const src = /\/((?:src|dist|bench)\/.*)$/.exec(url);
    if (src) return src[1]!;
    return url === '' ? '(native / V8)' : url;
  };
  const frameKey = (n: CpuProfile['nodes'][number]) => {
    const f = n.callFrame;
    const name = f.functionName || '(anonymous)';
    if (!f.url) return name;
    return lineNumbers
      ? `${name} ${where(f.url)}:${(f.lineNumber ?? 0) + 1}`
      : `${name} ${where(f.url)}`;
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const packages = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, dt: number) => m.set(k, (m.get(k) ?? 0) + dt);
  let total = 0;
  let idle = 0;
  for (const profile of profiles) {
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    let at = profile.startTime;
    profile.samples.forEach((id, i) => {
      at += profile.timeDeltas[i] ?? 0;
      if (window && (at < window.startUs || at > window.endUs)) return;
      const dt = (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0) / 1000;
      const node = byId.get(id);
      if (!node) return;
      if (node.callFrame.functionName === '(idle)') {
        idle += dt;
        return;
      }
      total += dt;
      add(self, frameKey(node), dt);
      add(
        packages,
        node.callFrame.url ? where(node.callFrame.url) : node.callFrame.functionName,
        dt,
      );
      const seen = new Set<string>();
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const k = frameKey(byId.get(cur)!);
        if (seen.has(k)) continue;
        seen.add(k);
        add(inclusive, k, dt);
      }
    });
  }
  const rank = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([frame, ms]) => ({ frame, ms: Math.round(ms), share: round3(ms / total) }));
  const skip = /^\((root|program)\)$/;
  return {
    busyMs: Math.round(total),
    idleMs: Math.round(idle),
    selfByPackage: rank(packages, top),
    topSelf: rank(self, top),
    topInclusive: rank(
      new Map([...inclusive].filter(([k]) => !skip.test(k) && !k.startsWith('processTicks'))),
      top + 10,
    ),
    /** This repository's functions (src/, dist/, bench/), inclusive of what they call. */
    topInclusiveSrc: rank(
      new Map([...inclusive].filter(([k]) => / (src|dist|bench)\//.test(k))),
      top + 10,
    ),
  };
}
