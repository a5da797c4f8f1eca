import * as arrow from 'apache-arrow';
import type { FileIO } from '../io/file-io.js';
import { ReadAheadFileIO } from '../io/read-ahead.js';
import { readAheadRange } from '../parquet/footer.js';
import type { FileScanTask } from '../iceberg/scan-planning.js';
import { planFiles } from '../iceberg/scan-planning.js';
import { NAME_MAPPING_PROPERTY, parseNameMapping, type NameMapping } from '../iceberg/name-mapping.js';
import { indexById, MetadataColumns } from '../iceberg/schema.js';
import { currentSchema, type TableMetadata } from '../iceberg/table-metadata.js';
import type { NestedField, StructType } from '../iceberg/types.js';
import type { IcebergValue, Row } from '../iceberg/values.js';
import { batchOf, selectRuns, type Runs } from '../parquet/batches.js';
import { rowsFromBatch } from '../parquet/values.js';
import { readBatches } from './data-reader.js';
import { DeleteFileCache, DeleteFilter, equalityKey, keyData, keyValues, markKeys, projectionOf, singleFieldKeys } from './delete-filter.js';

export interface ScanOptions {
  readonly snapshotId?: bigint;
  /** Columns to return (default: the current schema). */
  readonly projection?: StructType;
  /** Add `_row_id` and `_last_updated_sequence_number` (v3 row lineage) to every row. */
  readonly rowLineage?: boolean;
  /** Data files read of the snapshot's total, as the scan goes. */
  readonly onProgress?: (label: string, done: number, total: number | undefined) => void;
}

export const ROW_ID_FIELD: NestedField = {
  id: MetadataColumns.ROW_ID, name: '_row_id', required: false, type: { type: 'long' },
};
export const LAST_UPDATED_SEQUENCE_NUMBER_FIELD: NestedField = {
  id: MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER, name: '_last_updated_sequence_number', required: false, type: { type: 'long' },
};

export function tableNameMapping(metadata: TableMetadata): NameMapping | undefined {
  const text = metadata.properties[NAME_MAPPING_PROPERTY];
  return text === undefined ? undefined : parseNameMapping(text, `${metadata.location} (table property)`);
}

/** The live rows of a snapshot, every delete applied, as rows of the current schema. */
export async function* scanRows(io: FileIO, metadata: TableMetadata, options: ScanOptions = {}): AsyncIterable<Row> {
  const plan = await planFiles(io, metadata, options.snapshotId);
  const projection = options.projection ?? currentSchema(metadata);
  const mapping = tableNameMapping(metadata);
  const deleteCache = new DeleteFileCache();
  options.onProgress?.('data files', 0, plan.tasks.length);
  // The next data files' first reads are in flight while one is decoded.
  const files = new ReadAheadFileIO(io, plan.tasks.map((t) => readAheadRange(t.dataFile.filePath, Number(t.dataFile.fileSizeInBytes))));
  try {
    for (const [i, task] of plan.tasks.entries()) {
      for await (const batch of readTask(files, metadata, task, projection, { mapping, rowLineage: options.rowLineage === true, deleteCache })) {
        yield* batch;
      }
      options.onProgress?.('data files', i + 1, plan.tasks.length);
    }
  } finally {
    files.close();
  }
}

export interface TaskReadOptions {
  readonly mapping?: NameMapping;
  readonly rowLineage?: boolean;
  readonly batchSize?: number;
  /** Add each row's position in its data file as `_pos` (a bigint). */
  readonly positions?: boolean;
  /** Share parsed delete files across tasks. */
  readonly deleteCache?: DeleteFileCache;
}

/**
 * The live rows of one scan task, batch by batch, as row objects (readTaskBatches, one batch of
 * rows at a time): the data file's rows minus its position deletes, deletion vector and
 * equality deletes.
 */
export async function* readTask(
  io: FileIO,
  metadata: TableMetadata,
  task: FileScanTask,
  projection: StructType,
  options: TaskReadOptions = {},
): AsyncIterable<Row[]> {
  const lineage = options.rowLineage === true;
  const outSchema: StructType = {
    type: 'struct',
    fields: [...projection.fields, ...(lineage ? [ROW_ID_FIELD, LAST_UPDATED_SEQUENCE_NUMBER_FIELD] : [])],
  };
  for await (const { batch, runs } of readTaskBatches(io, metadata, task, projection, options)) {
    const rows = rowsFromBatch(batch, outSchema);
    if (options.positions) {
      let i = 0;
      for (let k = 0; k < runs.count; k++) for (let j = 0; j < runs.lengths[k]; j++) rows[i++]._pos = BigInt(runs.starts[k] + j);
    }
    yield rows;
  }
}

