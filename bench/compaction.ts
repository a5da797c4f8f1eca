/**
 * Compaction benchmarks (the four figures the compaction issue asks for), each against a
 * reference measured in the same run, on the same machine and the same files:
 *   (a) rewrite throughput: one group of 1,000 small files (2,000 rows × 6 columns each, one
 *       unpartitioned table) rewritten by packice's rewriteGroup (one thread, as a Lambda
 *       worker runs it) and by the local runner with its defaults (plan, worker thread, commit),
 *       against pyarrow reading the same 1,000 files, concatenating them and writing ZSTD
 *       (bench/baselines/compaction.py);
 *   (b) peak RSS of a child process rewriting the largest group of ~1 GiB and ~256 MiB of
 *       small files, with the peaks of V8 heap, ArrayBuffers and parquet-wasm memory;
 *   (c) planning time of planCompaction on tables of 100,000 and 1,000,000 data files built
 *       from metadata only, against Java Iceberg's planFiles on the same tables
 *       (bench/baselines/PlanFiles.java, compiled into a temp folder at bench time);
 *   (d) the demo's full-scan time before and after its compaction (`packice demo --json`).
 * The tables are built once into .cache/bench/compaction/ and reused (see compaction-tables.ts);
 * delete that folder to rebuild them.
 *
 *   npx tsx bench/compaction.ts [runs=3] [parts=abcd] [plan=100000,1000000] [groups=256,1024] [--write] [--no-baseline]
 *
 * `groups` are the group sizes of (b) in MiB (the largest is the size of the table built for it).
 * --write replaces the compaction section of BENCHMARKS.md (all four parts must run).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { loadTable } from '../lib/catalog/table.js';
import { planCompaction } from '../lib/compaction/planner.js';
import { POLICY_DEFAULTS } from '../lib/compaction/policy.js';
import { buildDataTable, buildMetadataTable, cachedTable, DATA_COLUMNS, type TableFacts } from './compaction-tables.js';
import { decodeWorkersArg, planPhase, rewritePhase, rssPhase, runnerPhase } from './compaction-phases.js';
import {
  ensureJavaClasspath, ensurePython, int, javaVersion, loadAverage, machine, machineLines, markdownTable, median, mib,
  nodeChildArgs, parseArgs, type PhaseResult, pythonVersion, REPO_ROOT, writeSection,
} from './report.js';

const SCRIPT = fileURLToPath(import.meta.url);
const CACHE = join(REPO_ROOT, '.cache', 'bench', 'compaction');
const MiB = 2 ** 20;
const GiB = 2 ** 30;
/** (a): the issue's 1,000 files × 2,000 rows. */
const SMALL_FILES = 1000;
const SMALL_ROWS = 2000;
/** (b): rows per small file of the big group (about 5 MB each). */
const BIG_GROUP_ROWS_PER_FILE = 250_000;
/** (b): the RSS every group size must stay under. */
const RSS_LIMIT = 1.5 * GiB;
/** A Lambda run's limit, and the share of it a group may plan to use. */
const LAMBDA_SECONDS = 15 * 60;
const LAMBDA_SHARE = 0.5;

/** Tables this run had to build (not cached yet), for the Command line. */
const built: string[] = [];

function noteBuild(location: string, what: string): void {
  if (!cachedTable(location)) built.push(what);
}

/** One child process: its result, or why it failed (out of memory told apart), and how long it ran. */
interface Attempt {
  readonly result: PhaseResult | null;
  readonly error?: string;
  readonly oom?: boolean;
  /** Wall-clock seconds of the whole process (for Java: the JVM's total). */
  readonly processS: number;
}

function attempt(command: string, args: readonly string[], what: string): Attempt {
  console.log(`  ${what} …`);
  const t = performance.now();
  const child = spawnSync(command, args, { encoding: 'utf8', cwd: REPO_ROOT, maxBuffer: 256 * MiB, stdio: ['ignore', 'pipe', 'pipe'] });
  const processS = (performance.now() - t) / 1000;
  if (child.error) return { result: null, error: `cannot start ${command}: ${child.error.message}`, processS };
  if (child.status !== 0) {
    const oom = /heap out of memory|Reached heap limit|OutOfMemoryError/.test(child.stderr);
    const lines = child.stderr.trim().split('\n');
    const message = oom ? 'out of memory' : lines.filter((l) => /error/i.test(l)).slice(0, 3).join(' / ') || lines.slice(-3).join(' / ');
    console.error(`${what} failed (exit ${child.status ?? child.signal}) after ${processS.toFixed(0)} s: ${message}`);
    if (!oom) console.error(child.stderr);
    return { result: null, error: message, oom, processS };
  }
  const last = child.stdout.trim().split('\n').pop() ?? '';
  try {
    return { result: JSON.parse(last) as PhaseResult, processS };
  } catch {
    return { result: null, error: `expected a JSON line on stdout, got: ${last.slice(0, 200)}`, processS };
  }
}

