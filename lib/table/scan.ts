import type { FileIO } from '../io/file-io.js';
import type { FileScanTask } from '../iceberg/scan-planning.js';
import { planFiles } from '../iceberg/scan-planning.js';
import { NAME_MAPPING_PROPERTY, parseNameMapping, type NameMapping } from '../iceberg/name-mapping.js';
import { indexById, MetadataColumns } from '../iceberg/schema.js';
import { currentSchema, type TableMetadata } from '../iceberg/table-metadata.js';
import type { NestedField, StructType } from '../iceberg/types.js';
import type { IcebergValue, Row } from '../iceberg/values.js';
import { readRows } from './data-reader.js';
import { DeleteFileCache, DeleteFilter, projectionOf } from './delete-filter.js';

export interface ScanOptions {
  readonly snapshotId?: bigint;
  /** Columns to return (default: the current schema). */
  readonly projection?: StructType;
  /** Add `_row_id` and `_last_updated_sequence_number` (v3 row lineage) to every row. */
  readonly rowLineage?: boolean;
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
  for (const task of plan.tasks) {
    for await (const batch of readTask(io, metadata, task, projection, { mapping, rowLineage: options.rowLineage === true, deleteCache })) {
      yield* batch;
    }
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
 * The live rows of one scan task, batch by batch: the data file's rows minus
 * its position deletes, deletion vector and equality deletes.
 */
export async function* readTask(
  io: FileIO,
  metadata: TableMetadata,
  task: FileScanTask,
  projection: StructType,
  options: TaskReadOptions = {},
): AsyncIterable<Row[]> {
  const filter = await DeleteFilter.load(io, task.dataFile.filePath, task.deletes, metadata.schemas, options.deleteCache);
  // Equality fields the projection lacks are read under hidden names, then dropped.
  const projected = new Set(indexById(projection).keys());
  const extra = filter.equalityFieldIds.filter((id) => !projected.has(id));
  const lineage = options.rowLineage === true;
  const readFields: NestedField[] = [
    ...projection.fields,
    ...(extra.length > 0 ? projectionOf(extra, metadata.schemas, task.dataFile).fields : []),
    ...(lineage ? [ROW_ID_FIELD, LAST_UPDATED_SEQUENCE_NUMBER_FIELD] : []),
  ];
  const readSchema: StructType = { type: 'struct', fields: readFields };
  const accessors = accessorsFor(readSchema, filter.equalityFieldIds);
  const hidden = readFields.slice(projection.fields.length).map((f) => f.name);
  const firstRowId = task.dataFile.firstRowId ?? null;

  for await (const batch of readRows(io, task.dataFile, readSchema, {
    ...(options.mapping ? { nameMapping: options.mapping } : {}),
    constants: identityConstants(task),
    ...(options.batchSize ? { batchSize: options.batchSize } : {}),
  })) {
    const out: Row[] = [];
    for (let i = 0; i < batch.rows.length; i++) {
      const row = batch.rows[i];
      const pos = batch.firstPos + i;
      if (!filter.isEmpty && filter.isDeleted(pos, (id) => accessors.get(id)!(row))) continue;
      if (lineage) {
        // Null lineage values inherit from the file (spec "Row Lineage").
        if (row._row_id === null) row._row_id = firstRowId === null ? null : firstRowId + BigInt(pos);
        if (row._last_updated_sequence_number === null) {
          row._last_updated_sequence_number = firstRowId === null ? null : task.dataSequenceNumber;
        }
      }
      for (const h of hidden) if (!lineage || (h !== '_row_id' && h !== '_last_updated_sequence_number')) delete row[h];
      if (options.positions) row._pos = BigInt(pos);
      out.push(row);
    }
    if (out.length > 0) yield out;
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

/** Functions reading a field (top level or inside structs) from a row, by field id. */
function accessorsFor(struct: StructType, ids: readonly number[]): Map<number, (r: Row) => unknown> {
  const index = indexById(struct);
  const out = new Map<number, (r: Row) => unknown>();
  for (const id of ids) {
    const path: string[] = [];
    for (let cur = index.get(id); cur; cur = cur.parentId === undefined ? undefined : index.get(cur.parentId)) {
      path.unshift(cur.field.name);
    }
    out.set(id, (r) => {
      let v: unknown = r;
      for (const p of path) v = v === null || v === undefined ? null : (v as Row)[p];
      return v ?? null;
    });
  }
  return out;
}
