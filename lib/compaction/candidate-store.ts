/**
 * The data files a FactsAccumulator keeps, column by column: typed arrays for the numbers and
 * one array of path strings, instead of a FileScanTask (a DataFile, its partition tuple and its
 * bigints) per file. A million kept files are a few arrays rather than millions of objects the
 * garbage collector must trace and move; the DataFile and task of a file are made again only
 * for the files a plan writes out.
 */
import { NO_DELETES, type ApplicableDeletes } from '../iceberg/delete-index.js';
import { COLUMN_FLAGS, fitsColumns, fitsLong, leanDataFile, type ManifestColumns } from '../iceberg/manifest-columns.js';
import type { DataFile, FileFormat } from '../iceberg/manifest.js';
import type { PartitionSpec } from '../iceberg/partition.js';
import type { FileScanTask } from '../iceberg/scan-planning.js';
import type { Row } from '../iceberg/values.js';

/** Bits of `flags`. */
const SELECTED = 1;
const NO_SNAPSHOT = 2;
const SORT_ORDER = 4;
const FIRST_ROW_ID = 8;

/** What a kept file's columns do not hold: its partition, by the accumulator's index. */
export interface StoredPartition {
  readonly specId: number;
  readonly spec: PartitionSpec;
  readonly row: Row;
  readonly key: string;
}

/**
 * Kept files by index, in the order they were added. A file whose DataFile has a field the
 * columns do not hold (metrics, key metadata, a delete file's fields, an integer beyond 2^53)
 * is kept whole, as are all files when `whole` is set: health reports every file.
 */
export class CandidateStore {
  length = 0;
  readonly paths: string[] = [];
  sizes = new Float64Array(1024);
  records = new Float64Array(1024);
  sequenceNumbers = new BigInt64Array(1024);
  snapshotIds = new BigInt64Array(1024);
  partitionIndexes = new Int32Array(1024);
  sortOrderIds = new Int32Array(1024);
  firstRowIds = new BigInt64Array(1024);
  formats = new Uint8Array(1024);
  flags = new Uint8Array(1024);
  private readonly splitOffsets: (readonly bigint[] | null)[] = [];
  private readonly deletes: (ApplicableDeletes | undefined)[] = [];
  private readonly wholeTasks = new Map<number, FileScanTask>();
  private readonly formatNames: FileFormat[] = [];

  constructor(
    private readonly partitions: readonly StoredPartition[],
    private readonly whole: boolean,
  ) {}

  /** Keeps a file of partition `partition` (an index into the partitions given); returns its index. */
  add(task: FileScanTask, partition: number, selected: boolean, hasDeletes: boolean): number {
    const i = this.length++;
    if (i === this.sizes.length) this.grow();
    const f = task.dataFile;
    const size = Number(f.fileSizeInBytes);
    const records = Number(f.recordCount);
    this.paths.push(f.filePath);
    this.sizes[i] = size;
    this.records[i] = records;
    this.sequenceNumbers[i] = task.dataSequenceNumber;
    this.partitionIndexes[i] = partition;
    this.deletes.push(hasDeletes ? task.deletes : undefined);
    let flags = selected ? SELECTED : 0;
    if (task.snapshotId === null) flags |= NO_SNAPSHOT;
    else this.snapshotIds[i] = task.snapshotId;
    if (f.sortOrderId !== null && f.sortOrderId !== undefined) {
      flags |= SORT_ORDER;
      this.sortOrderIds[i] = f.sortOrderId;
    }
    if (f.firstRowId !== null && f.firstRowId !== undefined) {
      flags |= FIRST_ROW_ID;
      this.firstRowIds[i] = f.firstRowId;
    }
    this.flags[i] = flags;
    this.formats[i] = this.formatCode(f.fileFormat);
    this.splitOffsets.push(f.splitOffsets ?? null);
    if (this.whole || !fitsStore(f, task, this.partitions[partition])) this.wholeTasks.set(i, task);
    return i;
  }

  /**
   * Keeps file `i` of a manifest's columns (selected, fitting the columns: not one of their
   * `whole` files), of partition `partition`, with the deletes the scan applies when any.
   */
  addColumns(c: ManifestColumns, i: number, partition: number, deletes: ApplicableDeletes | undefined): number {
    const j = this.length++;
    if (j === this.sizes.length) this.grow();
    this.paths.push(c.paths[i]);
    this.sizes[j] = c.sizes[i];
    this.records[j] = c.records[i];
    this.sequenceNumbers[j] = c.sequenceNumbers[i];
    this.partitionIndexes[j] = partition;
    this.deletes.push(deletes);
    const from = c.flags[i];
    let flags = SELECTED;
    if (from & COLUMN_FLAGS.NO_SNAPSHOT) flags |= NO_SNAPSHOT;
    else this.snapshotIds[j] = c.snapshotIds[i];
    if (from & COLUMN_FLAGS.SORT_ORDER) {
      flags |= SORT_ORDER;
      this.sortOrderIds[j] = c.sortOrderIds[i];
    }
    if (from & COLUMN_FLAGS.FIRST_ROW_ID) {
      flags |= FIRST_ROW_ID;
      this.firstRowIds[j] = c.firstRowIds[i];
    }
    this.flags[j] = flags;
    this.formats[j] = this.formatCode(c.formatNames[c.formats[i]]);
    const split = c.splitIndexes[i];
    this.splitOffsets.push(split < 0 ? null : c.splits[split]);
    if (this.whole) this.wholeTasks.set(j, this.task(j, deletes ?? NO_DELETES));
    return j;
  }

