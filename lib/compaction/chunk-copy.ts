/**
 * The column-chunk-copy path of a bin-pack rewrite (issue 11): inputs that need no decoding
 * have their row groups copied as they are into target-sized outputs (lib/parquet/chunk-copy.ts)
 * — no decode, no encode — or, when a row group is under the copy floor but all reach the merge
 * floor (`packice.rewrite.merge-min-row-group-bytes`), joined page by page into larger row groups
 * (lib/parquet/row-group-merge.ts); the rest of the group goes through the rewriter's decode path.
 *
 * An input is copied when
 * - no delete file applies to it (position, deletion vector or equality, in either mode);
 * - it is Parquet, in the table's default spec (so its partition is the output's);
 * - its Parquet schema is exactly what the output's would be (copyProblem): a file written
 *   before a schema change goes the decode path, which resolves it to the current schema;
 * - every row group holds at least `packice.rewrite.copy-min-row-group-bytes` compressed bytes
 *   (the floor: outputs keep their inputs' row groups, and readers pay per row group); below it,
 *   the row groups are merged instead, when no input of the partition is left to the decoder;
 * - v3: its rows carry `_row_id` and `_last_updated_sequence_number` already (the columns
 *   are in the file and their statistics count no null), since copied rows cannot inherit
 *   them from a file that is going away.
 *
 * An input with deletes (position deletes, a deletion vector, equality deletes in major mode) is
 * merged with its deleted rows dropped from the pages when its columns allow it (row-group-merge.ts
 * deleteProblem; table property `packice.rewrite.merge-deletes`), at any row-group size. The rows
 * equality deletes match are dropped as positions: where every key is one long or int column of
 * the file, found from the row group's own key pages as it is merged (pageKeyProbes), else before,
 * as the decoder finds them, their key columns alone read (lib/table/scan.ts deletedPositions).
 *
 * A small input that cannot be copied anyway (deletes apply to it, or it is under the copy floor
 * whole) is not footer-read by the plan: it is read whole as it is merged (merge-stream.ts), one
 * GET where the footer read and the merge's row-group read were two, and the partition rules
 * (partitionRules) are settled again once every footer is known; a partition they then decode is
 * decoded whole, its merged outputs deleted.
 *
 * What the group's proof gets for copied rows: per row group, its row count and a digest of
 * the bytes read from the input (RowSetChecksum.addDigest), and after writing, the same from
 * the outputs re-read from storage. The map records one run per row group.
 */
import { randomUUID } from 'node:crypto';
import { IllegalStateError } from '../errors.js';
import type { FileIO, InputFile } from '../io/file-io.js';
import { limiter, mapLimit } from '../io/map-limit.js';
import { partitionFolder, tableLocationProvider } from '../iceberg/locations.js';
import { FileContent, type DataFile } from '../iceberg/manifest.js';
import { metricsConfigFromProperties, type MetricsConfig } from '../iceberg/metrics-config.js';
import { partitionKey } from '../iceberg/partition.js';
import type { FileScanTask } from '../iceberg/scan-planning.js';
import { MetadataColumns } from '../iceberg/schema.js';
import { UNSORTED_ORDER } from '../iceberg/sort-order.js';
import { currentSchema, defaultSortOrder, intProperty, specById, type TableMetadata } from '../iceberg/table-metadata.js';
import type { StructType } from '../iceberg/types.js';
import { ReadAheadFileIO, type ReadAheadRange } from '../io/read-ahead.js';
import { footerReadRange, readFooter, rowGroupStart, type FooterRead } from '../parquet/footer.js';
import {
  copyProblem, copySource, copyTemplate, DEFAULT_COPY_READ_BYTES, PROOF_READ_BYTES, rowGroupDigests, writeCopiedFile,
  type ChunkFault, type CopiedFile, type CopyPart, type CopyReads, type CopySource, type CopyTemplate, type HeldBytes,
} from '../parquet/chunk-copy.js';
import { metricsFromStatistics } from '../parquet/statistics-metrics.js';
import { DEFAULT_ZSTD_LEVEL, zstdCodec, type ZstdCodec } from '../parquet/compression-codec.js';
import {
  deleteProblem, keyColumnProblem, mergeProblem, writeMergedFile, writeMergedParts, mergedDigests,
  type MergedFile, type MergeOptions, type MergePart, type PageKeyProbe, type RowGroupBuilder,
} from '../parquet/row-group-merge.js';
import { DeleteFileCache, DeleteFilter, singleFieldKeys } from '../table/delete-filter.js';
import { deletedPositions } from '../table/scan.js';
import { toDataFile } from '../table/data-writer.js';
import type { RowSetChecksum } from './checksum.js';
import { safeName, type CompactionMapBuilder } from './compaction-map.js';
import { MergeLayout, type MergeInput } from './merge-layout.js';
import { MergePool } from './merge-pool.js';
import { streamMerges, type Opened } from './merge-stream.js';
import type { DecodeReason, FileGroup, Plan } from './messages.js';

/**
 * Table property: the smallest row group (compressed bytes) an input may have to be merged at the
 * page level (lib/parquet/row-group-merge.ts) when it is under the copy floor.
 */
export const MERGE_MIN_ROW_GROUP_BYTES_PROPERTY = 'packice.rewrite.merge-min-row-group-bytes';
/**
 * Default merge floor: none. Coalesced pages compress as a writer's do, so merged outputs were no
 * larger than decoded ones from 30-row files up (BENCHMARKS.md "Row-group merge").
 */
export const DEFAULT_MERGE_MIN_ROW_GROUP_BYTES = 0;
/**
 * Most inputs under the copy floor of one partition a group merges. Their footers are held until
 * the merge writes (~30-60 KB each, measured: 1,960 inputs 549 MiB peak RSS, 5,734 inputs 921 MiB,
 * 20,000 inputs of 34 KB 1,617 MiB): past this, the partition is decoded as before, within the
 * 1.5 GiB a group may use. BENCHMARKS.md "Row-group merge".
 */
