/**
 * Reading Parquet row groups as Arrow record batches from any FileIO, by range.
 *
 * The footer is read and checked here first (magic at both ends, footer length, Thrift,
 * column chunks inside the data region), so a cut-short or foreign file fails with an
 * InvalidFileError naming it. Each row group's column chunks are then fetched with one
 * coalesced range read and decoded by parquet-wasm's synchronous `readParquet` from a
 * rebuilt one-row-group file (row-group-file.ts): its async reader kills the process with
 * a wasm panic when a range read fails, and never settles on corrupt pages. ZSTD pages are
 * decompressed natively on the way (row-group-file.ts, compression-codec.ts).
 */
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { IllegalStateError, InvalidArgumentError, InvalidFileError, IoError, PackiceError } from '../errors.js';
import type { FileIO, InputFile } from '../io/file-io.js';
import { readWindow, type ReadWindowOptions } from '../io/read-window.js';
import { canImport, importBatch, type WasmMemory } from './arrow-c-data.js';
import { zstdCodec } from './compression-codec.js';
import { readFooter, rowGroupStart, type ParquetFooter } from './footer.js';
import { planRowGroup, schemaOnlyFile } from './row-group-file.js';
import { ScratchBuffer } from './scratch-buffer.js';
import { fieldIdsOf, schemaByBytes, type ArrowFieldIds } from './schema.js';
import type { TypedField } from './thrift.js';

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
  /** Kept for symmetry with other readers; nothing is held on the wasm side between reads. */
  close(): void;
}

export interface ReadOptions {
  /** Row-group indexes to read, in this order (default: all, in file order). */
  readonly rowGroups?: readonly number[];
  /** Top-level column names to read, kept in file order (default: all). Only their bytes are fetched. */
  readonly columns?: readonly string[];
  /** Rows per batch (default 64k). */
  readonly batchSize?: number;
  /**
   * Fetch the next row groups while one is decoded, through a read window (lib/io/read-window.ts) of
   * this many bytes and reads; decoded in order all the same. Default: one row group at a time.
   */
  readonly window?: Omit<ReadWindowOptions, 'ordered'>;
  /**
   * Each batch is valid only until the next one is asked for: batches of up to 16 MiB are copied
   * out of wasm into one buffer, reused for this read's batches. For a reader done with each batch
   * before it pulls the next (the proof's re-read, which only hashes them): it spares the GC a
   * buffer per batch.
   */
  readonly transient?: boolean;
}

const DEFAULT_BATCH_SIZE = 65_536;

/** What a reader keeps between reads: the typed footer, and the tail bytes already fetched. */
interface ReaderState {
  readonly typed: readonly TypedField[];
  /** Bytes [tailStart, fileLength) of the file, read with the footer: a small file's row groups are served from them. */
  readonly tail: Uint8Array;
  readonly tailStart: number;
}

const readerStates = new WeakMap<ParquetFileReader, ReaderState>();

function wasmError(path: string, err: unknown, what: string): InvalidFileError {
  const message = err instanceof Error ? err.message : String(err);
  return new InvalidFileError(`${what}: ${message}`, { path, cause: err });
}

/** Arrow schemas of schema-only files, remembered by their bytes. */
const arrowSchemaOf = schemaByBytes((schemaFile) => arrow.tableFromIPC(pw.readSchema(schemaFile).intoIPCStream()).schema);

