/**
 * Writing Iceberg data to Parquet through parquet-wasm's streaming writer.
 *
 * Small batches are joined into batches of about three data pages before they cross into wasm,
 * where each crossing has a fixed cost: their buffers are written once into one Arrow IPC stream
 * (ipc-stream.ts). Batches are pulled by the wasm writer
 * one at a time and the bytes it emits at each row-group flush stream straight to FileIO, so
 * memory stays near one row group (plus one batch's IPC stream). Each
 * file reports what a manifest entry needs: size, record count, split offsets (from the
 * footer of the bytes written) and metrics computed from the values written.
 *
 * ZSTD is done natively where Node has it (compression-codec.ts): wasm writes UNCOMPRESSED and
 * each row group's pages are compressed at the asked level as they stream out (page-compressor.ts).
 *
 * parquet-wasm traps (LIBRARY-NOTES): WriterProperties and wasm tables are consumed by
 * use, so both are made fresh for every file and batch.
 */
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { IllegalStateError, InvalidArgumentError, InvalidFileError, PackiceError, ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { DEFAULT_METRICS_CONFIG, type MetricsConfig } from '../iceberg/metrics-config.js';
import type { StructType } from '../iceberg/types.js';
import type { Row } from '../iceberg/values.js';
import { DEFAULT_ZSTD_LEVEL, zstdCodec, type ZstdCodec } from './compression-codec.js';
import { annotateUuidColumns, decodeFooter, splitOffsets, type ParquetFooter } from './footer.js';
import { PageCompressor } from './page-compressor.js';
import { recordBatch } from './batches.js';
import { concatBatches, dataBytes } from './concat.js';
import { IpcStreamEncoder } from './ipc-stream.js';
import { ScratchBuffer } from './scratch-buffer.js';
import { MetricsCollector, type ColumnMetrics } from './metrics.js';
import { DICTIONARY_SAMPLE_ROWS, dictionaryChoices } from './dictionary.js';
import { arrowSchema, sameArrowType } from './schema.js';
import { batchFromRows } from './values.js';

export type ParquetCompression = 'zstd' | 'snappy' | 'gzip' | 'brotli' | 'lz4' | 'uncompressed';

export interface ParquetWriterOptions {
  /** Default zstd. */
  readonly compression?: ParquetCompression;
  /**
   * ZSTD level (default 3, as Iceberg and parquet-mr). Honoured where a native zstd exists
   * (compression-codec.ts): the pages are compressed outside wasm. Without one, parquet-wasm
   * 0.8 compresses at its level 1, and other codecs at their defaults.
   */
  readonly compressionLevel?: number;
  /** Most rows in a row group (default 1,048,576). */
  readonly rowGroupRows?: number;
  /** Most in-memory bytes buffered for a row group before it is flushed (default 128 MiB). */
  readonly rowGroupBytes?: number;
  /** Data page size limit in bytes (default 1 MiB). */
  readonly pageSizeBytes?: number;
  /** Dictionary page size limit in bytes, past which a column falls back to plain encoding (default 1 MiB). */
  readonly dictionaryPageSizeBytes?: number;
  /**
   * Dictionary-encode every column (true) or none (false). By default each top-level column
   * is judged on the file's first batch as parquet-mr judges its first page (dictionary.ts):
   * dictionaries that would not pay for themselves are left off, which writes high-cardinality
   * data about a third faster and smaller; nested columns keep dictionaries, as parquet-rs
   * writes them (falling back to plain encoding past the dictionary page limit).
   */
  readonly dictionary?: boolean;
  /** Which metrics to keep (default truncate(16) for every column). */
  readonly metricsConfig?: MetricsConfig;
  /** Key-value metadata for the footer. */
  readonly keyValueMetadata?: ReadonlyMap<string, string>;
  /** Parquet bytes per Arrow byte assumed by `estimatedSize` until the first row group is flushed (default 0.5). */
  readonly expectedCompressionRatio?: number;
}

export interface WrittenFile {
  readonly path: string;
  readonly fileSizeInBytes: number;
  readonly recordCount: number;
  /** Row-group start offsets, ascending (Iceberg split_offsets). */
  readonly splitOffsets: readonly number[];
  readonly metrics: ColumnMetrics;
  readonly rowGroupCount: number;
}

const DEFAULT_ROW_GROUP_ROWS = 1_048_576;
const DEFAULT_ROW_GROUP_BYTES = 128 * 1024 * 1024;
/**
 * parquet-rs (parquet-wasm 0.8) closes a data page at the first mini-batch end at or past 20,000
 * rows, and a column without nulls is fed in mini-batches of 20,000 rows from the start of each
 * batch it is handed. Batches cut at 20,000-row multiples of their row group therefore give pages
 * of 20,000 rows; other cuts leave pages of up to ~40,000, which ZSTD compresses worse (3M rows of
 * bench/parquet.ts: a 39,424-row timestamp page took 226 KB, 20,000 rows 49 KB).
 */
const PAGE_ROWS = 20_000;
/** Rows per batch handed to the wasm writer: three pages. */
const CROSSING_ROWS = 3 * PAGE_ROWS;
/** Most Arrow bytes per batch handed to the wasm writer (wide rows; at most 1/32 of a row group, see the constructor). */
const CROSSING_BYTES = 8 * 1024 * 1024;
/** The IPC streams handed to wasm (copied in at once) are built in one reused buffer, up to this size. */
const IPC_SCRATCH = new ScratchBuffer(2 * CROSSING_BYTES);
/** Compressed/in-memory byte ratio assumed before the first row group is flushed. */
const INITIAL_COMPRESSION_RATIO = 0.5;
// Parquet readers parse created_by as "<app> version <v> (build <b>)" (PARQUET-251).
export const CREATED_BY = 'packice version 0.1.0 (build parquet-wasm 0.8.0)';

const CODECS: Record<ParquetCompression, pw.Compression> = {
  zstd: pw.Compression.ZSTD,
  snappy: pw.Compression.SNAPPY,
  gzip: pw.Compression.GZIP,
  brotli: pw.Compression.BROTLI,
  lz4: pw.Compression.LZ4_RAW,
  uncompressed: pw.Compression.UNCOMPRESSED,
};

function writerProperties(
  options: ParquetWriterOptions,
  columnDictionary: ReadonlyMap<string, boolean>,
  nativeZstd: boolean,
): pw.WriterProperties {
  let b = new pw.WriterPropertiesBuilder()
    .setCompression(nativeZstd ? pw.Compression.UNCOMPRESSED : CODECS[options.compression ?? 'zstd'])
    .setMaxRowGroupSize(options.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS)
    .setMaxRowGroupBytes(options.rowGroupBytes ?? DEFAULT_ROW_GROUP_BYTES)
    .setCreatedBy(CREATED_BY);
  if (options.pageSizeBytes !== undefined) b = b.setDataPageSizeLimit(options.pageSizeBytes);
  if (options.dictionaryPageSizeBytes !== undefined) b = b.setDictionaryPageSizeLimit(options.dictionaryPageSizeBytes);
  if (options.dictionary !== undefined) b = b.setDictionaryEnabled(options.dictionary);
  for (const [column, on] of columnDictionary) b = b.setColumnDictionaryEnabled(column, on);
  if (options.keyValueMetadata && options.keyValueMetadata.size > 0) b = b.setKeyValueMetadata(new Map(options.keyValueMetadata));
  return b.build();
}

/** Gives Arrow data the target type tree (field names and ids), keeping its buffers. */
function retype(data: arrow.Data, type: arrow.DataType): arrow.Data {
  const children = type.children?.length
    ? type.children.map((c, i) => retype(data.children[i], c.type))
    : data.children;
  return data.clone(type, undefined, undefined, undefined, undefined, children);
}

/** A batch in exactly the file's Arrow schema; throws naming the column when it cannot be. */
export function conformBatch(batch: arrow.RecordBatch, target: arrow.Schema, path: string): arrow.RecordBatch {
  const fields = batch.schema.fields;
  if (fields.length !== target.fields.length) {
    throw new ValidationError(
      `cannot write a batch of ${fields.length} columns (${fields.map((f) => f.name).join(', ')}) ` +
        `to a file of ${target.fields.length} (${target.fields.map((f) => f.name).join(', ')})`,
      { path },
    );
  }
  const children = target.fields.map((t, i) => {
    const data = batch.data.children[i];
    if (!sameArrowType(data.type, t.type)) {
      throw new ValidationError(`column ${t.name}: the batch holds Arrow ${String(data.type)}, the file needs ${String(t.type)}`, {
        path,
      });
    }
    if (!t.nullable && data.nullCount > 0) {
      throw new ValidationError(`column ${t.name} is required but the batch has ${data.nullCount} null(s)`, { path });
    }
    return retype(data, t.type);
  });
  return recordBatch(target, arrow.makeData({ type: new arrow.Struct(target.fields), length: batch.numRows, nullCount: 0, children }));
}

/** Field ids of uuid columns (their footer needs the UUID logical type parquet-wasm cannot write). */
export function uuidFieldIds(t: StructType): Set<number> {
  const out = new Set<number>();
  const visit = (x: StructType['fields'][number]['type']): void => {
    if (x.type === 'struct') for (const f of x.fields) {
      if (f.type.type === 'uuid') out.add(f.id);
      visit(f.type);
    }
    else if (x.type === 'list') {
      if (x.element.type === 'uuid') out.add(x.elementId);
      visit(x.element);
    } else if (x.type === 'map') {
      if (x.key.type === 'uuid') out.add(x.keyId);
      if (x.value.type === 'uuid') out.add(x.valueId);
      visit(x.key);
      visit(x.value);
    }
  };
  visit(t);
  return out;
}

/** One queued batch, resolved once the wasm writer has pulled it. */
interface Pending {
  /** A batch, or null to end the file. */
  readonly batch: pw.RecordBatch | null;
  /** The Arrow batches it came from and their bytes (on the first wasm batch of each): the first rows set the dictionaries. */
  readonly source?: { readonly batches: readonly arrow.RecordBatch[]; readonly bytes: number };
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

/** Writes one Parquet file. Call `write`/`writeRows` any number of times, then `close` (or `abort`). */
export class ParquetWriter {
  readonly path: string;
  readonly schema: StructType;
  private readonly target: arrow.Schema;
  private readonly ipc: IpcStreamEncoder;
  private readonly collector: MetricsCollector;
  private readonly uuidIds: Set<number>;
  private readonly queue: Pending[] = [];
  private pull: ((p: Pending) => void) | undefined;
  private failure: unknown;
  private closed = false;
  private readonly done: Promise<void>;
  /**
   * Rejects the read of the wasm output stream in flight. A fresh promise per read: one
   * long-lived promise raced against every read would keep each read's result (a whole row
   * group's bytes) reachable through its reactions until the file closes.
   */
  private stopRead: ((e: unknown) => void) | undefined;
  private rows = 0;
  /** Arrow bytes written, and taken by the wasm writer (the rest wait in `held` or the queue). */
  private arrowBytes = 0;
  private arrowBytesPulled = 0;
  private arrowBytesAtFlush = 0;
  /** Conformed batches not yet handed over, with their rows and Arrow bytes. */
  private held: arrow.RecordBatch[] = [];
  private heldRows = 0;
  private heldBytes = 0;
  /** Rows handed to the wasm writer. */
  private rowsSent = 0;
  private readonly rowGroupRows: number;
  private readonly crossingBytes: number;
  private flushed = 0;
  private footer: ParquetFooter | undefined;
  /** Native ZSTD when the file is ZSTD and Node has one; else wasm compresses. */
  private readonly zstd: ZstdCodec | undefined;

  private constructor(
    private readonly io: FileIO,
    path: string,
    schema: StructType,
    private readonly options: ParquetWriterOptions,
  ) {
    this.path = path;
    this.schema = schema;
    this.target = arrowSchema(schema);
    this.ipc = new IpcStreamEncoder(this.target);
    this.collector = new MetricsCollector(schema, options.metricsConfig ?? DEFAULT_METRICS_CONFIG);
    this.uuidIds = uuidFieldIds(schema);
    this.zstd = (options.compression ?? 'zstd') === 'zstd' ? zstdCodec() : undefined;
    this.rowGroupRows = options.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS;
    // A small part of a row group, so that the size estimate lags a flush by little.
    this.crossingBytes = Math.max(1, Math.min(CROSSING_BYTES, (options.rowGroupBytes ?? DEFAULT_ROW_GROUP_BYTES) / 32));
    this.done = this.io.write(path, this.output());
    // Failures surface through write/close; keep Node from reporting them as unhandled meanwhile.
    this.done.catch((e: unknown) => this.fail(e));
  }

  /** Starts a file at `path` (nothing is visible there until `close`, on a FileIO that writes atomically). */
  static open(io: FileIO, path: string, schema: StructType, options: ParquetWriterOptions = {}): ParquetWriter {
    return new ParquetWriter(io, path, schema, options);
  }

  get recordCount(): number {
    return this.rows;
  }

  /** Bytes the wasm writer has emitted so far (whole row groups). */
  get bytesFlushed(): number {
    return this.flushed;
  }

  /** Parquet bytes per Arrow byte seen so far (or the initial guess before the first flush). */
  get compressionRatio(): number {
    return this.arrowBytesAtFlush > 0
      ? this.flushed / this.arrowBytesAtFlush
      : (this.options.expectedCompressionRatio ?? INITIAL_COMPRESSION_RATIO);
  }

  /** Arrow bytes written so far (concat.ts `dataBytes`). */
  get arrowBytesWritten(): number {
    return this.arrowBytes;
  }

  /**
   * Size the file would have if closed now: everything written at the observed compression
   * ratio. Flushes are seen a little after the batch that caused them, so this is an estimate.
   */
  get estimatedSize(): number {
    return Math.max(this.flushed, Math.round(this.arrowBytes * this.compressionRatio));
  }

  private fail(e: unknown): void {
    if (this.failure !== undefined) return;
    this.failure = e;
    this.held = [];
    for (const p of this.queue.splice(0)) p.reject(e);
    // Stop waiting on the wasm stream (it does not react to an errored input), then let it end.
    this.stopRead?.(e);
    this.stopRead = undefined;
    const pull = this.pull;
    if (pull) {
      this.pull = undefined;
      pull({ batch: null, resolve: () => undefined, reject: () => undefined });
    }
  }

  private enqueue(batch: pw.RecordBatch | null, source?: Pending['source']): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      const p: Pending = { batch, resolve, reject, ...(source ? { source } : {}) };
      const pull = this.pull;
      if (pull) {
        this.pull = undefined;
        pull(p);
      } else {
        this.queue.push(p);
      }
    });
  }

  private next(): Promise<Pending> {
    const p = this.queue.shift();
    if (p) return Promise.resolve(p);
    if (this.failure !== undefined) return Promise.resolve({ batch: null, resolve: () => undefined, reject: () => undefined });
    return new Promise((resolve) => {
      this.pull = resolve;
    });
  }

  /** The wasm writer's byte stream, with the footer's uuid columns annotated; tracks sizes. */
  private async *output(): AsyncGenerator<Uint8Array> {
    // Yield once so the constructor finishes before any batch is requested.
    await Promise.resolve();
    // The wasm writer's properties wait for the first rows (taken in, handed over later): they decide which columns get dictionaries.
    const taken: Pending[] = [];
    const sample: arrow.RecordBatch[] = [];
    if (this.options.dictionary === undefined) {
      // Half a row group at most, so that a small file still flushes (and calibrates its size estimate) early.
      const maxBytes = (this.options.rowGroupBytes ?? DEFAULT_ROW_GROUP_BYTES) / 2;
      for (let rows = 0, bytes = 0; rows < DICTIONARY_SAMPLE_ROWS && bytes < maxBytes; ) {
        const p = await this.next();
        taken.push(p);
        if (p.batch === null) break;
        p.resolve();
        if (p.source) {
          for (const b of p.source.batches) {
            sample.push(b);
            rows += b.numRows;
          }
          bytes += p.source.bytes;
        }
      }
    }
    let choices: Map<string, boolean>;
    try {
      choices = dictionaryChoices(sample);
    } catch (e) {
      // The rows taken are nobody's to hand over any more: their writes and close fail with it.
      for (const p of taken) p.reject(e);
      throw e;
    }
    const input = new ReadableStream<pw.RecordBatch>(
      {
        pull: async (controller) => {
          const p = taken.shift() ?? (await this.next());
          if (p.batch === null) {
            controller.close();
            p.resolve();
            return;
          }
          controller.enqueue(p.batch);
          this.arrowBytesPulled += p.source?.bytes ?? 0;
          p.resolve();
        },
      },
      { highWaterMark: 0 },
    );
    const stream = (await pw.transformParquetStream(input, writerProperties(this.options, choices, this.zstd !== undefined))) as ReadableStream<Uint8Array>;
    const reader = stream.getReader();
    const compressor = this.zstd && new PageCompressor(this.zstd, this.options.compressionLevel ?? DEFAULT_ZSTD_LEVEL, this.path);
    let held: Uint8Array | undefined;
    try {
      for (;;) {
        const { done, value: wasmBytes } = await this.read(reader);
        if (done) break;
        const value = compressor ? compressor.push(wasmBytes) : wasmBytes;
        if (value.length === 0) continue;
        this.flushed += value.length;
        this.arrowBytesAtFlush = this.arrowBytesPulled;
        if (held) yield held;
        held = value;
      }
      if (compressor) {
        const last = compressor.finish();
        this.flushed += last.length;
        if (held) yield held;
        held = last;
      }
    } catch (e) {
      const err =
        e instanceof PackiceError
          ? e
          : new InvalidFileError(`Parquet writer failed: ${e instanceof Error ? e.message : String(e)}`, { path: this.path, cause: e });
      this.fail(err);
      throw err;
    }
    if (held) {
      const last = this.finishFooter(held);
      this.flushed += last.length - held.length;
      yield last;
    }
  }

  /** One read of the wasm output, rejected early if the writer fails meanwhile. */
  private read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<{ done: true; value?: undefined } | { done: false; value: Uint8Array }> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.stopRead = reject;
      reader.read().then(
        (r) => {
          this.stopRead = undefined;
          resolve(r.done ? { done: true } : { done: false, value: r.value });
        },
        (e: unknown) => {
          this.stopRead = undefined;
          reject(e);
        },
      );
    });
  }

  /** Parses (and if needed patches) the footer at the end of the final chunk. */
  private finishFooter(chunk: Uint8Array): Uint8Array {
    if (chunk.length < 8) return chunk;
    const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const len = view.getUint32(chunk.length - 8, true);
    const start = chunk.length - 8 - len;
    if (start < 0) return chunk; // footer split across chunks: read back after the write
    const footerBytes = chunk.subarray(start, chunk.length - 8);
    const patched = annotateUuidColumns(footerBytes, this.uuidIds);
    this.footer = decodeFooter(patched);
    if (patched === footerBytes) return chunk;
    const out = new Uint8Array(start + patched.length + 8);
    out.set(chunk.subarray(0, start), 0);
    out.set(patched, start);
    new DataView(out.buffer).setUint32(start + patched.length, patched.length, true);
    out.set(chunk.subarray(chunk.length - 4), start + patched.length + 4);
    return out;
  }

  /** Writes a batch whose columns are the schema's (by position; types must match schema.ts's mapping). */
  async write(batch: arrow.RecordBatch): Promise<void> {
    if (this.closed) throw new IllegalStateError('the writer is closed', { path: this.path });
    if (this.failure !== undefined) throw this.failure;
    if (batch.numRows === 0) return;
    const conformed = conformBatch(batch, this.target, this.path);
    const bytes = dataBytes(conformed.data);
    this.collector.add(conformed);
    this.rows += conformed.numRows;
    this.arrowBytes += bytes;
    this.held.push(conformed);
    this.heldRows += conformed.numRows;
    this.heldBytes += bytes;
    while (this.heldRows > 0 && (this.heldRows >= this.crossingRows() || this.heldBytes >= this.crossingBytes)) await this.send(false);
  }

  /** Rows of the next batch handed over: three pages, not past the end of the row group. */
  private crossingRows(): number {
    return Math.min(CROSSING_ROWS, this.rowGroupRows - (this.rowsSent % this.rowGroupRows));
  }

  /** Hands the held rows to the wasm writer, one batch of `crossingRows` (fewer for wide rows, or all when `all`). */
  private async send(all: boolean): Promise<void> {
    let take = Math.min(this.heldRows, this.crossingRows());
    if (this.heldBytes > this.crossingBytes) take = Math.min(take, Math.max(1, Math.floor((this.crossingBytes * this.heldRows) / this.heldBytes)));
    // Short of a full batch (wide rows, or the end of the file): keep the cut on a page boundary if possible.
    if (!all && take < this.crossingRows() && take >= PAGE_ROWS) take -= take % PAGE_ROWS;
    const parts: arrow.RecordBatch[] = [];
    let rows = 0;
    while (rows < take) {
      const b = this.held[0];
      const want = take - rows;
      if (b.numRows <= want) {
        parts.push(this.held.shift()!);
        rows += b.numRows;
      } else {
        parts.push(b.slice(0, want));
        this.held[0] = b.slice(want, b.numRows);
        rows += want;
      }
    }
    let bytes = 0;
    for (const p of parts) bytes += dataBytes(p.data);
    this.heldRows -= take;
    this.heldBytes = 0;
    for (const b of this.held) this.heldBytes += dataBytes(b.data);
    this.rowsSent += take;
    // The parts' buffers go once into the IPC stream (ipc-stream.ts), not joined first.
    const ipc = this.ipc.encode(parts, IPC_SCRATCH) ?? arrow.tableToIPC(new arrow.Table([concatBatches(parts)]), 'stream');
    const table = pw.Table.fromIPCStream(ipc);
    const wasmBatches = table.recordBatches();
    table.free();
    for (let i = 0; i < wasmBatches.length; i++) await this.enqueue(wasmBatches[i], i === 0 ? { batches: parts, bytes } : undefined);
  }

  /** Writes rows keyed by field name. */
  async writeRows(rows: readonly Row[]): Promise<void> {
    if (rows.length > 0) await this.write(batchFromRows(this.schema, rows));
  }

  /** Finishes the file and describes it. */
  async close(): Promise<WrittenFile> {
    if (this.closed) throw new IllegalStateError('the writer is closed', { path: this.path });
    this.closed = true;
    if (this.failure === undefined) while (this.heldRows > 0) await this.send(true);
    if (this.rows === 0 && this.failure === undefined) {
      // The wasm writer takes its schema from the first batch: give it an empty one.
      const empty = pw.Table.fromIPCStream(arrow.tableToIPC(new arrow.Table([batchFromRows(this.schema, [])]), 'stream'));
      const batches = empty.recordBatches();
      empty.free();
      for (const b of batches) await this.enqueue(b);
    }
    await this.enqueue(null);
    await this.done;
    if (this.failure !== undefined) throw this.failure;
    let footer = this.footer;
    if (!footer) {
      const tail = await this.io.readRange(this.path, Math.max(0, this.flushed - 8), this.flushed);
      const len = new DataView(tail.buffer, tail.byteOffset, 8).getUint32(0, true);
      footer = decodeFooter(await this.io.readRange(this.path, this.flushed - 8 - len, this.flushed - 8));
    }
    if (footer.numRows !== this.rows) {
      throw new InvalidFileError(`wrote ${this.rows} rows but the footer says ${footer.numRows}`, { path: this.path });
    }
    return {
      path: this.path,
      fileSizeInBytes: this.flushed,
      recordCount: this.rows,
      splitOffsets: splitOffsets(footer),
      metrics: this.collector.metrics(footer),
      rowGroupCount: footer.rowGroups.length,
    };
  }

  /** Stops writing and removes whatever reached storage. */
  async abort(): Promise<void> {
    if (this.closed && this.failure === undefined) return;
    this.closed = true;
    this.fail(new IllegalStateError('write aborted', { path: this.path }));
    await this.done.catch(() => undefined);
    await this.io.deleteMany([this.path]).catch(() => undefined);
  }
}