export const MAX_MERGE_INPUTS = 8192;
/**
 * Table property: whether inputs with deletes (position, deletion vector or equality) are merged
 * with their deleted rows dropped from the pages (lib/parquet/row-group-merge.ts) rather than
 * decoded; default true.
 */
export const MERGE_DELETES_PROPERTY = 'packice.rewrite.merge-deletes';
/** Iceberg's write.parquet.row-group-size-bytes default: merged row groups grow to this many uncompressed bytes. */
const DEFAULT_ROW_GROUP_BYTES = 128 * 1024 * 1024;
/** Iceberg's write.parquet.page-size-bytes and write.parquet.page-row-limit defaults: what coalesced pages grow to. */
const DEFAULT_PAGE_BYTES = 1024 * 1024;
const DEFAULT_PAGE_ROWS = 20_000;
/** Iceberg's write.parquet.dict-size-bytes default: the largest merged dictionary. */
const DEFAULT_DICTIONARY_BYTES = 2 * 1024 * 1024;

/** Table property: the smallest row group (compressed bytes) an input may have to be copied. */
export const COPY_MIN_ROW_GROUP_BYTES_PROPERTY = 'packice.rewrite.copy-min-row-group-bytes';
/** Default floor; see BENCHMARKS.md "Column-chunk copy" for the measurement behind it. */
export const DEFAULT_COPY_MIN_ROW_GROUP_BYTES = 1024 * 1024;
/**
 * Table property: bytes a rewrite reads ahead at once, one budget for its phases in turn: the row
 * groups the copy reads ahead of its upload and the proof re-reads (at most 16 reads; a larger row
 * group is read alone), then the decoded inputs fetched ahead of the decoder (at most 16 files).
 * Unset, the copy's proof re-reads PROOF_READ_BYTES at once, once the upload's parts are gone.
 */
export const READ_AHEAD_BYTES_PROPERTY = 'packice.rewrite.read-ahead-bytes';
/**
 * A decoded input up to this size is fetched whole ahead of the decoder when it fits the read-ahead
 * budget: one GET, all of it there before its row groups are read, where its tail alone would leave
 * the row-group read (most of the file) to be waited for whole. Larger: its tail (the footer read).
 */
export const READ_AHEAD_WHOLE_INPUT_BYTES = 8 * 1024 * 1024;
/**
 * Footers read at once. A small input's footer read is all of it (what the merge then takes), so
 * these are its reads ahead: 32 × 64 KiB in flight overlap S3's first-byte latency (the SDK's
 * client keeps 50 sockets).
 */
const FOOTER_READS = 32;
/**
 * Inputs whose equality deletes are probed at once (lib/table/scan.ts deletedPositions): each holds
 * one row group's key columns decoded (a 3M-row row group's long key: 24 MB in Arrow, as much again
 * in wasm), where a footer read holds 64 KiB.
 */
const EQUALITY_PROBES = 4;

export interface ChunkCopyOptions {
  /** Spec the group's outputs are written in (rewriter.ts outputSpecId). */
  readonly specId: number;
  /** The schema outputs are written with (with the row-lineage columns on v3). */
  readonly writeSchema: StructType;
  /** Damage the first chunk written (tests of the proof). */
  readonly fault?: ChunkFault;
  /** How row groups are read (over the table property READ_AHEAD_BYTES_PROPERTY's bytes, 16 reads). */
  readonly reads?: CopyReads;
  /** Most small inputs of one partition merged (default MAX_MERGE_INPUTS; tests). */
  readonly maxMergeInputs?: number;
  /** Parsed delete files shared with the decode path: a partition's delete file is read once a group. */
  readonly deleteCache?: DeleteFileCache;
  /** Worker threads building merged row groups for so many bytes of inputs to merge (merge-pool.ts mergeWorkerCount; default none). */
  readonly mergeWorkers?: (mergeBytes: number) => number;
}

/** Deleted file positions split by row group, relative to each; positions past the file's rows delete nothing. */
function byRowGroup(source: CopySource, positions: Float64Array): (Int32Array | undefined)[] {
  let at = 0;
  return source.rowGroups.map((rg) => {
    while (at < positions.length && positions[at] < rg.firstRow) at++;
    const start = at;
    while (at < positions.length && positions[at] < rg.firstRow + rg.numRows) at++;
    if (at === start) return undefined;
    const out = new Int32Array(at - start);
    for (let i = start; i < at; i++) out[i - start] = positions[i] - rg.firstRow;
    return out;
  });
}

/**
 * The equality deletes of a file to merge as probes of its own pages (row-group-merge.ts
 * PageKeyProbe), where each set of them keys on one long or int field the file holds as a plain
 * column (keyColumnProblem); else undefined, and its key columns are read to find the rows
 * (deletedPositions). Either way a key is matched as the decoder matches it (singleFieldKeys).
 */
function pageKeyProbes(filter: DeleteFilter, task: FileScanTask, source: CopySource, schema: StructType): PageKeyProbe[] | undefined {
  if (filter.equalitySets.length === 0 || !pageProbed(task, source, schema)) return undefined;
  // Each set holds the delete files of one list of field ids: one id here (pageProbed).
  return filter.equalitySets.map((set) => ({ fieldId: set.fieldIds[0], keys: singleFieldKeys(set.keys) }));
}

/** Whether a task's equality deletes are probed from its own pages (pageKeyProbes), told from their files' field ids alone. */
function pageProbed(task: FileScanTask, source: CopySource, schema: StructType): boolean {
  return task.deletes.equalityDeletes.every((d) => d.file.equalityIds?.length === 1 && keyColumnProblem(source, schema, d.file.equalityIds[0]) === undefined);
}

/** A footer read handed to a later reader of the same file, which then fetches none of those bytes again. */
function footerSeed(task: FileScanTask, read: FooterRead): ReadAheadRange {
  return { path: task.dataFile.filePath, start: read.tailStart, end: read.fileLength, bytes: read.tail };
}

