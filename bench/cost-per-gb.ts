/**
 * Issue 11, must-show 4: what a GB compacted costs on Lambda arm64, from the requests a rewrite
 * really sends. Three tables are copied onto a moto S3 server on loopback and each one group is
 * rewritten by `rewriteGroup` in a child process of its own, `rounds` times, interleaved:
 *
 * - small:   300 files × 2,000 rows (~34 KB each): row groups under the copy floor, merged page by page
 *            (lib/parquet/row-group-merge.ts; decoded before it);
 * - copy:    40 files × 300,000 rows (~3.9 MB, one row group each), no deletes: column-chunk copy;
 * - deletes: the same 40 files with position deletes (one row in 1,000 deleted): merged, deleted rows dropped;
 * - eqdeletes: the same 40 files with one equality delete file on `id` (one row in 1,000, as streaming
 *            upserts leave them): merged, the rows it matches (probed on `id` alone) dropped;
 * - deletes-700, eqdeletes-700: the same with 180 such files (717 MB, 54 M rows): one group of the size
 *            production plans (maxGroupBytes, 700 MiB).
 *
 * packice's children (BASE's too) start with the rewrite Lambda's V8 flags (cdk/node-flags.sh, its exec
 * wrapper; bench/report.ts lambdaNodeFlags), as the function runs; LAMBDA_FLAGS=0 leaves them out.
 * The child rewrites the group until it has spent WARM_CPU_S on it, then once more, measured, as a
 * warm Lambda container runs every group but its first (modules loaded, wasm compiled, JIT warm; the
 * first run's CPU is reported as the cold figure; COLD=1 measures the first instead). It counts every
 * S3 request its FileIO's client sends during that `rewriteGroup` (lib/io/s3-requests.ts: attempts by
 * command, with their bytes) and its CPU time. The cost per GB then prices the GETs and PUTs
 * counted, Step Functions transitions per group, and Lambda duration two ways: CPU time only, and
 * CPU time plus the S3 time the code does not overlap with it, modelled from the requests
 * (bench/lambda-cost.ts s3WaitSeconds: 85 MB/s per connection, 30 ms first byte). moto's own
 * time is not used: it answers from Python on the same 2 CPUs.
 *
 * LINK=measured (default LINK=model) measures that wait as well: the children (BASE's too) talk https
 * to bench/s3-link.ts, a proxy in this process in front of moto that gives each connection S3_LINK's
 * first-byte latency and bandwidth each way, and the S3 wait measured is max(0, wall − CPU) of
 * `rewriteGroup` (one thread, `decodeWorkers: 0`: what the code does not overlap with its CPU),
 * median over the rounds; it is shown next to the model's and billed as CPU + measured wait. Over
 * https the client sends UNSIGNED-PAYLOAD and pays TLS as on AWS, so CPU-s differ a little from
 * LINK=model's (plain http, bodies hashed for SigV4). Caveats: moto and the proxy run on the
 * machine's other CPU beside the child, so a loaded machine, or moto answering later than the
 * first-byte latency (the table's "moto late s", with moto's and the link's CPU-s), lengthens wall
 * time: the measured wait errs on the expensive side, and where moto is slower than the link it
 * measures moto (compare LINK=model's wall − CPU, moto with no link at all). The child's helper
 * threads (GC) may run beside its main thread, which a one-vCPU Lambda would not let them.
 * Connection set-up and 100-continue exchanges (the SDK opens a connection of its own for each PUT
 * body of 2 MiB or more) cost loopback time only. The tables are still copied to moto directly.
 *
 *   [BASE=<another checkout>] [LINK=model|measured] [WORKERS=n] [BATCH=n] npx tsx bench/cost-per-gb.ts [rounds=3] [--append [small,copy,deletes,eqdeletes]]
 *
 * WORKERS=n (default 0) rewrites with n worker threads (the rewriter's decodeWorkers: merge and decode workers)
 * and prices the 10,240 MB rows from that run: wall time on six vCPUs projected as the larger of the main
 * thread's CPU and all threads' CPU ÷ 6, the S3 wait modelled on that time line. n = 1 on a 2-CPU machine (more
 * crowd its cores and inflate the CPU); the 1,769 MB rows of such a run price all threads' CPU on one vCPU, where
 * a Lambda would start no worker: take those from a WORKERS=0 run.
 *
 * BATCH=n (default 1) also rewrites n copies of the group at once, one thread each, as a batching rewrite
 * function (IcebergMaintenance rewriteBatchSize) does after it (its threads warmed by a batch first), and
 * prices the 10,240 MB function given six groups per invocation: each group billed a sixth of its own CPU
 * (measured with the others beside it) plus its own S3 wait (modelled as one thread's), one request and one
 * transition a batch. n = 2 on a 2-CPU machine (more would crowd its cores; moto shares them too). Groups
 * of a batch are assumed alike (the plan batches like sizes together): the invocation lasts as long as
 * its slowest.
 *
 * With BASE (a checkout with node_modules, e.g. `git archive main` plus a node_modules link), each round
 * also runs that checkout's own `bench/cost-per-gb.ts --phase` on the same tables, interleaved with this
 * one's, and its S3 wait is modelled by that checkout's own bench/lambda-cost.ts (the model follows
 * the code it describes). BASE_WORKLOADS=copy,… limits the base's runs to those workloads.
 *   npx tsx bench/cost-per-gb.ts --report     (the last run's results again, from .cache/bench/cost-per-gb-runs.json)
 *
 * Tables are built once into .cache/bench/ (small-300, cc-40x4mb, cc-40x4mb-del, cc-40x4mb-eqdel). Prints
 * JSON and Markdown; changes nothing outside .cache. Nothing here is imported by lib/ or the tests.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadTable } from '../lib/catalog/table.js';
import { planCompaction } from '../lib/compaction/planner.js';
import { DEFAULT_TARGET_FILE_SIZE_BYTES, POLICY_DEFAULTS } from '../lib/compaction/policy.js';
import type { FileGroup, GroupResult, Plan } from '../lib/compaction/messages.js';
import { planHeaderOf, type RewriteBatch } from '../lib/pipeline/rewrite-request.js';
import { rewriteBatchStep } from '../lib/pipeline/rewrite-step.js';
import { rewriteGroup } from '../lib/compaction/rewriter.js';
import { LazyS3FileIO, parseS3Location } from '../lib/io/index.js';
import { S3RequestCounter } from '../lib/io/s3-requests.js';
import { footerReadRange } from '../lib/parquet/footer.js';
import { DEFAULT_PART_SIZE } from '../lib/io/s3.js';
import { deleteByEquality, deleteRows } from '../lib/table/operations.js';
import { relocateTable } from '../lib/table/relocate.js';
import { createBucket, startMoto, TEST_AWS_ENV } from '../test/support/moto.js';
import { buildDataTable } from './compaction-tables.js';
import {
  costRows, measuredCostPerGb, putsPerGb, S3_LINK, s3TablesPerGb, s3WaitSeconds, type LambdaCost, type RequestTrace, type RewritePath,
} from './lambda-cost.js';
import { lambdaNodeFlags, loadAverage, machine, mainThreadCpuS, median, nodeChildArgs, REPO_ROOT, type PhaseResult } from './report.js';
import { lateSeconds, linkStatsSince, startS3Link, type LinkStats } from './s3-link.js';

const SCRIPT = fileURLToPath(import.meta.url);
const CACHE = join(REPO_ROOT, '.cache', 'bench');
const execFileAsync = promisify(execFile);
/** Every run's result as it comes, for `--report` (a report again without running). */
const RUNS_FILE = join(CACHE, 'cost-per-gb-runs.json');

