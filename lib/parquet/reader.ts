/**
 * Reading Parquet row groups as Arrow record batches from any FileIO, by range.
 *
 * The footer is read and checked here first (magic at both ends, footer length, Thrift), so
 * a cut-short or foreign file fails with an InvalidFileError naming it. parquet-wasm then
 * reads through a Blob look-alike whose `slice(start, end).arrayBuffer()` becomes an
 * InputFile range read; the tail already fetched for the footer is served from memory.
 */
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { InvalidFileError, PackiceError } from '../errors.js';
import type { FileIO, InputFile } from '../io/file-io.js';
import { readFooter, rowGroupStart, type ParquetFooter } from './footer.js';
import { fieldIdsOf, type ArrowFieldIds } from './schema.js';

export interface RowGroupInfo {
  readonly index: number;
  readonly numRows: number;
  /** Position in the file of the row group's first row (for position deletes). */
  readonly firstRowIndex: number;
  /** Byte offset where the row group starts (an Iceberg split offset). */
  readonly startOffset: number;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
}

export interface ParquetFileReader {
  readonly path: string;
  readonly input: InputFile;
  readonly fileLength: number;
  readonly footer: ParquetFooter;
  readonly numRows: number;
  readonly rowGroups: readonly RowGroupInfo[];
  /** The file's schema as Arrow sees it, with `PARQUET:field_id` metadata where the file has ids. */
  readonly arrowSchema: arrow.Schema;
  readonly fieldIds: ArrowFieldIds;
  /** Releases the wasm-side handle; the reader is unusable afterwards. */
  close(): void;
}

export interface ReadOptions {
  /** Row-group indexes to read, in file order (default: all). */
  readonly rowGroups?: readonly number[];
  /** Top-level column names to read (default: all). */
  readonly columns?: readonly string[];
  /** Rows per batch (default 64k; parquet-wasm's own default of 1024 is slow). */
  readonly batchSize?: number;
}

const DEFAULT_BATCH_SIZE = 65_536;

interface Internal {
  readonly wasm: pw.ParquetFile;
  readonly source: RangeBlob;
}
const internals = new WeakMap<ParquetFileReader, Internal>();

/** What parquet-wasm calls on a Blob: `size` and `slice(start, end).arrayBuffer()`. */
class RangeBlob {
  /** The first storage error, rethrown as is instead of a generic "corrupt file". */
  ioError: unknown;

  constructor(
    private readonly input: InputFile,
    readonly size: number,
    private readonly tail: Uint8Array,
    private readonly tailStart: number,
  ) {}

  slice(start: number, end: number): { arrayBuffer(): Promise<ArrayBuffer> } {
    const s = Math.max(0, Math.min(this.size, Math.floor(start)));
    const e = Math.max(s, Math.min(this.size, Math.floor(end)));
    return {
      arrayBuffer: async () => {
        let bytes: Uint8Array;
        if (s >= this.tailStart) {
          bytes = this.tail.slice(s - this.tailStart, e - this.tailStart);
        } else {
          try {
            bytes = await this.input.read(s, e);
          } catch (err) {
            this.ioError ??= err;
            throw err;
          }
        }
        return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
          ? (bytes.buffer as ArrayBuffer)
          : (bytes.slice().buffer as ArrayBuffer);
      },
    };
  }
}

