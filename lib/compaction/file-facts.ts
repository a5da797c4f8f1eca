/**
 * What the planner and the health report both know about the live data files of a snapshot,
 * from its manifests alone (DESIGN.md invariant 7): per file, its partition, the deletes a
 * rewrite applies, its estimated deleted rows and why it is a compaction candidate; per
 * partition, its files and when it was last written to. Neither reads a data or delete file.
 */
import { deleteFileKey } from '../iceberg/delete-file.js';
import type { DeleteFileRef } from '../iceberg/delete-index.js';
import type { DataFile } from '../iceberg/manifest.js';
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

const NO_DELETE_REFS: readonly DeleteFileRef[] = [];

const bySeqThenKey = (a: DeleteFileRef, b: DeleteFileRef): number =>
  a.dataSequenceNumber < b.dataSequenceNumber ? -1 : a.dataSequenceNumber > b.dataSequenceNumber ? 1 : cmp(deleteFileKey(a.file), deleteFileKey(b.file));

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Classifies every live data file of a scan against the policy, by file path. Reads nothing. */
export function fileFacts(metadata: TableMetadata, scan: ScanPlan, policy: ResolvedPolicy): FileFacts[] {
  const facts = new FactsAccumulator(metadata, policy, undefined, { keep: 'all' });
  for (const t of scan.tasks) facts.add(t);
  return [...facts.finish().facts];
}

/** What an accumulator keeps of a snapshot's live data files. */
export interface SnapshotFacts {
  /** The files kept (see FactsAccumulator), by file path. */
  readonly facts: readonly FileFacts[];
  /**
   * The partitions with a kept file the filter selects (whose rows may match), with those files,
   * in the order of their first by path.
   */
  readonly partitions: readonly PartitionFacts[];
  /** Every live data file, kept or not: how many and their bytes. */
  readonly dataFiles: number;
  readonly dataBytes: number;
  /** Keys of the delete files (as FileFacts.deletes lists them) that apply to a file not kept. */
  readonly deletesOfUnkeptFiles: ReadonlySet<string>;
  /** Keys of the delete files the scan applies to at least one live data file (the rest dangle). */
  readonly neededDeletes: ReadonlySet<string>;
}

interface PartitionAccumulator extends PartitionRef {
  /** Shared by the partition's kept files, rather than one string each. */
  readonly key: string;
  lastCommitMs: number | undefined;
}

/**
 * Takes a snapshot's live data files one at a time (streamFiles) and keeps, with keep
 * 'candidates', only those `filter` selects (whose rows may match) that may be rewritten: too
 * small or too large, carrying deletes, of another spec or format. A file of the right size, without
 * deletes, leaves only counters behind, so memory grows with partitions and candidates, not with
 * the table. keep 'all' keeps every file (health reports them all). Per partition it keeps the
 * newest commit time of any of its files, kept or not.
 */
export class FactsAccumulator {
  // The kept files, in three arrays rather than a record each (a million candidates is a lot of records).
  private keptTasks: FileScanTask[] = [];
  private keptKeys: string[] = [];
  private keptSelected: boolean[] = [];
  private readonly partitions = new Map<string, PartitionAccumulator>();
  private readonly types = new Map<number, StructType>();
  private readonly specs: ReturnType<typeof specsById>;
  private readonly times: ReadonlyMap<bigint, number>;
  // Records of the data files each position delete file reaches, to apportion its count.
  private readonly reach = new Map<string, number>();
  private readonly unkeptDeletes = new Set<string>();
  private readonly needed = new Set<string>();
  private readonly reasonLists = new Map<string, readonly FileReason[]>();
  private dataFiles = 0;
  private dataBytes = 0;

  constructor(
    private readonly metadata: TableMetadata,
    private readonly policy: ResolvedPolicy,
    private readonly filter: PartitionFilter | undefined,
    private readonly options: { readonly keep: 'all' | 'candidates' },
  ) {
    this.specs = specsById(metadata);
    this.times = new Map(metadata.snapshots.map((s) => [s.snapshotId, s.timestampMs]));
  }

  add(task: FileScanTask): void {
    const f = task.dataFile;
    const size = Number(f.fileSizeInBytes);
    this.dataFiles++;
    this.dataBytes += size;
    const d = task.deletes;
    const hasDeletes = d.deletionVector !== undefined || d.positionDeletes.length > 0 || d.equalityDeletes.length > 0;
    if (hasDeletes) {
      if (d.deletionVector) this.needed.add(deleteFileKey(d.deletionVector.file));
      for (const p of d.positionDeletes) {
        const k = deleteFileKey(p.file);
        this.needed.add(k);
        this.reach.set(k, (this.reach.get(k) ?? 0) + Number(f.recordCount));
      }
      for (const e of d.equalityDeletes) this.needed.add(deleteFileKey(e.file));
    }
    const key = task.partitionKey ?? partitionKey(f.specId, f.partition);
    const partition = this.partitionOf(key, task);
    // A file whose snapshot has expired was added before every snapshot still held.
    const t = task.snapshotId === null ? undefined : this.times.get(task.snapshotId);
    if (t !== undefined && t > (partition.lastCommitMs ?? -Infinity)) partition.lastCommitMs = t;
    const p = this.policy;
    const selected = !this.filter || this.filter.mayMatch(f);
    const keep =
      this.options.keep === 'all' ||
      (selected
        ? hasDeletes ||
          size < p.minFileSizeBytes ||
          size > p.maxFileSizeBytes ||
          p.deleteFileThreshold <= 0 ||
          f.specId !== this.metadata.defaultSpecId ||
          f.fileFormat !== REWRITABLE_FORMAT
        : // The plan reports every file it cannot rewrite, selected or not.
          unrewritable(f, hasDeletes ? this.deletesOf(task) : []) !== undefined);
    if (keep) {
      this.keptTasks.push(task);
      this.keptKeys.push(partition.key);
      this.keptSelected.push(selected);
    }
    else if (hasDeletes) {
      for (const r of this.deletesOf(task)) this.unkeptDeletes.add(deleteFileKey(r.file));
    }
  }

