/**
 * The live data files of one data manifest, column by column: what a planner keeps of a file
 * (lib/compaction/candidate-store.ts) as typed arrays and one array of paths, which a worker
 * thread hands to the planner's thread with the arrays' buffers transferred (a few buffers to
 * copy instead of thousands of objects). Read without column metrics, with inheritance applied
 * (readManifestBatches). A file the columns cannot give back exactly (key metadata, equality
 * ids, a delete file's fields, an integer beyond 2^53 or 2^63) comes whole, in `whole`.
 */
import { normalizePath } from '../io/path.js';
import type { ByteSource } from './avro.js';
import type { ManifestFile } from './manifest-list.js';
import { FileContent, manifestSourceBatches, type DataFile, type FileFormat, type ManifestEntry } from './manifest.js';
import { partitionKey, type PartitionSpec } from './partition.js';
import type { Schema } from './schema.js';
import type { Row } from './values.js';

/** Bits of ManifestColumns.flags. */
export const COLUMN_FLAGS = { NO_SNAPSHOT: 1, SORT_ORDER: 2, FIRST_ROW_ID: 4, NO_PATH_DELETES: 8 } as const;

export interface ManifestColumns {
  /** Live data files read, `whole` ones included. */
  readonly count: number;
  readonly specId: number;
  readonly paths: string[];
  readonly sizes: Float64Array;
  readonly records: Float64Array;
  readonly sequenceNumbers: BigInt64Array;
  readonly snapshotIds: BigInt64Array;
  readonly sortOrderIds: Int32Array;
  readonly firstRowIds: BigInt64Array;
  readonly flags: Uint8Array;
  /** Index into formatNames. */
  readonly formats: Uint8Array;
  readonly formatNames: FileFormat[];
  /** Index into partitions: the manifest's distinct tuples, each with its partitionKey. */
  readonly partitionIndexes: Int32Array;
  readonly partitions: { readonly key: string; readonly row: Row }[];
  /** Index into splits (its distinct lists), -1 for none. */
  readonly splitIndexes: Int32Array;
  readonly splits: (readonly bigint[])[];
  /** Positions (ascending) of the files that come whole, and their entries. */
  readonly wholeAt: Int32Array;
  readonly whole: ManifestEntry[];
}

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
/** Whether a long fits a BigInt64Array (null does: it has a flag). */
export const fitsLong = (v: bigint | null): boolean => v === null || (v >= I64_MIN && v <= I64_MAX);

/**
 * Whether columns give back this data file exactly: a data file without column metrics, key
 * metadata, equality ids or a delete file's fields, its integers within 2^53 (sizes, counts)
 * and 2^63 (ids), every optional field read (null, not absent).
 */
export function fitsColumns(f: DataFile): boolean {
  return (
    f.content === FileContent.Data &&
    Number.isSafeInteger(Number(f.fileSizeInBytes)) &&
    Number.isSafeInteger(Number(f.recordCount)) &&
    f.columnSizes === null &&
    f.valueCounts === null &&
    f.nullValueCounts === null &&
    f.nanValueCounts === null &&
    f.lowerBounds === null &&
    f.upperBounds === null &&
    f.keyMetadata === null &&
    f.splitOffsets !== undefined &&
    f.equalityIds === null &&
    f.sortOrderId !== undefined &&
    (f.sortOrderId === null || (f.sortOrderId | 0) === f.sortOrderId) &&
    f.firstRowId !== undefined &&
    fitsLong(f.firstRowId) &&
    f.referencedDataFile === null &&
    f.contentOffset === null &&
    f.contentSizeInBytes === null
  );
}

const entryFits = (e: ManifestEntry, specId: number): boolean =>
  fitsColumns(e.dataFile) && e.dataFile.specId === specId && fitsLong(e.sequenceNumber ?? 0n) && fitsLong(e.snapshotId);

