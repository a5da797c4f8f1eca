/**
 * Manifest read throughput: writes one 100,000-entry v3 manifest (10 columns of
 * metrics, partitioned by day(ts) and bucket[16](id)) to a temp folder, then reads it
 * back N times with readManifest (inheritance applied) in a fresh child process, and
 * prints the median rate and that process's peak RSS.
 *
 *   npx tsx bench/manifest-read.ts [entries=100000] [runs=5] [deflate level=9, as Java]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { LocalFileIO } from '../lib/io/local.js';
import { type DataFile, FileContent, ManifestWriter, readManifest } from '../lib/iceberg/manifest.js';
import type { ManifestFile } from '../lib/iceberg/manifest-list.js';
import { partitionSpecFromJson } from '../lib/iceberg/partition.js';
import { schemaFromJson } from '../lib/iceberg/schema.js';

const schema = schemaFromJson({
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    { id: 3, name: 'name', required: false, type: 'string' },
    { id: 4, name: 'amount', required: false, type: 'double' },
    { id: 5, name: 'qty', required: false, type: 'int' },
    { id: 6, name: 'flag', required: false, type: 'boolean' },
    { id: 7, name: 'category', required: false, type: 'string' },
    { id: 8, name: 'price', required: false, type: 'decimal(10, 2)' },
    { id: 9, name: 'd', required: false, type: 'date' },
    { id: 10, name: 'ratio', required: false, type: 'float' },
  ],
});
const spec = partitionSpecFromJson({
  'spec-id': 0,
  fields: [
    { name: 'ts_day', transform: 'day', 'source-id': 2, 'field-id': 1000 },
    { name: 'id_bucket', transform: 'bucket[16]', 'source-id': 1, 'field-id': 1001 },
  ],
});
const SNAPSHOT_ID = 6_917_529_027_641_081_857n; // > 2^53

function le(n: number, bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let x = BigInt(n);
  for (let i = 0; i < bytes; i++) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

function dataFile(i: number): DataFile {
  const day = 19_000 + (i % 365);
  const counts = new Map<number, bigint>();
  const sizes = new Map<number, bigint>();
  const nulls = new Map<number, bigint>();
  const lower = new Map<number, Uint8Array>();
  const upper = new Map<number, Uint8Array>();
  const rows = 10_000n + BigInt(i % 5000);
  for (let c = 1; c <= 10; c++) {
    sizes.set(c, 40_000n + BigInt((i * c) % 9973));
    counts.set(c, rows);
    nulls.set(c, BigInt((i + c) % 17));
    const width = c === 3 || c === 7 ? 16 : c === 5 || c === 9 || c === 10 ? 4 : 8;
    lower.set(c, le(i * c, width));
    upper.set(c, le(i * c + 1000, width));
  }
  return {
    content: FileContent.Data,
    filePath: `s3://warehouse-bucket/db/events/data/ts_day=${day}/id_bucket=${i % 16}/00000-${i}-8c3f2a6e-4d5b-4f1a-9e3c-${String(i).padStart(12, '0')}-00001.parquet`,
    fileFormat: 'PARQUET',
    specId: 0,
    partition: { ts_day: day, id_bucket: i % 16 },
    recordCount: rows,
    fileSizeInBytes: 64_000_000n + BigInt(i),
    columnSizes: sizes,
    valueCounts: counts,
    nullValueCounts: nulls,
    nanValueCounts: new Map([[4, 0n], [10, 0n]]),
    lowerBounds: lower,
    upperBounds: upper,
    splitOffsets: [4n, 33_554_436n],
    sortOrderId: 0,
  };
}

/** Child process: read the manifest `runs` times, print one JSON line. */
async function readPhase(path: string, entries: number, runs: number): Promise<void> {
  const io = new LocalFileIO();
  const manifest: ManifestFile = {
    manifestPath: path, manifestLength: BigInt(statSync(path).size), partitionSpecId: 0, content: 0, sequenceNumber: 1n,
    minSequenceNumber: 1n, addedSnapshotId: SNAPSHOT_ID, addedFilesCount: entries, existingFilesCount: 0, deletedFilesCount: 0,
    addedRowsCount: null, existingRowsCount: 0n, deletedRowsCount: 0n, firstRowId: 0n,
  };
  const specs = new Map([[0, spec]]);
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < runs; r++) {
    const start = performance.now();
    const c0 = process.cpuUsage();
    let n = 0;
    let lastRowId = 0n;
    for await (const e of readManifest(io, manifest, specs, schema)) {
      n++;
      lastRowId = e.dataFile.firstRowId ?? -1n;
    }
    const c = process.cpuUsage(c0);
    const ms = performance.now() - start;
    if (n !== entries || lastRowId <= 0n) throw new Error(`read ${n} entries, expected ${entries}`);
    wall.push(n / (ms / 1000));
    cpu.push(n / ((c.user + c.system) / 1e6));
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(JSON.stringify({ wall, medianWall: median(wall), medianCpu: median(cpu), maxRssKiB: process.resourceUsage().maxRSS }));
}

async function main(): Promise<void> {
  const entries = Number(process.argv[2] ?? 100_000);
  const runs = Number(process.argv[3] ?? 5);
  const level = process.argv[4] === undefined ? undefined : Number(process.argv[4]);
  const dir = mkdtempSync(join(tmpdir(), 'packice-bench-'));
  const path = join(dir, 'bench-m0.avro');
  try {
    const t0 = performance.now();
    const writer = new ManifestWriter(new LocalFileIO(), path, {
      formatVersion: 3, spec, schema, snapshotId: SNAPSHOT_ID, ...(level !== undefined ? { deflateLevel: level } : {}),
    });
    for (let i = 0; i < entries; i++) writer.add(dataFile(i));
    await writer.close();
    const writeS = (performance.now() - t0) / 1000;
    const size = statSync(path).size;
    console.log(
      `manifest: ${entries} entries, ${(size / 1024 / 1024).toFixed(1)} MiB (deflate level ${level ?? 9}), ` +
        `written in ${writeS.toFixed(2)} s (${Math.round(entries / writeS)} entries/s, incl. building the DataFiles)`,
    );

    const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--read', path, String(entries), String(runs)], {
      encoding: 'utf8',
    });
    if (child.status !== 0) throw new Error(`read phase failed: ${child.stderr}`);
    const r = JSON.parse(child.stdout.trim().split('\n').pop() as string) as {
      wall: number[]; medianWall: number; medianCpu: number; maxRssKiB: number;
    };
    console.log(`read x${runs} (readManifest, fresh process): median ${Math.round(r.medianWall)} entries/s wall, ` +
      `${Math.round(r.medianCpu)} entries per CPU-second; runs: ${r.wall.map(Math.round).join(', ')}`);
    console.log(`peak RSS of the reading process: ${(r.maxRssKiB / 1024).toFixed(0)} MiB`);
    console.log(`load average during the run: ${loadavg().map((x) => x.toFixed(2)).join(' ')} (2 cores)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--read') {
  await readPhase(process.argv[3], Number(process.argv[4]), Number(process.argv[5]));
} else {
  await main();
}