  finish(): SnapshotFacts {
    const tasks = this.keptTasks;
    const order = Array.from(tasks, (_, i) => i).sort((a, b) => cmp(tasks[a].dataFile.filePath, tasks[b].dataFile.filePath) || a - b);
    const facts = order.map((i) => this.factsOf(tasks[i], this.keptKeys[i]));
    const byKey = new Map<string, FileFacts[]>();
    for (let i = 0; i < facts.length; i++) {
      if (!this.keptSelected[order[i]]) continue;
      const f = facts[i];
      const list = byKey.get(f.key);
      if (list) list.push(f);
      else byKey.set(f.key, [f]);
    }
    const partitions: PartitionFacts[] = [];
    for (const [key, files] of byKey) {
      const p = this.partitions.get(key)!;
      partitions.push({ key, specId: p.specId, partition: p.partition, partitionPath: p.partitionPath, files, lastCommitMs: p.lastCommitMs });
    }
    this.keptTasks = [];
    this.keptKeys = [];
    this.keptSelected = [];
    return {
      facts,
      partitions,
      dataFiles: this.dataFiles,
      dataBytes: this.dataBytes,
      deletesOfUnkeptFiles: this.unkeptDeletes,
      neededDeletes: this.needed,
    };
  }

  private partitionOf(key: string, task: FileScanTask): PartitionAccumulator {
    let p = this.partitions.get(key);
    if (p === undefined) {
      const f = task.dataFile;
      let type = this.types.get(f.specId);
      if (!type) this.types.set(f.specId, (type = partitionTypeOf(this.metadata, f.specId)));
      const partition = partitionToJson(f.partition, type);
      p = {
        key,
        specId: f.specId,
        partition,
        partitionPath: partitionToPath(this.specs.get(f.specId)!, f.partition, type),
        lastCommitMs: undefined,
      };
      this.partitions.set(key, p);
    }
    return p;
  }

  /** The deletes a rewrite applies: the DV or position deletes, and equality deletes in major mode. */
  private deletesOf(task: FileScanTask): readonly DeleteFileRef[] {
    const dv = task.deletes.deletionVector;
    if (!dv && task.deletes.positionDeletes.length === 0 && task.deletes.equalityDeletes.length === 0) return NO_DELETE_REFS;
    const out: DeleteFileRef[] = dv ? [dv] : [];
    if (task.deletes.positionDeletes.length > 0) out.push(...[...task.deletes.positionDeletes].sort(bySeqThenKey));
    if (this.policy.mode !== 'minor' && task.deletes.equalityDeletes.length > 0) out.push(...[...task.deletes.equalityDeletes].sort(bySeqThenKey));
    // Kept for every candidate with deletes: no spare capacity.
    return out.slice();
  }

  private factsOf(task: FileScanTask, key: string): FileFacts {
    const policy = this.policy;
    const f = task.dataFile;
    const dv = task.deletes.deletionVector;
    const deletes = this.deletesOf(task);
    const records = Number(f.recordCount);
    let deleted = dv ? Number(dv.file.recordCount) : 0;
    for (const d of task.deletes.positionDeletes) {
      const total = this.reach.get(deleteFileKey(d.file)) ?? 0;
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
    if (f.specId !== this.metadata.defaultSpecId) reasons.push('spec-change');
    // Most files share one of a few reason lists: keep one array for each.
    const reasonKey = reasons.join();
    let shared = this.reasonLists.get(reasonKey);
    if (!shared) this.reasonLists.set(reasonKey, (shared = reasons));
    const why = unrewritable(f, deletes);
    const p = this.partitions.get(key)!;
    return {
      task,
      key,
      specId: f.specId,
      partition: p.partition,
      partitionPath: p.partitionPath,
      deletes,
      deletedRecords: deleted,
      equalityDeletes: task.deletes.equalityDeletes.length,
      reasons: shared,
      // Always present (undefined when rewritable): one object shape for every file, no spread.
      unrewritable: why,
    };
  }
}

/** Why a data file cannot be rewritten with these deletes, when it cannot. */
function unrewritable(f: DataFile, deletes: readonly DeleteFileRef[]): string | undefined {
  if (f.fileFormat !== REWRITABLE_FORMAT) return `file format ${f.fileFormat} cannot be rewritten (only ${REWRITABLE_FORMAT})`;
  const unreadable = deletes.find((d) => d.file.fileFormat !== REWRITABLE_FORMAT && d.file.fileFormat !== 'PUFFIN');
  return unreadable
    ? `its delete file ${unreadable.file.filePath} is ${unreadable.file.fileFormat}, which cannot be read (only ${REWRITABLE_FORMAT} and PUFFIN)`
    : undefined;
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