function node(args: readonly string[], heapMiB?: number): [string, string[]] {
  const [cmd, rest] = nodeChildArgs(SCRIPT, ['--phase', ...args]);
  return [cmd, heapMiB === undefined ? rest : [`--max-old-space-size=${heapMiB}`, ...rest]];
}

const num = (r: PhaseResult | null | undefined, key: string): number => Number(r?.info?.[key] ?? NaN);
const s1 = (x: number): string => x.toFixed(1);
const s2 = (x: number): string => x.toFixed(2);
const mb = (bytes: number): string => (bytes / 1e6).toFixed(1);
const runsOf = (r: PhaseResult): string => r.wallS.map(s2).join(', ');

interface Section {
  readonly title: string;
  readonly lines: string[];
  /** The figures later parts use. */
  readonly rates?: { readonly label: string; readonly mbPerCpuS: number; readonly mbPerS: number; readonly bytesPerRow: number }[];
}

// ---------------------------------------------------------------------------
// (a) rewrite throughput

async function partA(runs: number, python: string | null, log: (s: string) => void): Promise<Section> {
  const load0 = loadAverage();
  const location = join(CACHE, `small-${SMALL_FILES}x${SMALL_ROWS}`);
  noteBuild(location, 'the table of (a)');
  const facts = await buildDataTable(location, { files: SMALL_FILES, rowsPerFile: SMALL_ROWS, log });
  const rows: string[][] = [];
  const rates: NonNullable<Section['rates']>[number][] = [];
  const [cmd, rewriteArgs] = node(['rewrite', location, String(runs)]);
  const ours = attempt(cmd, rewriteArgs, `packice rewriteGroup × ${runs}`);
  const [, runnerArgs] = node(['runner', location, String(runs)]);
  const runner = attempt(cmd, runnerArgs, `packice runCompaction × ${runs}`);
  let theirs: Attempt | null = null;
  if (python) {
    // pyarrow reads the files in the order the plan gives them to packice.
    const table = await loadTable(location);
    const plan = await planCompaction(table.io, table.metadata, { table: { location } });
    const dir = mkdtempSync(join(tmpdir(), 'packice-bench-'));
    try {
      const list = join(dir, 'files.txt');
      writeFileSync(list, `${plan.groups[0].inputs.map((i) => i.file.filePath).join('\n')}\n`);
      const script = join(REPO_ROOT, 'bench', 'baselines', 'compaction.py');
      theirs = attempt(python, [script, 'rewrite', list, join(dir, 'out.parquet'), String(facts.rows), String(runs)], `pyarrow rewrite × ${runs}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const base = ours.result ? median(ours.result.cpuS) : NaN;
  const row = (name: string, a: Attempt | null, outputs: (r: PhaseResult) => string): void => {
    if (!a) return;
    const r = a.result;
    if (!r) {
      rows.push([name, `not run: ${a.error ?? ''}`, '', '', '', '', '', '', '', '']);
      return;
    }
    const wall = median(r.wallS);
    const cpu = median(r.cpuS);
    const bytesIn = num(r, 'bytesIn');
    rows.push([
      name,
      `**${s2(wall)}**`,
      int(facts.rows / wall),
      s1(bytesIn / 1e6 / wall),
      s1(num(r, 'bytesOut') / 1e6 / wall),
      s2(bytesIn / 1e6 / cpu),
      `${s2(base / cpu)}×`,
      runsOf(r),
      mib(r.maxRssKiB),
      outputs(r),
    ]);
    if (a === ours) rates.push({ label: '1,000 small files (a)', mbPerCpuS: bytesIn / 1e6 / cpu, mbPerS: bytesIn / 1e6 / wall, bytesPerRow: bytesIn / facts.rows });
  };
  const files = (r: PhaseResult): string => `${num(r, 'outputs') || 1} file, ${mb(num(r, 'bytesOut'))} MB`;
  row('packice `rewriteGroup` (one thread, as a Lambda worker)', ours, (r) => `${files(r)} + ${int(num(r, 'mapBytes'))} B map`);
  row('packice `runCompaction` (local runner defaults: plan, 1 worker thread, commit)', runner, files);
  row(`pyarrow ${theirs?.result?.info?.version ?? ''} read_table × ${SMALL_FILES} + concat_tables + write_table`, theirs, files);
  const load1 = loadAverage();
  const table = markdownTable(
    ['implementation', 'median s (wall)', 'rows/s', 'MB/s in', 'MB/s out', 'MB in per CPU-second', 'CPU-second rate ÷ packice rewriteGroup\'s',
      'each run, s', 'peak RSS of the process', 'output'],
    rows,
  );
  return {
    title: '(a) Rewrite throughput: 1,000 small files into target-size files',
    rates,
    lines: [
      `- **Input:** ${facts.description}: ${int(facts.rows)} rows, ${mb(facts.dataBytes)} MB of Parquet in ${int(facts.dataFiles)} files ` +
        `(${int(facts.dataBytes / facts.dataFiles)} B each; built once in ${s1(facts.buildSeconds)} s into \`.cache/bench/compaction/\`). ` +
        `packice plans it with the default policy: one group of all ${int(facts.dataFiles)} files, target file size 512 MiB, so one output file.`,
      `- **Runs:** ${runs} per implementation, all runs of one implementation in one fresh process; the figure is the median run. ` +
        `Load average ${load0} before, ${load1} after.`,
      '',
      table,
      '',
      'MB/s in and out are the input and output Parquet bytes over the median wall time. `rewriteGroup` runs in the ' +
        'benchmark process\'s main thread (parallelism 1), outputs and compaction map deleted after each run; it does what ' +
        'a worker does: reads every input with its deletes applied (none here), writes ZSTD with Iceberg metrics, records ' +
        'the compaction map, and then re-reads its output to prove the live rows are unchanged (count and order-independent ' +
        'hash) — the proof is part of the time. `runCompaction` is the local runner with its defaults: it plans, rewrites ' +
        'the one group in one worker thread (its default is one per core, at most one per group) and commits; the table is ' +
        'put back after each run. pyarrow does the bare work (read every file, concatenate in memory, write ZSTD level 1 ' +
        'with 1,048,576-row groups, packice\'s writer settings) and no proof, no map, no metrics, no delete handling; it ' +
        'holds the whole group in memory, which a 1 GiB group would not allow in a Lambda.',
    ],
  };
}

// ---------------------------------------------------------------------------
// (b) peak RSS

async function partB(groupsMiB: readonly number[], log: (s: string) => void): Promise<Section> {
  const load0 = loadAverage();
  const biggest = Math.max(...groupsMiB);
  const location = join(CACHE, `group-${biggest}mib`);
  noteBuild(location, 'the table of (b)');
  const facts: TableFacts = await buildDataTable(location, { bytes: biggest * MiB, rowsPerFile: BIG_GROUP_ROWS_PER_FILE, log });
  const rows: string[][] = [];
  const rates: NonNullable<Section['rates']>[number][] = [];
  const over: string[] = [];
  /** Runs whose peak ArrayBuffers reached most of their largest output file: the writer's retention (see below). */
  const retained: string[] = [];
  for (const size of [...groupsMiB].sort((a, b) => a - b)) {
    // The largest size is the whole table: the default policy when its cap holds it all.
    const whole = Math.max(POLICY_DEFAULTS.maxGroupBytes, facts.dataBytes);
    const maxGroupBytes = size === biggest ? whole : size * MiB;
    const [cmd, args] = node(['rss', location, String(maxGroupBytes)]);
    const a = attempt(cmd, args, `packice rewriteGroup, group of ≤ ${size} MiB`);
    const r = a.result;
    if (!r) {
      rows.push([`≤ ${size} MiB`, `not run: ${a.error ?? ''}`, '', '', '', '', '', '', '', '', '', '']);
      continue;
    }
    const wall = r.wallS[0];
    const cpu = r.cpuS[0];
    const bytesIn = num(r, 'bytesIn');
    if (r.maxRssKiB * 1024 >= RSS_LIMIT) over.push(`${size} MiB`);
    if (num(r, 'peakArrayBuffersMiB') >= 0.8 * num(r, 'largestOutputMiB')) {
      retained.push(`${num(r, 'peakArrayBuffersMiB')} MiB of ArrayBuffers with a largest output file of ${num(r, 'largestOutputMiB')} MiB`);
    }
    rows.push([
      `\`maxGroupBytes\` ${size !== biggest ? `${size} MiB` : whole === POLICY_DEFAULTS.maxGroupBytes ? `${whole / GiB} GiB (default)` : `${int(whole)} B`}: ` +
        `${num(r, 'groups')} group(s), largest taken`,
      `${int(num(r, 'inputs'))} files, ${s1(bytesIn / MiB)} MiB`,
      int(num(r, 'rows')),
      s1(wall),
      s2(bytesIn / 1e6 / wall),
      s2(bytesIn / 1e6 / cpu),
      `**${mib(r.maxRssKiB)}**`,
      `${num(r, 'rssBeforeMiB')} MiB`,
      `${num(r, 'peakHeapUsedMiB')} MiB`,
      `${num(r, 'peakArrayBuffersMiB')} MiB`,
      `${num(r, 'wasmMemoryMiB')} MiB`,
      `${num(r, 'outputs')}, ${s1(num(r, 'bytesOut') / MiB)} MiB, largest ${num(r, 'largestOutputMiB')} MiB`,
    ]);
    rates.push({ label: `${s1(bytesIn / MiB)} MiB group (b)`, mbPerCpuS: bytesIn / 1e6 / cpu, mbPerS: bytesIn / 1e6 / wall, bytesPerRow: bytesIn / num(r, 'rows') });
  }
  const load1 = loadAverage();
  const table = markdownTable(
    ['group', 'input', 'rows', 'wall s', 'MB/s in', 'MB in per CPU-second', 'peak RSS (`ru_maxrss`)', 'RSS before the rewrite',
      'peak V8 heap used', 'peak ArrayBuffers', 'parquet-wasm memory (high-water)', 'outputs'],
    rows,
  );
  return {
    title: '(b) Peak memory while rewriting one group',
    rates,
    lines: [
      `- **Input:** ${facts.description}: ${int(facts.rows)} rows, ${s1(facts.dataBytes / MiB)} MiB of Parquet in ${int(facts.dataFiles)} files ` +
        `of about ${s1(facts.dataBytes / facts.dataFiles / MiB)} MiB (built once in ${s1(facts.buildSeconds)} s).`,
      `- **Runs:** one rewrite per group size, each in a fresh child process (\`rewriteGroup\` in its main thread), which ` +
        `reports its \`process.resourceUsage().maxRSS\` and samples \`process.memoryUsage()\` and parquet-wasm's memory every ` +
        `100 ms. Load average ${load0} before, ${load1} after.`,
      '',
      table,
      '',
      over.length === 0
        ? `Every group stayed under the 1.5 GiB limit (${(RSS_LIMIT / MiB).toFixed(0)} MiB). ` +
          'Peak RSS is the whole process: Node, tsx, the loaded modules and the wasm module are in "RSS before the rewrite".'
        : `**Over the 1.5 GiB limit:** ${over.join(', ')}.`,
      ...(retained.length === 0
        ? []
        : [
            '',
            `What grows is ArrayBuffer memory, with the size of the output file being written (${retained.join('; ')}); ` +
              'the V8 heap and parquet-wasm\'s memory stay flat. The cause is in `ParquetWriter` (lib/parquet/writer.ts): ' +
              'each read of the wasm writer\'s output stream is `Promise.race([reader.read(), this.stopped])`, and ' +
              '`stopped` stays pending until the writer fails, so every race leaves a reaction on it that keeps the race\'s ' +
              'result — the emitted row-group bytes — reachable until the writer is dropped. A file\'s bytes are therefore ' +
              'all held until it is closed: peak memory grows with the output file size (bounded by the target file size, ' +
              '512 MiB by default, once per open output file), not with the group size beyond that. Writing a 270 MiB file ' +
              'alone held 270 MiB of live ArrayBuffers after a forced GC; with the read raced against a per-read promise ' +
              'instead, 40–70 MiB (peak RSS 526 → 370 MiB).',
          ]),
    ],
  };
}

// ---------------------------------------------------------------------------
// (c) planning time

async function partC(sizes: readonly number[], runs: number, classpath: string | null, log: (s: string) => void): Promise<Section> {
  const load0 = loadAverage();
  const rows: string[][] = [];
  const inputs: string[] = [];
  const notes: string[] = [];
  const bigHeap = Math.floor((totalmem() * 0.75) / MiB);
  let javaDir: string | null = null;
  let javaError: string | null = null;
  if (classpath) {
    javaDir = mkdtempSync(join(tmpdir(), 'packice-bench-java-'));
    const javac = spawnSync('javac', ['-d', javaDir, '-cp', classpath, join(REPO_ROOT, 'bench', 'baselines', 'PlanFiles.java')], { encoding: 'utf8' });
    if (javac.status !== 0) javaError = `javac failed: ${javac.stderr || javac.error?.message}`;
  }
  try {
    for (const n of sizes) {
      const location = join(CACHE, `plan-${n}`);
      noteBuild(location, `the ${int(n)}-file table of (c)`);
      const facts = await buildMetadataTable(location, n, log);
      inputs.push(`${int(n)} data files: ${facts.description} (built in ${s1(facts.buildSeconds)} s)`);
      const label = `${int(n)} files`;
      const ours = (heap: number | undefined, name: string): void => {
        const [cmd, args] = node(['plan', location, String(runs)], heap);
        const a = attempt(cmd, args, `packice planCompaction, ${label}${heap ? `, heap ${heap} MiB` : ''}`);
        const r = a.result;
        if (!r) {
          rows.push([label, name, a.oom ? `**out of memory** after ${s1(a.processS)} s` : `failed: ${a.error ?? ''}`, '', '', '', '', '', '', '']);
          if (a.oom && heap === undefined) ours(bigHeap, `packice \`planCompaction\`, \`--max-old-space-size=${bigHeap}\``);
          return;
        }
        const gc = String(r.info?.gcS ?? '').split(',').map(Number);
        rows.push([
          label,
          name,
          `**${s2(median(r.wallS))}**`,
          runsOf(r),
          'streamed',
          `${s2(median(r.cpuS))} (GC pauses ${s2(median(gc))})`,
          mib(r.maxRssKiB),
          `${int(num(r, 'tasks'))} / ${int(num(r, 'deletes'))}`,
          `${s1(a.processS)} (Node)`,
          `${int(num(r, 'groups'))} groups of ${int(num(r, 'groupInputs'))} files; plan JSON ${num(r, 'planJsonMiB')} MiB; ` +
            `V8 heap used with scan and plan held ${int(num(r, 'heapUsedMiB'))} MiB`,
        ]);
      };
      ours(undefined, 'packice `planCompaction` (Node default heap)');
      for (const stats of ['off', 'on'] as const) {
        const name = `Java \`newScan()${stats === 'on' ? '.includeColumnStats()' : ''}.planFiles()\``;
        if (!javaDir || javaError) {
          rows.push([label, name, `not run: ${javaError ?? 'no interop classpath (scripts/setup-java.sh failed)'}`, '', '', '', '', '', '', '']);
          continue;
        }
        const a = attempt('java', ['-cp', `${javaDir}:${classpath}`, 'PlanFiles', location, String(runs), stats], `Java planFiles, ${label}, stats ${stats}`);
        const r = a.result;
        if (!r) {
          rows.push([label, name, a.oom ? `**out of memory** after ${s1(a.processS)} s` : `failed: ${a.error ?? ''}`, '', '', '', '', '', '', '']);
          continue;
        }
        rows.push([
          label,
          `${name} ${r.info?.version ?? ''}`,
          `**${s2(median(r.wallS))}**`,
          runsOf(r),
          '',
          s2(median(r.cpuS)),
          mib(r.maxRssKiB),
          `${int(num(r, 'tasks'))} / ${int(num(r, 'deletes'))}`,
          `${s1(a.processS)} (JVM; table load ${s2(num(r, 'loadS'))})`,
          `heap max ${int(num(r, 'maxHeapMiB'))} MiB, ${num(r, 'processors')} planning threads`,
        ]);
      }
    }
  } finally {
    if (javaDir) rmSync(javaDir, { recursive: true, force: true });
  }
  notes.push(
    `Node's default heap limit here is ${int(getHeapStatistics().heap_size_limit / MiB)} MiB (V8 \`heap_size_limit\`, its default for ` +
      `this machine); a packice run that exhausts it is shown as out of memory and run again with ` +
      `\`--max-old-space-size=${bigHeap}\` (three quarters of the RAM). ` +
      'Only the planning is timed (median of the runs; all runs in one process, so the first includes JIT warm-up); the ' +
      'last but one column is the whole process, start to exit: runtime start, loading the table and every run. ' +
      'packice\'s time is `planCompaction` whole: it streams the manifests (the scan is not timed apart any more), keeps ' +
      'the candidate files, bin-packs per partition, keeps the best 1,000 groups and writes their inputs as message JSON. ' +
      'Java\'s `planFiles` corresponds to the scan only: it streams the tasks (nothing is held), ' +
      'reads manifests on a worker pool (one thread per core), and without `includeColumnStats()` does not keep the ' +
      'column metrics. "tasks / deletes" counts the data files planned and the (data file, delete file) pairs; both ' +
      'implementations must agree.',
  );
  const load1 = loadAverage();
  const table = markdownTable(
    ['table', 'implementation', 'median s (planning)', 'each run, s', 'of which scan, s', 'CPU s, all threads (median run)', 'peak RSS of the process',
      'tasks / deletes', 'process total, s', 'plan'],
    rows,
  );
  return {
    title: '(c) Planning time on large tables (metadata only)',
    lines: [
      ...inputs.map((s) => `- **Input:** ${s}.`),
      `- **Runs:** ${runs} plans per implementation in one fresh process each. Load average ${load0} before, ${load1} after.`,
      '',
      table,
      '',
      ...notes,
    ],
  };
}

// ---------------------------------------------------------------------------
// (d) the demo

/** What one `packice demo --json` run reports (the figures part (d) shows). */
interface DemoRun {
  readonly scanBeforeMs: number;
  readonly scanAfterMs: number;
  readonly rowsBefore: number;
  readonly rowsAfter: number;
  readonly dataFilesBefore: number;
  readonly dataFilesAfter: number;
  readonly deleteFilesBefore: number;
  readonly deleteFilesAfter: number;
  readonly compactionMs: number;
}

/** Runs the CLI's demo in a child process, as a user would, and reads its JSON. */
function demoRun(folder: string, what: string): DemoRun | { readonly error: string } {
  console.log(`  ${what} …`);
  const child = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'packice.js'), 'demo', folder, '--json'], {
    encoding: 'utf8', cwd: REPO_ROOT, maxBuffer: 64 * MiB, stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.error) return { error: `cannot start the CLI: ${child.error.message}` };
  if (child.status !== 0) return { error: `exit ${child.status ?? child.signal}: ${child.stderr.trim().split('\n').slice(-3).join(' / ')}` };
  type Counts = { dataFiles: number; positionDeleteFiles: number; deletionVectors: number; equalityDeleteFiles: number };
  const j = JSON.parse(child.stdout) as {
    before: Counts;
    after: Counts;
    compaction: { durationMs: number };
    fullScan: { before: { rows: number; ms: number }; after: { rows: number; ms: number } };
  };
  const deletes = (x: Counts): number => x.positionDeleteFiles + x.deletionVectors + x.equalityDeleteFiles;
  return {
    scanBeforeMs: j.fullScan.before.ms,
    scanAfterMs: j.fullScan.after.ms,
    rowsBefore: j.fullScan.before.rows,
    rowsAfter: j.fullScan.after.rows,
    dataFilesBefore: j.before.dataFiles,
    dataFilesAfter: j.after.dataFiles,
    deleteFilesBefore: deletes(j.before),
    deleteFilesAfter: deletes(j.after),
    compactionMs: j.compaction.durationMs,
  };
}

