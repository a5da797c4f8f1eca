/**
 * `packice health`: how far a table is from its ideal layout, from its manifests alone — files
 * and bytes per partition, a file-size histogram, delete files and deleted fractions, and what
 * the planner would do about it under the same policy.
 */
import type { FileIO } from '../io/file-io.js';
import { deleteFileKey, deleteFileReadBytes } from '../iceberg/delete-file.js';
import { FileContent } from '../iceberg/manifest.js';
import { streamFiles } from '../iceberg/scan-planning.js';
import type { TableMetadata } from '../iceberg/table-metadata.js';
import { danglingFigures, unneededDeletes } from './dangling-deletes.js';
import { FILE_REASONS, FactsAccumulator } from './file-facts.js';
import type { CompactionPolicy, PartitionRef, Plan, TableSummary } from './messages.js';
import { planFromFacts } from './planner.js';
import { resolvePolicy, type ResolvedPolicy } from './policy.js';

const MiB = 1024 * 1024;

/** Fixed histogram bounds: [lower, upper) in bytes. */
export const SIZE_BUCKETS: readonly { readonly label: string; readonly minBytes: number; readonly maxBytes: number | null }[] = [
  { label: '< 1 MiB', minBytes: 0, maxBytes: MiB },
  { label: '1-8 MiB', minBytes: MiB, maxBytes: 8 * MiB },
  { label: '8-32 MiB', minBytes: 8 * MiB, maxBytes: 32 * MiB },
  { label: '32-128 MiB', minBytes: 32 * MiB, maxBytes: 128 * MiB },
  { label: '128-512 MiB', minBytes: 128 * MiB, maxBytes: 512 * MiB },
  { label: '>= 512 MiB', minBytes: 512 * MiB, maxBytes: null },
];

export interface SizeBucket {
  readonly label: string;
  readonly minBytes: number;
  /** Exclusive; null for the last bucket. */
  readonly maxBytes: number | null;
  readonly files: number;
  readonly bytes: number;
}

/** What the planner would do for one partition. */
export interface PartitionFix {
  readonly groups: number;
  readonly bytesToRead: number;
  readonly bytesToWrite: number;
  /** Data files of the partition before and after the planned groups. */
  readonly filesBefore: number;
  readonly filesAfter: number;
}

export interface PartitionHealth extends PartitionRef {
  readonly dataFiles: number;
  readonly dataBytes: number;
  readonly records: number;
  /** Files below the policy's min size / above its max size. */
  readonly smallFiles: number;
  readonly largeFiles: number;
  /** Distinct delete files that apply to the partition's data files, and their bytes. */
  readonly deleteFiles: number;
  readonly deleteBytes: number;
  readonly equalityDeleteFiles: number;
  /** Estimated (see FileFacts.deletedRecords; equality deletes are not counted). */
  readonly deletedRecords: number;
  readonly deletedFraction: number;
  /** Newest snapshot that added one of its files (ms), when still in the metadata. */
  readonly lastCommitMs: number | null;
  /** Reasons of the planned groups; empty when the planner leaves the partition alone. */
  readonly reasons: readonly string[];
  readonly fix: PartitionFix | null;
}

export interface TableHealth {
  readonly location: string;
  readonly formatVersion: number;
  readonly snapshotId: string | null;
  readonly policy: ResolvedPolicy;
  readonly dataFiles: number;
  readonly dataBytes: number;
  readonly records: number;
  readonly averageFileBytes: number;
  /** Every live delete file of the snapshot (a DV by its blob's bytes). */
  readonly deleteFiles: number;
  readonly deleteBytes: number;
  readonly deletedRecords: number;
  readonly deletedFraction: number;
  /** Live delete files no live data file needs (dangling-deletes.ts), and their bytes: compaction drops them. */
  readonly danglingDeleteFiles: number;
  readonly danglingDeleteBytes: number;
  readonly histogram: readonly SizeBucket[];
  /** Partitions (those the policy's filter selects), by path. */
  readonly partitions: readonly PartitionHealth[];
  /** Partitions the planner would rewrite. */
  readonly partitionsNeedingCompaction: number;
  /** The plan's groups and its before/after figures. */
  readonly groups: number;
  readonly summary: TableSummary;
  readonly skipped: Plan['skipped'];
}