export interface RollingWriterOptions extends ParquetWriterOptions {
  /** Start a new file once a file reaches about this many bytes (Java write.target-file-size-bytes; default 512 MiB). */
  readonly targetFileSizeBytes?: number;
  /** Location of the n-th file (0-based). */
  readonly nextPath: (index: number) => string;
}

const DEFAULT_TARGET_FILE_SIZE = 512 * 1024 * 1024;
/** A file should take about this many size checks to fill: large batches are cut to match. */
const CHECKS_PER_FILE = 32;

/**
 * Writes as many files as it takes to keep each near the target size. Row groups are capped at
 * the target in buffered bytes, so the first flush calibrates the compression ratio well before
 * a file is full, and each file starts from the ratio the previous one ended with.
 */
export class RollingParquetWriter {
  private current: ParquetWriter | undefined;
  private readonly written: WrittenFile[] = [];
  private index = 0;
  private readonly target: number;
  private readonly fileOptions: ParquetWriterOptions;
  private ratio: number | undefined;

  constructor(
    private readonly io: FileIO,
    readonly schema: StructType,
    private readonly options: RollingWriterOptions,
  ) {
    this.target = options.targetFileSizeBytes ?? DEFAULT_TARGET_FILE_SIZE;
    if (!(this.target > 0)) throw new InvalidArgumentError(`target file size must be positive, got ${this.target}`);
    this.fileOptions = {
      ...options,
      rowGroupBytes: Math.min(options.rowGroupBytes ?? DEFAULT_ROW_GROUP_BYTES, this.target),
    };
  }