function partD(runs: number): Section {
  const load0 = loadAverage();
  const results: DemoRun[] = [];
  const rows: string[][] = [];
  for (let r = 0; r < runs; r++) {
    const folder = mkdtempSync(join(tmpdir(), 'packice-bench-demo-'));
    const x = demoRun(folder, `packice demo, run ${r + 1} of ${runs}`);
    rmSync(folder, { recursive: true, force: true });
    if ('error' in x) {
      console.error(`packice demo failed: ${x.error}`);
      rows.push([String(r + 1), `failed: ${x.error}`, '', '', '', '', '']);
      continue;
    }
    results.push(x);
    rows.push([
      String(r + 1),
      s2(x.scanBeforeMs / 1000),
      s2(x.scanAfterMs / 1000),
      `${s1(x.scanBeforeMs / x.scanAfterMs)}×`,
      `${int(x.dataFilesBefore)} → ${int(x.dataFilesAfter)}`,
      `${int(x.deleteFilesBefore)} → ${int(x.deleteFilesAfter)}`,
      `${int(x.rowsBefore)} → ${int(x.rowsAfter)}`,
      s1(x.compactionMs / 1000),
    ]);
  }
  if (results.length > 0) {
    const med = (k: keyof DemoRun): number => median(results.map((x) => x[k]));
    rows.push([
      '**median**',
      `**${s2(med('scanBeforeMs') / 1000)}**`,
      `**${s2(med('scanAfterMs') / 1000)}**`,
      `**${s1(med('scanBeforeMs') / med('scanAfterMs'))}×**`,
      '', '', '',
      s1(med('compactionMs') / 1000),
    ]);
  }
  const load1 = loadAverage();
  return {
    title: '(d) The demo: full scan before and after compaction',
    lines: [
      '- **Input:** the table `packice demo` builds: 240 two-minute streaming commits of ' +
        '300 rows into a v2 table partitioned by `identity(action)` and `hour(ts)`, a position-delete commit every tenth commit; ' +
        'then `runCompaction` with its defaults.',
      `- **Runs:** the whole demo ${runs} times, each in a fresh process and a fresh temp folder (\`packice demo <folder> --json\`, ` +
        '`fullScan.before` / `fullScan.after`); a full scan is `timeFullScan`: load the table, plan, read every live row ' +
        `with its deletes applied. Load average ${load0} before, ${load1} after.`,
      '',
      markdownTable(['run', 'full scan before, s', 'after, s', 'speed-up', 'data files', 'delete files', 'live rows', 'compaction, s'], rows),
    ],
  };
}