/** The health report of the table's current snapshot; reads the manifest list and manifests only. */
export async function tableHealth(
  io: FileIO,
  metadata: TableMetadata,
  policy?: CompactionPolicy,
  options: { readonly nowMs?: number } = {},
): Promise<TableHealth> {
  const resolved = resolvePolicy(metadata, policy);
  // Health reports every file: it keeps them all (the planner keeps only candidates).
  const accumulator = new FactsAccumulator(metadata, resolved.policy, resolved.filter, { keep: 'all' });
  // Every manifest: the table figures are the whole table's, the partitions those --where selects.
  const scan = await streamFiles(io, metadata, (t) => accumulator.add(t), undefined, { columnStats: resolved.filter?.columnIds.size ? resolved.filter.columnIds : false });
  const snapshotFacts = accumulator.finish();
  const facts = snapshotFacts.facts;
  const request = { table: { location: metadata.location }, policy: resolved.policy };
  const plan = planFromFacts(metadata, scan, snapshotFacts, request, resolved, options.nowMs ?? Date.now());

  const histogram = SIZE_BUCKETS.map((b) => ({ ...b, files: 0, bytes: 0 }));
  for (const f of facts) {
    const size = Number(f.task.dataFile.fileSizeInBytes);
    const b = histogram.find((h) => size >= h.minBytes && (h.maxBytes === null || size < h.maxBytes))!;
    b.files++;
    b.bytes += size;
  }

  const keyOfPath = new Map(facts.map((f) => [f.task.dataFile.filePath, f.key]));
  const groupsByKey = new Map<string, Plan['groups'][number][]>();
  for (const g of plan.groups) {
    const key = keyOfPath.get(g.inputs[0].file.filePath)!;
    const list = groupsByKey.get(key);
    if (list) list.push(g);
    else groupsByKey.set(key, [g]);
  }
  const partitions: PartitionHealth[] = [];
  for (const { key, specId, partition, partitionPath, files, lastCommitMs } of snapshotFacts.partitions) {
    const deletes = new Map<string, { bytes: number; equality: boolean }>();
    for (const f of files) {
      // All deletes that apply, whichever mode: minor compaction leaves equality deletes, readers do not.
      const t = f.task.deletes;
      for (const d of [...(t.deletionVector ? [t.deletionVector] : []), ...t.positionDeletes, ...t.equalityDeletes]) {
        deletes.set(deleteFileKey(d.file), { bytes: Number(deleteFileReadBytes(d.file)), equality: d.file.content === FileContent.EqualityDeletes });
      }
    }
    const records = sum(files, (f) => Number(f.task.dataFile.recordCount));
    const deleted = sum(files, (f) => f.deletedRecords);
    const groups = groupsByKey.get(key) ?? [];
    const filesIn = sum(groups, (g) => g.estimate.filesIn);
    partitions.push({
      specId,
      partition,
      partitionPath,
      dataFiles: files.length,
      dataBytes: sum(files, (f) => Number(f.task.dataFile.fileSizeInBytes)),
      records,
      smallFiles: files.filter((f) => f.reasons.includes('too-small')).length,
      largeFiles: files.filter((f) => f.reasons.includes('too-large')).length,
      deleteFiles: deletes.size,
      deleteBytes: sum([...deletes.values()], (d) => d.bytes),
      equalityDeleteFiles: [...deletes.values()].filter((d) => d.equality).length,
      deletedRecords: deleted,
      deletedFraction: records === 0 ? 0 : deleted / records,
      lastCommitMs: lastCommitMs ?? null,
      reasons: FILE_REASONS.filter((r) => groups.some((g) => g.reasons.includes(r))),
      fix:
        groups.length === 0
          ? null
          : {
              groups: groups.length,
              bytesToRead: sum(groups, (g) => g.estimate.bytesToRead),
              bytesToWrite: sum(groups, (g) => g.estimate.bytesToWrite),
              filesBefore: files.length,
              filesAfter: files.length - filesIn + sum(groups, (g) => g.estimate.filesOut),
            },
    });
  }
  partitions.sort((a, b) => a.specId - b.specId || (a.partitionPath < b.partitionPath ? -1 : a.partitionPath > b.partitionPath ? 1 : 0));

  const dataBytes = sum(facts, (f) => Number(f.task.dataFile.fileSizeInBytes));
  const records = sum(facts, (f) => Number(f.task.dataFile.recordCount));
  const deletedRecords = sum(facts, (f) => f.deletedRecords);
  const dangling = danglingFigures(unneededDeletes(scan.deleteRefs, snapshotFacts.neededDeletes));
  return {
    location: metadata.location,
    formatVersion: metadata.formatVersion,
    snapshotId: plan.startingSnapshotId,
    policy: resolved.policy,
    dataFiles: facts.length,
    dataBytes,
    records,
    averageFileBytes: facts.length === 0 ? 0 : Math.round(dataBytes / facts.length),
    deleteFiles: scan.deleteFiles.length,
    deleteBytes: sum(scan.deleteFiles, (d) => Number(deleteFileReadBytes(d))),
    deletedRecords,
    deletedFraction: records === 0 ? 0 : deletedRecords / records,
    danglingDeleteFiles: dangling.files,
    danglingDeleteBytes: dangling.bytes,
    histogram,
    partitions,
    partitionsNeedingCompaction: partitions.filter((p) => p.fix !== null).length,
    groups: plan.groups.length,
    summary: plan.summary,
    skipped: plan.skipped,
  };
}

function sum<T>(items: readonly T[], f: (x: T) => number): number {
  let s = 0;
  for (const x of items) s += f(x);
  return s;
}