interface Workload {
  readonly name: 'small' | 'copy' | 'deletes' | 'eqdeletes' | 'deletes-700' | 'eqdeletes-700';
  readonly label: string;
  readonly local: string;
}

const WORKLOADS: readonly Workload[] = [
  { name: 'small', label: '34 KB files (row-group merge)', local: join(CACHE, 'small-300') },
  { name: 'copy', label: '3.9 MB files, no deletes (column-chunk copy)', local: join(CACHE, 'cc-40x4mb') },
  { name: 'deletes', label: '3.9 MB files with position deletes (merged, deleted rows dropped)', local: join(CACHE, 'cc-40x4mb-del') },
  { name: 'eqdeletes', label: '3.9 MB files with equality deletes (merged, matched rows dropped)', local: join(CACHE, 'cc-40x4mb-eqdel') },
  { name: 'deletes-700', label: '3.9 MB files with position deletes, a 700 MiB group', local: join(CACHE, 'cc-180x4mb-del') },
  { name: 'eqdeletes-700', label: '3.9 MB files with equality deletes, a 700 MiB group', local: join(CACHE, 'cc-180x4mb-eqdel') },
];
/** Where deletes-700 and eqdeletes-700 are copied from: 180 files × 300,000 rows, no deletes. */
const PLAIN_700 = join(CACHE, 'cc-180x4mb');

/** One position delete of every thousandth row (`id` ends in 7), as the 3.9 MB workloads carry. */
async function withPositionDeletes(from: string, to: string, log: (s: string) => void): Promise<void> {
  if (existsSync(join(to, 'metadata'))) return;
  await relocateTable(from, to, { concurrency: 8 });
  const { deleted } = await deleteRows(await loadTable(to), (r) => (r.id as bigint) % 1000n === 7n);
  log(`${to}: ${deleted} rows deleted`);
}

/** One equality delete file on `id` naming the same rows. */
async function withEqualityDeletes(from: string, to: string, rows: number, log: (s: string) => void): Promise<void> {
  if (existsSync(join(to, 'metadata'))) return;
  await relocateTable(from, to, { concurrency: 8 });
  const keys = Array.from({ length: rows / 1000 }, (_, i) => ({ id: BigInt(i * 1000 + 7) }));
  await deleteByEquality(await loadTable(to), [1], keys);
  log(`${to}: ${keys.length} equality deletes on id`);
}