// ---------------------------------------------------------------------------
// maxGroupBytes

function calibration(sections: readonly Section[]): string[] {
  const rates = sections.flatMap((s) => s.rates ?? []);
  if (rates.length === 0) return [];
  const slowest = rates.reduce((a, b) => (b.mbPerCpuS < a.mbPerCpuS ? b : a));
  const budget = LAMBDA_SECONDS * LAMBDA_SHARE;
  const fit = slowest.mbPerCpuS * 1e6 * budget;
  const current = POLICY_DEFAULTS.maxGroupBytes;
  const currentS = current / 1e6 / slowest.mbPerCpuS;
  return [
    `Rewrite rates measured above, in MB of input Parquet per CPU-second (per wall-second in brackets): ` +
      `${rates.map((r) => `${r.label} ${s2(r.mbPerCpuS)} (${s2(r.mbPerS)})`).join('; ')}. ` +
      'The rewrite is single-threaded (one wasm instance and one JS thread), so one Lambda vCPU gives about one CPU-second per second.',
    '',
    `At the slowest of them, ${s2(slowest.mbPerCpuS)} MB/CPU-s, the current default \`maxGroupBytes\` of ` +
      `${current / GiB} GiB (${mb(current)} MB) takes ${mb(current)} / ${s2(slowest.mbPerCpuS)} = ${int(currentS)} s ` +
      `(${s1(currentS / 60)} min) of CPU: ${currentS > LAMBDA_SECONDS ? '**more than a 15-minute Lambda run**' : 'inside a 15-minute Lambda run'}. ` +
      `Planning a group to use at most ${LAMBDA_SHARE * 100}% of the 900 s (the rest is margin for S3 reads and writes, ` +
      `cold start, a slower vCPU and data that rewrites slower) gives ${s2(slowest.mbPerCpuS)} MB/s × ${int(budget)} s = ` +
      `${mb(fit)} MB = ${int(fit / MiB)} MiB.`,
    '',
    `These inputs hold ${s1(slowest.bytesPerRow)} bytes of Parquet a row (six narrow, well-compressed columns), and the ` +
      'rewrite\'s cost goes by rows and values more than by bytes (each value is decoded, hashed for the proof, measured ' +
      'for metrics and encoded again, and the output is re-read for the proof), so wider or less compressible rows rewrite more MB per second and ' +
      'narrower ones fewer. A byte cap calibrated here is on the safe side for typical tables; a row cap beside it ' +
      `(the plan knows each group's rows) would hold for all: ${int((slowest.mbPerCpuS * 1e6) / slowest.bytesPerRow)} rows per ` +
      `CPU-second here, so ${int(((slowest.mbPerCpuS * 1e6) / slowest.bytesPerRow) * budget)} rows in ${int(budget)} s.`,
  ];
}

