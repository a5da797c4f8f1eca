/**
 * What a GB compacted costs on Lambda arm64 at a measured rate (issue 11, must-show 4), next to
 * Amazon S3 Tables' compaction price for the same files. Prices: lib/pipeline/prices.ts (us-east-1).
 * Nothing here is imported by lib/ or by the tests.
 */
import { POLICY_DEFAULTS } from '../lib/compaction/policy.js';
import { DEFAULT_PART_SIZE } from '../lib/io/s3.js';
import { OUTPUT_PARTS_IN_FLIGHT } from '../lib/parquet/chunk-copy.js';
import { REGION_PRICES, S3_REQUESTS, S3_TABLES_COMPACTION } from '../lib/pipeline/prices.js';

const GB = 1e9;
const MB = 1e6;
const PRICES = REGION_PRICES['us-east-1'];
/**
 * Step Functions transitions per GB (lib/pipeline/report-step.ts counts them): one per group of
 * maxGroupBytes (700 MiB), six per run (runs of 1 TB). It was 15 (a guess) before.
 */
export const TRANSITIONS_PER_GB = transitionsPerGb(POLICY_DEFAULTS.maxGroupBytes);

export interface RateWorkload {
  /** Input MB rewritten per CPU-second (measured). */
  readonly mbPerCpuS: number;
  /** Input files per GB (S3 Tables charges per object). */
  readonly filesPerGb: number;
  /** S3 GET requests per GB of input: reading the inputs and the proof's re-read of the outputs. */
  readonly getsPerGb: number;
  /** Output bytes per GB of input (multipart PUTs of S3FileIO's parts, 32 MiB, + create/complete). */
  readonly outBytesPerGb: number;
}

export interface LambdaCost {
  readonly memoryMb: number;
  readonly vcpus: number;
  readonly cpuSPerGb: number;
  readonly wallSPerGb: number;
  readonly compute: number;
  readonly gets: number;
  readonly puts: number;
  readonly sfn: number;
  readonly total: number;
}

/** One worker on a Lambda of `memoryMb`, using `speedup` of its `vcpus` (1: one thread). */
export function lambdaCostPerGb(w: RateWorkload, memoryMb: number, vcpus: number, speedup = 1): LambdaCost {
  const cpuSPerGb = GB / MB / w.mbPerCpuS;
  const wallS = cpuSPerGb / speedup;
  const compute = wallS * (memoryMb / 1024) * PRICES.lambdaGbSecondUsd + PRICES.lambdaRequestUsd;
  const gets = w.getsPerGb * S3_REQUESTS.getUsd;
  const putsPerGb = Math.ceil(w.outBytesPerGb / DEFAULT_PART_SIZE) + 2;
  const puts = putsPerGb * S3_REQUESTS.putUsd;
  const sfn = TRANSITIONS_PER_GB * PRICES.stateTransitionUsd;
  return {
    memoryMb, vcpus, cpuSPerGb: +cpuSPerGb.toFixed(1), wallSPerGb: +wallS.toFixed(1), compute, gets, puts, sfn, total: compute + gets + puts + sfn,
  };
}

/** S3 Tables' compaction price for a GB of files of this size. */
export function s3TablesPerGb(filesPerGb: number): number {
  return S3_TABLES_COMPACTION.perGbUsd + (filesPerGb * S3_TABLES_COMPACTION.perThousandObjectsUsd) / 1000;
}

/** Markdown rows of the cost table, one per Lambda size. */
export function costRows(rows: readonly (readonly [string, LambdaCost])[], filesPerGb: number): string[] {
  const usd = (x: number): string => `$${x.toFixed(4)}`;
  const s3 = s3TablesPerGb(filesPerGb);
  return [
    '| Lambda arm64 | per GB | compute | S3 GET | S3 PUT | Step Functions | total per GB | S3 Tables | ours ÷ S3 Tables |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(([label, c]) =>
      `| ${label} | ${c.cpuSPerGb} CPU-s, ${c.wallSPerGb} s | ${usd(c.compute)} | ${usd(c.gets)} | ${usd(c.puts)} | ${usd(c.sfn)} | **${usd(c.total)}** | ${usd(s3)} | ${(c.total / s3).toFixed(2)}× |`),
  ];
}

