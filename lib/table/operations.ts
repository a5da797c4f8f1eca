import { randomUUID } from 'node:crypto';
import { commitTable, createTable, type Table } from '../catalog/table.js';
import { InvalidArgumentError, mayHaveCommitted, ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { ensureRoaring, PositionDeleteIndex, readDeletionVector } from '../iceberg/deletion-vector.js';
import type { DataFile } from '../iceberg/manifest.js';
import { partitionKey, type PartitionField } from '../iceberg/partition.js';
import { planFiles } from '../iceberg/scan-planning.js';
import { indexById, maxFieldId, type Schema } from '../iceberg/schema.js';
import { produceSnapshot, type SnapshotChanges } from '../iceberg/snapshot-producer.js';
import { UNSORTED_ORDER, type SortOrder } from '../iceberg/sort-order.js';
import { currentSchema, specById, type FormatVersion, type TableMetadata } from '../iceberg/table-metadata.js';
import type { Transform } from '../iceberg/transform.js';
import type { Row } from '../iceberg/values.js';
import { partitionOf, writeDataFiles, type DataWriterOptions } from './data-writer.js';
import { writeEqualityDeleteFile, writePositionDeletes } from './delete-writer.js';
import { readTask, tableNameMapping } from './scan.js';

export interface NewTableOptions {
  readonly schema: Omit<Schema, 'schemaId' | 'identifierFieldIds'> & Partial<Pick<Schema, 'schemaId' | 'identifierFieldIds'>>;
  /** Partition fields without field ids; ids are assigned from 1000. */
  readonly partitionFields?: ReadonlyArray<Omit<PartitionField, 'fieldId'>>;
  readonly sortOrder?: SortOrder;
  readonly properties?: Readonly<Record<string, string>>;
  /** @default 2 */
  readonly formatVersion?: FormatVersion;
}

/** The first metadata of a new table (field ids as given in the schema). */
export function newTableMetadata(location: string, options: NewTableOptions): TableMetadata {
  const schema: Schema = { schemaId: 0, identifierFieldIds: [], ...options.schema };
  const fields = (options.partitionFields ?? []).map((f, i) => ({ ...f, fieldId: 1000 + i }));
  const v = options.formatVersion ?? 2;
  const sortOrder = options.sortOrder ?? UNSORTED_ORDER;
  return {
    formatVersion: v,
    tableUuid: randomUUID(),
    location,
    lastSequenceNumber: 0n,
    lastUpdatedMs: Date.now(),
    lastColumnId: maxFieldId(schema),
    schemas: [schema],
    currentSchemaId: schema.schemaId,
    partitionSpecs: [{ specId: 0, fields }],
    defaultSpecId: 0,
    lastPartitionId: fields.length > 0 ? 999 + fields.length : 999,
    properties: { 'write.parquet.compression-codec': 'zstd', ...options.properties },
    currentSnapshotId: null,
    snapshots: [],
    snapshotLog: [],
    metadataLog: [],
    sortOrders: sortOrder.orderId === 0 ? [UNSORTED_ORDER] : [UNSORTED_ORDER, sortOrder],
    defaultSortOrderId: sortOrder.orderId,
    refs: {},
    statistics: [],
    partitionStatistics: [],
    ...(v >= 3 ? { nextRowId: 0n } : {}),
  };
}

export async function createNewTable(io: FileIO, location: string, options: NewTableOptions): Promise<Table> {
  return createTable(io, location, newTableMetadata(location, options));
}

/**
 * Commits a snapshot built from `changes` (recomputed against the latest metadata on
 * each attempt); manifests of failed attempts are deleted.
 */
export async function commitChanges(
  table: Table,
  changes: SnapshotChanges | ((base: Table) => SnapshotChanges | Promise<SnapshotChanges>),
): Promise<Table> {
  const written: string[][] = [];
  try {
    const result = await commitTable(table, async (base) => {
      const c = typeof changes === 'function' ? await changes(base) : changes;
      const produced = await produceSnapshot(base.io, base.metadata, c);
      written.push([...produced.writtenFiles]);
      return produced;
    });
    // Attempts before the winning one left manifests nobody references.
    await table.io.deleteMany(written.slice(0, -1).flat()).catch(() => undefined);
    return result.table;
  } catch (e) {
    // A commit that may have applied references them.
    if (!mayHaveCommitted(e)) await table.io.deleteMany(written.flat()).catch(() => undefined);
    throw e;
  }
}

export async function appendRows(table: Table, rows: readonly Row[], options: DataWriterOptions = {}): Promise<Table> {
  const files = await writeDataFiles(table.io, table.metadata, rows, options);
  try {
    return await commitChanges(table, { addedDataFiles: files });
  } catch (e) {
    if (!mayHaveCommitted(e)) await table.io.deleteMany(files.map((f) => f.filePath)).catch(() => undefined);
    throw e;
  }
}

/**
 * Deletes the live rows matching `predicate` by position: position delete files in
 * v2, deletion vectors (merged with the file's existing one) in v3.
 */
export async function deleteRows(
  table: Table,
  predicate: (row: Row) => boolean,
  options: { readonly files?: (file: DataFile) => boolean } = {},
): Promise<{ table: Table; deleted: number }> {
  const m = table.metadata;
  if (m.formatVersion < 2) throw new ValidationError('row-level deletes need format version 2 or later', { path: m.location });
  const plan = await planFiles(table.io, m);
  const schema = currentSchema(m);
  const mapping = tableNameMapping(m);
  const hits: { task: (typeof plan.tasks)[number]; positions: bigint[] }[] = [];
  let deleted = 0;
  for (const task of plan.tasks) {
    // Files the caller rules out (by their metrics, say) are not read.
    if (options.files && !options.files(task.dataFile)) continue;
    const positions: bigint[] = [];
    for await (const rows of readTask(table.io, m, task, schema, { mapping, positions: true })) {
      for (const r of rows) {
        const pos = r._pos as bigint;
        delete r._pos;
        if (predicate(r)) positions.push(pos);
      }
    }
    if (positions.length > 0) {
      hits.push({ task, positions });
      deleted += positions.length;
    }
  }
  if (deleted === 0) return { table, deleted };
  await ensureRoaring();
  const removed: DataFile[] = [];
  const targets = [];
  for (const { task, positions } of hits) {
    // v3: one DV per data file, so the new positions join the file's existing vector, which goes.
    const old = m.formatVersion >= 3 ? task.deletes.deletionVector?.file : undefined;
    const index = old
      ? await readDeletionVector(table.io, old.filePath, Number(old.contentOffset), Number(old.contentSizeInBytes), old.recordCount)
      : new PositionDeleteIndex();
    for (const p of positions) index.add(p);
    targets.push({ dataFile: task.dataFile, positions: index });
    if (old) removed.push(old);
  }
  const added = await writePositionDeletes(table.io, m, targets);
  const next = await commitChanges(table, { addedDeleteFiles: added, removedFiles: removed, operation: 'delete' });
  return { table: next, deleted };
}

export interface EqualityDeleteOptions {
  /**
   * Write a float or double equality column, which the spec forbids. Only for tests that build
   * the tables other engines write (packice must read those as Java does).
   * @default false
   */
  readonly allowFloatingKeys?: boolean;
}

/**
 * Writes equality deletes on `equalityIds` for `keys` (full rows or at least the
 * equality and partition source columns); one file per partition of the default spec.
 */
export async function deleteByEquality(
  table: Table, equalityIds: readonly number[], keys: readonly Row[], options: EqualityDeleteOptions = {},
): Promise<Table> {
  const m = table.metadata;
  const schema = currentSchema(m);
  if (!options.allowFloatingKeys) {
    const index = indexById(schema);
    for (const id of equalityIds) {
      const entry = index.get(id);
      const type = entry?.field.type.type;
      if (type === 'float' || type === 'double') {
        throw new InvalidArgumentError(
          `equality field ${id} (${entry!.path}) is a ${type}: the spec gives equality delete columns the restrictions of identifier fields, which exclude float and double ("Equality Delete Files", "Identifier Field IDs")`,
        );
      }
    }
  }
  const spec = specById(m, m.defaultSpecId);
  const groups = new Map<string, { partition: Row; rows: Row[] }>();
  for (const k of keys) {
    const partition = partitionOf(spec, schema, k);
    const key = partitionKey(spec.specId, partition);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { partition, rows: [] }));
    g.rows.push(k);
  }
  const files: DataFile[] = [];
  for (const g of groups.values()) {
    files.push(await writeEqualityDeleteFile(table.io, m, schema, spec, g.partition, equalityIds, g.rows));
  }
  return commitChanges(table, { addedDeleteFiles: files, operation: 'delete' });
}