/** Whether a delete applies to a task's file: position deletes, a deletion vector or (major mode) equality deletes. */
function hasDeletes(task: FileScanTask): boolean {
  return task.deletes.deletionVector !== undefined || task.deletes.positionDeletes.length > 0 || task.deletes.equalityDeletes.length > 0;
}

/** Why a task's file is neither copied nor merged (undefined: it may be, once its footer agrees). */
function taskProblem(metadata: TableMetadata, task: FileScanTask, specId: number, floor: number, mergeDeletes: boolean): string | undefined {
  if (!mergeDeletes && hasDeletes(task)) return 'deletes apply to it';
  const f = task.dataFile;
  if (f.fileFormat.toUpperCase() !== 'PARQUET') return `it is ${f.fileFormat}`;
  if (specId !== metadata.defaultSpecId || f.specId !== specId) return 'it is not in the default spec';
  if (Number(f.fileSizeInBytes) < floor) return 'it is smaller than the row-group floor';
  return undefined;
}

/** Why a footer's row groups can be neither copied nor merged (undefined: `floor` holds for each). */
function footerProblem(source: CopySource, template: CopyTemplate, task: FileScanTask, floor: number, lineage: boolean): string | undefined {
  const problem = copyProblem(source, template);
  if (problem) return problem;
  if (source.footer.numRows !== Number(task.dataFile.recordCount)) return 'its footer and its manifest entry disagree on the row count';
  const small = source.rowGroups.find((rg) => rg.bytes < floor);
  if (small) return `row group ${small.index} has ${small.bytes} bytes, under the floor of ${floor}`;
  if (lineage) {
    const ids = new Set<number>([MetadataColumns.ROW_ID, MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER]);
    const leaves = source.footer.schema.filter((e) => e.type !== undefined);
    for (const rg of source.footer.rowGroups) {
      for (const [k, c] of rg.columns.entries()) {
        if (ids.has(leaves[k]?.fieldId ?? -1) && c.statistics?.nullCount !== 0) return 'its rows do not all carry their row lineage';
      }
    }
  }
  return undefined;
}


/** The partition a task's rows are in, as the rules below compare them. */
function partitionOf(task: FileScanTask): string {
  return partitionKey(task.dataFile.specId, task.dataFile.partition);
}

/**
 * Whether a candidate is read whole as it is merged (merge-stream.ts) rather than footer-read by the
 * plan and read again when merged: one GET where there were two. It cannot be copied anyway (deletes
 * apply to it, or the whole file is under the copy floor), holds rows, and fits `wholeBytes`.
 */
function streamable(task: FileScanTask, floor: number, wholeBytes: number): boolean {
  const size = Number(task.dataFile.fileSizeInBytes);
  if (size <= 0 || size > wholeBytes || Number(task.dataFile.recordCount) <= 0) return false;
  return hasDeletes(task) || size < floor;
}

/** The footer reads of `tasks`, FOOTER_READS at once. */
function readFooters(io: FileIO, tasks: readonly FileScanTask[]): Promise<FooterRead[]> {
  return mapLimit(tasks, FOOTER_READS, (t) => readFooter(io.newInputFile(t.dataFile.filePath, Number(t.dataFile.fileSizeInBytes))));
}

/** A range-readable view of a file read whole: its footer parsed from the bytes there are. */
function heldFile(path: string, bytes: Uint8Array): InputFile {
  return { path, length: () => Promise.resolve(bytes.length), read: (start, end) => Promise.resolve(bytes.subarray(start, end)) };
}

/** What a candidate's footer says: copied, merged (`source`), or its own reason to be decoded (`problem`, no source kept). */
interface Footed {
  readonly copied: boolean;
  readonly source?: CopySource;
  readonly problem?: string;
}

/** What the footer checks need: the floors, the output's template, whether rows must carry their lineage. */
interface Checks {
  readonly template: CopyTemplate;
  readonly floor: number;
  readonly mergeFloor: number;
  readonly lineage: boolean;
  readonly zstd: ZstdCodec | undefined;
}

/** A candidate by its footer: copied when its row groups all reach the copy floor, else merged unless a problem says why not. */
function footed(task: FileScanTask, source: CopySource, c: Checks): Footed {
  const deletes = hasDeletes(task);
  if (!deletes && footerProblem(source, c.template, task, c.floor, c.lineage) === undefined) return { copied: true, source };
  const problem = footerProblem(source, c.template, task, c.mergeFloor, c.lineage) ?? mergeProblem(source, c.zstd) ?? (deletes ? deleteProblem(source, c.zstd) : undefined);
  return problem === undefined ? { copied: false, source } : { copied: false, problem };
}

/**
 * The partition rules, over every candidate's footer (`footed`) and the inputs still to be read
 * whole (`pending`, taken as merged until they are read): where an input drops deleted rows from
 * its pages, its partition's other merged inputs must allow it; a partition with an input to decode
 * is decoded whole. `why` holds the reasons found before any footer (taskProblem, the cap); each
 * input keeps the first reason found. Returns the merged inputs in group order.
 */
