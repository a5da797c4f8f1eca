/**
 * Where a rewrite's CPU goes, step by step, on one table's one group (issue 11 profiling):
 * read the inputs (deletes applied), hash them, write them (metrics, Arrow IPC into wasm, the
 * wasm writer), re-read the output, hash it. Each step timed alone in CPU seconds of this process.
 *
 *   npx tsx bench/rewrite-split.ts <table location>
 */
import { rmSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { loadTable } from '../lib/catalog/table.js';
import { planCompaction } from '../lib/compaction/planner.js';
import { proofBatchHasher, RowSetChecksum, proofHasher, proofSchema } from '../lib/compaction/checksum.js';
import { scanTaskOf } from '../lib/compaction/rewriter.js';
import { currentSchema } from '../lib/iceberg/table-metadata.js';
import { MetricsCollector } from '../lib/parquet/metrics.js';
import { arrowSchema } from '../lib/parquet/schema.js';
import { conformBatch, RollingParquetWriter } from '../lib/parquet/writer.js';
import { readBatches } from '../lib/table/data-reader.js';
import { readTaskBatches } from '../lib/table/scan.js';
import { DeleteFileCache } from '../lib/table/delete-filter.js';
import { parquetWriteOptions } from '../lib/table/data-writer.js';

const location = process.argv[2];
const table = await loadTable(location);
const plan = await planCompaction(table.io, table.metadata, { table: { location }, policy: {} });
const group = plan.groups[0];
const schema = currentSchema(table.metadata);
const writeSchema = proofSchema(schema, false);
const times: Record<string, number> = {};
async function step<T>(name: string, f: () => Promise<T> | T): Promise<T> {
  const c = process.cpuUsage();
  const r = await f();
  const u = process.cpuUsage(c);
  times[name] = (u.user + u.system) / 1e6;
  return r;
}
const tasks = group.inputs.map((i) => scanTaskOf(table.metadata, i));
const batches = await step('read inputs', async () => {
  const out: arrow.RecordBatch[] = [];
  const deleteCache = new DeleteFileCache();
  for (const t of tasks) for await (const l of readTaskBatches(table.io, table.metadata, t, schema, { deleteCache })) out.push(l.batch);
  return out;
});
const hash = proofBatchHasher(schema, false);
await step('hash inputs', () => {
  const c = new RowSetChecksum(proofHasher(schema, false));
  for (const b of batches) hash(b, c);
});
const target = arrowSchema(writeSchema);
await step('metrics', () => {
  const m = new MetricsCollector(writeSchema);
  for (const b of batches) m.add(b);
});
await step('IPC to wasm', () => {
  for (const b of batches) {
    const ipc = arrow.tableToIPC(new arrow.Table([conformBatch(b, target, 'x')]), 'stream');
    const t = pw.Table.fromIPCStream(ipc);
    for (const rb of t.recordBatches()) rb.free();
    t.free();
  }
});
const out = `${location}/data/split-out`;
const files = await step('write (all)', async () => {
  const w = new RollingParquetWriter(table.io, writeSchema, { ...parquetWriteOptions(table.metadata), nextPath: (i) => `${out}-${i}.parquet` });
  for (const b of batches) await w.write(b);
  return w.close();
});
const outBatches = await step('read output', async () => {
  const o: arrow.RecordBatch[] = [];
  for (const f of files) for await (const { batch } of readBatches(table.io, { filePath: f.path, fileFormat: 'PARQUET' }, writeSchema)) o.push(batch);
  return o;
});
await step('hash output', () => {
  const c = new RowSetChecksum(proofHasher(schema, false));
  for (const b of outBatches) hash(b, c);
});
for (const f of files) rmSync(f.path);
const total = Object.values(times).reduce((a, b) => a + b, 0);
console.log(JSON.stringify({ files: files.map((f) => f.fileSizeInBytes), batches: batches.length, times, total }));
