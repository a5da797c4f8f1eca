/**
 * What `packice describe`, `snapshots` and `files` show: the table's own description (schema,
 * specs, sort orders, properties, refs) and Iceberg's `snapshots` and `files` metadata tables,
 * with the columns Java's metadata tables name (snapshot_id, parent_id, operation, file_path,
 * content, partition, record_count, file_size_in_bytes, …). Metadata and manifests only.
 */
import type { FileIO } from '../io/file-io.js';
import { FileContent, type DataFile } from '../iceberg/manifest.js';
import { isDeletionVector, referencedDataFile } from '../iceberg/delete-file.js';
import { partitionToPath } from '../iceberg/locations.js';
import { partitionType } from '../iceberg/partition.js';
import { planFiles } from '../iceberg/scan-planning.js';
import { indexById } from '../iceberg/schema.js';
import { transformToString } from '../iceberg/transform.js';
import { currentSchema, type TableMetadata } from '../iceberg/table-metadata.js';
import { isPrimitive, primitiveToString, type IcebergType, type NestedField } from '../iceberg/types.js';

export interface ColumnDescription {
  readonly id: number;
  /** Dotted for nested fields: `address.city`. */
  readonly name: string;
  readonly type: string;
  readonly required: boolean;
  readonly doc?: string;
}

export interface TableDescription {
  readonly location: string;
  readonly tableUuid: string;
  readonly formatVersion: number;
  readonly currentSnapshotId: string | null;
  readonly schemaId: number;
  readonly columns: readonly ColumnDescription[];
  readonly partitionSpecs: readonly {
    readonly specId: number;
    readonly isDefault: boolean;
    readonly fields: readonly { readonly fieldId: number; readonly name: string; readonly transform: string; readonly sourceId: number; readonly source: string }[];
  }[];
  readonly sortOrders: readonly {
    readonly orderId: number;
    readonly isDefault: boolean;
    readonly fields: readonly { readonly source: string; readonly transform: string; readonly direction: string; readonly nullOrder: string }[];
  }[];
  readonly properties: Readonly<Record<string, string>>;
  readonly refs: readonly { readonly name: string; readonly type: string; readonly snapshotId: string }[];
}

function typeText(t: IcebergType): string {
  if (isPrimitive(t)) return primitiveToString(t);
  if (t.type === 'struct') return 'struct';
  if (t.type === 'list') return `list<${typeText(t.element)}>`;
  return `map<${typeText(t.key)}, ${typeText(t.value)}>`;
}

function columnsOf(fields: readonly NestedField[], prefix: string, out: ColumnDescription[]): void {
  for (const f of fields) {
    const name = `${prefix}${f.name}`;
    out.push({ id: f.id, name, type: typeText(f.type), required: f.required, ...(f.doc ? { doc: f.doc } : {}) });
    if (f.type.type === 'struct') columnsOf(f.type.fields, `${name}.`, out);
  }
}

/** PyIceberg's `describe`/`schema`/`spec`/`properties` in one. */
export function describeTable(metadata: TableMetadata): TableDescription {
  const schema = currentSchema(metadata);
  const names = indexById(schema);
  const source = (id: number): string => names.get(id)?.path ?? `(field ${id})`;
  const columns: ColumnDescription[] = [];
  columnsOf(schema.fields, '', columns);
  return {
    location: metadata.location,
    tableUuid: metadata.tableUuid,
    formatVersion: metadata.formatVersion,
    currentSnapshotId: metadata.currentSnapshotId?.toString() ?? null,
    schemaId: schema.schemaId,
    columns,
    partitionSpecs: metadata.partitionSpecs.map((s) => ({
      specId: s.specId,
      isDefault: s.specId === metadata.defaultSpecId,
      fields: s.fields.map((f) => ({ fieldId: f.fieldId, name: f.name, transform: transformToString(f.transform), sourceId: f.sourceId, source: source(f.sourceId) })),
    })),
    sortOrders: metadata.sortOrders.map((o) => ({
      orderId: o.orderId,
      isDefault: o.orderId === metadata.defaultSortOrderId,
      fields: o.fields.map((f) => ({ source: source(f.sourceId), transform: transformToString(f.transform), direction: f.direction, nullOrder: f.nullOrder })),
    })),
    properties: metadata.properties,
    refs: Object.entries(metadata.refs).map(([name, r]) => ({ name, type: r.type, snapshotId: r.snapshotId.toString() })),
  };
}

