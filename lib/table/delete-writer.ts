import { randomUUID } from 'node:crypto';
import { InvalidArgumentError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { normalizePath } from '../io/path.js';
import { writeDeletionVectors, type PositionDeleteIndex } from '../iceberg/deletion-vector.js';
import { FileContent, type DataFile } from '../iceberg/manifest.js';
import { partitionFolder, tableLocationProvider } from '../iceberg/locations.js';
import { POSITION_DELETE_METRICS_CONFIG, metricsConfigFromProperties } from '../iceberg/metrics-config.js';
import { partitionKey, type PartitionSpec } from '../iceberg/partition.js';
import { indexById, type Schema } from '../iceberg/schema.js';
import { currentSchema, specById, type TableMetadata } from '../iceberg/table-metadata.js';
import type { NestedField, StructType } from '../iceberg/types.js';
import type { Row } from '../iceberg/values.js';
import { ParquetWriter } from '../parquet/writer.js';
import { toDataFile } from './data-writer.js';
import { POSITION_DELETE_SCHEMA } from './delete-filter.js';

function deletePath(metadata: TableMetadata, folder: string, suffix: string): string {
  return tableLocationProvider(metadata).newDataLocation(`${randomUUID()}-deletes.${suffix}`, folder);
}

/** A v2 position delete file (file_path, pos), sorted as the spec requires. */
export async function writePositionDeleteFile(
  io: FileIO,
  metadata: TableMetadata,
  schema: StructType,
  spec: PartitionSpec,
  partition: Row,
  deletes: ReadonlyArray<{ readonly filePath: string; readonly pos: bigint }>,
): Promise<DataFile> {
  const sorted = [...deletes].sort((a, b) =>
    a.filePath < b.filePath ? -1 : a.filePath > b.filePath ? 1 : a.pos < b.pos ? -1 : a.pos > b.pos ? 1 : 0,
  );
  const path = deletePath(metadata, partitionFolder(spec, partition, schema), 'parquet');
  const writer = ParquetWriter.open(io, path, POSITION_DELETE_SCHEMA, { metricsConfig: POSITION_DELETE_METRICS_CONFIG });
  try {
    await writer.writeRows(sorted.map((d) => ({ file_path: d.filePath, pos: d.pos })));
    return toDataFile(await writer.close(), spec, partition, FileContent.PositionDeletes);
  } catch (e) {
    await writer.abort();
    throw e;
  }
}

/** An equality delete file: rows of the equality columns (by field id) whose matches are deleted. */
export async function writeEqualityDeleteFile(
  io: FileIO,
  metadata: TableMetadata,
  schema: Schema,
  spec: PartitionSpec,
  partition: Row,
  equalityIds: readonly number[],
  rows: readonly Row[],
): Promise<DataFile> {
  const index = indexById(schema);
  const fields: NestedField[] = equalityIds.map((id) => {
    const f = index.get(id);
    if (!f || f.parentId !== undefined) throw new InvalidArgumentError(`equality field ${id} must be a top-level column of the schema`);
    return f.field;
  });
  const deleteSchema: StructType = { type: 'struct', fields };
  const path = deletePath(metadata, partitionFolder(spec, partition, schema), 'parquet');
  const writer = ParquetWriter.open(io, path, deleteSchema, {
    metricsConfig: metricsConfigFromProperties(metadata.properties, deleteSchema),
  });
  try {
    await writer.writeRows(rows.map((r) => Object.fromEntries(fields.map((f) => [f.name, r[f.name] ?? null]))));
    return toDataFile(await writer.close(), spec, partition, FileContent.EqualityDeletes, { equalityIds: [...equalityIds] });
  } catch (e) {
    await writer.abort();
    throw e;
  }
}

/** One Puffin file holding a deletion vector per data file (v3), as manifest entries. */
export async function writeDeletionVectorFile(
  io: FileIO,
  metadata: TableMetadata,
  vectors: ReadonlyArray<{ readonly dataFile: DataFile; readonly positions: PositionDeleteIndex }>,
): Promise<DataFile[]> {
  const path = deletePath(metadata, '', 'puffin');
  const byPath = new Map(vectors.map((v) => [normalizePath(v.dataFile.filePath), v.dataFile]));
  const written = await writeDeletionVectors(
    io,
    path,
    vectors.map((v) => ({ referencedDataFile: v.dataFile.filePath, index: v.positions })),
    { createdBy: 'packice' },
  );
  return written.map((w): DataFile => {
    const target = byPath.get(normalizePath(w.referencedDataFile))!;
    return {
      content: FileContent.PositionDeletes,
      filePath: w.path,
      fileFormat: 'PUFFIN',
      specId: target.specId,
      partition: target.partition,
      recordCount: BigInt(w.recordCount),
      fileSizeInBytes: BigInt(w.fileSizeInBytes),
      referencedDataFile: w.referencedDataFile,
      contentOffset: BigInt(w.contentOffset),
      contentSizeInBytes: BigInt(w.contentSizeInBytes),
    };
  });
}

/**
 * Position deletes for data files in the form the table's format version wants: one deletion
 * vector per data file, all in one Puffin file (v3; merging with a file's existing vector is the
 * caller's part), or position delete files, one per partition (v2). Empty indexes are skipped.
 */
export async function writePositionDeletes(
  io: FileIO,
  metadata: TableMetadata,
  targets: ReadonlyArray<{ readonly dataFile: DataFile; readonly positions: PositionDeleteIndex }>,
): Promise<DataFile[]> {
  const nonEmpty = targets.filter((t) => !t.positions.isEmpty());
  if (nonEmpty.length === 0) return [];
  if (metadata.formatVersion >= 3) return writeDeletionVectorFile(io, metadata, nonEmpty);
  const schema = currentSchema(metadata);
  const byPartition = new Map<string, { file: DataFile; deletes: { filePath: string; pos: bigint }[] }>();
  for (const t of nonEmpty) {
    const key = partitionKey(t.dataFile.specId, t.dataFile.partition);
    let g = byPartition.get(key);
    if (!g) byPartition.set(key, (g = { file: t.dataFile, deletes: [] }));
    for (const pos of t.positions) g.deletes.push({ filePath: t.dataFile.filePath, pos });
  }
  const out: DataFile[] = [];
  try {
    for (const g of byPartition.values()) {
      out.push(await writePositionDeleteFile(io, metadata, schema, specById(metadata, g.file.specId), g.file.partition, g.deletes));
    }
  } catch (e) {
    await io.deleteMany(out.map((f) => f.filePath)).catch(() => undefined);
    throw e;
  }
  return out;
}
