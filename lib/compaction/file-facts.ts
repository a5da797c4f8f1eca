/**
 * What the planner and the health report both know about the live data files of a snapshot,
 * from its manifests alone (DESIGN.md invariant 7): per file, its partition, the deletes a
 * rewrite applies, its estimated deleted rows and why it is a compaction candidate; per
 * partition, its files and when it was last written to. Neither reads a data or delete file.
 */
import { deleteFileKey } from '../iceberg/delete-file.js';
import { NO_DELETES, type ApplicableDeletes, type DeleteFileIndex, type DeleteFileRef } from '../iceberg/delete-index.js';
import type { FileFormat } from '../iceberg/manifest.js';
import { partitionToPath } from '../iceberg/locations.js';
import { columnsDataFile, COLUMN_FLAGS, type ManifestColumns } from '../iceberg/manifest-columns.js';
import { partitionKey, type PartitionSpec } from '../iceberg/partition.js';
import type { Row } from '../iceberg/values.js';
import type { FileScanTask, ScanPlan } from '../iceberg/scan-planning.js';
import { specsById, type TableMetadata } from '../iceberg/table-metadata.js';
import type { StructType } from '../iceberg/types.js';
import { partitionToJson, partitionTypeOf } from '../iceberg/data-file-json.js';
import type { PartitionRef } from './messages.js';
import type { PartitionFilter } from './partition-filter.js';
import type { ResolvedPolicy } from './policy.js';
import { CandidateStore, sameRow, type StoredPartition } from './candidate-store.js';

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
  /** The files kept (see FactsAccumulator), by file path; made on first use from `kept`. */
  readonly facts: readonly FileFacts[];
  /**
   * The partitions with a kept file the filter selects (whose rows may match), with those files,
   * in the order their first file was added (health orders its report itself; the plan sorts its groups).
   */
  readonly partitions: readonly KeptPartition[];
  /** The kept files by index: what the planner reads, making FileFacts only for what it writes out. */
  readonly kept: KeptFiles;
  /** Every live data file, kept or not: how many and their bytes. */
  readonly dataFiles: number;
  readonly dataBytes: number;
  /** Keys of the delete files (as FileFacts.deletes lists them) that apply to a file not kept. */
  readonly deletesOfUnkeptFiles: ReadonlySet<string>;
  /** Keys of the delete files the scan applies to at least one live data file (the rest dangle). */
  readonly neededDeletes: ReadonlySet<string>;
}

/** A partition of kept files: their indexes in KeptFiles (in the order added), and (made on first use) their facts. */
export interface KeptPartition extends PartitionFacts {
  readonly indexes: readonly number[];
}

interface PartitionAccumulator extends PartitionRef, StoredPartition {
  /** Shared by the partition's kept files, rather than one string each. */
  readonly key: string;
  readonly index: number;
  lastCommitMs: number | undefined;
}

/** Bits of KeptFiles.reasons, in FILE_REASONS order. */
const REASON_BIT: Readonly<Record<FileReason, number>> = { 'too-small': 1, 'too-large': 2, deletes: 4, 'delete-ratio': 8, 'spec-change': 16 };

/**
 * The kept files of a snapshot by index (CandidateStore) with what is derived from them once all
 * are read: estimated deleted rows, reasons as bits, why a file cannot be rewritten. FileFacts
 * are made only when asked for.
 */
export class KeptFiles {
  private readonly made: (FileFacts | undefined)[] = [];
  private readonly reasonLists = new Map<number, readonly FileReason[]>();
  /** deletes(i), made once per file: a plan asks for them several times (estimate, value, message, summary). */
  private deleteLists: (readonly DeleteFileRef[] | null)[] | undefined;
  private sorted: readonly number[] | undefined;

  constructor(
    readonly store: CandidateStore,
    readonly deletedRecords: Float64Array,
    readonly reasons: Uint8Array,
    private readonly unrewritableOf: ReadonlyMap<number, string>,
    private readonly mode: ResolvedPolicy['mode'],
  ) {}

  path(i: number): string {
    return this.store.paths[i];
  }

