/**
 * What bench/compaction.ts measures, each run in a child process of its own (this file's
 * functions are called by `bench/compaction.ts --phase <name> …`), so each peak RSS is that
 * phase's alone. Every phase prints one JSON line, a PhaseResult. Nothing here is imported by
 * lib/ or by the tests.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import * as pw from 'parquet-wasm';
import { loadTable, type Table } from '../lib/catalog/table.js';
import type { FileGroup, GroupResult, Plan, PlanRequest } from '../lib/compaction/messages.js';
import { FactsAccumulator } from '../lib/compaction/file-facts.js';
import { planCompaction, planFromFacts } from '../lib/compaction/planner.js';
import { resolvePolicy } from '../lib/compaction/policy.js';
import { rewriteGroup, type RewriteOptions } from '../lib/compaction/rewriter.js';
import { COPY_MIN_ROW_GROUP_BYTES_PROPERTY, MERGE_MIN_ROW_GROUP_BYTES_PROPERTY } from '../lib/compaction/chunk-copy.js';
import { streamFileColumns, type DecodeColumns, type StreamedScan } from '../lib/iceberg/scan-planning.js';
import type { DeleteFileIndex } from '../lib/iceberg/delete-index.js';
import type { ManifestFile } from '../lib/iceberg/manifest-list.js';
import { ManifestDecodePool, planDecodeWorkerCount } from '../lib/compaction/plan-pool.js';
import { runCompaction } from '../lib/pipeline/local-runner.js';
import { mainThreadCpuS, type PhaseResult } from './report.js';

function cpuSeconds(since: NodeJS.CpuUsage): number {
  const c = process.cpuUsage(since);
  return (c.user + c.system) / 1e6;
}

function emit(result: PhaseResult): void {
  console.log(JSON.stringify(result));
}

/** Removes what a rewrite that is never committed leaves behind: its outputs and its map. */
function discard(result: GroupResult): void {
  for (const o of result.outputs) rmSync(o.filePath, { force: true });
  if (result.compactionMap !== undefined) rmSync(result.compactionMap, { force: true });
}

function groupBytes(group: FileGroup): number {
  return group.inputs.reduce((n, i) => n + Number(i.file.fileSizeInBytes), 0);
}

function outputBytes(result: GroupResult): number {
  return result.outputs.reduce((n, o) => n + Number(o.fileSizeInBytes), 0);
}

function planOf(table: Table, policy: PlanRequest['policy'] = {}): Promise<Plan> {
  return planCompaction(table.io, table.metadata, { table: { location: table.location }, policy });
}

/** Decode workers: a count, or `lambda<MB>` for the default count of a Lambda of that memory (its vCPUs, not this machine's). */
export type DecodeWorkersArg = number | `lambda${number}`;

export function decodeWorkersArg(arg: string | undefined): DecodeWorkersArg | undefined {
  if (arg === undefined) return undefined;
  if (/^lambda\d+$/.test(arg)) return arg as `lambda${number}`;
  return Number(arg);
}

function decodeOptions(arg: DecodeWorkersArg | undefined): RewriteOptions {
  if (arg === undefined) return {};
  if (typeof arg === 'number') return { decodeWorkers: arg };
  const mb = Number(arg.slice('lambda'.length));
  return { decodeHost: { vcpus: Math.max(1, Math.round(mb / 1769)), memoryBytes: mb * 2 ** 20 } };
}

/** This process's threads (Linux: /proc; 0 elsewhere). */
function threadCount(): number {
  try {
    return Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * (a) rewriteGroup of the table's one group (default policy), `runs` times in this thread,
 * as one Lambda worker runs it; `decodeWorkers` as the rewriter's option (default: its own).
 * Outputs and map are deleted after each run (nothing commits). Besides the whole process's CPU
 * it reports the main thread's (`mainCpuS`, last run): with decode workers, the rewriter's own
 * thread is the part that does not spread over more vCPUs.
 */
export async function rewritePhase(location: string, runs: number, decodeWorkers?: DecodeWorkersArg): Promise<void> {
  const table = await loadTable(location);
  const plan = await planOf(table);
  if (plan.groups.length !== 1) throw new Error(`${location}: expected one group, the plan has ${plan.groups.length}`);
  const group = plan.groups[0];
  const wallS: number[] = [];
  const cpuS: number[] = [];
  let last: GroupResult | undefined;
  let mainCpuS: number | undefined;
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    const c0 = process.cpuUsage();
    const m0 = mainThreadCpuS();
    const result = await rewriteGroup(table.io, table.metadata, plan, group, decodeOptions(decodeWorkers));
    const m1 = mainThreadCpuS();
    mainCpuS = m0 === undefined || m1 === undefined ? undefined : m1 - m0;
    cpuS.push(cpuSeconds(c0));
    wallS.push((performance.now() - t) / 1000);
    discard(result);
    last = result;
  }
  emit({
    wallS, cpuS, maxRssKiB: process.resourceUsage().maxRSS,
    info: {
      inputs: group.inputs.length,
      bytesIn: groupBytes(group),
      bytesOut: outputBytes(last!),
      outputs: last!.outputs.length,
      rows: Number(last!.checksums.rowsOut),
      mapBytes: last!.bytesWritten - outputBytes(last!),
      ...(mainCpuS === undefined ? {} : { mainCpuS: +mainCpuS.toFixed(2) }),
    },
  });
}

/** Every file under `dir`, recursively. */
function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name));
}