// ---------------------------------------------------------------------------

interface Options {
  readonly runs: number;
  readonly parts: string;
  readonly planSizes: number[];
  readonly groupsMiB: number[];
}

function options(positional: readonly string[]): Options {
  const kv = new Map<string, string>();
  for (const p of positional) {
    const m = /^(runs|parts|plan|groups)=(.+)$/.exec(p);
    if (!m) throw new Error(`unknown argument ${p} (known: runs=N parts=abcd plan=N,N groups=MiB,MiB)`);
    kv.set(m[1], m[2]);
  }
  const list = (s: string): number[] => s.split(',').map(Number);
  const o = {
    runs: Number(kv.get('runs') ?? 3),
    parts: kv.get('parts') ?? 'abcd',
    planSizes: list(kv.get('plan') ?? '100000,1000000'),
    groupsMiB: list(kv.get('groups') ?? '256,1024'),
  };
  if (!(o.runs >= 1) || [...o.planSizes, ...o.groupsMiB].some((x) => !(x > 0)) || /[^abcd]/.test(o.parts)) {
    throw new Error(`bad arguments: ${positional.join(' ')}`);
  }
  return o;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const o = options(args.positional);
  if (args.write && o.parts.length < 4) throw new Error('--write needs all four parts (parts=abcd)');
  mkdirSync(CACHE, { recursive: true });
  const m = machine();
  const loadBefore = loadAverage();
  const log = (s: string): void => console.log(s);
  const python = args.baseline && o.parts.includes('a') ? ensurePython() : null;
  const classpath = args.baseline && o.parts.includes('c') ? ensureJavaClasspath() : null;
  const sections: Section[] = [];
  const started = performance.now();
  console.log(`compaction bench: parts ${o.parts}, ${o.runs} runs; tables cached in ${CACHE}`);
  if (o.parts.includes('a')) sections.push(await partA(o.runs, python, log));
  if (o.parts.includes('b')) sections.push(await partB(o.groupsMiB, log));
  if (o.parts.includes('c')) sections.push(await partC(o.planSizes, o.runs, classpath, log));
  if (o.parts.includes('d')) sections.push(partD(o.runs));
  const loadAfter = loadAverage();
  const cal = calibration(sections);
  const body = sections.flatMap((s) => [`### ${s.title}`, '', ...s.lines, '']);
  if (cal.length > 0) body.push('### Calibrating `maxGroupBytes`', '', ...cal, '');
  console.log(`\n${body.join('\n')}`);
  console.log(`load average ${loadBefore} → ${loadAfter} (${m.nproc} CPUs); ${s1((performance.now() - started) / 60_000)} min`);

  if (args.write) {
    const versions: string[] = [];
    const py = python ? pythonVersion(python) : null;
    if (py) versions.push(py);
    const jv = classpath ? javaVersion() : null;
    if (jv) versions.push(jv);
    const command = ['npx tsx bench/compaction.ts', ...process.argv.slice(2)].join(' ');
    writeSection('compaction', [
      '## Compaction',
      '',
      `- **Command:** \`${command}\` (also \`npm run bench:compaction -- --write\`); this run took ` +
        `${Math.ceil((performance.now() - started) / 60_000)} minutes${built.length > 0 ? `, building ${built.join(', ')} included` : ' (every table was cached)'}.`,
      ...machineLines(m, versions, loadBefore, loadAfter),
      `- **Tables:** built once by bench/compaction-tables.ts into \`.cache/bench/compaction/\` and reused; data rows are ` +
        `bench/parquet.ts's formula (${DATA_COLUMNS}).`,
      '',
      ...body,
    ].join('\n'));
  }
}