// ---------------------------------------------------------------------------------------------
// Billed duration: CPU time plus the S3 time the code does not overlap with it (issue 11, must-show 4)

/**
 * One S3 connection as the duration model sees it. Sources: Amazon S3 performance guidelines
 * ("Horizontal scaling of storage connections": one concurrent request per 85-90 MB/s of desired
 * throughput, https://docs.aws.amazon.com/AmazonS3/latest/userguide/optimizing-performance-guidelines.html)
 * and S3 Express One Zone's page ("single-digit millisecond first-byte latency, up to 10x faster
 * than S3 Standard": tens of ms for S3 Standard,
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/s3-express-performance.html).
 */
export interface S3Link {
  readonly mbPerS: number;
  readonly firstByteMs: number;
}
export const S3_LINK: S3Link = { mbPerS: 85, firstByteMs: 30 };

/** A request the FileIO really sent in the run (S3RequestCounter's log), by what it was for. */
export interface RequestTrace {
  /** Bytes of each input's first GET (the footer read, or a small file whole). */
  readonly inputFirst: readonly number[];
  /** Bytes of every later GET of an input (row groups). */
  readonly inputLater: readonly number[];
  /** Bytes of each output's first GET (the proof's footer read). */
  readonly outputFooters: readonly number[];
  /** Bytes of every later GET of an output (the proof's re-read of its row groups), in the order sent. */
  readonly outputGets: readonly number[];
  /** The same GETs per output file, in the order the files were first read (absent in traces of older checkouts). */
  readonly outputGetsByFile?: readonly (readonly number[])[];
  /** Per output file: bytes of its PutObject or of each UploadPart, in the order their uploads completed, and its multipart create/complete count. */
  readonly outputs: readonly { readonly parts: readonly number[]; readonly steps: number }[];
  /**
   * CPU seconds the run spent from sending its first row-group read of an input to sending its last
   * output part: the CPU those reads and uploads overlap (absent in traces of older checkouts).
   */
  readonly writeCpuS?: number;
}

export type RewritePath = 'decode' | 'copy';

/**
 * Concurrency the code keeps (lib/io/read-ahead.ts, lib/compaction/chunk-copy.ts FOOTER_READS, S3FileIO
 * queueSize, lib/io/read-window.ts; both windows within packice.rewrite.read-ahead-bytes, default
 * lib/parquet/chunk-copy.ts DEFAULT_COPY_READ_BYTES).
 */
const FOOTER_READS = 32;
const PARTS_IN_FLIGHT = OUTPUT_PARTS_IN_FLIGHT;
const COPY_WINDOW = { bytes: 64 * 2 ** 20, reads: 16 };
/** The copy's and the merge's proof: lib/parquet/chunk-copy.ts PROOF_READ_BYTES, 16 reads. */
const PROOF_WINDOW = { bytes: 256 * 2 ** 20, reads: 16 };
const READ_AHEAD = { bytes: 64 * 2 ** 20, files: 16 };

/**
 * Seconds the decoder waits for its inputs' first reads (lib/io/read-ahead.ts): fetches start in list
 * order while fewer than `files` and at most `bytes` are held (a larger one is never fetched ahead: its
 * read waits whole); the decoder takes input i after `cpuPerFile` s on input i - 1, which lets go of
 * every earlier one. What it waits is the time input i's bytes arrive after it asks for them.
 */
export function readAheadWaitSeconds(sizes: readonly number[], t: (bytes: number) => number, ahead: { bytes: number; files: number }, cpuPerFile: number): number {
  const ready: (number | undefined)[] = [];
  const held: { index: number; size: number }[] = [];
  let heldBytes = 0;
  let next = 0;
  const fill = (at: number): void => {
    while (next < sizes.length && held.length < ahead.files) {
      const size = sizes[next];
      if (size > ahead.bytes) {
        next++;
        continue;
      }
      if (heldBytes + size > ahead.bytes) break;
      ready[next] = at + t(size);
      held.push({ index: next++, size });
      heldBytes += size;
    }
  };
  let clock = 0;
  let wait = 0;
  fill(0);
  for (let i = 0; i < sizes.length; i++) {
    while (held.length > 0 && held[0].index < i) heldBytes -= held.shift()!.size;
    next = Math.max(next, i);
    fill(clock);
    const at = ready[i] ?? clock + t(sizes[i]);
    if (at > clock) {
      wait += at - clock;
      clock = at;
    }
    clock += cpuPerFile;
  }
  return wait;
}