async function buildTables(chosen: readonly Workload[]): Promise<void> {
  const log = (s: string): void => console.error(s);
  const needs = (name: Workload['name']): boolean => chosen.some((w) => w.name === name);
  const local = (name: Workload['name']): string => WORKLOADS.find((w) => w.name === name)!.local;
  if (needs('small')) await buildDataTable(local('small'), { files: 300, rowsPerFile: 2000, log });
  if (needs('copy') || needs('deletes') || needs('eqdeletes')) await buildDataTable(local('copy'), { files: 40, rowsPerFile: 300_000, log });
  if (needs('deletes')) await withPositionDeletes(local('copy'), local('deletes'), log);
  if (needs('eqdeletes')) await withEqualityDeletes(local('copy'), local('eqdeletes'), 40 * 300_000, log);
  if (needs('deletes-700') || needs('eqdeletes-700')) await buildDataTable(PLAIN_700, { files: 180, rowsPerFile: 300_000, log });
  if (needs('deletes-700')) await withPositionDeletes(PLAIN_700, local('deletes-700'), log);
  if (needs('eqdeletes-700')) await withEqualityDeletes(PLAIN_700, local('eqdeletes-700'), 180 * 300_000, log);
}

/**
 * The path a child's rewrite took: copied or merged outputs read and write S3 alike ('copy'), else
 * 'decode'. A child from before the merge (a BASE) does not say: all outputs copied is 'copy'.
 */
function pathOf(info: NonNullable<PhaseResult['info']>): RewritePath {
  if (info.path === 'copy' || info.path === 'decode') return info.path;
  return Number(info.copied) === Number(info.outputs) ? 'copy' : 'decode';
}

/** Bytes of a footer read of a large file (its tail): lib/parquet/footer.ts. */
const FOOTER_READ_BYTES = ((r) => r.end - r.start)(footerReadRange(2 ** 40));

/** CPU seconds of rewrites of its group a child runs before the one it measures. */
const WARM_CPU_S = 5;
/** Worker threads of the children's rewrites (WORKERS, default 0: one thread, the 1,769 MB Lambda's). */
const WORKERS = Number(process.env.WORKERS ?? 0);
/** vCPUs of a 10,240 MB Lambda. */
const LARGE_VCPUS = 6;
/**
 * BATCH=n: the child also rewrites n copies of its group at once, one thread each, as a batching
 * rewrite function does (lib/pipeline/rewrite-step.ts rewriteBatchStep; a 10,240 MB one takes six):
 * the CPU a group costs with others beside it prices the 10,240 MB function given a batch. Its
 * threads rewrite a batch first (their first rewrite is cold; a container keeps them warm).
 */
const BATCH = Number(process.env.BATCH ?? 1);


