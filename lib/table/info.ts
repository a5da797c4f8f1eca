import type { FileIO } from '../io/file-io.js';
import { deleteFileReadBytes, isDeletionVector } from '../iceberg/delete-file.js';
import { FileContent } from '../iceberg/manifest.js';
import { partitionKey, specToString } from '../iceberg/partition.js';
import { planFiles } from '../iceberg/scan-planning.js';
import { currentSchema, type TableMetadata } from '../iceberg/table-metadata.js';

export interface TableInfo {
  readonly location: string;
  readonly formatVersion: number;
  readonly tableUuid: string;
  readonly currentSnapshotId: string | null;
  readonly sequenceNumber: string;
  readonly snapshots: number;
  readonly schemaId: number;
  readonly columns: number;
  readonly partitionSpec: string;
  readonly partitionSpecs: number;
  readonly partitions: number;
  readonly dataFiles: number;
  readonly records: string;
  readonly dataBytes: string;
  readonly positionDeleteFiles: number;
  readonly deletionVectors: number;
  readonly equalityDeleteFiles: number;
  readonly deleteRecords: string;
  readonly deleteBytes: string;
  readonly fileFormats: Readonly<Record<string, number>>;
}

/** What `packice info` shows; reads manifests only. */
export async function tableInfo(io: FileIO, metadata: TableMetadata, snapshotId?: bigint): Promise<TableInfo> {
  const plan = await planFiles(io, metadata, snapshotId);
  const partitions = new Set<string>();
  let records = 0n;
  let dataBytes = 0n;
  const formats: Record<string, number> = {};
  for (const t of plan.tasks) {
    partitions.add(partitionKey(t.dataFile.specId, t.dataFile.partition));
    records += t.dataFile.recordCount;
    dataBytes += t.dataFile.fileSizeInBytes;
    formats[t.dataFile.fileFormat] = (formats[t.dataFile.fileFormat] ?? 0) + 1;
  }
  let pos = 0;
  let dvs = 0;
  let eq = 0;
  let deleteRecords = 0n;
  let deleteBytes = 0n;
  for (const d of plan.deleteFiles) {
    if (d.content === FileContent.EqualityDeletes) eq++;
    else if (isDeletionVector(d)) dvs++;
    else pos++;
    deleteRecords += d.recordCount;
    // What a reader fetches, as the planner and health count it: a DV's blob, else the file.
    deleteBytes += deleteFileReadBytes(d);
  }
  const schema = currentSchema(metadata);
  const spec = metadata.partitionSpecs.find((s) => s.specId === metadata.defaultSpecId)!;
  return {
    location: metadata.location,
    formatVersion: metadata.formatVersion,
    tableUuid: metadata.tableUuid,
    currentSnapshotId: plan.snapshot ? plan.snapshot.snapshotId.toString() : null,
    sequenceNumber: (plan.snapshot?.sequenceNumber ?? 0n).toString(),
    snapshots: metadata.snapshots.length,
    schemaId: schema.schemaId,
    columns: schema.fields.length,
    partitionSpec: specToString(spec, schema),
    partitionSpecs: metadata.partitionSpecs.length,
    partitions: partitions.size,
    dataFiles: plan.tasks.length,
    records: records.toString(),
    dataBytes: dataBytes.toString(),
    positionDeleteFiles: pos,
    deletionVectors: dvs,
    equalityDeleteFiles: eq,
    deleteRecords: deleteRecords.toString(),
    deleteBytes: deleteBytes.toString(),
    fileFormats: formats,
  };
}