/** Adds a schema (same field ids for kept columns) and makes it current. */
export async function updateSchema(table: Table, fields: Schema['fields']): Promise<Table> {
  const result = await commitTable(table, (base) => {
    const m = base.metadata;
    const schemaId = Math.max(...m.schemas.map((s) => s.schemaId)) + 1;
    return {
      updates: [
        { action: 'add-schema', schema: { type: 'struct', fields, schemaId, identifierFieldIds: currentSchema(m).identifierFieldIds } },
        { action: 'set-current-schema', schemaId },
      ],
      requirements: [{ type: 'assert-current-schema-id', currentSchemaId: m.currentSchemaId }],
    };
  });
  return result.table;
}

/** Adds a partition spec and makes it the default; fields seen in earlier specs keep their ids. */
export async function updateSpec(
  table: Table,
  fields: ReadonlyArray<{ readonly sourceId: number; readonly name: string; readonly transform: Transform }>,
): Promise<Table> {
  const result = await commitTable(table, (base) => {
    const m = base.metadata;
    const specId = Math.max(...m.partitionSpecs.map((s) => s.specId)) + 1;
    let next = m.lastPartitionId;
    const sameTransform = (a: Transform, b: Transform): boolean => JSON.stringify(a) === JSON.stringify(b);
    const withIds = fields.map((f) => {
      const prior = m.partitionSpecs.flatMap((s) => s.fields).find((p) => p.sourceId === f.sourceId && sameTransform(p.transform, f.transform));
      return { ...f, fieldId: prior?.fieldId ?? ++next };
    });
    return {
      updates: [
        { action: 'add-spec', spec: { specId, fields: withIds } },
        { action: 'set-default-spec', specId },
      ],
      requirements: [{ type: 'assert-default-spec-id', defaultSpecId: m.defaultSpecId }],
    };
  });
  return result.table;
}