function partitionRules(
  tasks: readonly FileScanTask[],
  before: ReadonlyMap<FileScanTask, string>,
  footers: ReadonlyMap<FileScanTask, Footed>,
  pending: ReadonlySet<FileScanTask>,
  zstd: ZstdCodec | undefined,
): { merged: FileScanTask[]; copied: Set<FileScanTask>; why: Map<FileScanTask, string> } {
  const why = new Map(before);
  const leave = (task: FileScanTask, reason: string): false => {
    if (!why.has(task)) why.set(task, reason);
    return false;
  };
  const copied = new Set<FileScanTask>();
  // `source` undefined: an input still to be read whole.
  let merges: { task: FileScanTask; source: CopySource | undefined }[] = [];
  for (const task of tasks) {
    const f = footers.get(task);
    if (pending.has(task)) merges.push({ task, source: undefined });
    else if (f === undefined) continue;
    else if (f.copied) copied.add(task);
    else if (f.problem !== undefined) leave(task, f.problem);
    else merges.push({ task, source: f.source });
  }
  // Where an input drops deleted rows, every column of its output row group is coalesced: the
  // partition's other merged inputs must allow it too, else they are decoded (and so, below, all).
  // An input not read yet is checked as it is read (ChunkCopy.open).
  const dropping = new Set(merges.filter((m) => hasDeletes(m.task)).map((m) => partitionOf(m.task)));
  merges = merges.filter((m) => {
    const problem = m.source && dropping.has(partitionOf(m.task)) && !hasDeletes(m.task) ? deleteProblem(m.source, zstd) : undefined;
    return problem === undefined || leave(m.task, `an input of its partition drops deleted rows from its pages, which its own cannot have: ${problem}`);
  });
  // A partition with inputs to decode is decoded whole: merged apart, its small files would
  // leave two outputs where one does (the copy's row groups are large enough to stand alone).
  const taken = new Set([...copied, ...merges.map((m) => m.task)]);
  const decoded = new Set(tasks.filter((t) => !taken.has(t)).map(partitionOf));
  merges = merges.filter((m) => !decoded.has(partitionOf(m.task)) || leave(m.task, 'another input of its partition is decoded, and one output takes them all'));
  return { merged: merges.map((m) => m.task), copied, why };
}

/**
 * A group's chunk copy: which inputs it takes (`copied`), the rest left for decoding (`decode`),
 * then `write`, `prove` and on failure `abort`. Small inputs it merges may be read whole only as
 * they are merged (merge-stream.ts): until `write` is done, `decode` and `mergedInputs` are the
 * plan's, with those taken as merged.
 */
export class ChunkCopy {
  private readonly written: CopiedFile[] = [];
  private readonly merged: MergedFile[] = [];
  /** Merge workers (merge-pool.ts), from the first merge to close. */
  private pool: MergePool | undefined;
  private readonly started: string[] = [];
  private readonly uuid = randomUUID();
  /** Inputs merged (the plan's until `write` is done: inputs still to be read whole are counted). */
  private mergedTasks: ReadonlySet<FileScanTask>;
  /** Why each input left to the decoder is. */
  private why: ReadonlyMap<FileScanTask, string>;
  private decodeList: FileScanTask[] = [];
  private reasons: DecodeReason[] = [];
  /** A key-column probe (deletedPositions) holds a row group's key columns decoded: few at once. */
  private readonly probes = limiter(EQUALITY_PROBES);
  /** Inputs the plan footer-read and merges at the page level, in group order. */
  private merges: readonly MergeInput[] = [];
  /** Parsed delete files shared with the decode path. */
  private readonly deleteCache: DeleteFileCache;
  /** Partitions where an input the plan merges drops deleted rows: their inputs read whole must allow it (open). */
  private readonly dropping: ReadonlySet<string>;
  private byPath: Map<string, FileScanTask> | undefined;

  private constructor(
    private readonly io: FileIO,
    private readonly metadata: TableMetadata,
    private readonly plan: Plan,
    private readonly group: FileGroup,
    private readonly options: ChunkCopyOptions,
    private readonly reads: CopyReads,
    private readonly checks: Checks,
    private readonly tasks: readonly FileScanTask[],
    /** Copied inputs with their footers, in group order. */
    private readonly sources: ReadonlyArray<{ readonly task: FileScanTask; readonly source: CopySource }>,
    /** Inputs read whole as they are merged (merge-stream.ts), in group order. */
    private readonly pending: ReadonlySet<FileScanTask>,
    /** What each candidate's footer says, as far as read. */
    private readonly footers: Map<FileScanTask, Footed>,
    /** The reasons found before any footer (taskProblem, the cap). */
    private readonly before: ReadonlyMap<FileScanTask, string>,
    plan0: { merged: readonly FileScanTask[]; why: ReadonlyMap<FileScanTask, string> },
    /** The footer reads of candidates left to the decode path, by path. */
    private readonly seeds: Map<string, ReadAheadRange>,
    /** The footer reads of merged inputs kept for the merge (readChunks takes the row groups they cover). */
    private readonly held: Map<string, HeldBytes>,
  ) {
    this.mergedTasks = new Set(plan0.merged);
    this.why = plan0.why;
    this.deleteCache = options.deleteCache ?? new DeleteFileCache();
    this.dropping = new Set(plan0.merged.filter(hasDeletes).map(partitionOf));
    this.settle();
  }

  /** Inputs left to the decode path, in group order. */
  get decode(): readonly FileScanTask[] {
    return this.decodeList;
  }

  /** Why each of `decode` is decoded, in the same order. */
  get decodedBecause(): readonly DecodeReason[] {
    return this.reasons;
  }

  /** `decode` and its reasons from the merged inputs and reasons now known. */
  private settle(): void {
    const copied = new Set(this.sources.map((s) => s.task));
    this.decodeList = this.tasks.filter((t) => !copied.has(t) && !this.mergedTasks.has(t));
    this.reasons = this.decodeList.map((t) => {
      const reason = this.why.get(t);
      if (reason === undefined) throw new Error(`${t.dataFile.filePath}: left to the decoder with no reason recorded`);
      return { file: t.dataFile.filePath, reason };
    });
  }