/** Child: one rewriteGroup of the table's one group on S3, its requests logged. */
async function rewritePhase(location: string, endpoint: string): Promise<void> {
  const table = await loadTable(location, { s3Endpoint: endpoint });
  if (!(table.io instanceof LazyS3FileIO)) throw new Error(`${location}: not on S3`);
  const plan = await planCompaction(table.io, table.metadata, { table: { location }, policy: { maxGroupBytes: 2 ** 40 } });
  if (plan.groups.length !== 1) throw new Error(`${location}: expected one group, the plan has ${plan.groups.length}`);
  const group = plan.groups[0];
  const dropOutputs = async (r: GroupResult): Promise<void> => void await table.io.deleteMany([...r.outputs.map((o) => o.filePath), ...(r.compactionMap ? [r.compactionMap] : [])]);
  // A Lambda container runs group after group (a run of 1 TB is ~1,400 groups over the state machine's
  // 10 at once): every invocation but a container's first finds its modules loaded, its wasm compiled
  // and its JIT warm. So the rewrite measured follows WARM_CPU_S of rewrites of this group in the same
  // process (one at least; a 700 MiB group's one is ~30 s, the 34 KB workload's 10 MB ~1 s, and its
  // JIT is still warming in the second: a production group of it is 21,000 files); the first's CPU is
  // reported beside it (coldCpuS). COLD=1 measures the first, as a fresh container would.
  let coldCpuS: number | undefined;
  let warmCpuS = 0;
  for (let k = 0; process.env.COLD !== '1' && warmCpuS < WARM_CPU_S && k < 10; k++) {
    const c0 = process.cpuUsage();
    await dropOutputs(await rewriteGroup(table.io, table.metadata, plan, group, { decodeWorkers: WORKERS }));
    const c = process.cpuUsage(c0);
    coldCpuS ??= (c.user + c.system) / 1e6;
    warmCpuS += (c.user + c.system) / 1e6;
  }
  const client = (await table.io.s3()).client;
  const counter = new S3RequestCounter(client, { log: true });
  // The process's CPU seconds as each request is sent, in send order: the CPU its reads and uploads overlap.
  const sent: { command: string; key: string; cpuS: number; bytes: number }[] = [];
  let sending = true;
  client.middlewareStack.add(
    (next, context) => (args) => {
      if (sending) {
        const c = process.cpuUsage();
        const { Key: key, Range: range } = args.input as { Key?: unknown; Range?: unknown };
        const [, from, to] = /^bytes=(\d+)-(\d+)$/.exec(typeof range === 'string' ? range : '') ?? [];
        const bytes = from === undefined ? 0 : Number(to) - Number(from) + 1;
        sent.push({ command: context.commandName ?? '', key: typeof key === 'string' ? key : '', cpuS: (c.user + c.system) / 1e6, bytes });
      }
      return next(args);
    },
    { step: 'initialize', name: 'benchCpuAtSend' },
  );
  const t = performance.now();
  const c0 = process.cpuUsage();
  const main0 = mainThreadCpuS() ?? NaN;
  // One thread, as on the one-vCPU 1,769 MB Lambda whose CPU time the figures price (workers add CPU-seconds),
  // unless WORKERS asks for worker threads, as a 10,240 MB one starts five.
  const result = await rewriteGroup(table.io, table.metadata, plan, group, { decodeWorkers: WORKERS });
  const c = process.cpuUsage(c0);
  const mainCpuS = (mainThreadCpuS() ?? NaN) - main0;
  sending = false;
  const wallS = (performance.now() - t) / 1000;
  const counts = counter.counts();
  const requests = counter.requests();
  const key = (p: string): string => parseS3Location(p).key;
  const inputs = new Set(group.inputs.map((i) => key(i.file.filePath)));
  const outputs = new Set(result.outputs.map((o) => key(o.filePath)));
  const seen = new Set<string>();
  const trace: {
    inputFirst: number[]; inputLater: number[]; outputFooters: number[]; outputGets: number[]; outputGetsByFile: number[][]; outputs: { parts: number[]; steps: number }[];
    writeCpuS?: number;
  } = { inputFirst: [], inputLater: [], outputFooters: [], outputGets: [], outputGetsByFile: [], outputs: [] };
  const getsOf = new Map<string, number[]>();
  const byOutput = new Map<string, { parts: number[]; steps: number }>();
  const path: RewritePath = result.outputs.every((o) => /-(copy|merge)-/.test(o.filePath)) ? 'copy' : 'decode';
  // An input's later GETs read its row groups; on the copy and merge paths so does a first GET of more
  // than a footer read's 64 KiB: a small input read whole as it is merged (lib/compaction/merge-stream.ts).
  const body = (key: string, bytes: number): boolean => seen.has(key) || (path === 'copy' && bytes > FOOTER_READ_BYTES);
  for (const r of requests) {
    if (r.command === 'GetObjectCommand' && inputs.has(r.key)) {
      (body(r.key, r.bytes) ? trace.inputLater : trace.inputFirst).push(r.bytes);
      seen.add(r.key);
    } else if (r.command === 'GetObjectCommand' && outputs.has(r.key)) {
      if (seen.has(r.key)) {
        trace.outputGets.push(r.bytes);
        getsOf.get(r.key)!.push(r.bytes);
      } else {
        trace.outputFooters.push(r.bytes);
        getsOf.set(r.key, []);
      }
      seen.add(r.key);
    } else if (outputs.has(r.key) || r.key === (result.compactionMap ? key(result.compactionMap) : '')) {
      let o = byOutput.get(r.key);
      if (!o) byOutput.set(r.key, (o = { parts: [], steps: 0 }));
      if (r.command === 'UploadPartCommand' || r.command === 'PutObjectCommand') o.parts.push(r.bytes);
      else if (r.command !== 'HeadObjectCommand') o.steps++;
    }
  }
  trace.outputs.push(...byOutput.values());
  trace.outputGetsByFile.push(...getsOf.values());
  // From the first row-group read of an input (as above) to the last part of a data output sent.
  seen.clear();
  const firstLater = sent.find((r) => {
    if (r.command !== 'GetObjectCommand' || !inputs.has(r.key)) return false;
    if (body(r.key, r.bytes)) return true;
    seen.add(r.key);
    return false;
  });
  const lastPart = sent.findLast((r) => outputs.has(r.key) && (r.command === 'UploadPartCommand' || r.command === 'PutObjectCommand'));
  trace.writeCpuS = firstLater && lastPart ? Math.max(0, lastPart.cpuS - firstLater.cpuS) : 0;
  await dropOutputs(result);
  const batch = BATCH > 1 ? await batchRun(location, endpoint, plan, group, dropOutputs) : undefined;
  console.log(JSON.stringify({
    wallS: [wallS], cpuS: [(c.user + c.system) / 1e6], maxRssKiB: process.resourceUsage().maxRSS,
    info: {
      ...(coldCpuS !== undefined ? { coldCpuS } : {}),
      workers: WORKERS,
      mainCpuS,
      filesIn: group.inputs.length,
      bytesIn: group.inputs.reduce((n, i) => n + Number(i.file.fileSizeInBytes), 0),
      outputs: result.outputs.length,
      copied: result.outputs.filter((o) => o.filePath.includes('-copy-')).length,
      merged: result.outputs.filter((o) => o.filePath.includes('-merge-')).length,
      // Copied and merged outputs read and write S3 alike (footers, row groups in a window, streamed upload).
      path,
      bytesOut: result.outputs.reduce((n, o) => n + Number(o.fileSizeInBytes), 0),
      rows: Number(result.checksums.rowsOut),
      hashOut: result.checksums.hashOut,
      gets: counts.get,
      puts: counts.put,
      byCommand: JSON.stringify(counts.byCommand),
      trace: JSON.stringify(trace),
      ...(batch ? { batchGroups: BATCH, batchCpuS: batch.cpuS, batchWallS: batch.wallS } : {}),
    },
  } satisfies PhaseResult));
}

