/**
 * Issue 11, must-show 1 and 4: packice's rewrite rate next to pyarrow's, interleaved in one run,
 * and what a GB compacted costs on Lambda arm64 at that rate next to S3 Tables.
 *
 *   npx tsx bench/rewrite-rate.ts [table location] [rounds=3]
 *
 * The table (default `.cache/bench/t3m`, built by `npx tsx bench/compaction.ts --phase build
 * <abs path> 1500 2000` when missing) must plan as one group. Each round runs packice's
 * `rewriteGroup` once in a fresh process (bench/compaction.ts --phase rewrite), then pyarrow
 * (bench/baselines/compaction.py) once in a fresh process; the figure is the median round. CPU
 * seconds are user + system of the child, all threads. The load average is recorded per run.
 * With BASE=<another checkout> its rewrite runs too in each round (before/after figures).
 * Prints JSON and Markdown; changes nothing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTable } from '../lib/catalog/table.js';
import { planCompaction } from '../lib/compaction/planner.js';
import { costRows, lambdaCostPerGb, s3TablesPerGb, TRANSITIONS_PER_GB } from './lambda-cost.js';
import { ensurePython, median, nodeChildArgs, REPO_ROOT, runChild, type PhaseResult } from './report.js';

const location = process.argv[2] ?? join(REPO_ROOT, '.cache', 'bench', 't3m');
const rounds = Number(process.argv[3] ?? 3);
const COMPACTION = join(REPO_ROOT, 'bench', 'compaction.ts');

if (!existsSync(join(location, 'metadata'))) {
  const [cmd, args] = nodeChildArgs(COMPACTION, ['--phase', 'build', location, '1500', '2000']);
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: REPO_ROOT });
  if (r.status !== 0) throw new Error(`could not build ${location}`);
}
const table = await loadTable(location);
const plan = await planCompaction(table.io, table.metadata, { table: { location }, policy: {} });
if (plan.groups.length !== 1) throw new Error(`${location}: expected one group, the plan has ${plan.groups.length}`);
const inputs = plan.groups[0].inputs;
const rows = inputs.reduce((n, i) => n + Number(i.file.recordCount), 0);
const bytesIn = inputs.reduce((n, i) => n + Number(i.file.fileSizeInBytes), 0);

const dir = mkdtempSync(join(tmpdir(), 'packice-rate-'));
const list = join(dir, 'files.txt');
writeFileSync(list, inputs.map((i) => i.file.filePath.replace(/^file:\/\//, '')).join('\n'));
const python = ensurePython();

interface Run { readonly cpuS: number; readonly wallS: number; readonly rssMiB: number; readonly bytesOut: number; readonly load: string }
const base = process.env.BASE;
const before: Run[] = [];
const ours: Run[] = [];
const theirs: Run[] = [];
const load = (): string => loadavg().map((x) => x.toFixed(1)).join(' ');
const run = (r: PhaseResult, l: string): Run => ({
  cpuS: r.cpuS[0], wallS: r.wallS[0], rssMiB: Math.round(r.maxRssKiB / 1024), bytesOut: Number(r.info?.bytesOut ?? NaN), load: l,
});
try {
  for (let k = 0; k < rounds; k++) {
    let l = load();
    const [cmd, args] = nodeChildArgs(COMPACTION, ['--phase', 'rewrite', location, '1']);
    ours.push(run(runChild(cmd, args, 'packice rewriteGroup'), l));
    console.error(`round ${k + 1}: packice ${ours[k].cpuS.toFixed(2)} CPU-s (load ${l})`);
    if (base) {
      l = load();
      const [c, a] = nodeChildArgs(join(base, 'bench', 'compaction.ts'), ['--phase', 'rewrite', location, '1']);
      before.push(run(runChild(c, a, 'base rewriteGroup'), l));
      console.error(`round ${k + 1}: base ${before[k].cpuS.toFixed(2)} CPU-s (load ${l})`);
    }
    if (python) {
      l = load();
      const script = join(REPO_ROOT, 'bench', 'baselines', 'compaction.py');
      theirs.push(run(runChild(python, [script, 'rewrite', list, join(dir, 'out.parquet'), String(rows), '1'], 'pyarrow'), l));
      console.error(`round ${k + 1}: pyarrow ${theirs[k].cpuS.toFixed(2)} CPU-s (load ${l})`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const MB = 1e6;
const summary = (runs: Run[]): Record<string, unknown> | null => {
  if (runs.length === 0) return null;
  const cpu = median(runs.map((r) => r.cpuS));
  return {
    cpuS: runs.map((r) => +r.cpuS.toFixed(2)), medianCpuS: +cpu.toFixed(2), wallS: runs.map((r) => +r.wallS.toFixed(1)),
    rowsPerCpuS: Math.round(rows / cpu), mbPerCpuS: +(bytesIn / MB / cpu).toFixed(2),
    rssMiB: Math.max(...runs.map((r) => r.rssMiB)), bytesOut: runs[0].bytesOut, load: runs.map((r) => r.load),
  };
};
const packice = summary(ours)!;
const pyarrow = summary(theirs);

// ---- Cost per GB compacted (must-show 4), at the prices of lib/pipeline/prices.ts (bench/lambda-cost.ts).
const GB = 1e9;
const filesPerGb = GB / (bytesIn / inputs.length);
/** Reads per input file: one tail read holds all of a file under 64 KiB (footer and row groups); larger files take a second. */
const getsPerFile = bytesIn / inputs.length <= 64 * 1024 ? 1 : 2;
const outBytesPerGb = ((packice.bytesOut as number) / bytesIn) * GB;
const proofGetsPerGb = Math.ceil(outBytesPerGb / (512 * 2 ** 20)) * 2; // the proof re-reads each output: tail + row groups
const workload = { mbPerCpuS: packice.mbPerCpuS as number, filesPerGb, getsPerGb: filesPerGb * getsPerFile + proofGetsPerGb, outBytesPerGb };
const cost = {
  filesPerGb: Math.round(filesPerGb), getsPerFile, transitionsPerGb: TRANSITIONS_PER_GB,
  oneVcpu: lambdaCostPerGb(workload, 1769, 1),
  // Measured on 2 CPUs: one worker runs on one; a 6-vCPU Lambda only pays off with work for the other five.
  sixVcpuOneWorker: lambdaCostPerGb(workload, 10240, 6),
  s3Tables: s3TablesPerGb(filesPerGb),
};

const out = { location, inputs: inputs.length, rows, bytesIn, packice, pyarrow, base: base ? { checkout: base, ...summary(before) } : null, ratio: pyarrow ? +((pyarrow.medianCpuS as number) / (packice.medianCpuS as number)).toFixed(2) : null, cost };
console.log(JSON.stringify(out, null, 2));
console.log(['', ...costRows([['1,769 MB (1 vCPU)', cost.oneVcpu], ['10,240 MB (6 vCPU), one worker', cost.sixVcpuOneWorker]], filesPerGb)].join('\n'));
