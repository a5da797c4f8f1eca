/**
 * What every layer needs to know about a delete file, defined once: whether it is a deletion
 * vector, the key that says two references name the same delete file, and the bytes a reader
 * fetches to apply it.
 */
import { normalizePath } from '../io/path.js';
import { FileContent, type DataFile } from './manifest.js';
import { MetadataColumns } from './schema.js';

/** The fields of a delete file these rules read; DataFile and its JSON form both have them. */
export interface DeleteFileIdentity {
  readonly content: FileContent;
  readonly filePath: string;
  readonly fileFormat: string;
  readonly contentOffset?: bigint | string | number | null;
}

/** A v3 deletion vector: a position delete stored as a blob in a Puffin file (spec "Deletion Vectors"). */
export function isDeletionVector(f: Pick<DeleteFileIdentity, 'content' | 'fileFormat'>): boolean {
  return f.content === FileContent.PositionDeletes && f.fileFormat.toUpperCase() === 'PUFFIN';
}

/** Keys made so far: a plan asks for the same delete file's key once per data file it applies to. Files are immutable. */
const keys = new WeakMap<DeleteFileIdentity, string>();

/**
 * Says that two references name the same delete file. Deletion vectors share Puffin files, so a
 * DV is its blob: path and offset. Paths are compared without scheme and authority, as the scan
 * compares them (`hdfs://nn/x` and `/x` are the same file).
 */
export function deleteFileKey(f: DeleteFileIdentity): string {
  let key = keys.get(f);
  if (key === undefined) {
    const path = normalizePath(f.filePath);
    key = isDeletionVector(f) && f.contentOffset !== undefined && f.contentOffset !== null ? `${path}#${String(f.contentOffset)}` : path;
    keys.set(f, key);
  }
  return key;
}

/** Bytes a reader fetches to apply a delete file: a DV's blob, else the whole file. */
export function deleteFileReadBytes(f: {
  readonly content: FileContent;
  readonly fileFormat: string;
  readonly fileSizeInBytes: bigint;
  readonly contentSizeInBytes?: bigint | null;
}): bigint {
  return isDeletionVector(f) ? (f.contentSizeInBytes ?? f.fileSizeInBytes) : f.fileSizeInBytes;
}

/**
 * The one data file a position delete file or deletion vector applies to: its
 * referenced_data_file, else the file_path column's bounds when they are equal (writers before
 * v3 scoped a file that way). undefined for a partition-scoped position delete or any other file.
 */
export function referencedDataFile(f: Pick<DataFile, 'content' | 'referencedDataFile' | 'lowerBounds' | 'upperBounds'>): string | undefined {
  if (f.content !== FileContent.PositionDeletes) return undefined;
  if (f.referencedDataFile !== undefined && f.referencedDataFile !== null) return f.referencedDataFile;
  const lower = f.lowerBounds?.get(MetadataColumns.FILE_PATH);
  const upper = f.upperBounds?.get(MetadataColumns.FILE_PATH);
  if (!lower || !upper || lower.length !== upper.length) return undefined;
  for (let i = 0; i < lower.length; i++) if (lower[i] !== upper[i]) return undefined;
  return new TextDecoder().decode(lower);
}
