/**
 * What the planner and the health report both know about the live data files of a snapshot,
 * from its manifests alone (DESIGN.md invariant 7): per file, its partition, the deletes a
 * rewrite applies, its estimated deleted rows and why it is a compaction candidate; per
 * partition, its files and when it was last written to. Neither reads a data or delete file.
 */
import { deleteFileKey } from '../iceberg/delete-file.js';
import type { DeleteFileRef } from '../iceberg/delete-index.js';
import { partitionToPath } from '../iceberg/locations.js';
import { partitionKey } from '../iceberg/partition.js';
import type { FileScanTask, ScanPlan } from '../iceberg/scan-planning.js';
import { specsById, type TableMetadata } from '../iceberg/table-metadata.js';
import type { StructType } from '../iceberg/types.js';
import { partitionToJson, partitionTypeOf } from '../iceberg/data-file-json.js';
import type { PartitionRef } from './messages.js';
import type { PartitionFilter } from './partition-filter.js';
import type { ResolvedPolicy } from './policy.js';

/** Why a data file is a candidate, in the order reasons are listed. */
export const FILE_REASONS = ['too-small', 'too-large', 'deletes', 'delete-ratio', 'spec-change'] as const;
export type FileReason = (typeof FILE_REASONS)[number];

/** The only format the rewriter reads and writes. */
const REWRITABLE_FORMAT = 'PARQUET';

/** What is known about one live data file, from metadata only; the partition is the file's. */
export interface FileFacts extends PartitionRef {
  readonly task: FileScanTask;
  /** `partitionKey(specId, partition)`: files group by spec and partition. */
  readonly key: string;
  /** The deletes a rewrite applies: the DV or position deletes, and equality deletes in major mode. */
  readonly deletes: readonly DeleteFileRef[];
  /**
   * Estimated deleted rows: a DV's cardinality exactly, a position delete file's record count
   * apportioned by record count over the data files it reaches (all of it when file-scoped).
   * Equality deletes are not counted: how many rows they match is unknown without reading data.
   */
  readonly deletedRecords: number;
  readonly equalityDeletes: number;
  readonly reasons: readonly FileReason[];
  /** Why the file cannot be rewritten, when it cannot. */
  readonly unrewritable?: string;
}

/** The live data files of one partition. */
export interface PartitionFacts extends PartitionRef {
  readonly key: string;
  /** By file path. */
  readonly files: readonly FileFacts[];
  /** Time (ms) of the newest snapshot still in the metadata that added one of its files. */
  readonly lastCommitMs: number | undefined;
}

const bySeqThenKey = (a: DeleteFileRef, b: DeleteFileRef): number =>
  a.dataSequenceNumber < b.dataSequenceNumber ? -1 : a.dataSequenceNumber > b.dataSequenceNumber ? 1 : cmp(deleteFileKey(a.file), deleteFileKey(b.file));

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Classifies every live data file of a scan against the policy, by file path. Reads nothing. */
export function fileFacts(metadata: TableMetadata, scan: ScanPlan, policy: ResolvedPolicy): FileFacts[] {
  const minor = policy.mode === 'minor';
  const tasks = [...scan.tasks].sort((a, b) => cmp(a.dataFile.filePath, b.dataFile.filePath));
  // Records of the data files each position delete file reaches, to apportion its count.
  const reach = new Map<string, bigint>();
  for (const t of tasks) {
    for (const d of t.deletes.positionDeletes) {
      const k = deleteFileKey(d.file);
      reach.set(k, (reach.get(k) ?? 0n) + t.dataFile.recordCount);
    }
  }
  const types = new Map<number, StructType>();
  const typeOf = (specId: number): StructType => {
    let t = types.get(specId);
    if (!t) types.set(specId, (t = partitionTypeOf(metadata, specId)));
    return t;
  };
  const specs = specsById(metadata);
  return tasks.map((task) => {
    const f = task.dataFile;
    const dv = task.deletes.deletionVector;
    const deletes = [
      ...(dv ? [dv] : []),
      ...[...task.deletes.positionDeletes].sort(bySeqThenKey),
      ...(minor ? [] : [...task.deletes.equalityDeletes].sort(bySeqThenKey)),
    ];
    const records = Number(f.recordCount);
    let deleted = dv ? Number(dv.file.recordCount) : 0;
    for (const d of task.deletes.positionDeletes) {
      const total = Number(reach.get(deleteFileKey(d.file)) ?? 0n);
      if (total > 0) deleted += (Number(d.file.recordCount) * records) / total;
    }
    deleted = Math.min(deleted, records);
    const size = Number(f.fileSizeInBytes);
    const reasons: FileReason[] = [];
    if (size < policy.minFileSizeBytes) reasons.push('too-small');
    if (size > policy.maxFileSizeBytes) reasons.push('too-large');
    // As in Java, a threshold of 0 makes every file a candidate.
    if (deletes.length >= policy.deleteFileThreshold) reasons.push('deletes');
    if (records > 0 && deleted > 0 && deleted / records >= policy.deleteRatioThreshold) reasons.push('delete-ratio');
    if (f.specId !== metadata.defaultSpecId) reasons.push('spec-change');
    const unreadable = deletes.find((d) => d.file.fileFormat !== REWRITABLE_FORMAT && d.file.fileFormat !== 'PUFFIN');
    const unrewritable =
      f.fileFormat !== REWRITABLE_FORMAT
        ? `file format ${f.fileFormat} cannot be rewritten (only ${REWRITABLE_FORMAT})`
        : unreadable
          ? `its delete file ${unreadable.file.filePath} is ${unreadable.file.fileFormat}, which cannot be read (only ${REWRITABLE_FORMAT} and PUFFIN)`
          : undefined;
    const type = typeOf(f.specId);
    return {
      task,
      key: partitionKey(f.specId, f.partition),
      specId: f.specId,
      partition: partitionToJson(f.partition, type),
      partitionPath: partitionToPath(specs.get(f.specId)!, f.partition, type),
      deletes,
      deletedRecords: deleted,
      equalityDeletes: task.deletes.equalityDeletes.length,
      reasons,
      ...(unrewritable ? { unrewritable } : {}),
    };
  });
}

/**
 * The files grouped by partition, in the order of each partition's first file; when a filter is
 * given, only the files it selects (those whose rows may match) and the partitions that keep one.
 * A partition's last commit counts all its files.
 */
export function partitionsOf(metadata: TableMetadata, facts: readonly FileFacts[], filter?: PartitionFilter): PartitionFacts[] {
  const byKey = new Map<string, FileFacts[]>();
  for (const f of facts) {
    const list = byKey.get(f.key);
    if (list) list.push(f);
    else byKey.set(f.key, [f]);
  }
  const times = new Map(metadata.snapshots.map((s) => [s.snapshotId, s.timestampMs]));
  const out: PartitionFacts[] = [];
  for (const [key, all] of byKey) {
    const files = filter ? all.filter((f) => filter.mayMatch(f.task.dataFile)) : all;
    if (files.length === 0) continue;
    const first = files[0];
    let last: number | undefined;
    for (const f of all) {
      const id = f.task.snapshotId;
      // A file whose snapshot has expired was added before every snapshot still held.
      const t = id === null ? undefined : times.get(id);
      if (t !== undefined && t > (last ?? -Infinity)) last = t;
    }
    out.push({
      key,
      specId: first.specId,
      partition: first.partition,
      partitionPath: first.partitionPath,
      files,
      lastCommitMs: last,
    });
  }
  return out;
}
