/**
 * FileIO: the one narrow interface every layer above reads and writes through.
 * Paths are full locations: `/abs/path`, `file:///abs/path` or `s3://bucket/key`.
 */
export interface FileInfo {
  readonly path: string;
  readonly size: number;
  /** Last modification, ms since the epoch. */
  readonly lastModifiedMs: number;
}

/** A source of bytes that can be read by range (the Parquet reader's view of a file). */
export interface InputFile {
  readonly path: string;
  /** Total length in bytes. */
  length(): Promise<number>;
  /** Bytes [start, end). */
  read(start: number, end: number): Promise<Uint8Array>;
}

/** How a stream is written; a FileIO that has no use for a hint ignores it. */
export interface WriteOptions {
  /**
   * Bytes per multipart part of a streamed write (S3; at least 5 MiB): larger parts are fewer PUTs
   * ($0.005 per 1,000) for as many bytes in flight × parts held. Default: the FileIO's own; a part
   * size the FileIO was configured with (S3FileIOOptions.partSize, PACKICE_S3_PART_SIZE_MIB) wins.
   */
  readonly partBytes?: number;
  /**
   * Parts uploaded at once (S3): memory is about partBytes × (partsInFlight + 1). Default: the
   * FileIO's own; a count the FileIO was configured with (S3FileIOOptions.queueSize) wins.
   */
  readonly partsInFlight?: number;
}

export interface FileIO {
  /** Whole object. Throws NotFoundError naming the path. */
  read(path: string): Promise<Uint8Array>;
  /** Bytes [start, end). */
  readRange(path: string, start: number, end: number): Promise<Uint8Array>;
  /** A range-readable handle; the length is fetched once and cached. */
  newInputFile(path: string, knownLength?: number): InputFile;
  stat(path: string): Promise<FileInfo>;
  exists(path: string): Promise<boolean>;
  /** Writes (replacing) the object; a stream is uploaded without buffering it whole. */
  write(path: string, data: Uint8Array | AsyncIterable<Uint8Array>, options?: WriteOptions): Promise<void>;
  /** Writes only if nothing is there; throws AlreadyExistsError otherwise. Atomic. */
  createIfAbsent(path: string, data: Uint8Array): Promise<void>;
  /** Every object under the prefix (a folder or key prefix), recursively. */
  list(prefix: string): AsyncIterable<FileInfo>;
  /** Deletes in batches; missing objects are not an error. */
  deleteMany(paths: readonly string[]): Promise<void>;
}