/**
 * (a) The local runner end to end with its defaults (plan, rewrite in worker threads — as
 * many as cores, at most one per group —, commit), `runs` times; after each run the table is
 * put back as it was (new files deleted, version hint restored), so every run starts alike.
 */
export async function runnerPhase(location: string, runs: number, threads?: number): Promise<void> {
  const before = new Set(listFiles(location));
  const hintPath = join(location, 'metadata', 'version-hint.text');
  const hint = readFileSync(hintPath);
  const start = (await loadTable(location)).metadataLocation;
  const wallS: number[] = [];
  const cpuS: number[] = [];
  let info: Record<string, number> = {};
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    const c0 = process.cpuUsage();
    // threads: group workers and decode workers both (0: everything in this thread, as a one-vCPU Lambda); default the runner's own.
    const report = await runCompaction({ table: { location } }, threads === undefined ? {} : { parallelism: threads, rewrite: { decodeWorkers: threads } });
    cpuS.push(cpuSeconds(c0));
    wallS.push((performance.now() - t) / 1000);
    if (report.commit === null || report.commit.abortedGroups.length > 0) throw new Error(`runCompaction failed: ${JSON.stringify(report.commit?.abortedGroups)}`);
    info = {
      groups: report.plan.groups.length,
      bytesIn: report.summary.bytesRead,
      bytesOut: report.results.reduce((n, x) => n + outputBytes(x), 0),
      rows: report.summary.rowsOut,
    };
    for (const f of listFiles(location)) if (!before.has(f)) rmSync(f);
    writeFileSync(hintPath, hint);
    const now = (await loadTable(location)).metadataLocation;
    if (now !== start) throw new Error(`${location}: could not restore the table (current metadata ${now}, expected ${start})`);
  }
  // Worker threads' CPU time is in the process's: cpuUsage counts every thread.
  emit({ wallS, cpuS, maxRssKiB: process.resourceUsage().maxRSS, info });
}

/**
 * (b) Rewrites the largest group the planner makes with `maxGroupBytes`, once, sampling the
 * process's memory every 100 ms: RSS, V8 heap, external and ArrayBuffer memory, and the size
 * of parquet-wasm's linear memory (which never shrinks: its high-water mark). `decodeAll`: every input decoded,
 * none of its row groups copied.
 */
export async function rssPhase(location: string, maxGroupBytes: number, decodeWorkers?: DecodeWorkersArg, decodeAll = false): Promise<void> {
  const table = await loadTable(location);
  // minInputFiles 2: a tiny table (a smoke run) still makes a group; real sizes have dozens of files a group.
  const plan = await planOf(table, { maxGroupBytes, minInputFiles: 2 });
  const group = [...plan.groups].sort((a, b) => groupBytes(b) - groupBytes(a))[0];
  if (!group) throw new Error(`${location}: the plan has no group`);
  const peak = { rss: 0, heapUsed: 0, heapTotal: 0, external: 0, arrayBuffers: 0, wasm: 0, threads: 0 };
  const threads0 = threadCount();
  const sample = (): void => {
    peak.threads = Math.max(peak.threads, threadCount());
    const m = process.memoryUsage();
    peak.rss = Math.max(peak.rss, m.rss);
    peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed);
    peak.heapTotal = Math.max(peak.heapTotal, m.heapTotal);
    peak.external = Math.max(peak.external, m.external);
    peak.arrayBuffers = Math.max(peak.arrayBuffers, m.arrayBuffers);
    peak.wasm = Math.max(peak.wasm, pw.wasmMemory().buffer.byteLength);
  };
  const timer = setInterval(sample, 100);
  const rssBefore = process.memoryUsage().rss;
  const t = performance.now();
  const c0 = process.cpuUsage();
  let result: GroupResult;
  try {
    // decodeAll: no row group is copied or merged undecoded (as for inputs the merge cannot take), so the decode path is what is measured.
    const never = String(Number.MAX_SAFE_INTEGER);
    const metadata = decodeAll ? { ...table.metadata, properties: { ...table.metadata.properties, [COPY_MIN_ROW_GROUP_BYTES_PROPERTY]: never, [MERGE_MIN_ROW_GROUP_BYTES_PROPERTY]: never } } : table.metadata;
    result = await rewriteGroup(table.io, metadata, plan, group, decodeOptions(decodeWorkers));
  } finally {
    clearInterval(timer);
  }
  const cpu = cpuSeconds(c0);
  const wall = (performance.now() - t) / 1000;
  sample();
  discard(result);
  const mib = (b: number): number => Math.round(b / 2 ** 20);
  emit({
    wallS: [wall], cpuS: [cpu], maxRssKiB: process.resourceUsage().maxRSS,
    info: {
      groups: plan.groups.length,
      inputs: group.inputs.length,
      bytesIn: groupBytes(group),
      bytesOut: outputBytes(result),
      outputs: result.outputs.length,
      largestOutputMiB: mib(Math.max(...result.outputs.map((o) => Number(o.fileSizeInBytes)))),
      rows: Number(result.checksums.rowsOut),
      rssBeforeMiB: mib(rssBefore),
      peakRssMiB: mib(peak.rss),
      peakHeapUsedMiB: mib(peak.heapUsed),
      peakHeapTotalMiB: mib(peak.heapTotal),
      peakExternalMiB: mib(peak.external),
      peakArrayBuffersMiB: mib(peak.arrayBuffers),
      wasmMemoryMiB: mib(peak.wasm),
      // Each decode worker is one more thread (Linux).
      threadsAdded: peak.threads - threads0,
    },
  });
}