/** BATCH copies of the group rewritten at once, one thread each, after a batch that warms the threads: CPU seconds per group and the batch's wall time. */
async function batchRun(location: string, endpoint: string, plan: Plan, group: FileGroup, drop: (r: GroupResult) => Promise<void>): Promise<{ cpuS: number; wallS: number }> {
  // Each copy its own id: its compaction map is named by it.
  const batch: RewriteBatch = { BatchInput: { ...planHeaderOf(plan), table: { location, s3Endpoint: endpoint } }, Items: Array.from({ length: BATCH }, (_, k) => ({ ...group, id: `${group.id}-${k}` })) };
  const once = async (): Promise<{ cpuS: number; wallS: number }> => {
    const t = performance.now();
    const c0 = process.cpuUsage();
    const outcomes = await rewriteBatchStep(batch, { vcpus: BATCH });
    const c = process.cpuUsage(c0);
    const wallS = (performance.now() - t) / 1000;
    for (const o of outcomes) {
      if ('error' in o) throw new Error(`${location}: batch group ${o.groupId} failed: ${JSON.stringify(o.error)}`);
      await drop(o);
    }
    return { cpuS: (c.user + c.system) / 1e6 / BATCH, wallS };
  };
  await once();
  return once();
}

interface Run {
  readonly r: PhaseResult;
  readonly load: string;
  /** LINK=measured: what went through the link while the child ran. */
  readonly link?: LinkStats;
  /** CPU seconds moto and this process (the link, LINK=measured) spent while the child ran: do they crowd the other CPU? */
  readonly beside?: { readonly motoCpuS: number; readonly parentCpuS: number };
}

/** How the S3 wait is had: modelled from the requests (LINK=model), or also measured through bench/s3-link.ts. */
type LinkMode = 'model' | 'measured';

interface SavedRuns {
  readonly loadBefore: string;
  /** Absent in files from before LINK: 'model'. */
  readonly link?: LinkMode;
  readonly runs: Record<string, Run[]>;
}

function linkMode(): LinkMode {
  const v = process.env.LINK ?? 'model';
  if (v !== 'model' && v !== 'measured') throw new Error(`LINK must be model or measured, got "${v}"`);
  return v;
}