function wasmFailure(path: string, source: RangeBlob, err: unknown, what: string): Error {
  if (source.ioError instanceof PackiceError) return source.ioError;
  if (source.ioError !== undefined) return new InvalidFileError(`${what}: ${String(source.ioError)}`, { path, cause: source.ioError });
  if (err instanceof PackiceError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new InvalidFileError(`${what}: ${message}`, { path, cause: err });
}

/** Opens a Parquet file for row-group reads; checks its footer first. */
export async function openParquet(file: InputFile): Promise<ParquetFileReader>;
export async function openParquet(io: FileIO, path: string, knownLength?: number): Promise<ParquetFileReader>;
export async function openParquet(a: InputFile | FileIO, path?: string, knownLength?: number): Promise<ParquetFileReader> {
  const input: InputFile = path === undefined ? (a as InputFile) : (a as FileIO).newInputFile(path, knownLength);
  const { footer, fileLength, tail, tailStart } = await readFooter(input);
  const source = new RangeBlob(input, fileLength, tail, tailStart);

  let wasm: pw.ParquetFile;
  let schema: arrow.Schema;
  try {
    wasm = await pw.ParquetFile.fromFile(source as unknown as Blob);
    schema = arrow.tableFromIPC(wasm.schema().intoIPCStream()).schema;
  } catch (err) {
    throw wasmFailure(input.path, source, err, 'cannot read Parquet metadata');
  }

  let first = 0;
  const rowGroups = footer.rowGroups.map((rg, index): RowGroupInfo => {
    const info = {
      index,
      numRows: rg.numRows,
      firstRowIndex: first,
      startOffset: rowGroupStart(rg),
      compressedSize: rg.totalCompressedSize ?? rg.columns.reduce((s, c) => s + c.totalCompressedSize, 0),
      uncompressedSize: rg.totalByteSize,
    };
    first += rg.numRows;
    return info;
  });
  if (first !== footer.numRows) {
    throw new InvalidFileError(`invalid Parquet footer: row groups hold ${first} rows but the file claims ${footer.numRows}`, {
      path: input.path,
    });
  }

  const reader: ParquetFileReader = {
    path: input.path,
    input,
    fileLength,
    footer,
    numRows: footer.numRows,
    rowGroups,
    arrowSchema: schema,
    fieldIds: fieldIdsOf(schema),
    close() {
      const i = internals.get(reader);
      if (i) {
        internals.delete(reader);
        i.wasm.free();
      }
    },
  };
  internals.set(reader, { wasm, source });
  return reader;
}

/** Streams the chosen row groups as Arrow record batches, in file order. */
export async function* readRowGroups(file: ParquetFileReader, options: ReadOptions = {}): AsyncIterable<arrow.RecordBatch> {
  const internal = internals.get(file);
  if (!internal) throw new Error(`${file.path}: the Parquet reader is closed`);
  const groups = options.rowGroups;
  if (groups) {
    for (const g of groups) {
      if (!Number.isInteger(g) || g < 0 || g >= file.rowGroups.length) {
        throw new RangeError(`${file.path}: no row group ${g} (the file has ${file.rowGroups.length})`);
      }
    }
    if (groups.length === 0) return;
  }
  if (file.rowGroups.length === 0) return;
  if (options.columns) {
    const names = new Set(file.arrowSchema.fields.map((f) => f.name));
    const unknown = options.columns.filter((c) => !names.has(c));
    if (unknown.length > 0) throw new RangeError(`${file.path}: no column ${unknown.map((c) => JSON.stringify(c)).join(', ')}`);
  }

  const { wasm, source } = internal;
  let reader: ReadableStreamDefaultReader<pw.RecordBatch>;
  try {
    const stream = await wasm.stream({
      batchSize: options.batchSize ?? DEFAULT_BATCH_SIZE,
      ...(groups ? { rowGroups: [...groups] } : {}),
      ...(options.columns ? { columns: [...options.columns] } : {}),
    });
    reader = (stream as ReadableStream<pw.RecordBatch>).getReader();
  } catch (err) {
    throw wasmFailure(file.path, source, err, 'cannot read Parquet data');
  }
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (err) {
        throw wasmFailure(file.path, source, err, 'cannot read Parquet data');
      }
      if (next.done) return;
      const table = arrow.tableFromIPC(next.value.intoIPCStream());
      for (const batch of table.batches) if (batch.numRows > 0) yield batch;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/** Every row group of a file as batches, opening and closing it around the read. */
export async function* readParquetBatches(
  io: FileIO,
  path: string,
  options: ReadOptions = {},
): AsyncIterable<arrow.RecordBatch> {
  const file = await openParquet(io, path);
  try {
    yield* readRowGroups(file, options);
  } finally {
    file.close();
  }
}