  /** Files finished so far. */
  get files(): readonly WrittenFile[] {
    return this.written;
  }

  /** The `nextPath` index of the file being written, or undefined between files. */
  get currentFileIndex(): number | undefined {
    return this.current ? this.index - 1 : undefined;
  }

  /** Rows written to the file being written (0 between files). */
  get currentFileRecordCount(): number {
    return this.current?.recordCount ?? 0;
  }

  async write(batch: arrow.RecordBatch): Promise<void> {
    const n = batch.numRows;
    if (n === 0) return;
    // Rows per piece, so that one piece is a small part of a file.
    const ratio = this.current?.compressionRatio ?? this.ratio ?? INITIAL_COMPRESSION_RATIO;
    const perRow = Math.max(1, (dataBytes(batch.data) / n) * ratio);
    const step = Math.max(256, Math.floor(this.target / CHECKS_PER_FILE / perRow));
    for (let start = 0; start < n; start += step) {
      const piece = start === 0 && n <= step ? batch : batch.slice(start, Math.min(n, start + step));
      this.current ??= ParquetWriter.open(this.io, this.options.nextPath(this.index++), this.schema, {
        ...this.fileOptions,
        ...(this.ratio !== undefined ? { expectedCompressionRatio: this.ratio } : {}),
      });
      await this.current.write(piece);
      if (this.current.estimatedSize >= this.target) await this.roll();
    }
  }

  async writeRows(rows: readonly Row[]): Promise<void> {
    if (rows.length > 0) await this.write(batchFromRows(this.schema, rows));
  }

  private async roll(): Promise<void> {
    const w = this.current;
    this.current = undefined;
    if (!w) return;
    const file = await w.close();
    if (w.arrowBytesWritten > 0) this.ratio = file.fileSizeInBytes / w.arrowBytesWritten;
    this.written.push(file);
  }

  /** Finishes the open file; returns every file written (none if no rows were written). */
  async close(): Promise<WrittenFile[]> {
    if (this.current && this.current.recordCount > 0) await this.roll();
    else if (this.current) {
      await this.current.abort();
      this.current = undefined;
    }
    return [...this.written];
  }

  /** Stops and deletes every file this writer made. */
  async abort(): Promise<void> {
    const w = this.current;
    this.current = undefined;
    if (w) await w.abort();
    await this.io.deleteMany(this.written.map((f) => f.path)).catch(() => undefined);
    this.written.length = 0;
  }
}