/**
 * Seconds to read `sizes` through a read window (lib/io/read-window.ts): started in list order while
 * fewer than `reads` and at most `bytes` are held (one alone when larger), each let go when the
 * consumer takes it: in list order (`ordered`) or as it completes. The consumer's own time is not in it.
 */
export function windowSeconds(sizes: readonly number[], t: (bytes: number) => number, window: { bytes: number; reads: number }, ordered: boolean): number {
  const held: { release: number; size: number }[] = [];
  let heldBytes = 0;
  let now = 0;
  let last = 0;
  for (const size of sizes) {
    while (held.length > 0 && (held.length >= window.reads || heldBytes + size > window.bytes)) {
      held.sort((a, b) => a.release - b.release);
      const gone = held.shift()!;
      now = Math.max(now, gone.release);
      heldBytes -= gone.size;
    }
    const finish = now + t(size);
    last = ordered ? Math.max(last, finish) : finish;
    held.push({ release: last, size });
    heldBytes += size;
  }
  return held.reduce((m, h) => Math.max(m, h.release), 0);
}

/**
 * Bytes of an output's final part: the trace lists parts as their uploads completed, and every part
 * of a multipart upload but the final one has the upload's part size, so the final one is the smallest.
 */
function finalPart(parts: readonly number[]): number {
  return Math.min(...parts);
}

/** Seconds the outputs' final parts take, each sent once its output's bytes are all written. */
function finalPartsSeconds(trace: RequestTrace, t: (bytes: number) => number): number {
  return trace.outputs.reduce((n, o) => n + (o.parts.length > 0 ? t(finalPart(o.parts)) : 0), 0);
}

/**
 * Seconds a run waits on S3 beyond its CPU time, from the requests it sent: each takes first-byte
 * latency + bytes / throughput on its connection, overlapped as the code overlaps them.
 * - decode: inputs' first reads (all of an input up to 8 MiB, else its tail) are read ahead, 16
 *   and 64 MiB at once, behind the decoding CPU (readAheadWaitSeconds, the run's CPU spread evenly
 *   over the inputs); later reads of an input (row groups of one read by its tail) wait whole;
 *   an output's parts upload while it is encoded, its last part and the multipart steps wait;
 *   the proof reads each output's footer, then that output's row groups through a window (64 MiB,
 *   16 reads, in order; lib/parquet/reader.ts ReadOptions.window), one output after the other;
 * - copy (and merge): footers are read 32 at once before the copy; the row groups are read through
 *   a window (64 MiB, 16 reads, in order) ahead of the CPU that copies or merges them
 *   (readAheadWaitSeconds, the trace's writeCpuS spread evenly over those reads), and the parts
 *   upload behind it (OUTPUT_PARTS_IN_FLIGHT at once): the write waits for the reads it outruns, for uploads only
 *   beyond the time it took, then for each output's last part and its multipart steps; the proof
 *   reads each output's footer in turn, then every row group of every output through a window of
 *   its own (256 MiB, 16 reads, handed over as they complete). A trace without writeCpuS (an older checkout's) waits
 *   the longer of reading and uploading whole, as these did not say what they overlap.
 */
