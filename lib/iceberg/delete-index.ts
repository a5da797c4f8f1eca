import { normalizePath } from '../io/path.js';
import type { DataFile, ManifestEntry } from './manifest.js';
import { FileContent } from './manifest.js';
import { partitionKey, type PartitionSpec } from './partition.js';
import { isUnpartitioned } from './partition.js';
import { isDeletionVector, referencedDataFile } from './delete-file.js';
import { MetadataColumns } from './schema.js';

/** A delete file with the data sequence number it was committed under. */
export interface DeleteFileRef {
  readonly file: DataFile;
  readonly dataSequenceNumber: bigint;
}

/** The deletes that apply to one data file (spec "Scan Planning"). */
export interface ApplicableDeletes {
  /** At most one deletion vector; when set, position delete files do not apply. */
  readonly deletionVector?: DeleteFileRef;
  readonly positionDeletes: readonly DeleteFileRef[];
  readonly equalityDeletes: readonly DeleteFileRef[];
}

export const NO_DELETES: ApplicableDeletes = { positionDeletes: [], equalityDeletes: [] };

const NONE: readonly DeleteFileRef[] = [];

/**
 * Indexes a snapshot's live delete files so each data file finds its deletes quickly:
 * DVs by referenced path, position deletes by referenced path or partition, equality
 * deletes by partition (or globally when written under an unpartitioned spec).
 */
export class DeleteFileIndex {
  private readonly dvs = new Map<string, DeleteFileRef[]>();
  private readonly posByPath = new Map<string, DeleteFileRef[]>();
  private readonly posByPartition = new Map<string, DeleteFileRef[]>();
  private readonly eqByPartition = new Map<string, DeleteFileRef[]>();
  private readonly eqGlobal: DeleteFileRef[] = [];
  /** file_path bounds of partition-scoped position deletes that have them. */
  private readonly pathRanges = new Map<DeleteFileRef, PathRange>();
  /** The last deletes found per partition key for a file no path-scoped delete names, and its sequence number. */
  private readonly byPartitionOnly = new Map<string, { readonly seq: bigint; readonly deletes: ApplicableDeletes }>();
  private count = 0;

  constructor(private readonly specs: ReadonlyMap<number, PartitionSpec>) {}

  get size(): number {
    return this.count;
  }

  add(entry: ManifestEntry): void {
    const file = entry.dataFile;
    const ref: DeleteFileRef = { file, dataSequenceNumber: entry.sequenceNumber ?? 0n };
    this.count++;
    this.byPartitionOnly.clear();
    if (file.content === FileContent.PositionDeletes) {
      const target = referencedDataFile(file);
      if (isDeletionVector(file)) {
        push(this.dvs, normalizePath(target ?? ''), ref);
      } else if (target !== undefined) {
        push(this.posByPath, normalizePath(target), ref);
      } else {
        push(this.posByPartition, partitionKey(file.specId, file.partition), ref);
        const range = pathRange(file);
        if (range) this.pathRanges.set(ref, range);
      }
    } else if (file.content === FileContent.EqualityDeletes) {
      const spec = this.specs.get(file.specId);
      if (spec === undefined || isUnpartitioned(spec)) this.eqGlobal.push(ref);
      else push(this.eqByPartition, partitionKey(file.specId, file.partition), ref);
    }
  }

  /**
   * The deletes for a data file committed with `dataSequenceNumber`; `key` is the file's
   * partitionKey when the caller already has it.
   */
  forDataFile(file: DataFile, dataSequenceNumber: bigint, key: string = partitionKey(file.specId, file.partition)): ApplicableDeletes {
    return this.forPath(file.filePath, dataSequenceNumber, key);
  }

  /**
   * The normalized paths that deletion vectors and file-scoped position deletes name: a data file
   * whose normalized path is not among them has only partition-scoped or global deletes.
   */
  pathKeys(): string[] {
    return [...new Set([...this.dvs.keys(), ...this.posByPath.keys()])];
  }

  /**
   * forDataFile for the data file at `filePath` of the partition with key `key` (all it reads of
   * the file). `pathScoped` false: the caller knows its normalized path is not in pathKeys(), so
   * only the partition's deletes are looked up, and (without file_path bounds to check) one
   * answer, the same object, serves the files of a partition and sequence number in a row.
   */
  forPath(filePath: string, dataSequenceNumber: bigint, key: string, pathScoped = true): ApplicableDeletes {
    if (this.count === 0) return NO_DELETES;
    if (!pathScoped) {
      // file_path bounds make the answer depend on the path.
      if (this.pathRanges.size > 0) return this.lookUp(filePath, undefined, dataSequenceNumber, key);
      const last = this.byPartitionOnly.get(key);
      if (last !== undefined && last.seq === dataSequenceNumber) return last.deletes;
      const deletes = this.lookUp(filePath, undefined, dataSequenceNumber, key);
      this.byPartitionOnly.set(key, { seq: dataSequenceNumber, deletes });
      return deletes;
    }
    // Most data files have no delete: look up before building any array.
    const path = this.dvs.size > 0 || this.posByPath.size > 0 ? normalizePath(filePath) : undefined;
    return this.lookUp(filePath, path, dataSequenceNumber, key);
  }

