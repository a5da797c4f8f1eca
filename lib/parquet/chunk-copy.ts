/**
 * Column-chunk copy: whole row groups of existing Parquet files assembled into a new file byte
 * for byte — "PAR1", their column chunks, one merged footer, "PAR1" — with no decode and no
 * encode. Row groups stay as they were written (their pages, dictionaries, encodings, codec
 * and statistics); the footer is rebuilt with the chunks' new offsets.
 *
 * Only sources whose Parquet schema is exactly the output's (every element but the names:
 * physical and logical types, repetition, field ids, in order) can be copied, since a chunk's
 * bytes are only meaningful under the levels and types it was written with. The output takes
 * the names and key-value metadata of `copyTemplate` (what ParquetWriter writes for the
 * Iceberg schema), and the writer fields of its sources (created_by, format version, column
 * orders), which readers use to interpret the copied pages and statistics: one file holds
 * sources sharing them (`CopySource.key`).
 *
 * Dropped from the copied chunks: page indexes (column and offset index: their page offsets
 * would need rewriting; readers then scan pages) and bloom filters. Files with encrypted
 * columns or chunks in other files are not copied.
 *
 * A row group's digest (SHA-256 of its row count, the output schema's signature, each chunk's
 * decode-relevant metadata and its bytes) is computed from the source as read and again from
 * the output re-read from storage: equal digests mean the copied rows are the source's rows.
 */
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { InvalidFileError, IoError, PackiceError } from '../errors.js';
import type { FileIO, InputFile } from '../io/file-io.js';
import { mapLimit } from '../io/map-limit.js';
import { readWindow, type ReadWindowOptions, type ReadWindowStats, type WindowRead } from '../io/read-window.js';
import type { StructType } from '../iceberg/types.js';
import {
  annotateUuidColumns, checkLeadingMagic, decodeFooter, leafColumns, PARQUET_MAGIC_BYTES, readFooter, schemaTree, splitOffsets, type FooterRead, type ParquetFooter,
} from './footer.js';
import {
  readTypedStruct, ThriftType, typedField, typedFields, typedItems, typedList, typedNumber, writeTypedStruct, type TypedField, type TypedValue,
} from './thrift.js';
import { digestHasher, type Digest, type DigestHasher } from './digest.js';
import { batchFromRows } from './values.js';
import { CREATED_BY, uuidFieldIds } from './writer.js';

/**
 * Most bytes one range read fetches. Larger row groups are read in ranges of this size, several at
 * once: one S3 connection carries ~85-90 MB/s (Amazon S3 performance guidelines, which also suggest
 * 8-16 MB byte ranges), so a 128 MB row group read in one request waits ~1.5 s where 8 MiB ranges
 * in parallel take a tenth of it. Row groups of few-MB files stay one request.
 */
const RANGE_BYTES = 8 * 1024 * 1024;
/** Ranges of one row group in flight at once. */
const RANGES_IN_FLIGHT = 8;
/**
 * Row-group bytes read or in flight at once, by the copy (ahead of the upload) and by the proof's
 * re-read: enough for S3's first-byte latency and per-connection throughput to overlap over a dozen
 * few-MB row groups, well under a one-vCPU Lambda's 1,769 MB (the upload holds its parts apart).
 */
export const DEFAULT_COPY_READ_BYTES = 64 * 1024 * 1024;
/**
 * The proof's re-read: consecutive row groups of an output spanning up to PROOF_REQUEST_BYTES in
 * one GET, PROOF_READ_BYTES at once. It runs last, once the upload's parts (3 × 128 MiB) are gone,
 * so it may hold more than the copy's window: 16 requests of 16 MiB carry a GB in as little time as
 * 8 MiB ones 8 at once did, with a third of the GETs (each costs as much as ~17 ms of a 1,769 MB
 * Lambda).
 */
export const PROOF_REQUEST_BYTES = 16 * 1024 * 1024;
export const PROOF_READ_BYTES = 256 * 1024 * 1024;
/**
 * Multipart parts of copied and merged outputs (S3FileIO's default is 32 MiB): a quarter of the
 * PUTs ($0.005 per 1,000: −24 per GB written). Two in flight (OUTPUT_PARTS_IN_FLIGHT) carry
 * ~170 MB/s, above what one vCPU copies or merges; the upload holds (2 + 1) × 128 MiB, 224 MiB more
 * than S3FileIO's default, which these paths (one output row group and a read window, no decoder's
 * batches) leave room for in a one-vCPU Lambda's 1,769 MB.
 */