  /** Sorts the group's tasks into copied and decoded; reads the footers of the candidates. */
  static async plan(
    io: FileIO,
    metadata: TableMetadata,
    plan: Plan,
    group: FileGroup,
    tasks: readonly FileScanTask[],
    options: ChunkCopyOptions,
  ): Promise<ChunkCopy> {
    const floor = intProperty(metadata, COPY_MIN_ROW_GROUP_BYTES_PROPERTY, DEFAULT_COPY_MIN_ROW_GROUP_BYTES);
    const mergeFloor = Math.min(floor, intProperty(metadata, MERGE_MIN_ROW_GROUP_BYTES_PROPERTY, DEFAULT_MERGE_MIN_ROW_GROUP_BYTES));
    const checks: Checks = { template: copyTemplate(options.writeSchema), floor, mergeFloor, lineage: metadata.formatVersion >= 3, zstd: zstdCodec() };
    const mergeDeletes = (metadata.properties[MERGE_DELETES_PROPERTY] ?? 'true').trim().toLowerCase() !== 'false';
    // Why each input is left to the decoder before any footer is read (the first reason found).
    const before = new Map<FileScanTask, string>();
    const leaveToDecoder = (task: FileScanTask, reason: string): false => {
      if (!before.has(task)) before.set(task, reason);
      return false;
    };
    const strategy = plan.policy.strategy ?? 'binpack';
    let candidates = tasks.filter((t) => {
      const problem = strategy !== 'binpack' ? `the ${strategy} strategy decodes every row` : taskProblem(metadata, t, options.specId, mergeFloor, mergeDeletes);
      return problem === undefined || leaveToDecoder(t, problem);
    });
    // Every merged input's footer is held until the merge writes: a partition with more small
    // inputs than the cap is decoded (streamed) instead, as before the merge.
    const cap = options.maxMergeInputs ?? MAX_MERGE_INPUTS;
    const small = new Map<string, number>();
    for (const t of candidates) if (Number(t.dataFile.fileSizeInBytes) < floor) small.set(partitionOf(t), (small.get(partitionOf(t)) ?? 0) + 1);
    candidates = candidates.filter((t) =>
      Number(t.dataFile.fileSizeInBytes) >= floor || (small.get(partitionOf(t)) ?? 0) <= cap ||
      leaveToDecoder(t, `its partition has more than ${cap} inputs under the copy floor, whose footers a merge would hold`),
    );
    const readAhead = intProperty(metadata, READ_AHEAD_BYTES_PROPERTY, DEFAULT_COPY_READ_BYTES);
    // A budget set (the property, or the caller's) bounds the proof's re-read as well; by default that reads more at once.
    const chosen = options.reads?.bytes ?? (metadata.properties[READ_AHEAD_BYTES_PROPERTY] === undefined ? undefined : readAhead);
    const copyReads: CopyReads = { bytes: readAhead, proofBytes: chosen ?? PROOF_READ_BYTES, ...options.reads };
    const budget = copyReads.bytes ?? DEFAULT_COPY_READ_BYTES;
    // Small inputs that cannot be copied are read whole as they are merged, not footer-read here,
    // unless their partition is decoded whatever their footers say.
    const lost = new Set([...before.keys()].map(partitionOf));
    const wholeBytes = Math.min(READ_AHEAD_WHOLE_INPUT_BYTES, budget);
    const pending = new Set(candidates.filter((t) => !lost.has(partitionOf(t)) && streamable(t, floor, wholeBytes)));
    const footers = new Map<FileScanTask, Footed>();
    const reads = new Map<FileScanTask, FooterRead>();
    const footerRead = async (list: readonly FileScanTask[]): Promise<void> => {
      const got = await readFooters(io, list);
      list.forEach((t, i) => {
        reads.set(t, got[i]);
        footers.set(t, footed(t, copySource(t.dataFile.filePath, got[i]), checks));
      });
    };
    await footerRead(candidates.filter((t) => !pending.has(t)));
    // Inputs to read whole in a partition the footers read decode: footer-read after all, for their
    // own reasons and the decoder's first read, as before.
    let rules = partitionRules(tasks, before, footers, pending, checks.zstd);
    for (let mergedNow = new Set(rules.merged), late = [...pending].filter((t) => !mergedNow.has(t)); late.length > 0; ) {
      for (const t of late) pending.delete(t);
      await footerRead(late);
      rules = partitionRules(tasks, before, footers, pending, checks.zstd);
      mergedNow = new Set(rules.merged);
      late = [...pending].filter((t) => !mergedNow.has(t));
    }
    const mergedNow = new Set(rules.merged);
    // Left to the decoder, which reads the same tail first: it gets these bytes, not a second fetch.
    const seeds = new Map<string, ReadAheadRange>();
    for (const [task, read] of reads) if (!rules.copied.has(task) && !mergedNow.has(task)) seeds.set(task.dataFile.filePath, footerSeed(task, read));
    const sources = tasks.filter((t) => rules.copied.has(t)).map((task) => ({ task, source: footers.get(task)!.source! }));
    const merges = rules.merged.filter((t) => !pending.has(t)).map((task) => ({ task, source: footers.get(task)!.source!, read: reads.get(task)! }));
    // A merged input whose footer read holds its row groups (all of a small file) is not fetched
    // again, within the read-ahead budget: beyond it, its bytes are dropped and read when merged.
    const held = new Map<string, HeldBytes>();
    let heldBytes = 0;
    for (const { task, source, read } of merges) {
      const start = Math.min(...source.footer.rowGroups.map(rowGroupStart));
      if (read.tailStart > start) continue;
      if (heldBytes + read.tail.length > budget) break;
      held.set(task.dataFile.filePath, { start: read.tailStart, bytes: read.tail });
      heldBytes += read.tail.length;
    }
    // Only `held` and `seeds` keep footer reads: the merges keep their footers (copied out of the reads).
    const copy = new ChunkCopy(io, metadata, plan, group, options, copyReads, checks, tasks, sources, pending, footers, before, rules, seeds, held);
    // A key-column probe holds a row group's key columns decoded: fewer of them at once. Keys probed
    // from the file's own pages later are not read here.
    const probed = merges.filter((m) => m.task.deletes.equalityDeletes.length > 0 && !pageProbed(m.task, m.source, options.writeSchema));
    const byTask = new Map<FileScanTask, MergeInput>();
    const deletedOf = (m: (typeof merges)[number]): Promise<MergeInput> => copy.deletedOf(m.task, m.source, footerSeed(m.task, m.read));
    for (const m of await mapLimit(probed, EQUALITY_PROBES, deletedOf)) byTask.set(m.task, m);
    for (const m of await mapLimit(merges.filter((x) => !byTask.has(x.task)), FOOTER_READS, deletedOf)) byTask.set(m.task, m);
    copy.merges = merges.map((m) => byTask.get(m.task)!);
    return copy;
  }