/** Identity-partitioned columns missing from a file take the value of the file's partition tuple. */
function identityConstants(task: FileScanTask): Map<number, IcebergValue> {
  const out = new Map<number, IcebergValue>();
  for (const pf of task.spec.fields) {
    if (pf.transform.kind === 'identity' && pf.name in task.dataFile.partition) {
      out.set(pf.sourceId, task.dataFile.partition[pf.name]);
    }
  }
  return out;
}

/**
 * Live rows of a task as Arrow: `batch` holds them in order (the projection's Arrow layout, then
 * the lineage columns when asked for), and `runs` says where they came from: its k-th run is
 * `lengths[k]` consecutive rows from file position `starts[k]`.
 */
export interface LiveBatch {
  readonly batch: arrow.RecordBatch;
  readonly runs: Runs;
}

/**
 * The live rows of one scan task as Arrow batches, column by column: deleted positions cut the
 * batch into runs of live rows (kept as slices, or copied run by run), equality deletes are
 * probed on their key columns only, and null lineage values are filled from the file.
 */
export async function* readTaskBatches(
  io: FileIO,
  metadata: TableMetadata,
  task: FileScanTask,
  projection: StructType,
  options: Omit<TaskReadOptions, 'positions'> = {},
): AsyncIterable<LiveBatch> {
  const filter = await DeleteFilter.load(io, task.dataFile.filePath, task.deletes, metadata.schemas, options.deleteCache);
  const projected = new Set(indexById(projection).keys());
  const extra = filter.equalityFieldIds.filter((id) => !projected.has(id));
  const lineage = options.rowLineage === true;
  const outFields: NestedField[] = [...projection.fields, ...(lineage ? [ROW_ID_FIELD, LAST_UPDATED_SEQUENCE_NUMBER_FIELD] : [])];
  const readFields: NestedField[] = [...outFields, ...(extra.length > 0 ? projectionOf(extra, metadata.schemas, task.dataFile).fields : [])];
  const readSchema: StructType = { type: 'struct', fields: readFields };
  const outSchema: StructType = { type: 'struct', fields: outFields };
  const outColumns = outFields.filter((f) => f.type.type !== 'unknown').length;
  const deadRows = deadRowMarker(filter, readSchema);
  const firstRowId = task.dataFile.firstRowId ?? null;

  for await (const { batch: read, firstPos } of readBatches(io, task.dataFile, readSchema, {
    ...(options.mapping ? { nameMapping: options.mapping } : {}),
    constants: identityConstants(task),
    ...(options.batchSize ? { batchSize: options.batchSize } : {}),
  })) {
    const n = read.numRows;
    const dead = deadRows(read, firstPos);
    const children = read.data.children.slice(0, outColumns);
    if (lineage) {
      const at = outColumns - 2;
      children[at] = inherit(children[at], (i) => (firstRowId === null ? null : firstRowId + BigInt(firstPos + i)));
      children[at + 1] = inherit(children[at + 1], () => (firstRowId === null ? null : task.dataSequenceNumber));
    }
    const same = children.length === read.data.children.length && children.every((c, i) => c === read.data.children[i]);
    const out = same ? read : batchOf(outSchema, children, n);
    const runs = liveRuns(dead, n);
    if (runs.rows === 0) continue;
    const fileRuns: Runs = { ...runs, starts: runs.starts.map((s) => s + firstPos) };
    yield { batch: selectRuns(out, runs), runs: fileRuns };
  }
}

/**
 * Marks a task's dead rows batch by batch (batches in file order, `firstPos` the file position of
 * each one's first row): its deleted positions, then equality matches among the rest, probed on
 * the key columns `readSchema` holds. Undefined for a batch with no dead row.
 */
