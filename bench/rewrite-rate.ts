/**
 * Issue 11, must-show 1 and 4: packice's rewrite rate next to pyarrow's and Spark's, interleaved
 * in one run, and what a GB compacted costs on Lambda arm64 at that rate next to S3 Tables.
 *
 *   npx tsx bench/rewrite-rate.ts [table location | demo] [rounds=3]
 *   SPARK=1 npx tsx bench/rewrite-rate.ts …   # builds the Spark baseline first (scripts/setup-spark.sh)
 *
 * The table defaults to `.cache/bench/t3m`, built by `npx tsx bench/compaction.ts --phase build
 * <abs path> 1500 2000` when missing; `demo` is `.cache/bench/demo`, the uncompacted table
 * `packice demo` builds (buildDemoTable), built when missing. A table that plans as one group
 * is rewritten by packice's `rewriteGroup` (bench/compaction.ts --phase rewrite); one that plans
 * as several is compacted end to end by the local runner (--phase runner: plan, rewrite in
 * worker threads, commit; the table is put back after). pyarrow (bench/baselines/compaction.py)
 * reads every input data file, concatenates and writes one ZSTD file (deletes not applied).
 * Spark (bench/spark: Spark 3.5 local[*], Iceberg's Spark runtime) runs `CALL
 * rewrite_data_files` on a metadata-only copy of the table in a temp folder; it runs when
 * SPARK=1, or when its build (.cache/spark) is present and SPARK is not 0. Its figure is the
 * call alone, timed after the session is warm; the whole JVM's CPU is reported beside it.
 * Each round runs every implementation once, each in a fresh process; the figure is the median
 * round. CPU seconds are user + system of the child, all threads. The load average is recorded
 * per run. packice and pyarrow rewrite twice in their process: the first rewrite ("cold": for
 * packice tsx's transpiling, module loading, the wasm compile and JIT warm-up; pyarrow's imports
 * are before its timer) is the headline figure, the second ("warm": what a warm Lambda container
 * pays per group) is reported beside it. Spark's call is timed warm only.
 * packice's children (BASE's too) start with the rewrite Lambda's V8 flags (cdk/node-flags.sh, its exec
 * wrapper; bench/report.ts lambdaNodeFlags), as the function runs; LAMBDA_FLAGS=0 leaves them out. With BASE=<another
 * checkout> its rewrite runs too in each round (before/after figures). Prints JSON and Markdown; changes nothing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTable } from '../lib/catalog/table.js';
import { buildDemoTable } from '../lib/table/demo-table.js';
import { parquetWriteOptions } from '../lib/table/data-writer.js';
import { DEFAULT_ZSTD_LEVEL, zstdCodec } from '../lib/parquet/compression-codec.js';
import { planCompaction } from '../lib/compaction/planner.js';
import { costRows, lambdaCostPerGb, s3TablesPerGb, TRANSITIONS_PER_GB } from './lambda-cost.js';
import {
  ensurePython, ensureSparkClasspath, lambdaNodeFlags, median, nodeChildArgs, REPO_ROOT, runChild, SPARK_CLASSPATH, SPARK_JVM_OPTIONS, type PhaseResult,
} from './report.js';

const demo = process.argv[2] === 'demo';
const location = demo ? join(REPO_ROOT, '.cache', 'bench', 'demo') : (process.argv[2] ?? join(REPO_ROOT, '.cache', 'bench', 't3m'));
const rounds = Number(process.argv[3] ?? 3);
const COMPACTION = join(REPO_ROOT, 'bench', 'compaction.ts');
/**
 * Worker threads packice may use (groups side by side, decode workers): 0 by default, all in one
 * thread as on a 1,769 MB (one vCPU) Lambda, whose CPU-seconds the cost figures price. THREADS=n
 * to measure the pools (they add CPU-seconds for less wall time).
 */
const THREADS = Number(process.env.THREADS ?? 0);
/** Rewrites per child: the cold one and a warm one. The runner phase commits, so it runs once (no warm figure). */
const WARM_RUNS = 2;

if (demo) {
  // Ours to rebuild: a build cut short leaves no marker.
  const marker = join(location, 'bench-table.json');
  if (!existsSync(marker)) {
    rmSync(location, { recursive: true, force: true });
    console.error(`building the demo table in ${location}`);
    const { deleted } = await buildDemoTable(location);
    writeFileSync(marker, `${JSON.stringify({ kind: 'demo', deleted })}\n`);
  }
} else if (!existsSync(join(location, 'metadata'))) {
  const [cmd, args] = nodeChildArgs(COMPACTION, ['--phase', 'build', location, '1500', '2000']);
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: REPO_ROOT });
  if (r.status !== 0) throw new Error(`could not build ${location}`);
}
const table = await loadTable(location);
/** The ZSTD level packice writes this table at (the table's property, else 3 with a native zstd, else parquet-wasm's 1): pyarrow writes at it too. */
const ZSTD_LEVEL =
  parquetWriteOptions(table.metadata).compressionLevel ?? (zstdCodec() !== undefined ? DEFAULT_ZSTD_LEVEL : 1);
