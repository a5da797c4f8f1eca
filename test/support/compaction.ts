/**
 * TEST HELPER, not the planner (lib/compaction/planner.ts is): a Plan that puts every live data
 * file of each partition (spec id + partition tuple) into one group, with the deletes
 * `planFiles` says apply to it. No thresholds, no estimates worth reading.
 */
import type { FileIO } from '../../lib/io/file-io.js';
import { partitionKey } from '../../lib/iceberg/partition.js';
import { planFiles, type FileScanTask } from '../../lib/iceberg/scan-planning.js';
import type { TableMetadata } from '../../lib/iceberg/table-metadata.js';
import { dataFileToJson } from '../../lib/iceberg/data-file-json.js';
import type { CompactionPolicy, FileGroup, GroupInput, Plan } from '../../lib/compaction/messages.js';
import { partitionFolder } from '../../lib/iceberg/locations.js';
import { currentSchema, specById } from '../../lib/iceberg/table-metadata.js';
import { MERGE_DELETES_PROPERTY, MERGE_MIN_ROW_GROUP_BYTES_PROPERTY } from '../../lib/compaction/chunk-copy.js';

/** Table properties that keep a table's small inputs, and its inputs with deletes, on the decode path (tests of that path). */
export const DECODE_ONLY = { [MERGE_MIN_ROW_GROUP_BYTES_PROPERTY]: String(2 ** 50), [MERGE_DELETES_PROPERTY]: 'false' };

export const TEST_POLICY: Plan['policy'] = {
  targetFileSizeBytes: 512 * 1024 * 1024,
  minFileSizeBytes: 0,
  maxFileSizeBytes: Number.MAX_SAFE_INTEGER,
  minInputFiles: 1,
  deleteFileThreshold: 1,
  deleteRatioThreshold: 0,
  quietMinutes: 0,
  mode: 'major',
  strategy: 'binpack',
  maxGroupBytes: Number.MAX_SAFE_INTEGER,
  maxGroups: Number.MAX_SAFE_INTEGER,
};

export function groupInputOf(metadata: TableMetadata, task: FileScanTask): GroupInput {
  const d = task.deletes;
  const deletes = [...(d.deletionVector ? [d.deletionVector] : []), ...d.positionDeletes, ...d.equalityDeletes];
  return {
    file: dataFileToJson(task.dataFile, metadata),
    dataSequenceNumber: task.dataSequenceNumber.toString(),
    deletes: deletes.map((r) => ({ file: dataFileToJson(r.file, metadata), dataSequenceNumber: r.dataSequenceNumber.toString() })),
  };
}

/** One group per partition of the current snapshot, ids `g0`, `g1`, … in order of first file path. */
export async function planAll(
  io: FileIO,
  metadata: TableMetadata,
  policy: Omit<CompactionPolicy, 'where'> = {},
): Promise<Plan> {
  const scan = await planFiles(io, metadata);
  const tasks = [...scan.tasks].sort((a, b) => (a.dataFile.filePath < b.dataFile.filePath ? -1 : 1));
  const byPartition = new Map<string, FileScanTask[]>();
  for (const t of tasks) {
    const key = partitionKey(t.dataFile.specId, t.dataFile.partition);
    let list = byPartition.get(key);
    if (!list) byPartition.set(key, (list = []));
    list.push(t);
  }
  const schema = currentSchema(metadata);
  const groups: FileGroup[] = [...byPartition.values()].map((list, i) => {
    const first = list[0].dataFile;
    const bytes = list.reduce((n, t) => n + Number(t.dataFile.fileSizeInBytes), 0);
    const rows = list.reduce((n, t) => n + Number(t.dataFile.recordCount), 0);
    return {
      id: `g${i}`,
      specId: first.specId,
      partition: dataFileToJson(first, metadata).partition,
      partitionPath: partitionFolder(specById(metadata, first.specId), first.partition, schema),
      inputs: list.map((t) => groupInputOf(metadata, t)),
      estimate: { bytesToRead: bytes, bytesToWrite: bytes, filesIn: list.length, filesOut: 1, liveRows: rows },
      reasons: ['test'],
    };
  });
  const bytes = tasks.reduce((n, t) => n + Number(t.dataFile.fileSizeInBytes), 0);
  return {
    table: { location: metadata.location },
    policy: { ...TEST_POLICY, ...policy },
    startingSnapshotId: scan.snapshot ? scan.snapshot.snapshotId.toString() : null,
    startingSequenceNumber: (scan.snapshot?.sequenceNumber ?? 0n).toString(),
    formatVersion: metadata.formatVersion,
    groups,
    summary: {
      dataFilesBefore: tasks.length,
      dataFilesAfter: groups.length,
      deleteFilesBefore: scan.deleteFiles.length,
      deleteFilesAfter: 0,
      bytesBefore: bytes,
      bytesAfter: bytes,
      rewriteRatio: 1,
    },
    skipped: [],
    createdAtMs: Date.now(),
  };
}
