/**
 * Issue 11, "parallel inside one worker": one group's rewrite with 0, 1, 2 … decode workers
 * (lib/compaction/decode-pool.ts), interleaved: each round runs every count once, each in a fresh
 * process (`bench/compaction.ts --phase rewrite <table> 1 <workers>`); the figure is the median
 * round. Per run: wall seconds, CPU seconds of the whole process (all threads), CPU seconds of the
 * rewriter's own (main) thread, peak RSS, and the load average at its start.
 *
 *   npx tsx bench/decode-workers.ts <abs table path> [rounds=3] [counts=0,1,2]
 *
 * The table is one that plans as one group, e.g. `npx tsx bench/compaction.ts --phase build
 * <abs path> 1500 2000`. Prints JSON and a Markdown table; changes nothing.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { median, nodeChildArgs, REPO_ROOT, runChild } from './report.js';

const location = process.argv[2];
if (!location) throw new Error('usage: bench/decode-workers.ts <abs table path> [rounds=3] [counts=0,1,2]');
const rounds = Number(process.argv[3] ?? 3);
const counts = (process.argv[4] ?? '0,1,2').split(',').map(Number);
const COMPACTION = join(REPO_ROOT, 'bench', 'compaction.ts');

interface Run {
  readonly wallS: number;
  readonly cpuS: number;
  readonly mainCpuS: number;
  readonly rssMiB: number;
  readonly bytesOut: number;
  readonly load: number;
}
const runs = new Map<number, Run[]>(counts.map((c) => [c, []]));
for (let k = 0; k < rounds; k++) {
  for (const c of counts) {
    const load = loadavg()[0];
    const [cmd, args] = nodeChildArgs(COMPACTION, ['--phase', 'rewrite', location, '1', String(c)]);
    const r = runChild(cmd, args, `rewrite, ${c} decode workers`);
    const run: Run = {
      wallS: r.wallS[0], cpuS: r.cpuS[0], mainCpuS: Number(r.info?.mainCpuS ?? NaN), rssMiB: Math.round(r.maxRssKiB / 1024),
      bytesOut: Number(r.info?.bytesOut ?? NaN), load,
    };
    runs.get(c)!.push(run);
    console.error(`round ${k + 1}, ${c} workers: wall ${run.wallS.toFixed(2)} s, CPU ${run.cpuS.toFixed(2)} s, main thread ${run.mainCpuS.toFixed(2)} s, ${run.rssMiB} MiB (load ${load.toFixed(1)})`);
  }
}

const f = (xs: readonly number[], d = 2): string => xs.map((x) => x.toFixed(d)).join(', ');
const summary = counts.map((c) => {
  const rs = runs.get(c)!;
  return {
    workers: c,
    wallS: rs.map((r) => +r.wallS.toFixed(2)), medianWallS: +median(rs.map((r) => r.wallS)).toFixed(2),
    cpuS: rs.map((r) => +r.cpuS.toFixed(2)), medianCpuS: +median(rs.map((r) => r.cpuS)).toFixed(2),
    mainCpuS: rs.map((r) => +r.mainCpuS.toFixed(2)), medianMainCpuS: +median(rs.map((r) => r.mainCpuS)).toFixed(2),
    rssMiB: Math.max(...rs.map((r) => r.rssMiB)), bytesOut: [...new Set(rs.map((r) => r.bytesOut))], load: rs.map((r) => +r.load.toFixed(1)),
  };
});
console.log(JSON.stringify({ location, rounds, summary }, null, 2));
console.log('');
console.log('| decode workers | wall s per round | median wall s | CPU-s per round | median CPU-s | main-thread CPU-s per round | median main-thread CPU-s | peak RSS | output bytes | load (1 min) per round |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const s of summary) {
  console.log(`| ${s.workers} | ${f(s.wallS)} | **${s.medianWallS.toFixed(2)}** | ${f(s.cpuS)} | **${s.medianCpuS.toFixed(2)}** | ${f(s.mainCpuS)} | **${s.medianMainCpuS.toFixed(2)}** | ${s.rssMiB} MiB | ${s.bytesOut.join(' / ')} | ${f(s.load, 1)} |`);
}
