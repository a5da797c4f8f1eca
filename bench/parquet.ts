/**
 * Parquet write and read throughput: 1M rows × 6 columns (long, int, double, string,
 * timestamptz, decimal(18,2)), ZSTD, 256k-row row groups, to and from a local temp folder.
 * Prints the median of 5 runs and the peak RSS. Run: `npx tsx bench/parquet.ts [rows]`.
 */
import * as arrow from 'apache-arrow';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StructType } from '../lib/iceberg/types.js';
import { LocalFileIO } from '../lib/io/local.js';
import { openParquet, readRowGroups } from '../lib/parquet/reader.js';
import { arrowSchema } from '../lib/parquet/schema.js';
import { ParquetWriter } from '../lib/parquet/writer.js';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const BATCH = 65_536;
const RUNS = 5;
const ROW_GROUP_ROWS = 262_144;

const schema: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'qty', required: false, type: { type: 'int' } },
    { id: 3, name: 'price', required: false, type: { type: 'double' } },
    { id: 4, name: 'name', required: false, type: { type: 'string' } },
    { id: 5, name: 'at', required: false, type: { type: 'timestamptz' } },
    { id: 6, name: 'amount', required: false, type: { type: 'decimal', precision: 18, scale: 2 } },
  ],
};

/** Reproducible data built straight into Arrow buffers (row objects would dominate the timing). */
function makeBatch(from: number, n: number): arrow.RecordBatch {
  const target = arrowSchema(schema);
  const ids = new BigInt64Array(n);
  const qty = new Int32Array(n);
  const price = new Float64Array(n);
  const at = new BigInt64Array(n);
  const amount = new Uint32Array(n * 4);
  const offsets = new Int32Array(n + 1);
  const names: string[] = new Array(n);
  let bytes = 0;
  for (let k = 0; k < n; k++) {
    const i = from + k;
    const h = Math.imul(i, 2654435761) >>> 0;
    ids[k] = BigInt(i);
    qty[k] = h % 1000;
    price[k] = (h % 1_000_000) / 100;
    at[k] = 1_700_000_000_000_000n + BigInt(i) * 1_000_000n;
    amount[k * 4] = h % 10_000_000; // small positive unscaled values
    names[k] = `customer-${h % 50_000}`;
    bytes += names[k].length;
    offsets[k + 1] = bytes;
  }
  const text = Buffer.from(names.join(''), 'latin1');
  const col = (i: number, props: Record<string, unknown>): arrow.Data =>
    arrow.makeData({ type: target.fields[i].type, length: n, nullCount: 0, ...props } as never);
  const children = [
    col(0, { data: ids }),
    col(1, { data: qty }),
    col(2, { data: price }),
    col(3, { valueOffsets: offsets, data: new Uint8Array(text.buffer, text.byteOffset, text.length) }),
    col(4, { data: at }),
    col(5, { data: amount }),
  ];
  return new arrow.RecordBatch(target, arrow.makeData({ type: new arrow.Struct(target.fields), length: n, nullCount: 0, children }));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

async function main(): Promise<void> {
  const io = new LocalFileIO();
  const dir = mkdtempSync(join(tmpdir(), 'packice-bench-'));
  const batches: arrow.RecordBatch[] = [];
  for (let from = 0; from < ROWS; from += BATCH) batches.push(makeBatch(from, Math.min(BATCH, ROWS - from)));

  console.log(
    `parquet bench: ${ROWS.toLocaleString('en-US')} rows × 6 columns (long, int, double, string, timestamptz, decimal(18,2)), ` +
      `ZSTD, ${ROW_GROUP_ROWS}-row groups; median of ${RUNS} runs; node ${process.version}`,
  );
  try {
    for (const dictionary of [true, false]) await run(io, dir, batches, dictionary);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
}

async function run(io: LocalFileIO, dir: string, batches: readonly arrow.RecordBatch[], dictionary: boolean): Promise<void> {
  const writeTimes: number[] = [];
  const readTimes: number[] = [];
  let fileSize = 0;
  let rowGroups = 0;
  for (let r = 0; r < RUNS; r++) {
    const path = join(dir, `run-${r}.parquet`);
    let t = performance.now();
    const w = ParquetWriter.open(io, path, schema, { rowGroupRows: ROW_GROUP_ROWS, dictionary });
    for (const b of batches) await w.write(b);
    const written = await w.close();
    writeTimes.push(performance.now() - t);
    fileSize = written.fileSizeInBytes;
    rowGroups = written.rowGroupCount;

    t = performance.now();
    const file = await openParquet(io, path);
    let rows = 0;
    for await (const b of readRowGroups(file)) rows += b.numRows;
    file.close();
    readTimes.push(performance.now() - t);
    if (rows !== ROWS) throw new Error(`read ${rows} rows, wrote ${ROWS}`);
    rmSync(path);
  }
  const mb = fileSize / 1e6;
  const report = (what: string, ms: number): string =>
    `  ${what}: ${(ms / 1000).toFixed(3)} s, ${Math.round(ROWS / (ms / 1000)).toLocaleString('en-US')} rows/s, ` +
    `${(mb / (ms / 1000)).toFixed(1)} MB/s of Parquet`;
  console.log(`dictionary ${dictionary ? 'on (default)' : 'off'}: file ${mb.toFixed(1)} MB in ${rowGroups} row groups`);
  console.log(report('write (incl. metrics)', median(writeTimes)));
  console.log(report('read (all row groups to Arrow JS)', median(readTimes)));
}

await main();