/**
 * (c) planCompaction, `runs` times: resolvePolicy → streamFiles (read the manifest list and every
 * manifest, pair each data file with its deletes) into a FactsAccumulator (keep the candidates)
 * → planFromFacts (bin-pack, choose, write the plan's JSON). The same calls are made here so
 * that the scan's tasks and (data file, delete file) pairs are counted on the way, to check
 * against Java's planFiles; nothing else is held.
 */
export async function planPhase(location: string, runs: number, concurrency?: number): Promise<void> {
  const table = await loadTable(location);
  const request: PlanRequest = { table: { location } };
  const wallS: number[] = [];
  const cpuS: number[] = [];
  const gcS: number[] = [];
  // Garbage-collection pauses of the main thread, summed per run.
  let gc = 0;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gc += e.duration;
  });
  observer.observe({ entryTypes: ['gc'] });
  let info: Record<string, number | string> = {};
  for (let r = 0; r < runs; r++) {
    gc = 0;
    let tasks = 0;
    let deletes = 0;
    const t = performance.now();
    const c0 = process.cpuUsage();
    const resolved = resolvePolicy(table.metadata, request.policy);
    const accumulator = new FactsAccumulator(table.metadata, resolved.policy, resolved.filter, { keep: 'candidates' });
    // As planCompaction without --where: data manifests decoded into columns on the plan's decode
    // workers (default count unless PACKICE_PLAN_WORKERS), each file's deletes counted as looked up.
    let pool: ManifestDecodePool | undefined;
    let scan: StreamedScan;
    try {
      const workers = process.env.PACKICE_PLAN_WORKERS;
      const decoder = (data: readonly ManifestFile[], deletes: DeleteFileIndex): DecodeColumns => {
        const bytes = data.reduce((sum, m) => sum + Number(m.manifestLength), 0);
        pool = ManifestDecodePool.start(planDecodeWorkerCount(workers === undefined ? undefined : Number(workers), table.metadata, data.length, bytes), table.metadata, deletes.pathKeys());
        info.workers = pool.size;
        return pool.decode;
      };
      scan = await streamFileColumns(
        table.io,
        table.metadata,
        decoder,
        (c, spec, index) => {
          tasks += c.count;
          const counting = Object.create(index) as DeleteFileIndex;
          counting.forPath = (path, seq, key, pathScoped) => {
            const d = index.forPath(path, seq, key, pathScoped);
            deletes += (d.deletionVector ? 1 : 0) + d.positionDeletes.length + d.equalityDeletes.length;
            return d;
          };
          accumulator.addColumns(c, spec, counting);
        },
        concurrency !== undefined ? { concurrency } : {},
      );
    } finally {
      await (pool as ManifestDecodePool | undefined)?.close();
    }
    const snapshotFacts = accumulator.finish();
    const plan = planFromFacts(table.metadata, scan, snapshotFacts, request, resolved, Date.now());
    cpuS.push(cpuSeconds(c0));
    wallS.push((performance.now() - t) / 1000);
    // GC entries arrive after the pause: let them in before reading the sum.
    await new Promise((resolve) => setTimeout(resolve, 50));
    gcS.push(gc / 1000);
    info = {
      ...info,
      tasks,
      deletes,
      // Not snapshotFacts.facts: that would make every kept file's FileFacts.
      candidates: snapshotFacts.kept.byPath.length,
      groups: plan.groups.length,
      groupInputs: plan.groups.reduce((n, g) => n + g.inputs.length, 0),
      planJsonMiB: Math.round(JSON.stringify(plan).length / 2 ** 20),
      heapUsedMiB: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
    };
  }
  observer.disconnect();
  emit({ wallS, cpuS, maxRssKiB: process.resourceUsage().maxRSS, info: { ...info, gcS: gcS.join(',') } });
}