/**
 * Reads a data manifest's bytes into columns: its live data files (status not DELETED, content
 * data). With `pathDeletes` (DeleteFileIndex.pathKeys), a file whose normalized path is not among
 * them is flagged NO_PATH_DELETES, so the thread that pairs deletes looks up its partition only.
 */
export async function decodeManifestColumns(
  source: ByteSource,
  manifest: ManifestFile,
  spec: PartitionSpec,
  schema: Schema,
  pathDeletes?: ReadonlySet<string>,
): Promise<ManifestColumns> {
  // Sized by the manifest list's counts when it has them (grown when they are short): each batch
  // of entries goes into the columns as it is decoded and dies young.
  const listed = (manifest.addedFilesCount ?? 0) + (manifest.existingFilesCount ?? 0);
  let size = Math.max(16, listed);
  let n = 0;
  const arrays = {
    sizes: new Float64Array(size),
    records: new Float64Array(size),
    sequenceNumbers: new BigInt64Array(size),
    snapshotIds: new BigInt64Array(size),
    sortOrderIds: new Int32Array(size),
    firstRowIds: new BigInt64Array(size),
    flags: new Uint8Array(size),
    formats: new Uint8Array(size),
    partitionIndexes: new Int32Array(size),
    splitIndexes: new Int32Array(size),
  };
  type Arrays = typeof arrays;
  const resize = (to: number): void => {
    for (const k of Object.keys(arrays) as (keyof Arrays)[]) {
      const a = arrays[k];
      const b = new (a.constructor as new (n: number) => typeof a)(to);
      b.set(a.subarray(0, Math.min(n, to)) as never);
      (arrays as Record<keyof Arrays, typeof a>)[k] = b;
    }
    size = to;
  };
  const c = arrays;
  const paths: string[] = [];
  const formatNames: FileFormat[] = [];
  const partitions: { key: string; row: Row }[] = [];
  const splitLists: (readonly bigint[])[] = [];
  // Entries of one partition share their tuple, and equal split lists one array (manifest/reader.ts).
  const rows = new Map<Row, number>();
  const splits = new Map<readonly bigint[], number>();
  const wholeAt: number[] = [];
  const whole: ManifestEntry[] = [];
  for await (const batch of manifestSourceBatches(source, manifest, spec, schema, { dataFileStats: false })) {
    for (const e of batch) {
      if (e.status === 2 || e.dataFile.content !== FileContent.Data) continue;
      if (n === size) resize(size * 2);
      const i = n++;
      const f: DataFile = e.dataFile;
      paths.push(f.filePath);
      let p = rows.get(f.partition);
      if (p === undefined) rows.set(f.partition, (p = partitions.push({ key: partitionKey(f.specId, f.partition), row: f.partition }) - 1));
      c.partitionIndexes[i] = p;
      if (!entryFits(e, spec.specId)) {
        wholeAt.push(i);
        whole.push(e);
        continue;
      }
      c.sizes[i] = Number(f.fileSizeInBytes);
      c.records[i] = Number(f.recordCount);
      c.sequenceNumbers[i] = e.sequenceNumber ?? 0n;
      let flags = pathDeletes !== undefined && (pathDeletes.size === 0 || !pathDeletes.has(normalizePath(f.filePath))) ? COLUMN_FLAGS.NO_PATH_DELETES : 0;
      if (e.snapshotId === null) flags |= COLUMN_FLAGS.NO_SNAPSHOT;
      else c.snapshotIds[i] = e.snapshotId;
      if (f.sortOrderId !== null && f.sortOrderId !== undefined) {
        flags |= COLUMN_FLAGS.SORT_ORDER;
        c.sortOrderIds[i] = f.sortOrderId;
      }
      if (f.firstRowId !== null && f.firstRowId !== undefined) {
        flags |= COLUMN_FLAGS.FIRST_ROW_ID;
        c.firstRowIds[i] = f.firstRowId;
      }
      c.flags[i] = flags;
      let format = formatNames.indexOf(f.fileFormat);
      if (format < 0) format = formatNames.push(f.fileFormat) - 1;
      c.formats[i] = format;
      const list = f.splitOffsets ?? null;
      if (list === null) c.splitIndexes[i] = -1;
      else {
        let s = splits.get(list);
        if (s === undefined) splits.set(list, (s = splitLists.push(list) - 1));
        c.splitIndexes[i] = s;
      }
    }
  }
  if (n < size) resize(n);
  return { ...c, count: n, specId: spec.specId, paths, formatNames, partitions, splits: splitLists, wholeAt: Int32Array.from(wholeAt), whole };
}