  /**
   * A merged input with its deletes: per row group the positions deleted, and its equality deletes
   * as probes of its own pages where they can be (pageKeyProbes), else found on its key columns,
   * read as the decoder reads them from `seed` (bytes of the file read already: no second fetch
   * of them).
   */
  private async deletedOf(task: FileScanTask, source: CopySource, seed: ReadAheadRange): Promise<MergeInput> {
    if (!hasDeletes(task)) return { task, source };
    const cache = this.deleteCache;
    const filter = await DeleteFilter.load(this.io, task.dataFile.filePath, task.deletes, this.metadata.schemas, cache);
    const keys = pageKeyProbes(filter, task, source, this.options.writeSchema);
    if (keys) return { task, source, deleted: byRowGroup(source, filter.deletedPositions()), keys };
    if (filter.equalitySets.length === 0) return { task, source, deleted: byRowGroup(source, filter.deletedPositions()) };
    return this.probes(async () => {
      const files = new ReadAheadFileIO(this.io, [seed], { files: 1, bytes: seed.bytes?.length ?? 0 });
      try {
        return { task, source, deleted: byRowGroup(source, await deletedPositions(files, this.metadata, task, { deleteCache: cache, filter })) };
      } finally {
        files.close();
      }
    });
  }

  /**
   * An input read whole for the merge (merge-stream.ts): its footer from those bytes, sorted as the
   * plan sorts the ones it reads. Its partition is revoked (decoded whole) when it cannot be merged
   * itself or cannot drop rows where its partition does; the decoder then gets its tail.
   */
  private async open(task: FileScanTask, bytes: Uint8Array): Promise<Opened> {
    const path = task.dataFile.filePath;
    const read = await readFooter(heldFile(path, bytes));
    const f = footed(task, copySource(path, read), this.checks);
    // Copied inputs were sorted out by the plan: this one has deletes or is under the copy floor whole.
    if (f.copied) throw new IllegalStateError(`${path}: read whole to be merged, but its footer says it is copied`);
    this.footers.set(task, f);
    const source = f.source;
    const dropping = source !== undefined && !hasDeletes(task) && this.dropping.has(partitionOf(task)) && deleteProblem(source, this.checks.zstd) !== undefined;
    if (source === undefined || dropping) {
      // A copy: a view would keep the whole input alive.
      this.seeds.set(path, { path, start: read.tailStart, end: bytes.length, bytes: bytes.slice(read.tailStart) });
      return { revoke: true };
    }
    return { input: await this.deletedOf(task, source, { path, start: 0, end: bytes.length, bytes }) };
  }

  /**
   * What to read ahead of the decoder (lib/io/read-ahead.ts) within `budget` bytes (default: the
   * copy's own, READ_AHEAD_BYTES_PROPERTY), one range per input of `decode`: all of an input up to
   * READ_AHEAD_WHOLE_INPUT_BYTES that fits the budget (joined to the tail this plan read already with
   * its footer, if any), else that tail, else the file's footer read.
   */
  readAhead(budget?: number): { ranges: ReadAheadRange[]; bytes: number } {
    const bytes = budget ?? this.reads.bytes ?? DEFAULT_COPY_READ_BYTES;
    const whole = Math.min(READ_AHEAD_WHOLE_INPUT_BYTES, bytes);
    const ranges = this.decode.map(({ dataFile: f }): ReadAheadRange => {
      const size = Number(f.fileSizeInBytes);
      const seed = this.seeds.get(f.filePath);
      if (size > 0 && size <= whole) return { path: f.filePath, start: 0, end: size, ...(seed?.bytes ? { bytes: seed.bytes } : {}) };
      return seed ?? { path: f.filePath, ...footerReadRange(size) };
    });
    // Handed over: held by the read-ahead until its reader passes them, not here for the whole group.
    this.seeds.clear();
    return { ranges, bytes };
  }

  /** The read window of the copy and its proof (READ_AHEAD_BYTES_PROPERTY): the decoded outputs' proof re-reads through one too. */
  get readWindow(): CopyReads & { readonly bytes: number } {
    return { ...this.reads, bytes: this.reads.bytes ?? DEFAULT_COPY_READ_BYTES };
  }

  /** Inputs whose row groups are copied. */
  get copiedInputs(): number {
    return this.sources.length;
  }

  /** Inputs whose row groups are merged at the page level. */
  get mergedInputs(): number {
    return this.mergedTasks.size;
  }

  /**
   * Writes the copied outputs: per output partition and writer (CopySource.key), row groups in
   * input order, a new file once the next row group would pass the target size. Adds each row
   * group's digest to `checkIn` and its run to `map`.
   */
  async write(map: CompactionMapBuilder | undefined, checkIn: RowSetChecksum): Promise<DataFile[]> {
    const copied = await this.writeCopies(map, checkIn);
    const merged = await this.writeMerges(map, checkIn);
    // The rules are settled: the footers of inputs left to the decoder need not outlive the write.
    this.footers.clear();
    return [...copied, ...merged];
  }

