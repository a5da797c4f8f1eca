/**
 * What a GB compacted costs on Lambda arm64 at a measured rate (issue 11, must-show 4), next to
 * Amazon S3 Tables' compaction price for the same files. Prices: lib/pipeline/prices.ts (us-east-1).
 * Nothing here is imported by lib/ or by the tests.
 */
import { REGION_PRICES, S3_REQUESTS, S3_TABLES_COMPACTION } from '../lib/pipeline/prices.js';

const GB = 1e9;
const MB = 1e6;
const PRICES = REGION_PRICES['us-east-1'];
/** Step Functions transitions per group (plan, map iteration, rewrite, commit, their retries and choices), one group per GB. */
export const TRANSITIONS_PER_GB = 15;

export interface RateWorkload {
  /** Input MB rewritten per CPU-second (measured). */
  readonly mbPerCpuS: number;
  /** Input files per GB (S3 Tables charges per object). */
  readonly filesPerGb: number;
  /** S3 GET requests per GB of input: reading the inputs and the proof's re-read of the outputs. */
  readonly getsPerGb: number;
  /** Output bytes per GB of input (multipart PUTs of 8 MiB parts, + create/complete). */
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
  const putsPerGb = Math.ceil(w.outBytesPerGb / (8 * 2 ** 20)) + 2;
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