  /** Orders files i and j by path, then by index (the order they were added). */
  pathOrder(i: number, j: number): number {
    const paths = this.store.paths;
    return cmp(paths[i], paths[j]) || i - j;
  }

  /** Indexes by file path (then order added), sorted when first asked: a plan needs no total order of a million paths. */
  get byPath(): readonly number[] {
    return (this.sorted ??= Array.from({ length: this.store.length }, (_, i) => i).sort((a, b) => this.pathOrder(a, b)));
  }

  size(i: number): number {
    return this.store.sizes[i];
  }

  records(i: number): number {
    return this.store.records[i];
  }

  sequenceNumber(i: number): bigint {
    return this.store.sequenceNumbers[i];
  }

  has(i: number, reason: FileReason): boolean {
    return (this.reasons[i] & REASON_BIT[reason]) !== 0;
  }

  unrewritable(i: number): string | undefined {
    return this.unrewritableOf.get(i);
  }

  /** The files that cannot be rewritten, with why (few: no need to ask each file). */
  unrewritableFiles(): ReadonlyMap<number, string> {
    return this.unrewritableOf;
  }

  /** The scan's equality deletes of file i. */
  equalityDeletes(i: number): readonly DeleteFileRef[] {
    return this.store.deletesOf(i)?.equalityDeletes ?? NO_DELETE_REFS;
  }

  /** The deletes a rewrite of file i applies (FileFacts.deletes). */
  deletes(i: number): readonly DeleteFileRef[] {
    const d = this.store.deletesOf(i);
    if (d === undefined) return NO_DELETE_REFS;
    if (!this.deleteLists) {
      // Packed (filled one by one): an array made with a million holes would be a dictionary.
      const lists: null[] = [];
      for (let k = 0; k < this.store.length; k++) lists.push(null);
      this.deleteLists = lists;
    }
    return (this.deleteLists[i] ??= rewriteDeletes(d, this.mode));
  }

  reasonList(i: number): readonly FileReason[] {
    return this.reasonsOfBits(this.reasons[i]);
  }

  /** The reasons any of `files` has, in FILE_REASONS order. */
  reasonsOf(files: readonly number[]): readonly FileReason[] {
    let bits = 0;
    for (const i of files) bits |= this.reasons[i];
    return this.reasonsOfBits(bits);
  }

  private reasonsOfBits(bits: number): readonly FileReason[] {
    let list = this.reasonLists.get(bits);
    if (!list) this.reasonLists.set(bits, (list = FILE_REASONS.filter((r) => bits & REASON_BIT[r])));
    return list;
  }

  facts(i: number): FileFacts {
    let f = this.made[i];
    if (f) return f;
    const task = this.store.task(i, NO_DELETES);
    const p = this.store.partition(i) as PartitionAccumulator;
    f = {
      task,
      key: p.key,
      specId: p.specId,
      partition: p.partition,
      partitionPath: p.partitionPath,
      deletes: this.deletes(i),
      deletedRecords: this.deletedRecords[i],
      equalityDeletes: task.deletes.equalityDeletes.length,
      reasons: this.reasonList(i),
      // Always present (undefined when rewritable): one object shape for every file, no spread.
      unrewritable: this.unrewritable(i),
    };
    this.made[i] = f;
    return f;
  }
}

/** The deletes a rewrite applies: the DV or position deletes, and equality deletes in major mode. */
function rewriteDeletes(d: ApplicableDeletes | undefined, mode: ResolvedPolicy['mode']): readonly DeleteFileRef[] {
  if (!d || (!d.deletionVector && d.positionDeletes.length === 0 && d.equalityDeletes.length === 0)) return NO_DELETE_REFS;
  const out: DeleteFileRef[] = d.deletionVector ? [d.deletionVector] : [];
  if (d.positionDeletes.length > 0) out.push(...[...d.positionDeletes].sort(bySeqThenKey));
  if (mode !== 'minor' && d.equalityDeletes.length > 0) out.push(...[...d.equalityDeletes].sort(bySeqThenKey));
  // Kept for every candidate with deletes: no spare capacity.
  return out.slice();
}