  private async writeCopies(map: CompactionMapBuilder | undefined, checkIn: RowSetChecksum): Promise<DataFile[]> {
    if (this.sources.length === 0) return [];
    const spec = specById(this.metadata, this.options.specId);
    const schema = currentSchema(this.metadata);
    const target = this.plan.policy.targetFileSizeBytes;
    const buckets = new Map<string, { partition: DataFile['partition']; files: CopyPart[][]; size: number }>();
    for (const { task, source } of this.sources) {
      const partition = task.dataFile.partition;
      const key = `${partitionKey(spec.specId, partition)}\u0000${source.key}`;
      let b = buckets.get(key);
      if (!b) buckets.set(key, (b = { partition, files: [[]], size: 0 }));
      for (const rg of source.rowGroups) {
        if (b.size > 0 && b.size + rg.bytes > target) {
          b.files.push([]);
          b.size = 0;
        }
        b.files[b.files.length - 1].push({ source, rowGroup: rg.index });
        b.size += rg.bytes;
      }
    }
    const config = this.metricsConfig();
    const locations = tableLocationProvider(this.metadata);
    let fault = this.options.fault;
    const out: DataFile[] = [];
    for (const { partition, files } of buckets.values()) {
      const folder = partitionFolder(spec, partition, schema);
      for (const parts of files) {
        const name = `${safeName(this.group.id)}-copy-${String(this.started.length).padStart(5, '0')}-${this.uuid}.parquet`;
        const path = locations.newDataLocation(name, folder);
        this.started.push(path);
        const copied = await writeCopiedFile(this.io, path, this.checks.template, parts, { reads: this.reads, ...(fault ? { fault } : {}) });
        fault = undefined;
        this.written.push(copied);
        for (const rg of copied.rowGroups) {
          checkIn.addDigest(rg.digest[0], rg.digest[1], rg.rows);
          const from = rg.part.source.rowGroups[rg.part.rowGroup].firstRow;
          map?.addRun(rg.part.source.path, from, path, rg.firstRow, rg.rows);
        }
        const metrics = metricsFromStatistics(copied.footer, copied.footerBytes, this.options.writeSchema, config);
        out.push(
          toDataFile(
            { ...copied, metrics, rowGroupCount: copied.rowGroups.length },
            spec,
            partition,
            FileContent.Data,
            { sortOrderId: UNSORTED_ORDER.orderId },
          ),
        );
      }
    }
    return out;
  }

  /**
   * Writes the merged outputs: per output partition and mergeKey, source row groups in input order
   * joined into row groups of up to `write.parquet.row-group-size-bytes` (uncompressed, as their
   * footers count them), a new file once the next row group would pass the target size
   * (merge-layout.ts). Inputs read whole are merged as they arrive (merge-stream.ts); once every
   * footer is known the partition rules are settled again, and the rest is merged as the plan's.
   * Adds each source row group's digest to `checkIn` and its run to `map`, for the outputs kept.
   */
  private async writeMerges(map: CompactionMapBuilder | undefined, checkIn: RowSetChecksum): Promise<DataFile[]> {
    if (this.mergedTasks.size === 0) return [];
    let bytes = 0;
    for (const t of this.mergedTasks) bytes += Number(t.dataFile.fileSizeInBytes);
    const workers = this.options.mergeWorkers?.(bytes) ?? 0;
    // Kept for the proof's deep walks, closed with the copy (close).
    if (workers > 0) this.pool ??= MergePool.start(workers);
    return this.writeMergesOn(this.pool, map, checkIn);
  }

  /** writeMerges, its row groups built by `builder` (else on this thread). */
  private async writeMergesOn(builder: RowGroupBuilder | undefined, map: CompactionMapBuilder | undefined, checkIn: RowSetChecksum): Promise<DataFile[]> {
    const spec = specById(this.metadata, this.options.specId);
    const schema = currentSchema(this.metadata);
    const layout = new MergeLayout(spec.specId, this.plan.policy.targetFileSizeBytes, intProperty(this.metadata, 'write.parquet.row-group-size-bytes', DEFAULT_ROW_GROUP_BYTES));
    const options: MergeOptions = { ...this.mergeOptions(), ...(builder ? { builder } : {}) };
    const locations = tableLocationProvider(this.metadata);
    let fault = this.written.length === 0 ? this.options.fault : undefined;
    const newPath = (task: FileScanTask): string => {
      const name = `${safeName(this.group.id)}-merge-${String(this.started.length).padStart(5, '0')}-${this.uuid}.parquet`;
      const path = locations.newDataLocation(name, partitionFolder(spec, task.dataFile.partition, schema));
      this.started.push(path);
      return path;
    };
    const outputs: { task: FileScanTask; merged: MergedFile }[] = [];
    const byTask = new Map(this.merges.map((m) => [m.task, m]));
    let placed: ReadonlySet<FileScanTask> = new Set();
    if (this.pending.size > 0) {
      const inputs = this.tasks.filter((t) => this.mergedTasks.has(t)).map((task) => ({ task, ...(this.pending.has(task) ? {} : { input: byTask.get(task)! }) }));
      const stream = await streamMerges(inputs, {
        io: this.io, layout, partitionOf,
        open: (task, bytes) => this.open(task, bytes),
        write: async (task, items) => {
          const merged = await writeMergedParts(this.io, newPath(task), this.checks.template, items, { ...options, ...(fault ? { fault } : {}) });
          if (merged.recordCount > 0) fault = undefined;
          outputs.push({ task, merged });
          return merged;
        },
        // As many reads in flight as the plan's footer reads were (small inputs wait on S3's first byte), within the bytes.
        window: { ...this.readWindow, reads: this.reads.reads ?? FOOTER_READS, ordered: true },
        held: this.held,
        heldBytes: this.readWindow.bytes,
      });
      placed = stream.placed;
      for (const [task, input] of stream.deferred) byTask.set(task, input);
      // Inputs not read (their partition revoked first): footer-read as the plan would have, for
      // their reasons and the decoder's first read.
      const reads = await readFooters(this.io, stream.skipped);
      stream.skipped.forEach((t, i) => {
        this.footers.set(t, footed(t, copySource(t.dataFile.filePath, reads[i]), this.checks));
        this.seeds.set(t.dataFile.filePath, footerSeed(t, reads[i]));
      });
      // Every footer known: the partition rules as the plan would have settled them.
      const rules = partitionRules(this.tasks, this.before, this.footers, new Set(), this.checks.zstd);
      this.mergedTasks = new Set(rules.merged);
      this.why = rules.why;
      this.settle();
      const removed = new Set(stream.removed);
      for (let i = outputs.length - 1; i >= 0; i--) if (removed.has(outputs[i].merged.path)) outputs.splice(i, 1);
      // A streamed output holds inputs of one partition, which the rules merge whole or not at all:
      // one they decode would have its rows twice.
      for (const { merged } of outputs) {
        for (const s of merged.rowGroups.flat()) {
          const task = this.taskOf(s.part.source.path);
          if (!this.mergedTasks.has(task)) throw new IllegalStateError(`${s.part.source.path}: merged into ${merged.path}, then left to the decoder`);
        }
      }
    }
    // The rest: inputs of other buckets than the streamed one, each bucket's files in turn.
    const buckets = new Map<string, { task: FileScanTask; files: MergePart[][][] }>();
    for (const task of this.tasks) {
      if (!this.mergedTasks.has(task) || placed.has(task)) continue;
      const input = byTask.get(task);
      if (!input) throw new IllegalStateError(`${task.dataFile.filePath}: merged, but neither read nor merged when read`);
      // A file without row groups has no rows to merge.
      if (input.source.rowGroups.length === 0) continue;
      const key = layout.key(input);
      let b = buckets.get(key);
      if (!b) buckets.set(key, (b = { task, files: [] }));
      for (const rg of input.source.rowGroups) {
        const at = layout.place(input, rg.index, key);
        if (!at) continue;
        if (at.newFile) b.files.push([]);
        const file = b.files[b.files.length - 1];
        if (!file) throw new IllegalStateError(`${task.dataFile.filePath}: a row group placed into an output already written`);
        if (at.newRowGroup) file.push([]);
        file[file.length - 1].push(at.part);
      }
    }
    for (const { task, files } of buckets.values()) {
      for (const groups of files) {
        const merged = await writeMergedFile(this.io, newPath(task), this.checks.template, groups, { ...options, held: this.held, ...(fault ? { fault } : {}) });
        if (merged.recordCount > 0) fault = undefined;
        outputs.push({ task, merged });
      }
    }
    this.held.clear();
    const config = this.metricsConfig();
    const out: DataFile[] = [];
    for (const { task, merged } of outputs) {
      // Every row its equality deletes matched (found as it was written): no file to add (and no chunk the fault damaged).
      if (merged.recordCount === 0) {
        await this.io.deleteMany([merged.path]);
        continue;
      }
      this.merged.push(merged);
      for (const segment of merged.rowGroups.flat()) {
        checkIn.addDigest(segment.digest[0], segment.digest[1], segment.rows);
        const { firstRow, numRows } = segment.part.source.rowGroups[segment.part.rowGroup];
        // One run per stretch of live rows.
        let at = 0;
        let to = segment.firstRow;
        for (const d of [...(segment.deleted ?? []), numRows]) {
          if (d > at) map?.addRun(segment.part.source.path, firstRow + at, merged.path, to, d - at);
          to += Math.max(0, d - at);
          at = d + 1;
        }
      }
      const metrics = metricsFromStatistics(merged.footer, merged.footerBytes, this.options.writeSchema, config);
      out.push(
        toDataFile({ ...merged, metrics, rowGroupCount: merged.rowGroups.length }, spec, task.dataFile.partition, FileContent.Data, { sortOrderId: UNSORTED_ORDER.orderId }),
      );
    }
    return out;
  }