const plan = await planCompaction(table.io, table.metadata, { table: { location }, policy: {} });
if (plan.groups.length === 0) throw new Error(`${location}: the plan has no group`);
const phase = plan.groups.length === 1 ? 'rewrite' : 'runner';
const RUNS = phase === 'rewrite' ? WARM_RUNS : 1;
const inputs = plan.groups.flatMap((g) => g.inputs);
const rows = inputs.reduce((n, i) => n + Number(i.file.recordCount), 0);
const bytesIn = inputs.reduce((n, i) => n + Number(i.file.fileSizeInBytes), 0);

const dir = mkdtempSync(join(tmpdir(), 'packice-rate-'));
const list = join(dir, 'files.txt');
writeFileSync(list, inputs.map((i) => i.file.filePath.replace(/^file:\/\//, '')).join('\n'));
const python = ensurePython();
const sparkWanted = process.env.SPARK === '1' || (process.env.SPARK !== '0' && existsSync(SPARK_CLASSPATH));
const spark = sparkWanted ? ensureSparkClasspath() : null;
if (sparkWanted && spark === null) console.error('Spark: not run (scripts/setup-spark.sh failed, see above)');

interface Run {
  /** The first rewrite in the process (cold). */
  readonly cpuS: number;
  readonly wallS: number;
  /** The second rewrite in the same process (warm), where the child ran two. */
  readonly warmCpuS?: number;
  readonly rssMiB: number;
  readonly bytesOut: number;
  readonly load: string;
  /** Spark: the whole JVM's CPU and wall seconds, start-up and warm-up included. */
  readonly processCpuS?: number;
  readonly processWallS?: number;
}
const base = process.env.BASE;
const before: Run[] = [];
const ours: Run[] = [];
const theirs: Run[] = [];
const sparks: Run[] = [];
const load = (): string => loadavg().map((x) => x.toFixed(1)).join(' ');
const run = (r: PhaseResult, l: string): Run => ({
  cpuS: r.cpuS[0], wallS: r.wallS[0], ...(r.cpuS.length > 1 ? { warmCpuS: r.cpuS[1] } : {}), rssMiB: Math.round(r.maxRssKiB / 1024), bytesOut: Number(r.info?.bytesOut ?? NaN), load: l,
  ...(r.info?.processCpuS === undefined ? {} : { processCpuS: Number(r.info.processCpuS), processWallS: Number(r.info.processWallS) }),
});
let sparkInfo: PhaseResult['info'];
try {
  for (let k = 0; k < rounds; k++) {
    let l = load();
    const [cmd, args] = nodeChildArgs(COMPACTION, ['--phase', phase, location, String(RUNS), String(THREADS)], lambdaNodeFlags());
    ours.push(run(runChild(cmd, args, `packice ${phase}`), l));
    console.error(`round ${k + 1}: packice ${ours[k].cpuS.toFixed(2)} CPU-s cold, ${ours[k].warmCpuS?.toFixed(2) ?? '-'} warm (load ${l})`);
    if (base) {
      l = load();
      const [c, a] = nodeChildArgs(join(base, 'bench', 'compaction.ts'), ['--phase', phase, location, String(RUNS), String(THREADS)], lambdaNodeFlags());
      before.push(run(runChild(c, a, `base ${phase}`), l));
      console.error(`round ${k + 1}: base ${before[k].cpuS.toFixed(2)} CPU-s cold, ${before[k].warmCpuS?.toFixed(2) ?? '-'} warm (load ${l})`);
    }
    if (python) {
      l = load();
      const script = join(REPO_ROOT, 'bench', 'baselines', 'compaction.py');
      theirs.push(run(runChild(python, [script, 'rewrite', list, join(dir, 'out.parquet'), String(rows), String(RUNS), String(ZSTD_LEVEL)], 'pyarrow'), l));
      console.error(`round ${k + 1}: pyarrow ${theirs[k].cpuS.toFixed(2)} CPU-s cold, ${theirs[k].warmCpuS?.toFixed(2) ?? '-'} warm (load ${l})`);
    }
    if (spark) {
      l = load();
      const work = mkdtempSync(join(dir, 'spark-'));
      const r = runChild('java', [`@${SPARK_JVM_OPTIONS}`, '-cp', spark, 'packice.bench.SparkRewrite', location, work], 'Spark rewrite_data_files');
      rmSync(work, { recursive: true, force: true });
      sparkInfo = r.info;
      sparks.push(run(r, l));
      console.error(`round ${k + 1}: Spark ${sparks[k].cpuS.toFixed(2)} CPU-s for the call, ${sparks[k].processCpuS?.toFixed(2)} for the JVM (load ${l})`);
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
    ...(runs.every((r) => r.warmCpuS !== undefined)
      ? { warmCpuS: runs.map((r) => +(r.warmCpuS ?? NaN).toFixed(2)), medianWarmCpuS: +median(runs.map((r) => r.warmCpuS ?? NaN)).toFixed(2) }
      : {}),
    rssMiB: Math.max(...runs.map((r) => r.rssMiB)), bytesOut: runs[0].bytesOut, load: runs.map((r) => r.load),
    ...(runs[0].processCpuS === undefined
      ? {}
      : {
          processCpuS: runs.map((r) => +(r.processCpuS ?? NaN).toFixed(2)), medianProcessCpuS: +median(runs.map((r) => r.processCpuS ?? NaN)).toFixed(2),
          processWallS: runs.map((r) => +(r.processWallS ?? NaN).toFixed(1)),
        }),
  };
};
const packice = summary(ours)!;
const pyarrow = summary(theirs);
const sparkRuns = summary(sparks);

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

const out = {
  location, groups: plan.groups.length, packicePhase: phase, inputs: inputs.length, rows, bytesIn, packice, pyarrow,
  spark: sparkRuns ? { ...sparkRuns, info: sparkInfo } : null, base: base ? { checkout: base, ...summary(before) } : null,
  ratio: pyarrow ? +((pyarrow.medianCpuS as number) / (packice.medianCpuS as number)).toFixed(2) : null,
  warmRatio: pyarrow?.medianWarmCpuS !== undefined && packice.medianWarmCpuS !== undefined
    ? +((pyarrow.medianWarmCpuS as number) / (packice.medianWarmCpuS as number)).toFixed(2) : null,
  sparkRatio: sparkRuns ? +((sparkRuns.medianCpuS as number) / (packice.medianCpuS as number)).toFixed(2) : null,
  cost,
};
console.log(JSON.stringify(out, null, 2));

const cpuRow = (label: string, x: Record<string, unknown> | null, whole = false): string | null => {
  if (x === null) return null;
  const cpus = x[whole ? 'processCpuS' : 'cpuS'] as number[];
  const cpu = median(cpus);
  const wall = median(x[whole ? 'processWallS' : 'wallS'] as number[]);
  const per = cpus.map((c, k) => `${c.toFixed(2)} (${(x.load as string[])[k].split(' ')[0]})`).join(', ');
  const vsPyarrow = pyarrow ? `${((pyarrow.medianCpuS as number) / cpu).toFixed(2)}×` : 'not run';
  // Warm: the second rewrite in the process, next to pyarrow's second (Spark's call is timed warm only: its one figure).
  const warmCpus = whole ? undefined : (x.warmCpuS as number[] | undefined);
  const warm = warmCpus === undefined ? undefined : median(warmCpus);
  const warmPer = warmCpus === undefined ? '—' : warmCpus.map((c) => c.toFixed(2)).join(', ');
  const warmVs = warm === undefined || pyarrow?.medianWarmCpuS === undefined ? '—' : `${((pyarrow.medianWarmCpuS as number) / warm).toFixed(2)}×`;
  return `| ${label} | ${per} | **${cpu.toFixed(2)}** | ${wall.toFixed(1)} | ${Math.round(rows / cpu).toLocaleString('en-US')} | ` +
    `${(bytesIn / MB / cpu).toFixed(2)} | ${vsPyarrow} | ${warmPer} | ${warm === undefined ? '—' : `**${warm.toFixed(2)}**`} | ${warmVs} | ` +
    `${x.rssMiB as number} MiB | ${(x.bytesOut as number).toLocaleString('en-US')} B |`;
};
const threadNote = THREADS === 0 ? 'one thread' : `${THREADS} worker threads`;
const packiceLabel =
  phase === 'rewrite' ? `packice \`rewriteGroup\`, ${threadNote}` : `packice local runner (compact: plan, ${plan.groups.length} groups, commit; ${threadNote})`;
console.log([
  '',
  `${location}: ${plan.groups.length} group(s), ${inputs.length.toLocaleString('en-US')} data files, ${rows.toLocaleString('en-US')} rows, ${(bytesIn / MB).toFixed(1)} MB`,
  '',
  '| implementation | cold CPU-s per round (load, 1 min) | median cold CPU-s | median cold wall s | rows per CPU-second (cold) | MB in per CPU-second (cold) | ' +
    '÷ pyarrow (cold) | warm CPU-s per round (2nd rewrite in the process) | median warm CPU-s | ÷ pyarrow (warm) | peak RSS | output |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  cpuRow(packiceLabel, packice),
  base ? cpuRow(`packice, BASE=${base}`, summary(before)) : null,
  python ? cpuRow(`pyarrow read_table + concat_tables + write_table ZSTD ${ZSTD_LEVEL}`, pyarrow) : '| pyarrow | not run | | | | | | | | | | |',
  spark
    ? cpuRow(`Spark ${String(sparkInfo?.spark)} + Iceberg ${String(sparkInfo?.iceberg)} \`rewrite_data_files\`, the call alone`, sparkRuns)
    : '| Spark `rewrite_data_files` | not run (SPARK=1 to build and run it) | | | | | | | | | | |',
  spark ? cpuRow('Spark, the whole JVM (start, session, warm-up, call; not the stop)', sparkRuns, true) : null,
].filter((x) => x !== null).join('\n'));
console.log(['', ...costRows([['1,769 MB (1 vCPU)', cost.oneVcpu], ['10,240 MB (6 vCPU), one worker', cost.sixVcpuOneWorker]], filesPerGb)].join('\n'));