/** CPU seconds of process `pid` so far, all its threads (Linux /proc: utime + stime in ticks of 1/100 s); NaN elsewhere. */
function processCpuS(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** The S3 wait a run measured: its wall time not spent on CPU (one thread). */
const measuredWait = (r: PhaseResult): number => Math.max(0, r.wallS[0] - r.cpuS[0]);

/** The checkout measured beside this one (BASE), and the workloads it runs. */
const BASE = process.env.BASE;
const BASE_WORKLOADS = new Set((process.env.BASE_WORKLOADS ?? WORKLOADS.map((w) => w.name).join(',')).split(','));
const baseKey = (name: string): string => `base:${name}`;

type WaitModel = (trace: RequestTrace, path: RewritePath, cpuS: number) => number;

/** The base checkout's own wait model (its trace is its own too). */
async function baseWaitModel(): Promise<WaitModel | undefined> {
  if (!BASE) return undefined;
  const mod = (await import(pathToFileURL(join(BASE, 'bench', 'lambda-cost.ts')).href)) as { s3WaitSeconds: WaitModel };
  return mod.s3WaitSeconds;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3);
  // --append [names]: add rounds (of these workloads only) to the saved runs, e.g. after a run broke off.
  const append = process.argv[3] === '--append';
  const only = new Set((process.argv[4] ?? WORKLOADS.map((w) => w.name).join(',')).split(','));
  const chosen = WORKLOADS.filter((w) => only.has(w.name));
  await buildTables(chosen);
  Object.assign(process.env, TEST_AWS_ENV);
  const saved = append ? (JSON.parse(readFileSync(RUNS_FILE, 'utf8')) as SavedRuns) : undefined;
  const mode = linkMode();
  if (saved && (saved.link ?? 'model') !== mode) throw new Error(`--append: the saved runs are LINK=${saved.link ?? 'model'}, this is LINK=${mode}`);
  const loadBefore = saved?.loadBefore ?? loadAverage();
  const moto = await startMoto();
  const link = mode === 'measured' ? await startS3Link(moto.endpoint).catch(async (e: unknown) => {
    await moto.stop();
    throw e;
  }) : undefined;
  // The children's endpoint; the tables are copied to moto directly (setup is not measured).
  const endpoint = link?.endpoint ?? moto.endpoint;
  const env = link ? { ...process.env, NODE_EXTRA_CA_CERTS: link.certPath } : process.env;
  const runs = new Map<string, Run[]>([...WORKLOADS.map((w) => w.name), ...(BASE ? WORKLOADS.map((w) => baseKey(w.name)) : [])].map((k) => [k, saved?.runs[k] ?? []]));
  try {
    const bucket = `cost-${process.pid}`;
    await createBucket(moto.endpoint, bucket);
    for (const w of chosen) {
      const t = performance.now();
      await relocateTable(w.local, `s3://${bucket}/${w.name}`, { s3Endpoint: moto.endpoint, concurrency: 16 });
      console.error(`${w.name}: copied to moto in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    for (let k = 0; k < rounds; k++) {
      for (const w of k % 2 === 0 ? chosen : [...chosen].reverse()) {
        const scripts: [string, string][] = [[w.name, SCRIPT]];
        if (BASE && BASE_WORKLOADS.has(w.name)) scripts.push([baseKey(w.name), join(BASE, 'bench', 'cost-per-gb.ts')]);
        // Interleaved: this checkout first in even rounds, the base first in odd ones.
        for (const [key, script] of k % 2 === 0 ? scripts : [...scripts].reverse()) {
          const load = loadAverage();
          const [cmd, args] = nodeChildArgs(script, ['--phase', `s3://${bucket}/${w.name}`, endpoint], lambdaNodeFlags());
          const before = link && structuredClone(link.stats);
          const [moto0, parent0] = [processCpuS(moto.pid), process.cpuUsage()];
          // Not spawnSync: this process must keep draining moto's output (and serve the link) while the child runs.
          const child = await execFileAsync(cmd, args, { cwd: REPO_ROOT, env, maxBuffer: 256 * 2 ** 20 }).catch((e: unknown) => {
            throw new Error(`${key} rewrite failed: ${String(e)}`);
          });
          const r = JSON.parse(child.stdout.trim().split('\n').pop() ?? '') as PhaseResult;
          const parent = process.cpuUsage(parent0);
          const beside = { motoCpuS: +(processCpuS(moto.pid) - moto0).toFixed(2), parentCpuS: +((parent.user + parent.system) / 1e6).toFixed(2) };
          const stats = link && before ? linkStatsSince(link.stats, before) : undefined;
          runs.get(key)!.push({ r, load, beside, ...(stats ? { link: stats } : {}) });
          writeFileSync(RUNS_FILE, JSON.stringify({ loadBefore, link: mode, runs: Object.fromEntries(runs) } satisfies SavedRuns));
          const through = stats ? `; link: ${stats.tlsRequests}/${stats.requests} requests over TLS, ${JSON.stringify(stats.payloads)}, moto late ${JSON.stringify(stats.late)}` : '';
          console.error(`round ${k + 1} ${key}: ${r.cpuS[0].toFixed(2)} CPU-s, ${r.wallS[0].toFixed(2)} s wall, ${r.info?.gets} GETs, ${r.info?.puts} PUTs ${r.info?.byCommand} (load ${load}); beside it moto ${beside.motoCpuS} CPU-s, this process ${beside.parentCpuS} CPU-s${through}`);
        }
      }
    }
  } finally {
    await link?.stop();
    await moto.stop();
  }
  report(runs, loadBefore, loadAverage(), await baseWaitModel(), mode);
}

/** Whether this checkout's (or the base's) runs measured a warm rewrite, a cold one, or there are none. */
function warmth(runs: ReadonlyMap<string, readonly Run[]>, base: boolean): 'warm' | 'cold' | undefined {
  const rs = [...runs].filter(([k]) => k.startsWith('base:') === base).flatMap(([, r]) => r);
  if (rs.length === 0) return undefined;
  return rs.some((x) => x.r.info?.coldCpuS !== undefined) ? 'warm' : 'cold';
}