/**
 * Columns as sent between threads: the paths as one string and where each ends. A structured
 * clone of thousands of strings makes as many on the receiving thread, young, each copied by the
 * collector when kept (a million of them on the planner's thread, most of its GC time); one long
 * string is allocated old and its slices (unpackColumns) are small objects that point into it.
 */
export type PackedColumns = Omit<ManifestColumns, 'paths'> & { readonly pathText: string; readonly pathEnds: Int32Array };

/** The columns with their paths packed, and the buffers to transfer. */
export function packColumns(c: ManifestColumns): { readonly packed: PackedColumns; readonly transfer: ArrayBuffer[] } {
  const { paths, ...rest } = c;
  const pathEnds = new Int32Array(paths.length);
  let end = 0;
  for (let i = 0; i < paths.length; i++) pathEnds[i] = end += paths[i].length;
  const packed: PackedColumns = { ...rest, pathText: paths.join(''), pathEnds };
  const arrays = [
    c.sizes, c.records, c.sequenceNumbers, c.snapshotIds, c.sortOrderIds, c.firstRowIds, c.flags, c.formats, c.partitionIndexes, c.splitIndexes, c.wholeAt, pathEnds,
  ];
  return { packed, transfer: arrays.map((a) => a.buffer as ArrayBuffer) };
}

/** The columns of packColumns, each path a slice of the one string. */
export function unpackColumns(p: PackedColumns): ManifestColumns {
  const { pathText, pathEnds, ...rest } = p;
  const paths = new Array<string>(pathEnds.length);
  let start = 0;
  for (let i = 0; i < pathEnds.length; i++) paths[i] = pathText.slice(start, (start = pathEnds[i]));
  return { ...rest, paths };
}

/** The DataFile of file i, of partition tuple `row`, as the columns hold it (not for a file that came whole). */
export function columnsDataFile(c: ManifestColumns, i: number, row: Row): DataFile {
  const flags = c.flags[i];
  const split = c.splitIndexes[i];
  return leanDataFile(
    c.paths[i], c.formatNames[c.formats[i]], c.specId, row, c.records[i], c.sizes[i], split < 0 ? null : c.splits[split],
    flags & COLUMN_FLAGS.SORT_ORDER ? c.sortOrderIds[i] : null,
    flags & COLUMN_FLAGS.FIRST_ROW_ID ? c.firstRowIds[i] : null,
  );
}

/** A data file with what columns hold (fitsColumns), every other field null. */
export function leanDataFile(
  filePath: string, fileFormat: FileFormat, specId: number, partition: Row, records: number, size: number,
  splitOffsets: readonly bigint[] | null, sortOrderId: number | null, firstRowId: bigint | null,
): DataFile {
  return {
    content: FileContent.Data,
    filePath,
    fileFormat,
    specId,
    partition,
    recordCount: BigInt(records),
    fileSizeInBytes: BigInt(size),
    columnSizes: null,
    valueCounts: null,
    nullValueCounts: null,
    nanValueCounts: null,
    lowerBounds: null,
    upperBounds: null,
    keyMetadata: null,
    splitOffsets,
    equalityIds: null,
    sortOrderId,
    firstRowId,
    referencedDataFile: null,
    contentOffset: null,
    contentSizeInBytes: null,
  };
}