/** Opens a Parquet file for row-group reads; checks its footer first. */
export async function openParquet(file: InputFile): Promise<ParquetFileReader>;
export async function openParquet(io: FileIO, path: string, knownLength?: number): Promise<ParquetFileReader>;
export async function openParquet(a: InputFile | FileIO, path?: string, knownLength?: number): Promise<ParquetFileReader> {
  const input: InputFile = path === undefined ? (a as InputFile) : (a as FileIO).newInputFile(path, knownLength);
  const { footer, fileLength, typed, tail, tailStart } = await readFooter(input);
  let schema: arrow.Schema;
  try {
    schema = arrowSchemaOf(schemaOnlyFile(typed));
  } catch (err) {
    throw wasmError(input.path, err, 'cannot read the Parquet schema');
  }

  let first = 0;
  const rowGroups = footer.rowGroups.map((rg, index): RowGroupInfo => {
    const info = {
      index,
      numRows: rg.numRows,
      firstRowIndex: first,
      startOffset: rowGroupStart(rg),
      compressedSize: rg.columns.reduce((s, c) => s + c.totalCompressedSize, 0),
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
      readerStates.delete(reader);
    },
  };
  readerStates.set(reader, { typed, tail, tailStart });
  return reader;
}

/**
 * Bytes [s, e) of the file: what the tail read with the footer holds (all of a file under 64 KiB)
 * is not fetched again, so each byte of a file is read once.
 */
async function readRange(file: ParquetFileReader, state: ReaderState, s: number, e: number): Promise<Uint8Array> {
  const { tail, tailStart } = state;
  if (s >= tailStart) return tail.subarray(s - tailStart, e - tailStart);
  if (e <= tailStart) return file.input.read(s, e);
  const head = await file.input.read(s, tailStart);
  if (head.length !== tailStart - s) return head;
  const out = new Uint8Array(e - s);
  out.set(head, 0);
  out.set(tail.subarray(0, e - tailStart), head.length);
  return out;
}

/** A row group's plan and its column chunks' bytes, fetched: what decodeRowGroup decodes. */
interface FetchedRowGroup {
  readonly index: number;
  readonly plan: ReturnType<typeof planRowGroup>;
  readonly bytes: readonly Uint8Array[];
}

function rowGroupPlan(file: ParquetFileReader, state: ReaderState, index: number, columns: readonly string[] | undefined): FetchedRowGroup['plan'] {
  const zstd = zstdCodec();
  return planRowGroup(state.typed, index, columns, { path: file.path, ...(zstd ? { zstd } : {}) });
}

/** Bytes a row group's fetch asks the FileIO for (what the tail read with the footer holds costs nothing). */
function fetchBytes(state: ReaderState, plan: FetchedRowGroup['plan']): number {
  return plan.reads.reduce((n, [s, e]) => n + Math.max(0, Math.min(e, state.tailStart) - s), 0);
}

async function fetchRowGroup(file: ParquetFileReader, state: ReaderState, index: number, plan: FetchedRowGroup['plan']): Promise<FetchedRowGroup> {
  const bytes = await Promise.all(plan.reads.map(([s, e]) => readRange(file, state, s, e)));
  return { index, plan, bytes };
}

/** Decodes one fetched row group (its kept columns) in wasm, synchronously, and yields its batches one at a time. */
async function* decodeRowGroup(
  file: ParquetFileReader,
  { index, plan, bytes: fetched }: FetchedRowGroup,
  columns: readonly string[] | undefined,
  batchSize: number,
  batches: ScratchBuffer | undefined,
): AsyncIterable<arrow.RecordBatch> {
  fetched.forEach((b, k) => {
    const [s, e] = plan.reads[k];
    if (b.length !== e - s) {
      throw new InvalidFileError(`short read of row group ${index}: asked for bytes [${s}, ${e}), got ${b.length}`, {
        path: file.path,
      });
    }
  });
  const rowGroupFile = plan.build(fetched, ROW_GROUP_SCRATCH);
  let table: pw.Table;
  try {
    table = pw.readParquet(rowGroupFile, { batchSize });
  } catch (err) {
    throw wasmError(file.path, err, `cannot read row group ${index}`);
  }
  try {
    const schema = columns ? projectedSchema(file.arrowSchema, columns) : file.arrowSchema;
    const ffi = table.toFFI();
    try {
      if (canImport(WASM_MEMORY, ffi.schemaAddr(), schema)) {
        // Copied one at a time: only one batch is out of wasm memory at once.
        for (const ptr of ffi.arrayAddrs()) {
          const batch = importBatch(WASM_MEMORY, ptr, schema, batches);
          if (batch.numRows > 0) yield batch;
        }
        return;
      }
    } finally {
      ffi.free();
    }
    // Types the C data import does not cover (dictionaries, views, large offsets...): Arrow IPC.
    for (let i = 0; i < table.numBatches; i++) {
      const b = table.recordBatch(i);
      if (!b) continue;
      for (const batch of arrow.tableFromIPC(b.intoIPCStream()).batches) if (batch.numRows > 0) yield batch;
    }
  } finally {
    table.free();
  }
}

const WASM_MEMORY = pw.wasmMemory() as unknown as WasmMemory;
/** Rebuilt row-group files up to this size are built in one reused buffer (readParquet copies them into wasm at once). */
const ROW_GROUP_SCRATCH = new ScratchBuffer(4 * 1024 * 1024);
/** Transient batches up to this size are copied into one buffer per read (ReadOptions.transient). */
const TRANSIENT_BATCH_BYTES = 16 * 1024 * 1024;

/** The top-level fields named in `columns`, in the file's order (a rebuilt row-group file keeps that order). */
function projectedSchema(schema: arrow.Schema, columns: readonly string[]): arrow.Schema {
  const keep = new Set(columns);
  return schema.fields.every((f) => keep.has(f.name)) ? schema : new arrow.Schema(schema.fields.filter((f) => keep.has(f.name)), schema.metadata);
}

/** Streams the chosen row groups as Arrow record batches. */
export async function* readRowGroups(file: ParquetFileReader, options: ReadOptions = {}): AsyncIterable<arrow.RecordBatch> {
  const state = readerStates.get(file);
  if (!state) throw new IllegalStateError('the Parquet reader is closed', { path: file.path });
  const groups = options.rowGroups ?? file.rowGroups.map((g) => g.index);
  for (const g of groups) {
    if (!Number.isInteger(g) || g < 0 || g >= file.rowGroups.length) {
      throw new InvalidArgumentError(`no row group ${g} (the file has ${file.rowGroups.length})`, { path: file.path });
    }
  }
  const columns = options.columns;
  if (columns) {
    const names = new Set(file.arrowSchema.fields.map((f) => f.name));
    const unknown = columns.filter((c) => !names.has(c));
    if (unknown.length > 0) throw new InvalidArgumentError(`no column ${unknown.map((c) => JSON.stringify(c)).join(', ')}`, { path: file.path });
    if (columns.length === 0) throw new InvalidArgumentError('no columns asked for', { path: file.path });
  }
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const batches = options.transient ? new ScratchBuffer(TRANSIENT_BATCH_BYTES) : undefined;
  const kept = groups.filter((g) => file.rowGroups[g].numRows > 0);
  if (!options.window) {
    for (const g of kept) yield* decodeRowGroup(file, await fetchRowGroup(file, state, g, rowGroupPlan(file, state, g, columns)), columns, batchSize, batches);
    return;
  }
  const planned = kept.map((g) => ({ g, plan: rowGroupPlan(file, state, g, columns) }));
  const fetch = ({ g, plan }: (typeof planned)[number]): Promise<FetchedRowGroup> =>
    fetchRowGroup(file, state, g, plan).catch((e: unknown) => {
      // Several reads in flight: say which one failed, and keep what the FileIO said about retrying.
      const message = e instanceof Error ? e.message : String(e);
      throw new IoError(`reading row group ${g} failed: ${message}`, {
        path: file.path,
        cause: e,
        retryable: e instanceof PackiceError ? e.retryable : true,
      });
    });
  for await (const { value } of readWindow(planned, (x) => fetchBytes(state, x.plan), fetch, { ...options.window, ordered: true })) {
    yield* decodeRowGroup(file, value, columns, batchSize, batches);
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