  /** Gives files `from` on paths of their own (a slice keeps the whole string it was cut from). */
  ownPaths(from: number): void {
    // The concatenation is flattened into a new string by the slice, which then points into that.
    for (let i = from; i < this.length; i++) this.paths[i] = ` ${this.paths[i]}`.slice(1);
  }

  selected(i: number): boolean {
    return (this.flags[i] & SELECTED) !== 0;
  }

  format(i: number): FileFormat {
    return this.formatNames[this.formats[i]];
  }

  partition(i: number): StoredPartition {
    return this.partitions[this.partitionIndexes[i]];
  }

  /** The deletes the scan applies to file i, when any. */
  deletesOf(i: number): ApplicableDeletes | undefined {
    return this.deletes[i];
  }

  /** The task file i was added with (or one equal to it), without the deletes when none apply. */
  task(i: number, noDeletes: ApplicableDeletes): FileScanTask {
    const kept = this.wholeTasks.get(i);
    if (kept) return kept;
    const p = this.partition(i);
    const flags = this.flags[i];
    return {
      dataFile: this.dataFile(i),
      spec: p.spec,
      dataSequenceNumber: this.sequenceNumbers[i],
      snapshotId: flags & NO_SNAPSHOT ? null : this.snapshotIds[i],
      deletes: this.deletes[i] ?? noDeletes,
      partitionKey: p.key,
    };
  }

  /** File i's DataFile: the one it was added with, or one equal to it. */
  dataFile(i: number): DataFile {
    const kept = this.wholeTasks.get(i);
    if (kept) return kept.dataFile;
    const p = this.partition(i);
    const flags = this.flags[i];
    return leanDataFile(
      this.paths[i], this.format(i), p.specId, p.row, this.records[i], this.sizes[i], this.splitOffsets[i],
      flags & SORT_ORDER ? this.sortOrderIds[i] : null,
      flags & FIRST_ROW_ID ? this.firstRowIds[i] : null,
    );
  }

  private formatCode(format: FileFormat): number {
    let code = this.formatNames.indexOf(format);
    if (code < 0) code = this.formatNames.push(format) - 1;
    return code;
  }

  private grow(): void {
    const n = this.sizes.length * 2;
    const more = <A extends Float64Array | BigInt64Array | Int32Array | Uint8Array>(a: A, make: (n: number) => A): A => {
      const b = make(n);
      b.set(a as never);
      return b;
    };
    this.sizes = more(this.sizes, (k) => new Float64Array(k));
    this.records = more(this.records, (k) => new Float64Array(k));
    this.sequenceNumbers = more(this.sequenceNumbers, (k) => new BigInt64Array(k));
    this.snapshotIds = more(this.snapshotIds, (k) => new BigInt64Array(k));
    this.partitionIndexes = more(this.partitionIndexes, (k) => new Int32Array(k));
    this.sortOrderIds = more(this.sortOrderIds, (k) => new Int32Array(k));
    this.firstRowIds = more(this.firstRowIds, (k) => new BigInt64Array(k));
    this.formats = more(this.formats, (k) => new Uint8Array(k));
    this.flags = more(this.flags, (k) => new Uint8Array(k));
  }
}

/** Whether two partition tuples hold the same values (one per partition is kept). */
export function sameRow(a: Row, b: Row): boolean {
  if (a === b) return true;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i];
    if (k !== kb[i]) return false;
    const x = a[k];
    const y = b[k];
    if (x !== y && !(x instanceof Uint8Array && y instanceof Uint8Array && Buffer.compare(x, y) === 0)) return false;
  }
  return true;
}

/** Whether the columns give back a DataFile and task equal to these (else the task is kept whole). */
function fitsStore(f: DataFile, task: FileScanTask, p: StoredPartition): boolean {
  return (
    fitsColumns(f) &&
    f.specId === p.specId &&
    sameRow(f.partition, p.row) &&
    task.spec === p.spec &&
    fitsLong(task.dataSequenceNumber) &&
    fitsLong(task.snapshotId) &&
    (task.partitionKey === undefined || task.partitionKey === p.key)
  );
}