/** The number of deletes rewriteDeletes lists, without listing them. */
function rewriteDeleteCount(d: ApplicableDeletes | undefined, mode: ResolvedPolicy['mode']): number {
  if (!d) return 0;
  return (d.deletionVector ? 1 : 0) + d.positionDeletes.length + (mode !== 'minor' ? d.equalityDeletes.length : 0);
}

/**
 * Takes a snapshot's live data files one at a time (streamFiles) and keeps, with keep
 * 'candidates', only those `filter` selects (whose rows may match) that may be rewritten: too
 * small or too large, carrying deletes, of another spec or format. A file of the right size, without
 * deletes, leaves only counters behind, so memory grows with partitions and candidates, not with
 * the table. keep 'all' keeps every file (health reports them all). Per partition it keeps the
 * newest commit time of any of its files, kept or not. Kept files go into a CandidateStore.
 */
export class FactsAccumulator {
  private readonly partitions = new Map<string, PartitionAccumulator>();
  private readonly partitionList: PartitionAccumulator[] = [];
  private store: CandidateStore;
  private readonly types = new Map<number, StructType>();
  private readonly specs: ReturnType<typeof specsById>;
  private readonly times: ReadonlyMap<bigint, number>;
  // Records of the data files each position delete file reaches, to apportion its count.
  private readonly reach = new Map<string, number>();
  private readonly unkeptDeletes = new Set<string>();
  private readonly needed = new Set<string>();
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
    this.store = new CandidateStore(this.partitionList, options.keep === 'all');
  }

  add(task: FileScanTask): void {
    const f = task.dataFile;
    const d = task.deletes;
    const hasDeletes = d.deletionVector !== undefined || d.positionDeletes.length > 0 || d.equalityDeletes.length > 0;
    const key = task.partitionKey ?? partitionKey(f.specId, f.partition);
    const partition = this.partitionOf(key, f.specId, f.partition, task.spec);
    const selected = !this.filter || this.filter.mayMatch(f);
    if (this.admit(Number(f.fileSizeInBytes), Number(f.recordCount), f.specId, f.fileFormat, task.snapshotId, d, hasDeletes, partition, selected)) {
      this.store.add(task, partition.index, selected, hasDeletes);
    }
  }

  /**
   * add() for each live data file of a data manifest read into columns (streamFileColumns), its
   * deletes looked up in `deletes`: a kept file goes into the store's columns without a DataFile
   * or task being made. Under a filter, or keeping every file, each file is added as a task.
   */
  addColumns(c: ManifestColumns, spec: PartitionSpec, deletes: DeleteFileIndex): void {
    const asTasks = this.filter !== undefined || this.options.keep === 'all';
    const first = this.store.length;
    const parts = c.partitions.map((p) => {
      const partition = this.partitionOf(p.key, c.specId, p.row, spec);
      // A tuple that makes the same key but is not the same values: its files are kept whole.
      return { key: p.key, row: p.row, partition, same: !asTasks && sameRow(p.row, partition.row) };
    });
    let w = 0;
    for (let i = 0; i < c.count; i++) {
      const { key, row, partition, same } = parts[c.partitionIndexes[i]];
      if (w < c.wholeAt.length && c.wholeAt[w] === i) {
        const e = c.whole[w++];
        const seq = e.sequenceNumber ?? 0n;
        const f = e.dataFile;
        this.add({ dataFile: f, spec, dataSequenceNumber: seq, snapshotId: e.snapshotId, deletes: deletes.forPath(f.filePath, seq, key), partitionKey: key });
        continue;
      }
      const seq = c.sequenceNumbers[i];
      const d = deletes.forPath(c.paths[i], seq, key, !(c.flags[i] & COLUMN_FLAGS.NO_PATH_DELETES));
      const snapshotId = c.flags[i] & COLUMN_FLAGS.NO_SNAPSHOT ? null : c.snapshotIds[i];
      if (!same) {
        this.add({ dataFile: columnsDataFile(c, i, row), spec, dataSequenceNumber: seq, snapshotId, deletes: d, partitionKey: key });
        continue;
      }
      const hasDeletes = d !== NO_DELETES && (d.deletionVector !== undefined || d.positionDeletes.length > 0 || d.equalityDeletes.length > 0);
      if (this.admit(c.sizes[i], c.records[i], c.specId, c.formatNames[c.formats[i]], snapshotId, d, hasDeletes, partition, true)) {
        this.store.addColumns(c, i, partition.index, hasDeletes ? d : undefined);
      }
    }
    // Paths from a decode worker are slices of one string per manifest: when most of its files
    // leave, the kept ones get their own copy, so memory follows the candidates, not the table.
    if ((this.store.length - first) * 2 < c.count) this.store.ownPaths(first);
  }

  /**
   * Counts a live data file, notes its deletes and its partition's last commit, and says whether
   * it is kept: with keep 'candidates', when `selected` (whose rows may match) and it may be
   * rewritten, or when it cannot be rewritten at all.
   */
  private admit(
    size: number,
    records: number,
    specId: number,
    format: FileFormat,
    snapshotId: bigint | null,
    d: ApplicableDeletes,
    hasDeletes: boolean,
    partition: PartitionAccumulator,
    selected: boolean,
  ): boolean {
    this.dataFiles++;
    this.dataBytes += size;
    if (hasDeletes) {
      if (d.deletionVector) this.needed.add(deleteFileKey(d.deletionVector.file));
      for (const p of d.positionDeletes) {
        const k = deleteFileKey(p.file);
        this.needed.add(k);
        this.reach.set(k, (this.reach.get(k) ?? 0) + records);
      }
      for (const e of d.equalityDeletes) this.needed.add(deleteFileKey(e.file));
    }
    // A file whose snapshot has expired was added before every snapshot still held.
    const t = snapshotId === null ? undefined : this.times.get(snapshotId);
    if (t !== undefined && t > (partition.lastCommitMs ?? -Infinity)) partition.lastCommitMs = t;
    const p = this.policy;
    const keep =
      this.options.keep === 'all' ||
      (selected
        ? hasDeletes ||
          size < p.minFileSizeBytes ||
          size > p.maxFileSizeBytes ||
          p.deleteFileThreshold <= 0 ||
          specId !== this.metadata.defaultSpecId ||
          format !== REWRITABLE_FORMAT
        : // The plan reports every file it cannot rewrite, selected or not.
          unrewritableWith(format, hasDeletes ? d : undefined, p.mode) !== undefined);
    if (!keep && hasDeletes) {
      for (const r of rewriteDeletes(d, p.mode)) this.unkeptDeletes.add(deleteFileKey(r.file));
    }
    return keep;
  }

  finish(): SnapshotFacts {
    const store = this.store;
    const n = store.length;
    const deletedRecords = new Float64Array(n);
    const reasons = new Uint8Array(n);
    const why = new Map<number, string>();
    const policy = this.policy;
    const defaultSpec = this.metadata.defaultSpecId;
    for (let i = 0; i < n; i++) {
      const d = store.deletesOf(i);
      const records = store.records[i];
      let deleted = 0;
      if (d) {
        if (d.deletionVector) deleted = Number(d.deletionVector.file.recordCount);
        for (const x of d.positionDeletes) {
          const total = this.reach.get(deleteFileKey(x.file)) ?? 0;
          if (total > 0) deleted += (Number(x.file.recordCount) * records) / total;
        }
        deleted = Math.min(deleted, records);
      }
      deletedRecords[i] = deleted;
      const size = store.sizes[i];
      let bits = 0;
      if (size < policy.minFileSizeBytes) bits |= REASON_BIT['too-small'];
      if (size > policy.maxFileSizeBytes) bits |= REASON_BIT['too-large'];
      // As in Java, a threshold of 0 makes every file a candidate.
      if (rewriteDeleteCount(d, policy.mode) >= policy.deleteFileThreshold) bits |= REASON_BIT.deletes;
      if (records > 0 && deleted > 0 && deleted / records >= policy.deleteRatioThreshold) bits |= REASON_BIT['delete-ratio'];
      if (store.partition(i).specId !== defaultSpec) bits |= REASON_BIT['spec-change'];
      reasons[i] = bits;
      const format = store.format(i);
      if (format !== REWRITABLE_FORMAT || d) {
        const w = unrewritableWith(format, d, policy.mode);
        if (w !== undefined) why.set(i, w);
      }
    }
    const kept = new KeptFiles(store, deletedRecords, reasons, why, policy.mode);
    const byKey = new Map<PartitionAccumulator, number[]>();
    for (let i = 0; i < n; i++) {
      if (!store.selected(i)) continue;
      const p = store.partition(i) as PartitionAccumulator;
      const list = byKey.get(p);
      if (list) list.push(i);
      else byKey.set(p, [i]);
    }
    const partitions: KeptPartition[] = [];
    for (const [p, indexes] of byKey) {
      let files: FileFacts[] | undefined;
      partitions.push({
        key: p.key,
        specId: p.specId,
        partition: p.partition,
        partitionPath: p.partitionPath,
        lastCommitMs: p.lastCommitMs,
        indexes,
        get files(): FileFacts[] {
          return (files ??= [...indexes].sort((a, b) => kept.pathOrder(a, b)).map((i) => kept.facts(i)));
        },
      });
    }
    // A new store for a next snapshot: this one now belongs to the facts returned.
    this.store = new CandidateStore(this.partitionList, this.options.keep === 'all');
    let facts: FileFacts[] | undefined;
    return {
      get facts(): FileFacts[] {
        return (facts ??= kept.byPath.map((i) => kept.facts(i)));
      },
      partitions,
      kept,
      dataFiles: this.dataFiles,
      dataBytes: this.dataBytes,
      deletesOfUnkeptFiles: this.unkeptDeletes,
      neededDeletes: this.needed,
    };
  }

  private partitionOf(key: string, specId: number, row: Row, partitionSpec: PartitionSpec): PartitionAccumulator {
    let p = this.partitions.get(key);
    if (p === undefined) {
      let type = this.types.get(specId);
      if (!type) this.types.set(specId, (type = partitionTypeOf(this.metadata, specId)));
      const partition = partitionToJson(row, type);
      const spec = this.specs.get(specId)!;
      p = {
        key,
        index: this.partitionList.length,
        specId,
        spec: partitionSpec,
        row,
        partition,
        partitionPath: partitionToPath(spec, row, type),
        lastCommitMs: undefined,
      };
      this.partitions.set(key, p);
      this.partitionList.push(p);
    }
    return p;
  }
}