export function s3WaitSeconds(trace: RequestTrace, path: RewritePath, cpuS: number, link: S3Link = S3_LINK): number {
  const t = (bytes: number): number => link.firstByteMs / 1000 + bytes / (link.mbPerS * MB);
  const sum = (xs: readonly number[]): number => xs.reduce((n, b) => n + t(b), 0);
  const steps = trace.outputs.reduce((n, o) => n + o.steps, 0) * t(0);
  if (path === 'decode') {
    const ahead = readAheadWaitSeconds(trace.inputFirst, t, READ_AHEAD, cpuS / Math.max(1, trace.inputFirst.length));
    const lastParts = finalPartsSeconds(trace, t);
    const proof = (trace.outputGetsByFile ?? [trace.outputGets]).reduce((n, gets) => n + windowSeconds(gets, t, COPY_WINDOW, true), 0);
    return ahead + sum(trace.inputLater) + lastParts + steps + sum(trace.outputFooters) + proof;
  }
  const uploads = trace.outputs.reduce((n, o) => n + sum(o.parts), 0) / PARTS_IN_FLIGHT;
  const proof = sum(trace.outputFooters) + windowSeconds(trace.outputGets, t, PROOF_WINDOW, false);
  const footers = sum(trace.inputFirst) / FOOTER_READS;
  if (trace.writeCpuS === undefined) return footers + Math.max(windowSeconds(trace.inputLater, t, COPY_WINDOW, true), uploads) + steps + proof;
  const reads = readAheadWaitSeconds(trace.inputLater, t, { bytes: COPY_WINDOW.bytes, files: COPY_WINDOW.reads }, trace.writeCpuS / Math.max(1, trace.inputLater.length));
  // Each output's last part is sent once its bytes are all written: it waits whole, after the rest.
  const lastParts = finalPartsSeconds(trace, t);
  const earlier = trace.outputs.reduce((n, o) => n + sum(o.parts) - (o.parts.length > 0 ? t(finalPart(o.parts)) : 0), 0) / PARTS_IN_FLIGHT;
  return footers + reads + Math.max(0, earlier - (trace.writeCpuS + reads)) + lastParts + steps + proof;
}

/** Step Functions transitions per GB: one per group (the Map's rewrite), six per run (plan, choice, map, commit, report, succeed) over `runBytes`. */
export function transitionsPerGb(groupBytes: number, runBytes = 1e12): number {
  return GB / groupBytes + (6 * GB) / runBytes;
}

export interface MeasuredWorkload {
  /** Input bytes and files of the measured run. */
  readonly bytesIn: number;
  readonly filesIn: number;
  readonly cpuS: number;
  /** S3 wait of the run (s3WaitSeconds). */
  readonly waitS: number;
  /** GET and PUT requests per GB (from the run's, see bench/cost-per-gb.ts). */
  readonly getsPerGb: number;
  readonly putsPerGb: number;
  /** Bytes per group in production (the group the run rewrote may be smaller). */
  readonly groupBytes: number;
  /** Groups one invocation rewrites side by side, one per vCPU (a batching rewrite function); default 1. */
  readonly groupsPerInvocation?: number;
}

/** Cost per GB of a measured run, billed by CPU time only (`billWait` false) or by duration (CPU + S3 wait). */
export function measuredCostPerGb(w: MeasuredWorkload, memoryMb: number, vcpus: number, billWait: boolean): LambdaCost {
  const perGb = GB / w.bytesIn;
  const batch = w.groupsPerInvocation ?? 1;
  const cpuSPerGb = w.cpuS * perGb;
  // A batch's groups run side by side: the invocation is billed once for all of them.
  const wallS = ((w.cpuS + (billWait ? w.waitS : 0)) * perGb) / batch;
  const invocationsPerGb = GB / w.groupBytes / batch;
  const compute = wallS * (memoryMb / 1024) * PRICES.lambdaGbSecondUsd + invocationsPerGb * PRICES.lambdaRequestUsd;
  const gets = w.getsPerGb * S3_REQUESTS.getUsd;
  const puts = w.putsPerGb * S3_REQUESTS.putUsd;
  const sfn = transitionsPerGb(w.groupBytes * batch) * PRICES.stateTransitionUsd;
  return {
    memoryMb, vcpus, cpuSPerGb: +cpuSPerGb.toFixed(1), wallSPerGb: +wallS.toFixed(1), compute, gets, puts, sfn, total: compute + gets + puts + sfn,
  };
}

/**
 * PUTs per GB in production: a group of `groupBytes` writes `outRatio` of it into outputs of
 * `targetBytes` (the last one smaller), each one PutObject up to a part of `partBytes`, else its
 * parts + create + complete, and one compaction map.
 */
export function putsPerGb(groupBytes: number, outRatio: number, targetBytes: number, partBytes = DEFAULT_PART_SIZE): number {
  let out = groupBytes * outRatio;
  let puts = 1;
  while (out > 0) {
    const size = Math.min(out, targetBytes);
    puts += size <= partBytes ? 1 : Math.ceil(size / partBytes) + 2;
    out -= size;
  }
  return (puts * GB) / groupBytes;
}