export const OUTPUT_PART_BYTES = 128 * 1024 * 1024;
export const OUTPUT_PARTS_IN_FLIGHT = 2;
const utf8 = new TextEncoder();

// ---------------------------------------------------------------------------------------------
// Typed Thrift helpers (parquet-format field ids are named where they are used)

/** `fields` without `drop`, with `put` set (by id), in id order. */
export function edit(fields: readonly TypedField[], put: readonly TypedField[], drop: readonly number[] = []): TypedField[] {
  const ids = new Set([...drop, ...put.map((f) => f.id)]);
  return [...fields.filter((f) => !ids.has(f.id)), ...put].sort((a, b) => a.id - b.id);
}

/** A canonical text of a typed value, for signatures. */
export function canonical(v: TypedValue): string {
  // A view, not a copy: a small copy would come from (and could pin) Buffer's shared pool.
  if (v instanceof Uint8Array) return `b${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')}`;
  if (typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `{${v.map((f) => `${f.id}:${canonical(f.value)}`).join(',')}}`;
  if (v.kind === 'list') return `[${v.items.map(canonical).join(',')}]`;
  return `m${v.entries.length}`;
}

// ---------------------------------------------------------------------------------------------
// The output's schema

export interface CopyTemplate {
  /** SchemaElement structs of the output, as ParquetWriter writes them. */
  readonly schema: readonly TypedValue[];
  /** The schema without names: what a copied chunk's bytes depend on. */
  readonly signature: string;
  /** The key-value metadata ParquetWriter writes (the stored Arrow schema). */
  readonly keyValueMetadata: TypedValue | undefined;
  /** Names from the root to each leaf, in column-chunk order. */
  readonly leafPaths: readonly (readonly string[])[];
}

/**
 * The signature of a schema element list: every field of every element but its name (4) and the
 * root's repetition (3), which readers ignore (pyarrow writes REQUIRED there, parquet-wasm nothing).
 */
export function schemaSignature(schema: readonly TypedValue[]): string {
  return schema.map((e, i) => canonical(typedFields(e).filter((f) => f.id !== 4 && !(i === 0 && f.id === 3)))).join(';');
}

const templates = new Map<string, CopyTemplate>();

/** What ParquetWriter writes for `schema`: the footer of an empty file, uuid columns annotated. */
export function copyTemplate(schema: StructType): CopyTemplate {
  const cacheKey = JSON.stringify(schema, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  const hit = templates.get(cacheKey);
  if (hit) return hit;
  const table = pw.Table.fromIPCStream(arrow.tableToIPC(new arrow.Table([batchFromRows(schema, [])]), 'stream'));
  const bytes = pw.writeParquet(table, new pw.WriterPropertiesBuilder().setCreatedBy(CREATED_BY).build());
  const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(bytes.length - 8, true);
  const footerBytes = annotateUuidColumns(bytes.subarray(bytes.length - 8 - length, bytes.length - 8), uuidFieldIds(schema));
  const typed = readTypedStruct(footerBytes);
  const elements = typedItems(typedField(typed, 2));
  const template: CopyTemplate = {
    schema: elements,
    signature: schemaSignature(elements),
    keyValueMetadata: typedField(typed, 5),
    leafPaths: leafColumns(schemaTree(decodeFooter(footerBytes))).map((l) => l.path),
  };
  templates.set(cacheKey, template);
  return template;
}

// ---------------------------------------------------------------------------------------------
// Sources

export interface CopyRowGroup {
  readonly index: number;
  readonly numRows: number;
  /** Position of its first row in the source file. */
  readonly firstRow: number;
  /** Compressed bytes of its column chunks. */
  readonly bytes: number;
}

/** A Parquet file whose row groups may be copied. */
export interface CopySource {
  readonly path: string;
  readonly typed: readonly TypedField[];
  readonly footer: ParquetFooter;
  readonly rowGroups: readonly CopyRowGroup[];
  readonly signature: string;
  /**
   * What readers interpret a file's pages and statistics by: created_by (writer workarounds),
   * format version and column orders. Row groups of one output file share it.
   */
  readonly key: string;
}

/** Reads a file's footer for copying (one tail read for most files). */
export async function openCopySource(io: FileIO, path: string, length?: number): Promise<CopySource> {
  return copySource(path, await readFooter(io.newInputFile(path, length)));
}

/** A file for copying, from its footer as readFooter read it. */
export function copySource(path: string, read: FooterRead): CopySource {
  const typed = read.typed;
  let firstRow = 0;
  const rowGroups = typedItems(typedField(typed, 4)).map((rg, index) => {
    const numRows = typedNumber(typedField(typedFields(rg), 3));
    const bytes = typedItems(typedField(typedFields(rg), 1)).reduce<number>((n, cc) => n + typedNumber(typedField(typedFields(typedField(typedFields(cc), 3)), 7)), 0);
    const out = { index, numRows, firstRow, bytes };
    firstRow += numRows;
    return out;
  });
  const version = typedField(typed, 1);
  const createdBy = typedField(typed, 6);
  const orders = typedField(typed, 7);
  return {
    path,
    typed,
    footer: read.footer,
    rowGroups,
    signature: schemaSignature(typedItems(typedField(typed, 2))),
    key: [version, createdBy, orders].map((v) => (v === undefined ? '-' : canonical(v))).join('|'),
  };
}

/** Why `source` cannot be copied into an output of `template` (undefined: it can). */
export function copyProblem(source: CopySource, template: CopyTemplate): string | undefined {
  if (typedField(source.typed, 8) !== undefined || typedField(source.typed, 9) !== undefined) return 'its footer is encrypted or signed';
  if (source.signature !== template.signature) return 'its Parquet schema is not the output schema';
  for (const rg of typedItems(typedField(source.typed, 4))) {
    const chunks = typedItems(typedField(typedFields(rg), 1));
    if (chunks.length !== template.leafPaths.length) return `a row group has ${chunks.length} column chunks, the schema ${template.leafPaths.length} leaves`;
    for (const cc of chunks) {
      const c = typedFields(cc);
      if (typedField(c, 1) !== undefined) return 'a column chunk lives in another file';
      if (typedField(c, 8) !== undefined || typedField(c, 9) !== undefined) return 'a column chunk is encrypted';
      if (typedField(c, 3) === undefined) return 'a column chunk has no metadata';
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Chunks and digests

export interface ChunkSpan {
  readonly chunk: TypedField[];
  readonly meta: TypedField[];
  /** First byte (the dictionary page when there is one). */
  readonly start: number;
  readonly end: number;
}

export function chunkSpans(rowGroup: readonly TypedField[]): ChunkSpan[] {
  return typedItems(typedField(rowGroup, 1)).map((cc) => {
    const chunk = typedFields(cc);
    const meta = typedFields(typedField(chunk, 3));
    const data = typedNumber(typedField(meta, 9));
    const dictValue = typedField(meta, 11);
    const dict = dictValue === undefined ? undefined : typedNumber(dictValue);
    const start = dict !== undefined && dict > 0 && dict < data ? dict : data;
    return { chunk, meta, start, end: start + typedNumber(typedField(meta, 7)) };
  });
}

/** Bytes of a file already read (a footer read's tail, all of a small file): [start, start + bytes.length). */
export interface HeldBytes {
  readonly start: number;
  readonly bytes: Uint8Array;
}

/**
 * The chunks' bytes — from `held` when it covers them, else read in ranges of chunks up to
 * `rangeBytes` (a larger chunk split, its ranges joined), RANGES_IN_FLIGHT at once. The row group
 * right after the leading magic is read from byte 0, so the magic is checked with no request of its
 * own (readFooter does not fetch it).
 */
export async function readChunks(input: InputFile, spans: readonly ChunkSpan[], held?: HeldBytes, rangeBytes = RANGE_BYTES): Promise<Uint8Array[]> {
  if (held && spans.length > 0) {
    const from = Math.min(...spans.map((s) => s.start));
    const to = Math.max(...spans.map((s) => s.end));
    if (held.start <= from && to <= held.start + held.bytes.length) {
      if (held.start === 0) checkLeadingMagic(input.path, held.bytes);
      return spans.map((s) => held.bytes.subarray(s.start - held.start, s.end - held.start));
    }
  }
  const order = spans.map((_, k) => k).sort((a, b) => spans[a].start - spans[b].start);
  // Pieces of chunks adjacent in the file, each up to rangeBytes, or one larger chunk alone.
  const pieces: { from: number; to: number; first: number; end: number }[] = [];
  for (let k = 0; k < order.length; ) {
    const start = spans[order[k]].start;
    const from = start === PARQUET_MAGIC_BYTES.length ? 0 : start;
    let to = spans[order[k]].end;
    let j = k + 1;
    while (j < order.length && spans[order[j]].end - from <= rangeBytes) to = Math.max(to, spans[order[j++]].end);
    pieces.push({ from, to, first: k, end: j });
    k = j;
  }
  // Each piece's ranges, at most rangeBytes each (none for a piece of empty chunks).
  const ranges = pieces.flatMap((p, piece) => {
    const out: { piece: number; from: number; to: number }[] = [];
    for (let at = p.from; at < p.to; at += rangeBytes) out.push({ piece, from: at, to: Math.min(p.to, at + rangeBytes) });
    return out;
  });
  const read = await mapLimit(ranges, RANGES_IN_FLIGHT, async ({ from, to }) => {
    const bytes = await input.read(from, to);
    if (bytes.length !== to - from) {
      throw new InvalidFileError(`short read: asked for ${to - from} bytes at ${from}, got ${bytes.length}`, { path: input.path });
    }
    return bytes;
  });
  const parts = pieces.map((): Uint8Array[] => []);
  ranges.forEach((r, i) => parts[r.piece].push(read[i]));
  const out = new Array<Uint8Array>(spans.length);
  pieces.forEach((p, i) => {
    // A chunk larger than one range: its ranges joined.
    const bytes = parts[i].length === 1 ? parts[i][0] : Buffer.concat(parts[i], p.to - p.from);
    if (p.from === 0) checkLeadingMagic(input.path, bytes);
    for (let k = p.first; k < p.end; k++) out[order[k]] = bytes.subarray(spans[order[k]].start - p.from, spans[order[k]].end - p.from);
  });
  return out;
}

/** Row count, schema signature, and per chunk what decoding depends on, then its bytes. */
function rowGroupDigest(hasher: DigestHasher, rows: number, signature: string, spans: readonly ChunkSpan[], bytes: readonly Uint8Array[]): Digest {
  const h = hasher();
  h.update(`rows ${rows}\n${signature}\n`);
  spans.forEach((s, k) => {
    const m = s.meta;
    const dict = typedField(m, 11);
    // type, encodings, codec, num_values, sizes, page offsets within the chunk.
    const described = [typedField(m, 1), typedField(m, 2), typedField(m, 4), typedField(m, 5), typedField(m, 6), typedField(m, 7)].map((v) => (v === undefined ? '-' : canonical(v)));
    h.update(`${described.join(' ')} ${typedNumber(typedField(m, 9)) - s.start} ${dict === undefined ? '-' : typedNumber(dict) - s.start}\n`);
    h.update(bytes[k]);
  });
  return h.digest();
}

// ---------------------------------------------------------------------------------------------
// Writing

export interface CopyPart {
  readonly source: CopySource;
  /** Row group index in the source. */
  readonly rowGroup: number;
}

export interface CopiedRowGroup {
  readonly part: CopyPart;
  readonly rows: number;
  /** Position of its first row in the output. */
  readonly firstRow: number;
  /** Digest of the source's row group as read. */
  readonly digest: Digest;
}

export interface CopiedFile {
  readonly path: string;
  readonly fileSizeInBytes: number;
  readonly recordCount: number;
  readonly splitOffsets: readonly number[];
  readonly footer: ParquetFooter;
  /** The footer's Thrift bytes. */
  readonly footerBytes: Uint8Array;
  readonly rowGroups: readonly CopiedRowGroup[];
}

/** Test-only damage done to the bytes written after the source was digested (the proof must catch it). */
export type ChunkFault = 'alter-byte' | 'drop-byte';

/** How the copy and the proof read row groups (lib/io/read-window.ts); defaults: DEFAULT_COPY_READ_BYTES, 16 reads. */
export type CopyReads = Partial<Omit<ReadWindowOptions, 'ordered'>> & {
  /** Bytes one request of the proof's re-read spans at most (default PROOF_REQUEST_BYTES, 16 MiB): see rereadBatches. */
  readonly requestBytes?: number;
  /** Bytes the proof's re-read holds at once (default `bytes` when given, else PROOF_READ_BYTES, 256 MiB). */
  readonly proofBytes?: number;
};

/**
 * The proof's re-read of `groups` (row groups of written files): batched by rereadBatches, through a
 * window of `reads.proofBytes` (else `bytes`, else PROOF_READ_BYTES), handed over as they complete.
 */
export function rereadWindow<G extends RereadGroup>(groups: readonly G[], reads: CopyReads = {}, stats?: ReadWindowStats): AsyncGenerator<WindowRead<RereadBatch<G>, Uint8Array[][]>> {
  const window: ReadWindowOptions = { ...reads, bytes: reads.proofBytes ?? reads.bytes ?? PROOF_READ_BYTES, ordered: false };
  return readWindow(rereadBatches(groups, reads.requestBytes), rereadHeldBytes, rereadChunks, window, stats);
}

/**
 * Writes `parts` (row groups of sources sharing `key`) into one new file at `path`, streaming:
 * the row group being written and those read ahead of it (`reads`: bounded in bytes and count) are held.
 */
export async function writeCopiedFile(
  io: FileIO,
  path: string,
  template: CopyTemplate,
  parts: readonly CopyPart[],
  options: { readonly fault?: ChunkFault; readonly reads?: CopyReads; readonly stats?: ReadWindowStats } = {},
): Promise<CopiedFile> {
  if (parts.length === 0) throw new InvalidFileError('a copied file needs at least one row group', { path });
  const first = parts[0].source;
  const other = parts.find((p) => p.source.key !== first.key);
  if (other) throw new InvalidFileError(`${other.source.path} was written by another writer than ${first.path}`, { path });
  const inputs = new Map<string, InputFile>();
  const rowGroups: CopiedRowGroup[] = [];
  const newGroups: TypedField[][] = [];
  const faults = { fault: options.fault };
  let at = 0;
  let rows = 0;
  let footer: Uint8Array | undefined;
  const hasher = await digestHasher();

  async function* content(): AsyncGenerator<Uint8Array> {
    yield PARQUET_MAGIC_BYTES;
    at = PARQUET_MAGIC_BYTES.length;
    // Later row groups are read while this one is written: their first-byte latencies overlap.
    const fetch = (part: CopyPart): Promise<Uint8Array[]> => {
      let input = inputs.get(part.source.path);
      if (!input) inputs.set(part.source.path, (input = io.newInputFile(part.source.path)));
      return readChunks(input, chunkSpans(typedFields(typedItems(typedField(part.source.typed, 4))[part.rowGroup])));
    };
    const window: ReadWindowOptions = { ...options.reads, bytes: options.reads?.bytes ?? DEFAULT_COPY_READ_BYTES, ordered: true };
    for await (const { item: part, value: bytes } of readWindow(parts, partBytes, fetch, window, options.stats)) {
      const { source } = part;
      const rg = typedFields(typedItems(typedField(source.typed, 4))[part.rowGroup]);
      const numRows = typedNumber(typedField(rg, 3));
      const spans = chunkSpans(rg);
      const digest = rowGroupDigest(hasher, numRows, template.signature, spans, bytes);
      const rgStart = at;
      const chunks = spans.map((s, k) => {
        const delta = at - s.start;
        at += s.end - s.start;
        const shift = (id: number): TypedField[] => {
          const f = s.meta.find((x) => x.id === id);
          return f ? [{ id, type: f.type, value: typedNumber(f.value) + delta }] : [];
        };
        const path = typedList(template.leafPaths[k].map((n) => utf8.encode(n)), ThriftType.Binary);
        // Bloom filters (14, 15) are not copied.
        const meta = edit(s.meta, [{ id: 3, type: ThriftType.List, value: path }, ...shift(9), ...shift(10), ...shift(11)], [14, 15]);
        // file_offset (2) is deprecated: 0 stays 0; page indexes (4-7) are not copied.
        const fileOffset = typedNumber(typedField(s.chunk, 2));
        return edit(s.chunk.filter((f) => f.id <= 3), [
          ...(fileOffset > 0 ? [{ id: 2, type: ThriftType.I64, value: fileOffset + delta }] : []),
          { id: 3, type: ThriftType.Struct, value: meta },
        ]);
      });
      const ordinal = rg.some((f) => f.id === 7) ? [{ id: 7, type: ThriftType.I16, value: newGroups.length }] : [];
      newGroups.push(
        edit(rg.filter((f) => [1, 2, 3, 4, 6].includes(f.id)), [
          { id: 1, type: ThriftType.List, value: typedList(chunks, ThriftType.Struct) },
          { id: 5, type: ThriftType.I64, value: rgStart },
          ...ordinal,
        ]),
      );
      rowGroups.push({ part, rows: numRows, firstRow: rows, digest });
      rows += numRows;
      yield* damaged(bytes, faults);
    }
    const tail = fileTail(first, template, rows, newGroups);
    footer = tail.footer;
    at += tail.bytes.length;
    yield tail.bytes;
  }

  await io.write(path, content(), { partBytes: OUTPUT_PART_BYTES, partsInFlight: OUTPUT_PARTS_IN_FLIGHT });
  const parsed = decodeFooter(footer!);
  return { path, fileSizeInBytes: at, recordCount: rows, splitOffsets: splitOffsets(parsed), footer: parsed, footerBytes: footer!, rowGroups };
}

/** `parts`, the first one longer than a byte damaged by `state.fault` (tests of the proof), which is then spent. */
export function* damaged(parts: Iterable<Uint8Array>, state: { fault: ChunkFault | undefined }): Generator<Uint8Array> {
  for (const b of parts) {
    if (state.fault === undefined || b.length <= 1) {
      yield b;
      continue;
    }
    yield state.fault === 'drop-byte' ? b.subarray(1) : Uint8Array.from(b, (x, i) => (i === b.length >> 1 ? x ^ 0xff : x));
    state.fault = undefined;
  }
}

/**
 * A new file's footer and its tail (footer, length, "PAR1"): the output schema and key-value
 * metadata of `template`, the writer fields (format version, created_by, column orders) of `first`.
 */
export function fileTail(first: CopySource, template: CopyTemplate, rows: number, rowGroups: TypedField[][]): { footer: Uint8Array; bytes: Uint8Array } {
  const meta: TypedField[] = [
    { id: 1, type: ThriftType.I32, value: typedField(first.typed, 1) ?? 1 },
    { id: 2, type: ThriftType.List, value: typedList([...template.schema], ThriftType.Struct) },
    { id: 3, type: ThriftType.I64, value: rows },
    { id: 4, type: ThriftType.List, value: typedList(rowGroups, ThriftType.Struct) },
    ...(template.keyValueMetadata !== undefined ? [{ id: 5, type: ThriftType.List, value: template.keyValueMetadata }] : []),
    { id: 6, type: ThriftType.Binary, value: typedField(first.typed, 6) ?? utf8.encode(CREATED_BY) },
    ...first.typed.filter((f) => f.id === 7),
  ];
  const footer = writeTypedStruct(meta);
  const bytes = new Uint8Array(footer.length + 8);
  bytes.set(footer, 0);
  new DataView(bytes.buffer).setUint32(footer.length, footer.length, true);
  bytes.set(PARQUET_MAGIC_BYTES, footer.length + 4);
  return { footer, bytes };
}

/** Re-reads a row group's chunks for the proof; a failure names the file and row group. */
/** A row group of a written file, as the proof re-reads it. */
export interface RereadGroup {
  readonly input: InputFile;
  /** Its index in the file. */
  readonly index: number;
  readonly spans: readonly ChunkSpan[];
}

/** Consecutive row groups of one file the proof reads in one request. */
export interface RereadBatch<G extends RereadGroup> {
  readonly input: InputFile;
  readonly groups: readonly G[];
  /** Bytes from the first chunk's start to the last one's end: what reading them holds. */
  readonly bytes: number;
  /** Bytes one of its requests spans at most (a row group larger than that is read in ranges). */
  readonly requestBytes: number;
}

/**
 * `groups` joined into batches of consecutive row groups of one file spanning at most `limit` bytes
 * (a larger row group alone): every GET costs as much as ~17 ms of a 1,769 MB Lambda, and written
 * row groups of a few MB compressed would otherwise take one each. A batch is one request (a file's
 * first with the leading magic's 4 bytes); a row group larger than `limit` is read in ranges of
 * about `limit` (of RANGE_BYTES when that is more).
 */
export function rereadBatches<G extends RereadGroup>(groups: readonly G[], limit = PROOF_REQUEST_BYTES): RereadBatch<G>[] {
  const out: { input: InputFile; groups: G[]; from: number; to: number }[] = [];
  for (const g of groups) {
    const from = g.spans.length === 0 ? 0 : Math.min(...g.spans.map((s) => s.start));
    const to = g.spans.length === 0 ? 0 : Math.max(...g.spans.map((s) => s.end));
    const last = out[out.length - 1];
    const prev = last?.groups[last.groups.length - 1];
    const joins = last !== undefined && prev !== undefined && last.input === g.input && prev.index + 1 === g.index &&
      last.to > last.from && to > from && from >= last.to && to - last.from <= limit;
    if (joins) {
      last.groups.push(g);
      last.to = to;
    } else out.push({ input: g.input, groups: [g], from, to });
  }
  // The leading magic's 4 bytes ride along with a file's first row group (readChunks reads it from byte 0).
  const requestBytes = Math.max(RANGE_BYTES, limit + PARQUET_MAGIC_BYTES.length);
  return out.map((b) => ({ input: b.input, groups: b.groups, bytes: b.to - b.from, requestBytes }));
}

/** What reading `batch` holds at its peak: a row group read in several ranges is held twice while they are joined. */
export function rereadHeldBytes(batch: RereadBatch<RereadGroup>): number {
  return batch.bytes > batch.requestBytes ? 2 * batch.bytes : batch.bytes;
}

/** Each row group's chunk bytes, re-read for the proof: a failed read is an IoError naming the file and the row groups. */
export async function rereadChunks<G extends RereadGroup>(batch: RereadBatch<G>): Promise<Uint8Array[][]> {
  const { input, groups } = batch;
  let bytes: Uint8Array[];
  try {
    bytes = await readChunks(input, groups.flatMap((g) => g.spans), undefined, batch.requestBytes);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const which = groups.length === 1 ? `row group ${groups[0].index}` : `row groups ${groups[0].index}-${groups[groups.length - 1].index}`;
    throw new IoError(`re-reading ${which} for the proof failed: ${message}`, {
      path: input.path,
      cause: e,
      retryable: e instanceof PackiceError ? e.retryable : true,
    });
  }
  let at = 0;
  return groups.map((g) => bytes.slice(at, (at += g.spans.length)));
}

/** Compressed bytes of a part's row group: what reading it holds. */
export function partBytes(part: CopyPart): number {
  return part.source.rowGroups[part.rowGroup].bytes;
}

/** A copied row group as re-read for the proof. */
export interface RereadRowGroup {
  readonly path: string;
  readonly rows: number;
  readonly digest: Digest;
}

/**
 * The digests of copied files' row groups, re-read from storage: each file's footer (its length
 * is known: no HEAD), then every row group of every file through one read window (`reads`), handed
 * over as their reads complete, in no set order: the proof sums them. What the proof compares with
 * the sources' digests. A failed read fails the iteration with an IoError naming its file.
 */
export async function* rowGroupDigests(
  io: FileIO,
  files: readonly { readonly path: string; readonly length?: number }[],
  reads: CopyReads = {},
  stats?: ReadWindowStats,
): AsyncGenerator<RereadRowGroup> {
  const hasher = await digestHasher();
  const groups: (RereadGroup & { signature: string; rows: number })[] = [];
  for (const f of files) {
    const input = io.newInputFile(f.path, f.length);
    const read = await readFooter(input);
    const typed = read.typed;
    const signature = schemaSignature(typedItems(typedField(typed, 2)));
    typedItems(typedField(typed, 4)).forEach((rg, index) => {
      groups.push({ input, index, signature, spans: chunkSpans(typedFields(rg)), rows: typedNumber(typedField(typedFields(rg), 3)) });
    });
  }
  for await (const { item: batch, value } of rereadWindow(groups, reads, stats)) {
    for (const [k, g] of batch.groups.entries()) {
      yield { path: g.input.path, rows: g.rows, digest: rowGroupDigest(hasher, g.rows, g.signature, g.spans, value[k]) };
    }
  }
}