if (process.argv[2] === '--phase') {
  // rewrite <location> <runs> [decode workers], rss <location> <maxGroupBytes> [decode workers] [decode]: see compaction-phases.ts
  // (decode workers: a count, or lambda<MB> for the default count on a Lambda of that memory).
  const [phase, a, b, c] = process.argv.slice(3);
  // build <location> <files | NNNmib> <rows per file> [partitions] [position delete files]: a data table for running the other phases by hand.
  if (phase === 'build') {
    const size = /^(\d+)mib$/i.exec(b);
    const [partitions, deleteFiles] = process.argv.slice(7).map(Number);
    const facts = await buildDataTable(a, {
      ...(size ? { bytes: Number(size[1]) * MiB } : { files: Number(b) }),
      rowsPerFile: Number(c),
      ...(partitions ? { partitions } : {}),
      ...(deleteFiles ? { positionDeleteFiles: deleteFiles } : {}),
      log: (s) => console.error(s),
    });
    console.log(JSON.stringify(facts));
  } else if (phase === 'rewrite') await rewritePhase(a, Number(b), decodeWorkersArg(c));
  else if (phase === 'runner') await runnerPhase(a, Number(b), c === undefined ? undefined : Number(c));
  else if (phase === 'rss') await rssPhase(a, Number(b), decodeWorkersArg(c), process.argv[7] === 'decode');
  else if (phase === 'plan') await planPhase(a, Number(b));
  else throw new Error(`unknown phase ${phase}`);
} else {
  await main();
}