/** unrewritable of a file with deletes `d` as a rewrite in `mode` applies them, listed only when one cannot be read. */
function unrewritableWith(format: FileFormat, d: ApplicableDeletes | undefined, mode: ResolvedPolicy['mode']): string | undefined {
  if (format !== REWRITABLE_FORMAT) return unrewritable(format, NO_DELETE_REFS);
  if (!d) return undefined;
  const any = (d.deletionVector !== undefined && unreadable(d.deletionVector)) || d.positionDeletes.some(unreadable) || (mode !== 'minor' && d.equalityDeletes.some(unreadable));
  return any ? unrewritable(format, rewriteDeletes(d, mode)) : undefined;
}

/** A delete file this rewriter cannot read (only Parquet and Puffin). */
function unreadable(r: DeleteFileRef): boolean {
  return r.file.fileFormat !== REWRITABLE_FORMAT && r.file.fileFormat !== 'PUFFIN';
}

/** Why a data file cannot be rewritten with these deletes, when it cannot. */
function unrewritable(format: FileFormat, deletes: readonly DeleteFileRef[]): string | undefined {
  if (format !== REWRITABLE_FORMAT) return `file format ${format} cannot be rewritten (only ${REWRITABLE_FORMAT})`;
  const bad = deletes.find(unreadable);
  return bad
    ? `its delete file ${bad.file.filePath} is ${bad.file.fileFormat}, which cannot be read (only ${REWRITABLE_FORMAT} and PUFFIN)`
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
