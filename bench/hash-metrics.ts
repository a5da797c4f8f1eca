/**
 * The proof hash and the column metrics alone, on one table's one group read once into memory
 * (issue 11): each timed `rounds` times in CPU seconds of this thread, median printed, with the
 * checksum and the bounds so two checkouts can be compared for equal results.
 *
 *   npx tsx bench/hash-metrics.ts <table location> [rounds=7]
 */
import type * as arrow from 'apache-arrow';
import { loadTable } from '../lib/catalog/table.js';
import { planCompaction } from '../lib/compaction/planner.js';
import { proofBatchHasher, proofHasher, proofSchema, RowSetChecksum } from '../lib/compaction/checksum.js';
import { scanTaskOf } from '../lib/compaction/rewriter.js';
import { currentSchema } from '../lib/iceberg/table-metadata.js';
import { MetricsCollector } from '../lib/parquet/metrics.js';
import { DeleteFileCache } from '../lib/table/delete-filter.js';
import { readTaskBatches } from '../lib/table/scan.js';

const location = process.argv[2];
const rounds = Number(process.argv[3] ?? 7);
const table = await loadTable(location);
const plan = await planCompaction(table.io, table.metadata, { table: { location }, policy: {} });
const schema = currentSchema(table.metadata);
const batches: arrow.RecordBatch[] = [];
const deleteCache = new DeleteFileCache();
for (const input of plan.groups[0].inputs) {
  for await (const l of readTaskBatches(table.io, table.metadata, scanTaskOf(table.metadata, input), schema, { deleteCache })) batches.push(l.batch);
}
const hash = proofBatchHasher(schema, false);
const writeSchema = proofSchema(schema, false);

/** CPU seconds of `f`, and the least wall-clock seconds of it seen (steadier on a shared machine). */
const least = { hash: Infinity, metrics: Infinity };
function cpu<T>(f: () => T, what: keyof typeof least): [number, T] {
  const c = process.cpuUsage();
  const t = performance.now();
  const r = f();
  least[what] = Math.min(least[what], (performance.now() - t) / 1000);
  const u = process.cpuUsage(c);
  return [(u.user + u.system) / 1e6, r];
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const hex = (b: Uint8Array | undefined): string => (b ? Buffer.from(b).toString('hex') : '-');

const hashS: number[] = [];
const metricsS: number[] = [];
let checksum = '';
let bounds = '';
for (let r = 0; r < rounds; r++) {
  const [h, c] = cpu(() => {
    const c = new RowSetChecksum(proofHasher(schema, false));
    for (const b of batches) hash(b, c);
    return c;
  }, 'hash');
  hashS.push(h);
  checksum = `${c.count}:${c.hex}`;
  const [m, metrics] = cpu(() => {
    const m = new MetricsCollector(writeSchema);
    for (const b of batches) m.add(b);
    return m.metrics();
  }, 'metrics');
  metricsS.push(m);
  bounds = [...metrics.lowerBounds.keys()].map((id) => `${id}:${hex(metrics.lowerBounds.get(id))}..${hex(metrics.upperBounds.get(id))}`).join(' ');
}
const s = (xs: number[]): string => xs.map((x) => x.toFixed(3)).join(' ');
console.log(JSON.stringify({ rows: batches.reduce((n, b) => n + b.numRows, 0), batches: batches.length, hashS: s(hashS), metricsS: s(metricsS), hashMedian: median(hashS.slice(1)), metricsMedian: median(metricsS.slice(1)), hashLeastWallS: least.hash, metricsLeastWallS: least.metrics, checksum, bounds }));