function deadRowMarker(filter: DeleteFilter, readSchema: StructType): (read: arrow.RecordBatch, firstPos: number) => Uint8Array | undefined {
  const deleted = filter.deletedPositions();
  const equality = filter.equalitySets.map((set) => {
    const found = set.fieldIds.map((id) => keyData(readSchema, id));
    const one = found.length === 1;
    return { keys: set.keys, fields: found.map(keyValues), single: one ? singleFieldKeys(set.keys) : undefined, typed: one ? found[0] : undefined };
  });
  let d = 0;
  return (read, firstPos) => {
    const n = read.numRows;
    const end = firstPos + n;
    let dead: Uint8Array | undefined;
    while (d < deleted.length && deleted[d] < firstPos) d++;
    for (; d < deleted.length && deleted[d] < end; d++) (dead ??= new Uint8Array(n))[deleted[d] - firstPos] = 1;
    for (const e of equality) {
      // A long or int key: probed from its Arrow values, no JavaScript value made per row.
      const marked = e.single && e.typed ? markKeys(e.typed.field.type, e.typed.of(read), e.single, n, dead) : false;
      if (marked !== false) {
        dead = marked;
        continue;
      }
      const columns = e.fields.map((f) => f(read));
      const values = new Array<unknown>(columns.length);
      for (let i = 0; i < n; i++) {
        if (dead?.[i] === 1) continue;
        let hit = e.single?.has(columns[0][i]);
        if (hit === undefined) {
          for (let c = 0; c < columns.length; c++) values[c] = columns[c][i];
          const key = equalityKey(values);
          hit = e.keys.some((k) => k.has(key));
        }
        if (hit) (dead ??= new Uint8Array(n))[i] = 1;
      }
    }
    return dead;
  };
}

const PROBE_BATCH_ROWS = 64 * 1024;

/**
 * The positions of a task's data file that its deletes remove, ascending: its position deletes or
 * deletion vector, and the rows its equality deletes match, probed exactly as readTaskBatches probes
 * them but with only the key columns read. What a rewrite that keeps the file's pages drops from them.
 */
export async function deletedPositions(
  io: FileIO, metadata: TableMetadata, task: FileScanTask,
  options: Pick<TaskReadOptions, 'mapping' | 'deleteCache'> & { readonly filter?: DeleteFilter } = {},
): Promise<Float64Array> {
  // A filter the caller loaded already (its deletion vector is not read twice).
  const filter = options.filter ?? await DeleteFilter.load(io, task.dataFile.filePath, task.deletes, metadata.schemas, options.deleteCache);
  if (filter.equalitySets.length === 0) return filter.deletedPositions();
  const readSchema: StructType = { type: 'struct', fields: projectionOf(filter.equalityFieldIds, metadata.schemas, task.dataFile).fields };
  const deadRows = deadRowMarker(filter, readSchema);
  const out: number[] = [];
  for await (const { batch, firstPos } of readBatches(io, task.dataFile, readSchema, {
    ...(options.mapping ? { nameMapping: options.mapping } : {}),
    constants: identityConstants(task),
    // Keys become JavaScript values a batch at a time (a bigint each for a long key).
    batchSize: PROBE_BATCH_ROWS,
  })) {
    const dead = deadRows(batch, firstPos);
    if (dead) for (let i = 0; i < dead.length; i++) if (dead[i] === 1) out.push(firstPos + i);
  }
  return Float64Array.from(out);
}

/** Runs of rows not marked dead. */
function liveRuns(dead: Uint8Array | undefined, n: number): Runs {
  if (!dead) return { starts: Int32Array.of(0), lengths: Int32Array.of(n), count: 1, rows: n };
  const starts: number[] = [];
  const lengths: number[] = [];
  let rows = 0;
  for (let i = 0; i < n; ) {
    while (i < n && dead[i] === 1) i++;
    const s = i;
    while (i < n && dead[i] === 0) i++;
    if (i > s) {
      starts.push(s);
      lengths.push(i - s);
      rows += i - s;
    }
  }
  return { starts: Int32Array.from(starts), lengths: Int32Array.from(lengths), count: starts.length, rows };
}

/** A long column with its null values replaced by `value(i)` where that gives one (row lineage inheritance). */
function inherit(data: arrow.Data, value: (i: number) => bigint | null): arrow.Data {
  if (data.nullCount === 0) return data;
  const n = data.length;
  const src = data.values as BigInt64Array;
  const out = new BigInt64Array(n);
  const bitmap = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const bit = data.offset + i;
    const valid = data.nullBitmap !== undefined && data.nullBitmap.length > 0 && (data.nullBitmap[bit >> 3] & (1 << (bit & 7))) !== 0;
    const v = valid ? src[i] : value(i);
    if (v === null) {
      nulls++;
      continue;
    }
    out[i] = v;
    bitmap[i >> 3] |= 1 << (i & 7);
  }
  return arrow.makeData({ type: new arrow.Int64(), length: n, nullCount: nulls, ...(nulls > 0 ? { nullBitmap: bitmap } : {}), data: out }).clone(data.type);
}