function report(runs: Map<string, Run[]>, loadBefore: string, loadAfter: string, baseWait: WaitModel | undefined, mode: LinkMode): void {
  const m = machine();
  const measuring = mode === 'measured';
  const lines: string[] = [
    `Machine: ${m.cpu}, ${m.nproc} CPUs, Node ${process.version}; load average (1/5/15 min) ${loadBefore} before, ${loadAfter} after.`,
    `S3 link modelled: ${S3_LINK.mbPerS} MB/s per connection, ${S3_LINK.firstByteMs} ms first byte; production groups of ${POLICY_DEFAULTS.maxGroupBytes / 2 ** 20} MiB (maxGroupBytes), runs of 1 TB.`,
    measuring
      ? `S3 link measured (LINK=measured): the children spoke https to bench/s3-link.ts in front of moto, the same figures per connection; measured wait = wall − CPU of rewriteGroup (one thread), median over the rounds.`
      : 'S3 link not measured (LINK=model): the children spoke plain http to moto on loopback; wall time is not an S3 wait.',
    ...(warmth(runs, false) === 'warm' && warmth(runs, true) === 'cold'
      ? ['BASE measured its first rewrite in a fresh process (cold; it predates the warm-up), this checkout a warm one: the difference between them is the warm-up\'s as well as the code\'s (COLD=1 measures both cold).']
      : []),
    '',
    '| workload | CPU-s per round (load, 1 min) | median CPU-s | the process\'s first run (cold), CPU-s per round | wall s per round | S3 wait, s (model) | S3 wait, s (measured) | moto late s, moto CPU-s, link CPU-s | GETs | PUTs | requests by command | outputs | peak RSS |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const summary: Record<string, unknown> = {};
  const tables: string[] = [];
  const versions = WORKLOADS.flatMap((w) => [
    { w, key: w.name, label: w.label, wait: s3WaitSeconds as WaitModel },
    ...(baseWait ? [{ w, key: baseKey(w.name), label: `${w.label}, BASE`, wait: baseWait }] : []),
  ]);
  const hashOf = new Map<string, { path: string; hash: string; rows: string }>();
  for (const { w, key, label, wait } of versions) {
    const rs = runs.get(key) ?? [];
    if (rs.length === 0) continue;
    const cpuS = median(rs.map((x) => x.r.cpuS[0]));
    const mid = rs.find((x) => x.r.cpuS[0] === cpuS) ?? rs[0];
    const info = mid.r.info!;
    const trace = JSON.parse(String(info.trace)) as RequestTrace;
    const path = pathOf(info);
    const waitS = wait(trace, path, cpuS);
    const bytesIn = Number(info.bytesIn);
    const filesIn = Number(info.filesIn);
    const filesPerGb = (filesIn * 1e9) / bytesIn;
    // Requests per GB: each input's GETs as counted, per input file; the rest of the GETs (delete
    // files, the proof's re-read) by bytes; PUTs as a production group of maxGroupBytes makes them
    // (the measured group is smaller, and its output and map PUTs would count several times per GB).
    const perGb = 1e9 / bytesIn;
    const inputGets = trace.inputFirst.length + trace.inputLater.length;
    const getsPerGb = (inputGets / filesIn) * filesPerGb + (Number(info.gets) - inputGets) * perGb;
    // Parts as large as the run's own largest (the checkout's part size: outputs in several parts fill all but their last).
    const multipart = trace.outputs.filter((o) => o.parts.length > 1).flatMap((o) => o.parts);
    const partBytes = multipart.length > 0 ? Math.max(...multipart) : DEFAULT_PART_SIZE;
    const measured = {
      bytesIn, filesIn, cpuS, waitS, getsPerGb,
      putsPerGb: putsPerGb(POLICY_DEFAULTS.maxGroupBytes, Number(info.bytesOut) / bytesIn, DEFAULT_TARGET_FILE_SIZE_BYTES, partBytes),
      groupBytes: POLICY_DEFAULTS.maxGroupBytes,
    };
    const rss = Math.max(...rs.map((x) => Math.round(x.r.maxRssKiB / 1024)));
    // Measured: billed as CPU + the wall time not on CPU (median over the rounds; model rows as before).
    const linked = measuring ? rs.filter((x) => x.link) : [];
    const waitMeasuredS = linked.length > 0 ? median(linked.map((x) => measuredWait(x.r))) : undefined;
    // Medians; moto's late seconds add up over requests that overlap (see bench/s3-link.ts LinkStats.late).
    const fig = (xs: readonly number[]): string => (xs.length === 0 || xs.some((x) => !Number.isFinite(x)) ? '–' : median(xs).toFixed(2));
    const beside = `${fig(linked.map((x) => lateSeconds(x.link!)))}, ${fig(rs.filter((x) => x.beside).map((x) => x.beside!.motoCpuS))}, ${fig(linked.map((x) => x.beside?.parentCpuS ?? NaN))}`;
    lines.push(`| ${label} | ${rs.map((x) => `${x.r.cpuS[0].toFixed(2)} (${x.load.split(' ')[0]})`).join(', ')} | **${cpuS.toFixed(2)}** | ${rs.map((x) => (x.r.info?.coldCpuS === undefined ? '-' : Number(x.r.info.coldCpuS).toFixed(2))).join(', ')} | ${rs.map((x) => x.r.wallS[0].toFixed(2)).join(', ')} | ${waitS.toFixed(2)} | ${waitMeasuredS === undefined ? '–' : `**${waitMeasuredS.toFixed(2)}**`} | ${beside} | ${info.gets} | ${info.puts} | ${String(info.byCommand).replace(/Command/g, '').replace(/[{}"]/g, '').replace(/,/g, ', ')} | ${info.outputs} | ${rss} MiB |`);
    const model = waitMeasuredS === undefined ? '' : ' (model)';
    const rows: [string, LambdaCost][] = [];
    const workers = Number(info.workers ?? 0);
    for (const [mb, vcpus] of [[1769, 1], [10240, LARGE_VCPUS]] as const) {
      let at = `${label}, ${mb.toLocaleString('en-US')} MB`;
      let m = measured;
      if (vcpus > 1 && workers > 0) {
        // Projected: the run's CPU spread over the vCPUs (as many workers as they hold: the work does not
        // grow with them, and a run of fewer on this 2-CPU machine is not crowded), never faster than the
        // main thread's own CPU; the S3 wait modelled on that time line (the CPU at each request scaled alike).
        const busy = Math.max(Number(info.mainCpuS), cpuS / vcpus);
        const scaled: RequestTrace = { ...trace, ...(trace.writeCpuS === undefined ? {} : { writeCpuS: (trace.writeCpuS * busy) / cpuS }) };
        m = { ...measured, cpuS: busy, waitS: wait(scaled, path, busy) };
        at += `, ${vcpus - 1} workers, projected from a run of ${workers} (${Number(info.mainCpuS).toFixed(1)} main-thread CPU-s)`;
      }
      rows.push([`${at}, CPU only`, measuredCostPerGb(m, mb, vcpus, false)], [`${at}, CPU + S3 wait${model}`, measuredCostPerGb(m, mb, vcpus, true)]);
      if (waitMeasuredS !== undefined) rows.push([`${at}, CPU + S3 wait (measured)`, measuredCostPerGb({ ...m, waitS: waitMeasuredS }, mb, vcpus, true)]);
    }
    const batched = rs.filter((x) => x.r.info?.batchCpuS !== undefined);
    if (batched.length > 0) {
      // A batch of six on the 10,240 MB function: each group on its own vCPU at the CPU a group cost with
      // others beside it (median over the rounds), its own S3 wait as one thread's (the same requests on
      // the same time line); billed per invocation, so a group pays a sixth of it.
      const batchCpuS = median(batched.map((x) => Number(x.r.info!.batchCpuS)));
      const of = Number(batched[0].r.info!.batchGroups);
      const m = { ...measured, cpuS: batchCpuS, waitS: wait(trace, path, batchCpuS), groupsPerInvocation: LARGE_VCPUS };
      const at = `${label}, 10,240 MB, ${LARGE_VCPUS} groups per invocation (CPU per group from batches of ${of} at once: ${batched.map((x) => Number(x.r.info!.batchCpuS).toFixed(2)).join(', ')})`;
      rows.push([`${at}, CPU only`, measuredCostPerGb(m, 10240, LARGE_VCPUS, false)], [`${at}, CPU + S3 wait${model}`, measuredCostPerGb(m, 10240, LARGE_VCPUS, true)]);
    }
    tables.push('', `${label}: ${filesIn} files, ${bytesIn.toLocaleString('en-US')} B in, ${Math.round(filesPerGb).toLocaleString('en-US')} files per GB, S3 Tables $${s3TablesPerGb(filesPerGb).toFixed(4)} per GB`, '', ...costRows(rows, filesPerGb));
    summary[key] = {
      getsPerGb: Math.round(getsPerGb), putsPerGb: +measured.putsPerGb.toFixed(1), cpuS: rs.map((x) => +x.r.cpuS[0].toFixed(2)), wallS: rs.map((x) => +x.r.wallS[0].toFixed(2)),
      loads: rs.map((x) => x.load), medianCpuS: cpuS, waitS: +waitS.toFixed(2),
      beside: rs.map((x) => x.beside),
      ...(waitMeasuredS === undefined ? {} : { measuredWaitS: +waitMeasuredS.toFixed(2), link: linked.map((x) => x.link) }),
      info, rows: Object.fromEntries(rows.map(([l, c]) => [l, +c.total.toFixed(5)])),
    };
    const hashes = new Set(rs.map((x) => x.r.info?.hashOut));
    if (hashes.size !== 1) throw new Error(`${key}: the rounds disagree on the output rows`);
    // The base and this checkout must have written the same rows: the same count (a copy's or merge's hash
    // is of its pages, not its rows, and its digest function changed at fea4444: the hashes of two checkouts
    // agree only when both decoded).
    const now = { path, hash: String(info.hashOut), rows: String(info.rows) };
    const before = hashOf.get(w.name);
    if (before && (before.path === 'decode' && now.path === 'decode' ? before.hash !== now.hash : before.rows !== now.rows)) {
      throw new Error(`${key}: the base and this checkout disagree on the output rows`);
    }
    hashOf.set(w.name, now);
  }
  console.log(JSON.stringify(summary, null, 2));
  console.log([...lines, ...tables].join('\n'));
}

if (process.argv[2] === '--phase') {
  await rewritePhase(process.argv[3], process.argv[4]);
} else if (process.argv[2] === '--report') {
  const saved = JSON.parse(readFileSync(RUNS_FILE, 'utf8')) as SavedRuns;
  report(new Map(Object.entries(saved.runs)), saved.loadBefore, loadAverage(), await baseWaitModel(), saved.link ?? 'model');
} else {
  await main();
}