/** A row of Iceberg's `snapshots` metadata table. */
export interface SnapshotRow {
  readonly committedAt: string;
  readonly snapshotId: string;
  readonly parentId: string | null;
  readonly sequenceNumber: string;
  readonly operation: string;
  readonly isCurrent: boolean;
  readonly manifestList: string | null;
  /** The snapshot summary without `operation` (its own column), as Java's table has it. */
  readonly summary: Readonly<Record<string, string>>;
}

/** Every snapshot the metadata holds, oldest first. */
export function snapshotsTable(metadata: TableMetadata): SnapshotRow[] {
  return [...metadata.snapshots]
    .sort((a, b) => a.timestampMs - b.timestampMs || Number(a.sequenceNumber - b.sequenceNumber))
    .map((s) => ({
      committedAt: new Date(s.timestampMs).toISOString(),
      snapshotId: s.snapshotId.toString(),
      parentId: s.parentSnapshotId?.toString() ?? null,
      sequenceNumber: s.sequenceNumber.toString(),
      operation: s.summary.operation,
      isCurrent: s.snapshotId === metadata.currentSnapshotId,
      manifestList: s.manifestList ?? null,
      summary: Object.fromEntries(Object.entries(s.summary).filter(([k]) => k !== 'operation')),
    }));
}

export type FileContentName = 'DATA' | 'POSITION_DELETES' | 'EQUALITY_DELETES';

/** A row of Iceberg's `files` metadata table (live files of a snapshot). */
export interface FileRow {
  readonly content: FileContentName;
  readonly filePath: string;
  readonly fileFormat: string;
  readonly specId: number;
  /** Java's `partitionToPath`: `category=a/ts_hour=2026-01-01-04`; empty when unpartitioned. */
  readonly partition: string;
  readonly recordCount: string;
  readonly fileSizeInBytes: string;
  /** Data files: the delete files that apply to it. */
  readonly deleteFiles?: number;
  /** Deletion vectors: the data file they delete from. */
  readonly referencedDataFile?: string;
}

const CONTENT: Record<number, FileContentName> = {
  [FileContent.Data]: 'DATA',
  [FileContent.PositionDeletes]: 'POSITION_DELETES',
  [FileContent.EqualityDeletes]: 'EQUALITY_DELETES',
};

/** The live data files of a snapshot, and with `deletes` its live delete files after them. */
export async function filesTable(io: FileIO, metadata: TableMetadata, options: { readonly snapshotId?: bigint; readonly deletes?: boolean } = {}): Promise<FileRow[]> {
  const plan = await planFiles(io, metadata, options.snapshotId);
  const schema = currentSchema(metadata);
  const specs = new Map(metadata.partitionSpecs.map((s) => [s.specId, s]));
  const row = (f: DataFile): FileRow => {
    const spec = specs.get(f.specId)!;
    return {
      content: CONTENT[f.content],
      filePath: f.filePath,
      fileFormat: f.fileFormat,
      specId: f.specId,
      partition: spec.fields.length === 0 ? '' : partitionToPath(spec, f.partition, partitionType(spec, schema)),
      recordCount: f.recordCount.toString(),
      fileSizeInBytes: f.fileSizeInBytes.toString(),
      ...(isDeletionVector(f) ? { referencedDataFile: referencedDataFile(f) } : {}),
    };
  };
  const rows = plan.tasks
    .map((t) => ({ ...row(t.dataFile), deleteFiles: t.deletes.positionDeletes.length + t.deletes.equalityDeletes.length + (t.deletes.deletionVector ? 1 : 0) }))
    .sort((a, b) => a.filePath.localeCompare(b.filePath));
  if (!options.deletes) return rows;
  return [...rows, ...plan.deleteFiles.map(row).sort((a, b) => a.filePath.localeCompare(b.filePath))];
}
