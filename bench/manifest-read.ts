/**
 * Manifest read throughput: writes one 100,000-entry v3 manifest (10 columns of
 * metrics, partitioned by day(ts) and bucket[16](id)) to a temp folder, then reads it
 * back N times with readManifest (inheritance applied) and prints the median rate and
 * the peak RSS.
 *
 *   npx tsx bench/manifest-read.ts [entries] [runs] [deflate level, default 9 as Java]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LocalFileIO } from '../lib/io/local.js';
import { type DataFile, FileContent, ManifestWriter, readManifest } from '../lib/iceberg/manifest.js';
import type { ManifestFile } from '../lib/iceberg/manifest-list.js';
import { partitionSpecFromJson } from '../lib/iceberg/partition.js';
import { schemaFromJson } from '../lib/iceberg/schema.js';

const ENTRIES = Number(process.argv[2] ?? 100_000);
const RUNS = Number(process.argv[3] ?? 5);
const LEVEL = process.argv[4] === undefined ? undefined : Number(process.argv[4]);

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

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'packice-bench-'));
  const io = new LocalFileIO();
  const path = join(dir, 'bench-m0.avro');
  try {
    const snapshotId = 6_917_529_027_641_081_857n; // > 2^53
    const t0 = performance.now();
    const writer = new ManifestWriter(io, path, {
      formatVersion: 3, spec, schema, snapshotId, ...(LEVEL !== undefined ? { deflateLevel: LEVEL } : {}),
    });
    for (let i = 0; i < ENTRIES; i++) writer.add(dataFile(i));
    const written = await writer.close();
    const writeMs = performance.now() - t0;
    const manifest: ManifestFile = { ...written, sequenceNumber: 1n, minSequenceNumber: 1n, firstRowId: 0n };
    const specs = new Map([[0, spec]]);

    const rates: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const start = performance.now();
      let n = 0;
      let rows = 0n;
      for await (const e of readManifest(io, manifest, specs, schema)) {
        n++;
        rows += e.dataFile.recordCount;
      }
      const ms = performance.now() - start;
      if (n !== ENTRIES) throw new Error(`read ${n} entries, expected ${ENTRIES}`);
      if (rows !== written.addedRowsCount) throw new Error('row count mismatch');
      rates.push(n / (ms / 1000));
    }
    rates.sort((a, b) => a - b);
    const median = rates[Math.floor(rates.length / 2)];
    const size = statSync(path).size;
    console.log(`manifest: ${ENTRIES} entries, ${(size / 1024 / 1024).toFixed(1)} MiB (deflate ${LEVEL ?? 9}), written in ${(writeMs / 1000).toFixed(2)} s (${Math.round(ENTRIES / (writeMs / 1000))} entries/s)`);
    console.log(`read x${RUNS}: median ${Math.round(median)} entries/s (min ${Math.round(rates[0])}, max ${Math.round(rates[rates.length - 1])})`);
    console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