  /** The task of an input, by its path. */
  private taskOf(path: string): FileScanTask {
    this.byPath ??= new Map(this.tasks.map((t) => [t.dataFile.filePath, t]));
    const task = this.byPath.get(path);
    if (!task) throw new IllegalStateError(`${path}: not an input of group ${this.group.id}`);
    return task;
  }

  private mergeOptions(): MergeOptions {
    const level = intProperty(this.metadata, 'write.parquet.compression-level', DEFAULT_ZSTD_LEVEL);
    return {
      writeSchema: this.options.writeSchema,
      dictionaryBytes: intProperty(this.metadata, 'write.parquet.dict-size-bytes', DEFAULT_DICTIONARY_BYTES),
      zstd: zstdCodec(),
      level,
      pageBytes: intProperty(this.metadata, 'write.parquet.page-size-bytes', DEFAULT_PAGE_BYTES),
      pageRows: intProperty(this.metadata, 'write.parquet.page-row-limit', DEFAULT_PAGE_ROWS),
      reads: this.reads,
    };
  }

  private metricsConfig(): MetricsConfig {
    const sortIds = defaultSortOrder(this.metadata).fields.map((f) => f.sourceId);
    return metricsConfigFromProperties(this.metadata.properties, currentSchema(this.metadata), sortIds);
  }

  /**
   * Re-reads every copied and merged output from storage into `checkOut`: row counts and digests,
   * several row groups in flight, added as they arrive (the checksum is a sum: order does not matter).
   */
  async prove(checkOut: RowSetChecksum): Promise<void> {
    const files = this.written.map((f) => ({ path: f.path, length: f.fileSizeInBytes }));
    for await (const rg of rowGroupDigests(this.io, files, this.reads)) checkOut.addDigest(rg.digest[0], rg.digest[1], rg.rows);
    const merged = this.merged.map((f) => ({ path: f.path, length: f.fileSizeInBytes, rowGroups: f.rowGroups }));
    // Each merged output's first row group (and each merge worker's first of it) is also decompressed and
    // walked again: the writer's own walk came before compression, and this catches a compressor that does
    // not give back what it took (a kept context gone wrong), for a share of what decompressing every row
    // group would cost.
    const deepen = new Map(this.merged.map((f) => [f.path, new Set(f.deepRowGroups)]));
    const deep = (path: string, rowGroup: number): boolean => deepen.get(path)?.has(rowGroup) === true;
    const options = { ...this.mergeOptions(), deep, ...(this.pool ? { rewalker: this.pool } : {}) };
    for await (const s of mergedDigests(this.io, merged, options)) checkOut.addDigest(s.digest[0], s.digest[1], s.rows);
  }

  /** Gives back its merge workers (whatever happened); safe to call more than once. */
  async close(): Promise<void> {
    await this.pool?.close();
  }

  /** Deletes every file this copy started (best effort). */
  async abort(): Promise<void> {
    await this.io.deleteMany(this.started).catch(() => undefined);
  }
}