  /** forPath with the path normalized, undefined when no DV or file-scoped position delete can name it. */
  private lookUp(filePath: string, path: string | undefined, dataSequenceNumber: bigint, key: string): ApplicableDeletes {
    // DVs and position deletes: delete seq >= data seq.
    const dvs = path !== undefined && this.dvs.size > 0 ? this.dvs.get(path) : undefined;
    // The newest that applies, the first of equals.
    let deletionVector: DeleteFileRef | undefined;
    for (const d of dvs ?? NONE) {
      if (d.dataSequenceNumber >= dataSequenceNumber && (!deletionVector || d.dataSequenceNumber > deletionVector.dataSequenceNumber)) deletionVector = d;
    }
    const byPath = deletionVector || path === undefined || this.posByPath.size === 0 ? undefined : this.posByPath.get(path);
    const byPartition = deletionVector ? undefined : this.posByPartition.get(key);
    const eqByPartition = this.eqByPartition.get(key);
    if (!deletionVector && !byPath && !byPartition && !eqByPartition && this.eqGlobal.length === 0) return NO_DELETES;
    const ranges = this.pathRanges;
    const positionDeletes =
      byPartition && ranges.size > 0
        ? select(byPath, byPartition, (d) => d.dataSequenceNumber >= dataSequenceNumber && mayHoldPath(ranges.get(d), filePath))
        : select(byPath, byPartition, (d) => d.dataSequenceNumber >= dataSequenceNumber);
    // Equality deletes: delete seq > data seq, strictly.
    const equalityDeletes = select(eqByPartition, this.eqGlobal, (d) => d.dataSequenceNumber > dataSequenceNumber);
    if (!deletionVector && positionDeletes.length === 0 && equalityDeletes.length === 0) return NO_DELETES;
    return { ...(deletionVector ? { deletionVector } : {}), positionDeletes, equalityDeletes };
  }
}

/** The file_path column's bounds of a position delete file, raw and with paths normalized. */
interface PathRange {
  readonly lower?: string;
  readonly upper?: string;
  readonly lowerNormalized?: string;
  readonly upperNormalized?: string;
}

const utf8 = new TextDecoder();

function pathRange(file: DataFile): PathRange | undefined {
  const lower = file.lowerBounds?.get(MetadataColumns.FILE_PATH);
  const upper = file.upperBounds?.get(MetadataColumns.FILE_PATH);
  if (!lower && !upper) return undefined;
  const l = lower ? utf8.decode(lower) : undefined;
  const u = upper ? utf8.decode(upper) : undefined;
  return {
    ...(l !== undefined ? { lower: l, lowerNormalized: normalizePath(l) } : {}),
    ...(u !== undefined ? { upper: u, upperNormalized: normalizePath(u) } : {}),
  };
}

/**
 * Whether a partition-scoped position delete file may hold positions of `path`: the path lies
 * within its file_path bounds, as Java's DeleteFileIndex (canContainPosDeletesForFile, through
 * 1.11) checks, comparing strings by UTF-16 code units like Comparators.charSequences(). The scan
 * matches positions to files by normalized path (`hdfs://nn/x` is `/x`), so a file is passed over
 * only when it lies outside the bounds both as written and normalized.
 */
function mayHoldPath(range: PathRange | undefined, path: string): boolean {
  if (!range) return true;
  if (within(path, range.lower, range.upper)) return true;
  return within(normalizePath(path), range.lowerNormalized, range.upperNormalized);
}

function within(path: string, lower: string | undefined, upper: string | undefined): boolean {
  return (lower === undefined || path >= lower) && (upper === undefined || path <= upper);
}

/**
 * The refs of `a` then `b` that `keep` accepts, in an array of exactly their number (a plan
 * holds one per data file with deletes).
 */
function select(
  a: readonly DeleteFileRef[] | undefined,
  b: readonly DeleteFileRef[] | undefined,
  keep: (d: DeleteFileRef) => boolean,
): DeleteFileRef[] {
  let n = 0;
  for (const d of a ?? []) if (keep(d)) n++;
  for (const d of b ?? []) if (keep(d)) n++;
  const out = new Array<DeleteFileRef>(n);
  let i = 0;
  for (const d of a ?? []) if (keep(d)) out[i++] = d;
  for (const d of b ?? []) if (keep(d)) out[i++] = d;
  return out;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
