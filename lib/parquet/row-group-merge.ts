/**
 * Row-group merge: small row groups of existing Parquet files joined into larger row groups of
 * a new file at the page level, with no value decoded into rows and none encoded from them
 * (issue 11). What chunk-copy.ts does for row groups big enough to keep, this does for the small
 * ones streaming writers leave. Per output column chunk, one of two ways:
 *
 * - **Coalesced**, when its source pages are small (on average under a quarter of the page size)
 *   and all plain or dictionary-indexed, in a codec this module recompresses (uncompressed, ZSTD
 *   with a native ZSTD, GZIP): each source page is decompressed, its levels decoded as runs and
 *   its values appended to the page being assembled, which is re-encoded (levels RLE, values as
 *   they came) and recompressed once it reaches the page size or row limit. Small pages
 *   compress poorly; coalesced ones compress as a writer's do.
 * - **Copied**: every page byte for byte, except that pages indexing a dictionary are rewritten
 *   when the sources' dictionaries differ (below).
 *
 * Rows deleted from a source row group (MergePart.deleted, and those whose one long or int
 * equality key MergePart.keys holds, read from its own key pages) are dropped as its pages are
 * coalesced: every column of an output row group with deletes is coalesced, non-repeated columns
 * only (deleteProblem), and its statistics follow the live rows (DroppedStatistics).
 *
 * A column chunk holds at most one dictionary. When the sources' dictionaries together hold at
 * most `dictionaryBytes` (plain-encoded), one merged dictionary page (each distinct value once,
 * in first-seen order) leads the chunk and indices are re-mapped; larger, the indexed values are
 * written PLAIN, as a writer falls back when its dictionary grows too large. A source chunk with
 * a dictionary in another codec cannot be merged at all (mergeProblem). Column statistics are
 * merged (null counts summed, the smallest minimum and largest maximum kept as their sources wrote
 * them, ordered by the column's Iceberg type); page indexes, bloom filters, sorting columns and
 * size statistics are dropped.
 *
 * The proof (DESIGN.md invariant 1) works per source row group, a "segment" of an output row
 * group: its digest is XXH64 (digest.ts) of its row count, the schema's signature and, per column, its
 * pages — a page copied byte for byte by its bytes; a page of a copied chunk that had a
 * dictionary by what it holds (its levels as written, its values plain-encoded); a coalesced
 * column by its values plain-encoded (or, dictionary-indexed on both sides, by its indices into
 * the output's dictionary and that dictionary's digest), then its level runs, however pages cut
 * them. The writer
 * computes each segment's digest from the source as read, and again from the output as it hands
 * each page over before compressing it (its header parsed from the bytes written), walking each
 * output column chunk by the page or value counts it records; and an XXH64 of each output column
 * chunk as written. The proof re-reads every output row group from storage, checks each chunk's
 * XXH64, its page headers against the footer and the recorded counts, and each payload's framing
 * against its header's size, and then yields the output-side digests: a page or value lost, added,
 * moved between columns or segments, or altered changes a digest, and a byte changed on storage
 * fails the re-read. That the compressor's output decompresses to what was walked is checked by
 * the deep re-read (mergedDigests `deep`), which decompresses a row group's pages and walks them
 * again: lib/compaction/chunk-copy.ts asks it of each output's first row group.
 */
import * as zlib from 'node:zlib';
import { InvalidFileError, PackiceError } from '../errors.js';
import type { FileIO, InputFile } from '../io/file-io.js';
import { readWindow, type ReadWindowOptions, type ReadWindowStats } from '../io/read-window.js';
import { indexById } from '../iceberg/schema.js';
import { isPrimitive, type PrimitiveType, type StructType } from '../iceberg/types.js';
import {
  chunkSpans, damaged, DEFAULT_COPY_READ_BYTES, edit, fileTail, OUTPUT_PART_BYTES, OUTPUT_PARTS_IN_FLIGHT, partBytes, readChunks, rereadWindow, schemaSignature, type RereadGroup,
  type ChunkFault, type ChunkSpan, type CopyPart, type CopyReads, type CopySource, type CopyTemplate, type HeldBytes,
} from './chunk-copy.js';
import { DEFAULT_ZSTD_LEVEL, zstdContentSize, type ZstdCodec } from './compression-codec.js';
import { dictionaryUnion, fingerprints, type PlainValues } from './dictionary-union.js';
import { digestHasher, type Digest, type DigestHash, type DigestHasher } from './digest.js';
import { Codec, decodeFooter, leafColumns, PARQUET_MAGIC_BYTES, PhysicalType, readFooter, schemaTree, splitOffsets, type ParquetFooter } from './footer.js';
import { PageType, readPages, type Page } from './page-compression.js';
import { bitWidth, decodeBitPacked, decodeHybrid, decodeRuns, encodeHybrid, encodeRuns, RleError, Runs } from './rle.js';
import { less, statValue } from './statistics-metrics.js';
import {
  ThriftType, TypedThriftReader, typedField, typedFields, typedItems, typedList, typedNumber, writeTypedStruct, type TypedField,
} from './thrift.js';

const utf8 = new TextEncoder();

/** parquet-format Encoding values used here. */
const Encoding = { PLAIN: 0, PLAIN_DICTIONARY: 2, RLE: 3, BIT_PACKED: 4, RLE_DICTIONARY: 8 } as const;
const isDictionaryEncoding = (e: number): boolean => e === Encoding.PLAIN_DICTIONARY || e === Encoding.RLE_DICTIONARY;

// ---------------------------------------------------------------------------------------------
// Codecs of rewritten pages

/** Compresses and decompresses pages of one codec. */
interface PageCodec {
  decompress(data: Uint8Array, size: number): Uint8Array;
  /** Decompresses into a buffer reused by the next call: what it returns must be used up before then. */
  decompressTransient(data: Uint8Array, size: number): Uint8Array;
  /** Never returns (a view of) its input: callers reuse their buffers. */
  compress(data: Uint8Array): Uint8Array;
}

/**
 * Data pages of a source row group decompressed and kept (by page): a key column the equality probe
 * took apart on this thread is not decompressed again when the row group is built here.
 */
export type KeptPages = Map<Page, Uint8Array>;

/** `codec`, keeping what it decompresses for `page` in `kept` (a buffer of its own, not the transient one). */
function keeping(codec: PageCodec, page: Page, kept: KeptPages): PageCodec {
  const decompress = (d: Uint8Array, n: number): Uint8Array => {
    const out = codec.decompress(d, n);
    kept.set(page, out);
    return out;
  };
  return { ...codec, decompress, decompressTransient: decompress };
}

/** `codec`, or for a page in `kept` one that hands its kept bytes back. */
function keptOr(codec: PageCodec, page: Page, kept: KeptPages | undefined): PageCodec {
  const out = kept?.get(page);
  if (out === undefined) return codec;
  // What the codec gave for the same payload and size, as it would again.
  const given = (): Uint8Array => out;
  return { ...codec, decompress: given, decompressTransient: given };
}

/** The buffer transient decompression reuses (pages are taken apart one at a time, synchronously). */
let transient = new Uint8Array(1 << 20);

function pageCodec(codec: number, zstd: ZstdCodec | undefined, level: number): PageCodec | undefined {
  switch (codec) {
    case Codec.UNCOMPRESSED:
      return { decompress: (d) => d, decompressTransient: (d) => d, compress: (d) => d.slice() };
    case Codec.ZSTD:
      return zstd && {
        decompress: (d, n) => zstd.decompress(d, n),
        decompressTransient: (d, n) => {
          if (transient.length < n) transient = new Uint8Array(Math.max(n, transient.length * 2));
          const out = transient.subarray(0, n);
          zstd.decompressInto(d, out);
          return out;
        },
        compress: (d) => zstd.compress(d, level),
      };
    case Codec.GZIP:
      return { decompress: (d) => zlib.gunzipSync(d), decompressTransient: (d) => zlib.gunzipSync(d), compress: (d) => zlib.gzipSync(d) };
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Sources

/** A leaf column as its pages are read: physical type, fixed length and maximum levels. */
export interface Leaf {
  /** Its Iceberg field id, where the file names one. */
  readonly fieldId: number | undefined;
  readonly physical: number;
  readonly typeLength: number;
  readonly maxDef: number;
  readonly maxRep: number;
  readonly iceberg: PrimitiveType | undefined;
}

function leavesOf(footer: ParquetFooter, schema: StructType): Leaf[] {
  const byId = indexById(schema);
  const out: Leaf[] = [];
  const root = schemaTree(footer);
  const visit = (n: typeof root, def: number, rep: number): void => {
    const r = n === root ? undefined : n.element.repetition;
    const d = def + (r === 'optional' || r === 'repeated' ? 1 : 0);
    const p = rep + (r === 'repeated' ? 1 : 0);
    if (n !== root && n.children.length === 0) {
      const t = n.element.fieldId === undefined ? undefined : byId.get(n.element.fieldId)?.field.type;
      out.push({
        fieldId: n.element.fieldId,
        physical: n.element.type ?? -1, typeLength: n.element.typeLength ?? 0, maxDef: d, maxRep: p,
        iceberg: t && isPrimitive(t) ? t : undefined,
      });
    }
    for (const c of n.children) visit(c, d, p);
  };
  visit(root, 0, 0);
  if (out.length !== leafColumns(root).length) throw new InvalidFileError('schema leaves miscounted');
  return out;
}

/** Per column: its codec, and whether any of its chunks has a dictionary. */
function chunkFacts(source: CopySource): { codecs: number[]; dictionary: boolean[] } {
  const codecs: number[] = [];
  const dictionary: boolean[] = [];
  typedItems(typedField(source.typed, 4)).forEach((rg, r) => {
    typedItems(typedField(typedFields(rg), 1)).forEach((cc, k) => {
      const meta = typedFields(typedField(typedFields(cc), 3));
      const codec = typedNumber(typedField(meta, 4));
      if (r === 0) codecs.push(codec);
      else if (codecs[k] !== codec) codecs[k] = -1;
      const encodings = typedItems(typedField(meta, 2)) as number[];
      dictionary[k] = (dictionary[k] ?? false) || typedField(meta, 11) !== undefined || encodings.some(isDictionaryEncoding);
    });
  });
  return { codecs, dictionary };
}

/** Why `source`'s row groups cannot be merged (copyProblem must have passed). */
export function mergeProblem(source: CopySource, zstd: ZstdCodec | undefined): string | undefined {
  const { codecs, dictionary } = chunkFacts(source);
  for (let k = 0; k < codecs.length; k++) {
    if (codecs[k] < 0) return `column ${k} changes codec between row groups`;
    if (dictionary[k] && !pageCodec(codecs[k], zstd, 1)) return `column ${k} has a dictionary and codec ${codecs[k]}, which this merge does not recompress`;
  }
  return undefined;
}

/**
 * Why rows deleted from `source` cannot be dropped from its pages (mergeProblem must have passed;
 * undefined: they can). Rows are dropped from coalesced pages of non-repeated columns, whose
 * values are plain or dictionary-indexed (not bit-packed booleans), in a codec this merge writes.
 */
export function deleteProblem(source: CopySource, zstd: ZstdCodec | undefined): string | undefined {
  if (source.footer.schema.some((e, i) => i > 0 && e.repetition === 'repeated')) return 'it has a repeated column';
  const allowed = new Set<number>([Encoding.PLAIN, Encoding.PLAIN_DICTIONARY, Encoding.RLE, Encoding.BIT_PACKED, Encoding.RLE_DICTIONARY]);
  for (const rg of typedItems(typedField(source.typed, 4))) {
    for (const [k, cc] of typedItems(typedField(typedFields(rg), 1)).entries()) {
      const meta = typedFields(typedField(typedFields(cc), 3));
      const physical = typedNumber(typedField(meta, 1));
      if (physical === PhysicalType.BOOLEAN) return `column ${k} is boolean (bit-packed values)`;
      const codec = typedNumber(typedField(meta, 4));
      if (!pageCodec(codec, zstd, 1)) return `column ${k} has codec ${codec}, which this merge does not recompress`;
      const other = (typedItems(typedField(meta, 2)) as number[]).find((e) => !allowed.has(e));
      if (other !== undefined) return `column ${k} has values in encoding ${other}`;
    }
  }
  return undefined;
}

/** Sources merged into one file share this: their writer fields (CopySource.key) and each column's codec. */
export function mergeKey(source: CopySource): string {
  return `${source.key}|${chunkFacts(source).codecs.join(',')}`;
}

// ---------------------------------------------------------------------------------------------
// Pages

const PAGE = { TYPE: 1, UNCOMPRESSED: 2, COMPRESSED: 3, CRC: 4, V1: 5, DICTIONARY: 7, V2: 8 } as const;

function headerStruct(page: Page, id: number): TypedField[] {
  const v = typedField(page.header, id);
  if (!Array.isArray(v)) throw new RleError(`a page of type ${page.type} has no header ${id}`);
  return v;
}

/** A data page's values encoding, from its header. */
function encodingOf(page: Page): number {
  if (page.type === PageType.DATA_PAGE) return typedNumber(typedField(headerStruct(page, PAGE.V1), 2));
  if (page.type === PageType.DATA_PAGE_V2) return typedNumber(typedField(headerStruct(page, PAGE.V2), 4));
  throw new RleError(`a page of type ${page.type} among data pages`);
}

/** Where each of `count` length-prefixed (BYTE_ARRAY) plain values starts in `bytes`, and where the last ends. */
function byteArrayOffsets(bytes: Uint8Array, count: number): Int32Array {
  const offsets = new Int32Array(count + 1);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  for (let i = 0; i < count; i++) {
    offsets[i] = at;
    if (at + 4 > bytes.length) throw new RleError(`plain value ${i} of ${count} is cut short`);
    at += 4 + view.getUint32(at, true);
  }
  if (at > bytes.length) throw new RleError('plain values pass their end');
  offsets[count] = at;
  return offsets;
}

function plainValues(bytes: Uint8Array, count: number, leaf: Leaf): PlainValues {
  if (leaf.physical === PhysicalType.BYTE_ARRAY) return { bytes, offsets: byteArrayOffsets(bytes, count), prefix: 4 };
  const offsets = new Int32Array(count + 1);
  const width = plainWidth(leaf);
  if (width <= 0) throw new RleError(`physical type ${leaf.physical} has no dictionary`);
  if (count * width > bytes.length) throw new RleError(`a dictionary of ${count} values of ${width} bytes has ${bytes.length}`);
  for (let i = 0; i <= count; i++) offsets[i] = i * width;
  return { bytes, offsets, prefix: 0 };
}

/** A chunk's dictionary page (its first page, when it is one), else undefined. */
function dictionaryPageOf(pages: readonly Page[]): Page | undefined {
  return pages[0]?.type === PageType.DICTIONARY_PAGE ? pages[0] : undefined;
}

/** A dictionary page's values, decompressed, and how many its header says it holds. */
function dictionaryBytes(chunk: Uint8Array, page: Page, codec: PageCodec): { bytes: Uint8Array; count: number } {
  return {
    bytes: codec.decompress(chunk.subarray(page.payloadStart, page.end), page.uncompressedSize),
    count: typedNumber(typedField(headerStruct(page, PAGE.DICTIONARY), 1)),
  };
}

/** A dictionary page's values as plain values of `leaf`. */
function dictionaryValues(chunk: Uint8Array, page: Page, codec: PageCodec, leaf: Leaf): PlainValues {
  const { bytes, count } = dictionaryBytes(chunk, page, codec);
  return plainValues(bytes, count, leaf);
}

/** The plain encoding of `dict[indices[0..n)]`. */
function gather(dict: PlainValues, indices: Int32Array, n: number): Uint8Array {
  const { bytes, offsets } = dict;
  let size = 0;
  for (let i = 0; i < n; i++) size += offsets[indices[i] + 1] - offsets[indices[i]];
  const out = new Uint8Array(size);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const s = offsets[indices[i]];
    const e = offsets[indices[i] + 1];
    // A subarray per value costs more than copying short values byte by byte.
    if (e - s <= 64) for (let j = s; j < e; j++) out[at++] = bytes[j];
    else {
      out.set(bytes.subarray(s, e), at);
      at += e - s;
    }
  }
  return out;
}

/** A page's levels as runs and its value counts: all of a page, or what is left of it once rows are dropped. */
interface Levels {
  readonly rep: Runs | undefined;
  readonly def: Runs | undefined;
  readonly numValues: number;
  readonly nonNull: number;
}

/** `a`'s bytes (in the platform's order: both sides of the proof hash in one process). */
function bytesOf(a: Int32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** What an indexed segment's digest names its output dictionary by: its entry count and the digest of its plain bytes. */
function dictionaryTag(hasher: DigestHasher, values: Uint8Array, count: number): string {
  const [high, low] = hasher().update(values).digest();
  return `dictionary ${count} ${high} ${low}`;
}

/**
 * Throws unless every entry of each source dictionary is, by its 64-bit fingerprint, the union entry
 * its remap names: what lets an indexed segment be hashed by its indices into the output's
 * dictionary. (The union itself confirms entries byte for byte; comparing bytes again here cost
 * ~5 % of a merge with deletes, whose string dictionaries are re-checked per output row group.)
 */
function checkRemaps(union: PlainValues, prints: readonly (Uint32Array | undefined)[], remaps: readonly Int32Array[]): void {
  const u = fingerprints(union);
  remaps.forEach((map, d) => {
    const fp = prints[d]!;
    for (let i = 0; i < map.length; i++) {
      const j = map[i];
      if (j < 0 || 2 * j >= u.length || u[2 * j] !== fp[2 * i] || u[2 * j + 1] !== fp[2 * i + 1]) {
        throw new RleError(`dictionary entry ${i} of source ${d} is not the merged dictionary's entry ${j}`);
      }
    }
  });
}

/**
 * A data page taken apart: levels as written and as runs, then the values. Its decompressed bytes
 * may be a transient buffer: used up before the next page is taken apart.
 */
interface DataPage extends Levels {
  readonly page: Page;
  readonly v2: boolean;
  /** v1: the decompressed level sections (with their length prefixes); v2: the level bytes. */
  readonly levels: Uint8Array;
  /** Decompressed values section. */
  readonly values: Uint8Array;
  readonly encoding: number;
  readonly numValues: number;
  readonly nonNull: number;
  /** What the digest names besides levels and values: type, counts and level encodings. */
  readonly described: string;
}

/** Decodes one kind of v1 levels from `at` into runs; returns where they end. */
function v1Levels(buf: Uint8Array, at: number, encoding: number, max: number, count: number, out: Runs): number {
  const width = bitWidth(max);
  if (encoding === Encoding.RLE) {
    if (at + 4 > buf.length) throw new RleError('levels cut short');
    const length = new DataView(buf.buffer, buf.byteOffset, buf.byteLength).getUint32(at, true);
    if (at + 4 + length > buf.length) throw new RleError(`levels of ${length} bytes pass the page's end`);
    decodeRuns(buf, at + 4, at + 4 + length, width, count, out);
    return at + 4 + length;
  }
  if (encoding === Encoding.BIT_PACKED) {
    const values = new Int32Array(count);
    const end = decodeBitPacked(buf, at, buf.length, width, count, values);
    for (let i = 0; i < count; i++) out.push(values[i], 1);
    return end;
  }
  throw new RleError(`levels in encoding ${encoding}`);
}

function takeApart(chunk: Uint8Array, page: Page, leaf: Leaf, codec: PageCodec): DataPage {
  const payload = chunk.subarray(page.payloadStart, page.end);
  const rep = leaf.maxRep > 0 ? new Runs() : undefined;
  const def = leaf.maxDef > 0 ? new Runs() : undefined;
  if (page.type === PageType.DATA_PAGE) {
    const h = headerStruct(page, PAGE.V1);
    const numValues = typedNumber(typedField(h, 1));
    const encoding = typedNumber(typedField(h, 2));
    const defEncoding = typedNumber(typedField(h, 3));
    const repEncoding = typedNumber(typedField(h, 4));
    const buf = codec.decompressTransient(payload, page.uncompressedSize);
    let at = rep ? v1Levels(buf, 0, repEncoding, leaf.maxRep, numValues, rep) : 0;
    if (def) at = v1Levels(buf, at, defEncoding, leaf.maxDef, numValues, def);
    return {
      page, v2: false, levels: buf.subarray(0, at), values: buf.subarray(at), encoding, numValues, nonNull: def ? def.countOf(leaf.maxDef) : numValues,
      described: `v1 ${numValues} ${defEncoding} ${repEncoding}`, rep, def,
    };
  }
  const h = headerStruct(page, PAGE.V2);
  const numValues = typedNumber(typedField(h, 1));
  const numNulls = typedNumber(typedField(h, 2));
  const numRows = typedNumber(typedField(h, 3));
  const encoding = typedNumber(typedField(h, 4));
  const defBytes = typedNumber(typedField(h, 5));
  const repBytes = typedNumber(typedField(h, 6));
  const levelBytes = defBytes + repBytes;
  if (levelBytes > payload.length) throw new RleError(`levels of ${levelBytes} bytes exceed the page`);
  if (rep) decodeRuns(payload, 0, repBytes, bitWidth(leaf.maxRep), numValues, rep);
  if (def) decodeRuns(payload, repBytes, levelBytes, bitWidth(leaf.maxDef), numValues, def);
  const compressed = typedField(h, 7) !== false;
  const rest = payload.subarray(levelBytes);
  const values = compressed ? codec.decompressTransient(rest, page.uncompressedSize - levelBytes) : rest;
  return {
    // From the levels when there are any: writers have disagreed on what num_nulls counts (empty lists).
    page, v2: true, levels: payload.subarray(0, levelBytes), values, encoding, numValues, nonNull: def ? def.countOf(leaf.maxDef) : numValues - numNulls,
    described: `v2 ${numValues} ${numNulls} ${numRows} ${defBytes}`, rep, def,
  };
}

/**
 * Buffers reused page after page for what is used up before the next page is taken apart
 * (hashed, or copied into the page being assembled): less garbage for the collector's threads.
 */
const scratch = {
  intBuf: new Int32Array(1 << 16),
  byteBuf: new Uint8Array(1 << 20),
  ints(n: number): Int32Array {
    if (this.intBuf.length < n) this.intBuf = new Int32Array(Math.max(n, this.intBuf.length * 2));
    return this.intBuf.subarray(0, n);
  },
  bytes(n: number): Uint8Array {
    if (this.byteBuf.length < n) this.byteBuf = new Uint8Array(Math.max(n, this.byteBuf.length * 2));
    return this.byteBuf.subarray(0, n);
  },
};

/** A dictionary-indexed page's indices (`transient`: in a buffer the next page's reuse). */
function indicesOf(p: DataPage, dictSize: number, transient = false): Int32Array {
  if (p.values.length === 0) {
    if (p.nonNull > 0) throw new RleError('dictionary indices are missing');
    return new Int32Array(0);
  }
  const width = p.values[0];
  const out = transient ? scratch.ints(p.nonNull) : new Int32Array(p.nonNull);
  decodeHybrid(p.values, 1, p.values.length, width, p.nonNull, out);
  for (let i = 0; i < out.length; i++) {
    if (out[i] < 0 || out[i] >= dictSize) throw new RleError(`dictionary index ${out[i]} is past the dictionary's ${dictSize} values`);
  }
  return out;
}

/** What a page of a chunk with a dictionary holds: its values plain-encoded (and its indices, if it had them). */
function valuesOf(p: DataPage, dict: PlainValues | undefined): { encoding: number; values: Uint8Array; indices?: Int32Array } {
  if (!isDictionaryEncoding(p.encoding)) return { encoding: p.encoding, values: p.values };
  if (!dict) throw new RleError('a dictionary-indexed page in a chunk without a dictionary');
  const indices = indicesOf(p, dict.offsets.length - 1);
  return { encoding: Encoding.PLAIN, values: gather(dict, indices, p.nonNull), indices };
}

/** Adds a page by what it holds to `h`: levels as written, then values (plain-encoded where they were indexed). */
function hashLogical(h: DigestHash, p: DataPage, v: { encoding: number; values: Uint8Array }): void {
  h.update(`L ${p.page.type} ${p.described} ${p.levels.length} ${v.encoding} ${v.values.length}\n`);
  h.update(p.levels);
  h.update(v.values);
}

/** A page header with new sizes and, when given, a new values encoding; the CRC (over the old bytes) dropped. */
function newHeader(p: DataPage, uncompressed: number, compressed: number, encoding: number): Uint8Array {
  const sub = p.v2 ? PAGE.V2 : PAGE.V1;
  const inner = edit(headerStruct(p.page, sub), [{ id: p.v2 ? 4 : 2, type: ThriftType.I32, value: encoding }]);
  return writeTypedStruct(edit(p.page.header, [
    { id: PAGE.UNCOMPRESSED, type: ThriftType.I32, value: uncompressed },
    { id: PAGE.COMPRESSED, type: ThriftType.I32, value: compressed },
    { id: sub, type: ThriftType.Struct, value: inner },
  ], [PAGE.CRC]));
}

/**
 * The page rebuilt with `values` (a new values section in `encoding`): its parts as written, and
 * its payload before compression (what the proof walks: WrittenPage).
 */
function rebuilt(p: DataPage, values: Uint8Array, encoding: number, codec: PageCodec): { parts: Uint8Array[]; written: WrittenPage } {
  const whole = new Uint8Array(p.levels.length + values.length);
  whole.set(p.levels, 0);
  whole.set(values, p.levels.length);
  if (p.v2) {
    const h = headerStruct(p.page, PAGE.V2);
    const body = typedField(h, 7) !== false ? codec.compress(values) : values;
    const header = newHeader(p, whole.length, p.levels.length + body.length, encoding);
    // The levels as taken apart may be a view of a buffer the next page reuses: the copy in `whole` is written.
    const levels = whole.subarray(0, p.levels.length);
    return { parts: [header, levels, body], written: { header, payload: whole, compressed: levels.length + body.length } };
  }
  const body = codec.compress(whole);
  const header = newHeader(p, whole.length, body.length, encoding);
  return { parts: [header, body], written: { header, payload: whole, compressed: body.length } };
}

/**
 * A page as the writer hands it over: its header's bytes, its payload before compression (a v2
 * page's levels then its values), and how many bytes follow the header once compressed.
 */
interface WrittenPage {
  readonly header: Uint8Array;
  readonly payload: Uint8Array;
  readonly compressed: number;
}

function sized(data: Uint8Array, size: number): Uint8Array {
  if (data.length !== size) throw new RleError(`a page payload of ${data.length} bytes before compression, its header says ${size}`);
  return data;
}

/** The "codec" of payloads walked before compression: they are what a reader decompresses them to. */
const BEFORE_COMPRESSION: PageCodec = {
  decompress: sized,
  decompressTransient: sized,
  compress: () => {
    throw new RleError('pages walked before compression are not compressed again');
  },
};

/**
 * A written page as the proof walks it (with BEFORE_COMPRESSION): its header parsed from the bytes
 * written, which must name the payload's size and the compressed bytes that follow.
 */
function writtenPage(w: WrittenPage): { chunk: Uint8Array; page: Page } {
  const r = new TypedThriftReader(w.header, 0);
  const header = r.typedStruct();
  if (r.offset !== w.header.length) throw new RleError(`a page header written in ${w.header.length} bytes reads as ${r.offset}`);
  const type = typedNumber(typedField(header, PAGE.TYPE));
  const uncompressed = typedNumber(typedField(header, PAGE.UNCOMPRESSED));
  const compressed = typedNumber(typedField(header, PAGE.COMPRESSED));
  if (uncompressed !== w.payload.length) throw new RleError(`a page header written says ${uncompressed} bytes uncompressed, its payload is ${w.payload.length}`);
  if (compressed !== w.compressed) throw new RleError(`a page header written says ${compressed} bytes compressed, ${w.compressed} follow it`);
  return { chunk: w.payload, page: { type, header, start: 0, payloadStart: 0, end: w.payload.length, uncompressedSize: uncompressed } };
}

/** The values of a dictionary page as written (its payload before compression), as the proof walks them. */
function writtenDictionary(w: WrittenPage, leaf: Leaf): PlainValues {
  const { chunk, page } = writtenPage(w);
  if (page.type !== PageType.DICTIONARY_PAGE) throw new RleError(`a dictionary page written as type ${page.type}`);
  return dictionaryValues(chunk, page, BEFORE_COMPRESSION, leaf);
}

// ---------------------------------------------------------------------------------------------
// Dictionaries

/** A dictionary page of `values` (`count` of them), its header after `source`'s (the encoding it names kept). */
function dictionaryPage(source: Page, values: Uint8Array, count: number, codec: PageCodec): { parts: Uint8Array[]; uncompressed: number; encoding: number; written: WrittenPage } {
  const inner = edit(headerStruct(source, PAGE.DICTIONARY), [{ id: 1, type: ThriftType.I32, value: count }], [3]);
  const body = codec.compress(values);
  const header = writeTypedStruct([
    { id: PAGE.TYPE, type: ThriftType.I32, value: PageType.DICTIONARY_PAGE },
    { id: PAGE.UNCOMPRESSED, type: ThriftType.I32, value: values.length },
    { id: PAGE.COMPRESSED, type: ThriftType.I32, value: body.length },
    { id: PAGE.DICTIONARY, type: ThriftType.Struct, value: inner },
  ]);
  return {
    parts: [header, body], uncompressed: header.length + values.length, encoding: typedNumber(typedField(inner, 2)),
    written: { header, payload: values, compressed: body.length },
  };
}

// ---------------------------------------------------------------------------------------------
// Statistics

/** Statistics of chunks merged: null counts summed, the extreme bounds kept as their chunks wrote them. */
function mergedStatistics(leaf: Leaf, metas: readonly (readonly TypedField[])[]): TypedField[] | undefined {
  let nulls: number | undefined = 0;
  let min: { value: ReturnType<typeof statValue>; fields: TypedField[] } | undefined;
  let max: typeof min;
  let bounded = leaf.iceberg !== undefined;
  for (const meta of metas) {
    const stats = typedField(meta, 12);
    const s = Array.isArray(stats) ? stats : undefined;
    const n = s && typedField(s, 3);
    const count = typeof n === 'number' || typeof n === 'bigint' ? Number(n) : undefined;
    nulls = nulls === undefined || count === undefined ? undefined : nulls + count;
    if (!bounded || leaf.iceberg === undefined) continue;
    const numValues = typedNumber(typedField(meta, 5));
    if (count !== undefined && count >= numValues) continue;
    const lo = s && typedField(s, 6);
    const hi = s && typedField(s, 5);
    const lv = lo instanceof Uint8Array ? statValue(leaf.iceberg, leaf.physical, lo) : undefined;
    const hv = hi instanceof Uint8Array ? statValue(leaf.iceberg, leaf.physical, hi) : undefined;
    if (lv === undefined || hv === undefined || !s) {
      bounded = false;
      continue;
    }
    if (!min || less(leaf.iceberg, lv, min.value!)) min = { value: lv, fields: s.filter((f) => f.id === 6 || f.id === 8) };
    if (!max || less(leaf.iceberg, max.value!, hv)) max = { value: hv, fields: s.filter((f) => f.id === 5 || f.id === 7) };
  }
  const out: TypedField[] = [];
  if (nulls !== undefined) out.push({ id: 3, type: ThriftType.I64, value: nulls });
  if (bounded && min && max) out.push(...min.fields, ...max.fields);
  return out.length === 0 ? undefined : out.sort((a, b) => a.id - b.id);
}

// ---------------------------------------------------------------------------------------------
// Writing

/**
 * A source row group to merge, and the rows deleted from it (positions in the row group,
 * ascending): those are dropped from every column's pages (deleteProblem says which sources can).
 * With `keys`, the rows whose key those equality deletes hold are dropped as well, found from the
 * row group's own key column as it is merged.
 */
export interface MergePart extends CopyPart {
  readonly deleted?: Int32Array;
  readonly keys?: readonly PageKeyProbe[];
}

/**
 * Equality deletes on one long or int field (keyColumnProblem says which), probed from a source
 * row group's own pages as it is merged: no read of the key column of its own, no decode into
 * Arrow. A row is deleted when its key is held: `hasLong` for a long (its two 32-bit halves),
 * `hasInt` for an int, `nulls` for a null key.
 */
export interface PageKeyProbe {
  readonly fieldId: number;
  readonly keys: {
    hasLong(low: number, high: number): boolean;
    hasInt(v: number): boolean;
    readonly nulls: boolean;
  };
}

/**
 * Why field `fieldId` of `source` cannot be probed from its pages (undefined: it can): it must be
 * one non-repeated leaf, a long stored as INT64 or an int as INT32 (deleteProblem must have passed).
 */
export function keyColumnProblem(source: CopySource, schema: StructType, fieldId: number): string | undefined {
  const found = leavesOf(source.footer, schema).filter((l) => l.fieldId === fieldId);
  if (found.length !== 1) return `field ${fieldId} is in ${found.length} of its columns`;
  const [leaf] = found;
  if (leaf.maxRep > 0) return `field ${fieldId} is repeated`;
  const type = leaf.iceberg?.type;
  if (!(type === 'long' && leaf.physical === PhysicalType.INT64) && !(type === 'int' && leaf.physical === PhysicalType.INT32)) {
    return `field ${fieldId} is ${type ?? 'unknown'} stored as physical type ${leaf.physical}`;
  }
  return undefined;
}

/** Little-endian 32-bit words of `bytes` (a view where aligned, else a copy). */
function words(bytes: Uint8Array, count: number): Int32Array {
  if (bytes.length < count * 4) throw new RleError(`${count} 32-bit words need ${count * 4} bytes, the values hold ${bytes.length}`);
  // A copy into new memory (a Buffer's slice, node:zlib's and zstd-napi's output, would be a view).
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : new Uint8Array(bytes.subarray(0, count * 4));
  return new Int32Array(aligned.buffer, aligned.byteOffset, count);
}

/**
 * The rows of a source row group its deletes remove, ascending: `part.deleted`, and the rows whose
 * key a probe holds, read from the key column's pages (`bytes`, `pages`: the row group's chunks as
 * fetched); undefined when none. Each key is read as the decoder reads it: a null (a def level
 * under the leaf's maximum, a null struct above it included) matches a null key. With `kept`, the
 * key pages decompressed stay there for the build.
 */
function probedDeletes(
  part: MergePart, leaves: readonly Leaf[], codecs: readonly (PageCodec | undefined)[], bytes: readonly Uint8Array[], pages: readonly Page[][], numRows: number,
  kept?: KeptPages,
): Int32Array | undefined {
  const dead = new Uint8Array(numRows);
  for (const d of part.deleted ?? []) {
    if (d < 0 || d >= numRows) throw new RleError(`deleted position ${d} is past the row group's ${numRows} rows`);
    dead[d] = 1;
  }
  for (const { fieldId, keys } of part.keys ?? []) {
    const k = leaves.findIndex((l) => l.fieldId === fieldId);
    const leaf = leaves[k];
    const codec = codecs[k];
    if (!leaf || !codec || leaf.maxRep > 0) throw new RleError(`equality field ${fieldId} cannot be probed from its pages`);
    const long = leaf.physical === PhysicalType.INT64;
    const width = long ? 2 : 1;
    const chunk = bytes[k];
    const dictPage = dictionaryPageOf(pages[k]);
    const next = dictPage ? 1 : 0;
    let dict: Int32Array | undefined;
    let dictSize = 0;
    if (dictPage) {
      const { bytes: plain, count } = dictionaryBytes(chunk, dictPage, kept ? keeping(codec, dictPage, kept) : codec);
      dictSize = count;
      dict = words(plain, count * width);
    }
    // Each dictionary entry probed once.
    const dictHits = dict && new Uint8Array(dictSize);
    if (dict) for (let e = 0; e < dictSize; e++) dictHits![e] = (long ? keys.hasLong(dict[2 * e], dict[2 * e + 1]) : keys.hasInt(dict[e])) ? 1 : 0;
    // Whether the j-th non-null value of the page is a deleted key, for all j at once.
    let hit = new Uint8Array(0);
    let row = 0;
    for (const page of pages[k].slice(next)) {
      const p = takeApart(chunk, page, leaf, kept ? keeping(codec, page, kept) : codec);
      if (row + p.numValues > numRows) throw new RleError(`column ${k} holds more values than the row group's ${numRows} rows`);
      if (hit.length < p.nonNull) hit = new Uint8Array(p.nonNull);
      if (isDictionaryEncoding(p.encoding)) {
        if (!dictHits) throw new RleError('a dictionary-indexed page in a chunk without a dictionary');
        const indices = indicesOf(p, dictSize, true);
        for (let j = 0; j < p.nonNull; j++) hit[j] = dictHits[indices[j]];
      } else if (p.encoding === Encoding.PLAIN) {
        const values = words(p.values, p.nonNull * width);
        if (long) for (let j = 0; j < p.nonNull; j++) hit[j] = keys.hasLong(values[2 * j], values[2 * j + 1]) ? 1 : 0;
        else for (let j = 0; j < p.nonNull; j++) hit[j] = keys.hasInt(values[j]) ? 1 : 0;
      } else throw new RleError(`column ${k} has values in encoding ${p.encoding}`);
      if (!p.def) {
        // A required leaf has a value per row (a v2 header counting nulls in one is malformed).
        if (p.nonNull !== p.numValues) throw new RleError(`column ${k} is required, a page of it holds ${p.nonNull} values for ${p.numValues} rows`);
        for (let i = 0; i < p.numValues; i++) dead[row + i] |= hit[i];
      } else {
        // Runs of def levels: the leaf's maximum is a value, anything under it a null.
        let i = row;
        let j = 0;
        for (let r = 0; r < p.def.length; r += 2) {
          const level = p.def.data[r];
          const count = p.def.data[r + 1];
          if (level === leaf.maxDef) {
            if (j + count > p.nonNull) throw new RleError(`column ${k} page holds ${p.nonNull} values, its levels more`);
            for (let c = 0; c < count; c++) dead[i++] |= hit[j++];
          } else if (level > leaf.maxDef || level < 0) throw new RleError(`column ${k} has definition level ${level}, its maximum ${leaf.maxDef}`);
          else if (keys.nulls) for (let c = 0; c < count; c++) dead[i++] = 1;
          else i += count;
        }
        if (j !== p.nonNull) throw new RleError(`column ${k} page holds ${p.nonNull} values, its levels ${j}`);
      }
      row += p.numValues;
    }
    if (row !== numRows) throw new RleError(`column ${k} holds ${row} values for ${numRows} rows`);
  }
  let n = 0;
  for (let i = 0; i < numRows; i++) n += dead[i];
  if (n === 0) return undefined;
  const out = new Int32Array(n);
  for (let i = 0, at = 0; i < numRows; i++) if (dead[i] === 1) out[at++] = i;
  return out;
}

/** One source row group inside an output row group. */
export interface MergedSegment {
  readonly part: MergePart;
  /** Its live rows (the source's, less those deleted). */
  readonly rows: number;
  /** The rows dropped from it (positions in the source row group, ascending): `part.deleted` and those its key probes found. */
  readonly deleted: Int32Array | undefined;
  /** Position of its first row in the output. */
  readonly firstRow: number;
  /** Digest of the source's row group as read. */
  readonly digest: Digest;
  /**
   * Per column, how its pages went into the output: `bytes` (copied, hashed by their bytes),
   * `values` (copied or re-indexed one for one, hashed by what each holds) or `coalesced` (joined
   * into larger pages, hashed by the levels and values of the segment whatever pages hold them),
   * `indexed` as `coalesced` but with the values dictionary-indexed on both sides, hashed by their
   * indices into the output's dictionary, and that dictionary by its digest (the writer checks each
   * source entry against the entry its index now names).
   */
  readonly modes: readonly ColumnMode[];
  /** Per column: its data pages in the output (`bytes`, `values`), or its level count (`coalesced`). */
  readonly pages: readonly number[];
  /**
   * Its digest as written: the same walk the proof would make of the output's pages, made as the
   * writer handed each over before compressing it. What the proof yields once the row group's
   * chunks re-read from storage are those written (`chunks`).
   */
  readonly written: Digest;
  /** XXH64 of each column chunk of its output row group as written (compressed): shared by the row group's segments. */
  readonly chunks: readonly Digest[];
  /** The schema signature hashed into its digests: the proof checks the footer re-read holds that schema. */
  readonly signature: string;
}

export type ColumnMode = 'bytes' | 'values' | 'coalesced' | 'indexed';

/** Modes of columns joined into larger pages: `indexed` when every value stays dictionary-indexed (hashed by its output index). */
const isCoalesced = (mode: ColumnMode): boolean => mode === 'coalesced' || mode === 'indexed';

export interface MergedFile {
  readonly path: string;
  readonly fileSizeInBytes: number;
  readonly recordCount: number;
  readonly splitOffsets: readonly number[];
  readonly footer: ParquetFooter;
  readonly footerBytes: Uint8Array;
  /** Per output row group, its segments in order. */
  readonly rowGroups: readonly (readonly MergedSegment[])[];
  /** Output column chunks whose dictionary-indexed pages became PLAIN (the merged dictionary was too large). */
  readonly plainColumns: number;
  /** Row groups the proof decompresses and walks again: the first, and each that a worker's codecs were first used for (BuiltRowGroup.fresh). */
  readonly deepRowGroups: readonly number[];
}

export interface MergeOptions {
  readonly writeSchema: StructType;
  /** Largest merged dictionary (plain-encoded bytes): Iceberg's write.parquet.dict-size-bytes. */
  readonly dictionaryBytes: number;
  readonly zstd: ZstdCodec | undefined;
  /** ZSTD level of rewritten pages. */
  readonly level: number;
  /**
   * Coalesced pages grow to about this many uncompressed bytes (write.parquet.page-size-bytes);
   * columns whose pages average under a quarter of it are coalesced. 0: never.
   */
  readonly pageBytes: number;
  /** And to at most this many rows (write.parquet.page-row-limit). */
  readonly pageRows: number;
  readonly reads?: CopyReads;
  readonly stats?: ReadWindowStats;
  readonly fault?: ChunkFault;
  /** Where output row groups are built (default: on this thread, one at a time). */
  readonly builder?: RowGroupBuilder;
  /** Bytes of sources read already (their footer reads), by path: row groups they cover are not fetched again. */
  readonly held?: ReadonlyMap<string, HeldBytes>;
}

/**
 * A source row group as an output row group is built from it: plain data, the same on this thread
 * and on a merge worker (merge-pool.ts, which sends the bytes and has the pages parsed again there).
 */
export interface SourceGroup {
  /** Its file, for errors. */
  readonly path: string;
  readonly rowGroup: number;
  /** Live rows: the row group's less `deleted`. */
  readonly rows: number;
  /** Rows dropped (positions in the row group, ascending), if any. */
  readonly deleted: Int32Array | undefined;
  /** Per column, its chunk's ColumnMetaData. */
  readonly metas: readonly (readonly TypedField[])[];
  readonly bytes: readonly Uint8Array[];
  readonly pages: readonly (readonly Page[])[];
  /** Pages already decompressed on this thread (the equality probe's): never sent to a worker. */
  readonly kept?: KeptPages;
}

/** The page sizes building a row group follows (MergeOptions'). */
type PageSizes = Pick<MergeOptions, 'dictionaryBytes' | 'pageBytes' | 'pageRows'>;

/**
 * What building an output row group takes besides its sources, the same for every row group of a
 * file: its columns, each one's codec (parquet-format Codec) and the file's schema signature.
 */
export interface RowGroupShape extends PageSizes {
  readonly leaves: readonly Leaf[];
  readonly codecs: readonly number[];
  /** ZSTD level of rewritten pages. */
  readonly level: number;
  readonly signature: string;
  readonly leafPaths: readonly (readonly string[])[];
}

/** An output column chunk as built, but for where it lands in the file. */
export interface BuiltColumn {
  /** Its ColumnMetaData, path included, without its page offsets. */
  readonly meta: readonly TypedField[];
  readonly compressed: number;
  readonly uncompressed: number;
  /** Bytes of its dictionary page (0: none). */
  readonly dictionaryLength: number;
  /** XXH64 of its bytes as written. */
  readonly digest: Digest;
}

/** A source row group's part of a built row group (MergedSegment but for where it lands). */
export interface BuiltSegment {
  readonly digest: Digest;
  readonly written: Digest;
  readonly pages: readonly number[];
  readonly modes: readonly ColumnMode[];
}

/** One output row group as built: its bytes from its first column chunk on, and what its footer entry needs. */
export interface BuiltRowGroup {
  readonly parts: readonly Uint8Array[];
  readonly columns: readonly BuiltColumn[];
  /** Per source row group, in order. */
  readonly segments: readonly BuiltSegment[];
  readonly numRows: number;
  /** Columns whose dictionary-indexed pages became PLAIN. */
  readonly plainColumns: number;
  /**
   * The first row group of its file its builder's codecs compressed (a worker's first of the file):
   * the proof decompresses it again (MergedFile.deepRowGroups). The file's first always is.
   */
  readonly fresh?: boolean;
}

/**
 * Builds output row groups: on this thread (buildRowGroup), or on worker threads (merge-pool.ts),
 * which take up to `inFlight` row groups at once. Results come back in the order asked.
 */
export interface RowGroupBuilder {
  readonly inFlight: number;
  /** And at most this many bytes of sources (one row group always goes). */
  readonly inFlightBytes: number;
  /** How the file is uploaded (default OUTPUT_PART_BYTES, OUTPUT_PARTS_IN_FLIGHT). */
  readonly upload?: { readonly partBytes: number; readonly partsInFlight: number };
  build(shape: RowGroupShape, groups: readonly SourceGroup[]): Promise<BuiltRowGroup>;
}

interface BuiltChunk {
  readonly parts: Uint8Array[];
  readonly meta: TypedField[];
  readonly compressed: number;
  readonly uncompressed: number;
  readonly dictionaryLength: number;
  readonly plain: boolean;
}

function headerOf(page: Page): number {
  return page.payloadStart - page.start;
}

/**
 * One output column chunk from column `k` of `groups`; adds each group's pages to its segment
 * hash and records its page count and mode.
 */
function mergeColumn(
  k: number, leaf: Leaf, groups: readonly SourceGroup[], hashes: readonly DigestHash[], outHashes: readonly DigestHash[], pageCounts: number[][],
  modes: ColumnMode[][], codec: PageCodec | undefined, options: PageSizes,
): BuiltChunk {
  const parts: Uint8Array[] = [];
  let compressed = 0;
  let uncompressed = 0;
  const add = (bytes: readonly Uint8Array[], uncompressedSize: number): void => {
    let n = 0;
    for (const b of bytes) {
      parts.push(b);
      n += b.length;
    }
    compressed += n;
    uncompressed += uncompressedSize;
  };
  const stats = new Map<string, number>();
  const count = (type: number, encoding: number): void => {
    const key = `${type} ${encoding}`;
    stats.set(key, (stats.get(key) ?? 0) + 1);
  };
  const dicts = groups.map((g) => dictionaryPageOf(g.pages[k]));
  const anyDict = dicts.some((d) => d !== undefined);
  if (anyDict && !codec) throw new RleError('no codec to rewrite dictionary pages');

  // The sources' dictionaries, and whether their union fits: merged, or the indexed pages go PLAIN.
  const decoded: (PlainValues | undefined)[] = dicts.map((d, i) => inSource(groups[i], k, () => d && dictionaryValues(groups[i].bytes[k], d, keptOr(codec!, d, groups[i].kept), leaf)));
  const union = anyDict ? dictionaryUnion(decoded, decoded.map((d) => d && fingerprints(d)), options.dictionaryBytes) : undefined;
  const remaps = union?.remaps ?? [];
  const merged = union?.values;
  const mergedCount = union?.count ?? 0;
  const plain = anyDict && merged === undefined;

  let dictionaryLength = 0;
  // The output's dictionary as the proof's walk reads it: from the dictionary page as written.
  let outDict: PlainValues | undefined;
  if (merged) {
    const page = dictionaryPage(dicts.find((d) => d !== undefined)!, merged, mergedCount, codec!);
    outDict = writtenDictionary(page.written, leaf);
    add(page.parts, page.uncompressed);
    dictionaryLength = compressed;
    count(PageType.DICTIONARY_PAGE, page.encoding);
  }
  const newWidth = bitWidth(mergedCount - 1);

  groups.forEach((g, i) => inSource(g, k, () => {
    const chunk = g.bytes[k];
    const dict = decoded[i];
    const data = dict ? g.pages[k].slice(1) : g.pages[k];
    pageCounts[i][k] = data.length;
    modes[i][k] = dict !== undefined ? 'values' : 'bytes';
    const h = hashes[i];
    const outH = outHashes[i];
    h.update(`column ${k} ${modes[i][k]} ${data.length}\n`);
    outH.update(`column ${k} ${modes[i][k]} ${data.length}\n`);
    for (const page of data) {
      if (page.type !== PageType.DATA_PAGE && page.type !== PageType.DATA_PAGE_V2) throw new RleError(`a page of type ${page.type} among data pages`);
      if (!dict) {
        const bytes = chunk.subarray(page.start, page.end);
        h.update(bytes);
        // Written as they are: the output side hashes the bytes it hands over (the chunk digest covers their upload).
        outH.update(bytes);
        add([bytes], headerOf(page) + page.uncompressedSize);
        const encoding = encodingOf(page);
        // Copied as it is, it would index the merged dictionary.
        if (isDictionaryEncoding(encoding)) throw new RleError('a dictionary-indexed page in a chunk without a dictionary page');
        count(page.type, encoding);
        continue;
      }
      const p = takeApart(chunk, page, leaf, keptOr(codec!, page, g.kept));
      const held = valuesOf(p, dict);
      hashLogical(h, p, held);
      const indices = held.indices;
      if (!indices) {
        // Written byte for byte, its values not indexed: the output holds what was read, hashed alike.
        hashLogical(outH, p, held);
        add([chunk.subarray(page.start, page.end)], headerOf(page) + page.uncompressedSize);
        count(page.type, p.encoding);
        continue;
      }
      let values: Uint8Array;
      let encoding: number;
      if (plain) {
        values = held.values;
        encoding = Encoding.PLAIN;
      } else {
        const map = remaps[i]!;
        for (let j = 0; j < indices.length; j++) indices[j] = map[indices[j]];
        const runs = encodeHybrid(indices, indices.length, newWidth);
        values = new Uint8Array(1 + runs.length);
        values[0] = newWidth;
        values.set(runs, 1);
        encoding = p.encoding;
      }
      const out = rebuilt(p, values, encoding, codec!);
      const w = writtenPage(out.written);
      const q = takeApart(w.chunk, w.page, leaf, BEFORE_COMPRESSION);
      hashLogical(outH, q, valuesOf(q, outDict));
      add(out.parts, out.parts[0].length + p.levels.length + values.length);
      count(page.type, encoding);
    }
  }));

  const metas = groups.map((g) => g.metas[k]);
  const encodings = new Set<number>();
  for (const m of metas) for (const e of typedItems(typedField(m, 2)) as number[]) encodings.add(e);
  if (plain) {
    encodings.delete(Encoding.PLAIN_DICTIONARY);
    encodings.delete(Encoding.RLE_DICTIONARY);
    encodings.add(Encoding.PLAIN);
  }
  return { parts, meta: chunkMeta(leaf, metas, encodings, stats, uncompressed, compressed), compressed, uncompressed, dictionaryLength, plain };
}

/** An output chunk's ColumnMetaData but for its path and offsets: sizes, encodings, page counts by encoding, merged statistics. */
function chunkMeta(
  leaf: Leaf, metas: readonly (readonly TypedField[])[], encodings: Iterable<number>, stats: ReadonlyMap<string, number>, uncompressed: number, compressed: number,
): TypedField[] {
  const statistics = mergedStatistics(leaf, metas);
  const encodingStats = [...stats].map(([key, n]) => {
    const [type, encoding] = key.split(' ').map(Number);
    return [
      { id: 1, type: ThriftType.I32, value: type },
      { id: 2, type: ThriftType.I32, value: encoding },
      { id: 3, type: ThriftType.I32, value: n },
    ] as TypedField[];
  });
  const first = metas[0];
  return [
    ...first.filter((f) => f.id === 1),
    { id: 2, type: ThriftType.List, value: typedList([...new Set(encodings)].sort((a, b) => a - b), ThriftType.I32) },
    ...first.filter((f) => f.id === 3 || f.id === 4),
    { id: 5, type: ThriftType.I64, value: metas.reduce((n, m) => n + typedNumber(typedField(m, 5)), 0) },
    { id: 6, type: ThriftType.I64, value: uncompressed },
    { id: 7, type: ThriftType.I64, value: compressed },
    ...(statistics ? [{ id: 12, type: ThriftType.Struct, value: statistics }] : []),
    { id: 13, type: ThriftType.List, value: typedList(encodingStats, ThriftType.Struct) },
  ];
}

// ---------------------------------------------------------------------------------------------
// Coalescing: small pages joined into pages of a writer's size

/** Bytes of each plain value of a fixed-width physical type (0: BYTE_ARRAY, walked by its length prefixes). */
function plainWidth(leaf: Leaf): number {
  if (leaf.physical === PhysicalType.BYTE_ARRAY) return 0;
  if (leaf.physical === PhysicalType.FIXED_LEN_BYTE_ARRAY) return leaf.typeLength;
  return { [PhysicalType.INT32]: 4, [PhysicalType.FLOAT]: 4, [PhysicalType.INT64]: 8, [PhysicalType.DOUBLE]: 8, [PhysicalType.INT96]: 12 }[leaf.physical] ?? -1;
}

/** Bytes that `n` plain values take from `at` on. */
function plainBytes(values: Uint8Array, at: number, n: number, width: number): number {
  if (width > 0) return n * width;
  const view = new DataView(values.buffer, values.byteOffset, values.byteLength);
  let p = at;
  for (let i = 0; i < n; i++) {
    if (p + 4 > values.length) throw new RleError(`plain value ${i} of ${n} is cut short`);
    p += 4 + view.getUint32(p, true);
  }
  if (p > values.length) throw new RleError('plain values pass the page end');
  return p - at;
}

/**
 * Whether column `k`'s pages in `groups` are joined into larger pages: they are small (on average
 * under a quarter of the page size: larger pages compress about as well), the codec can be
 * rewritten, and every value is plain or dictionary-indexed (other encodings and bit-packed
 * booleans cannot be joined without decoding them).
 */
function coalescable(leaf: Leaf, groups: readonly SourceGroup[], k: number, codec: PageCodec | undefined, options: PageSizes, force = false): boolean {
  if (!codec || plainWidth(leaf) < 0 || (!force && options.pageBytes <= 0)) return false;
  let pages = 0;
  let bytes = 0;
  for (const g of groups) {
    const all = g.pages[k];
    const dict = all[0]?.type === PageType.DICTIONARY_PAGE;
    for (const page of dict ? all.slice(1) : all) {
      if (page.type !== PageType.DATA_PAGE && page.type !== PageType.DATA_PAGE_V2) return false;
      const encoding = encodingOf(page);
      if (!(encoding === Encoding.PLAIN || (dict && isDictionaryEncoding(encoding)))) return false;
      pages++;
      bytes += page.uncompressedSize;
    }
  }
  return force || (pages > 1 && bytes / pages < options.pageBytes / 4);
}

/** Bytes kept free ahead of an assembled page's values, where a v1 page's levels are written. */
const LEVELS_RESERVE = 64 * 1024;

/** A page being assembled from the levels and values of whole source pages (one per column, reused). */
class PageAssembly {
  rep = new Runs();
  def = new Runs();
  /** Plain values from LEVELS_RESERVE to `end`. */
  buf = new Uint8Array(LEVELS_RESERVE + (64 << 10));
  end = LEVELS_RESERVE;
  indices: Int32Array[] = [];
  numValues = 0;
  nonNull = 0;
  rows = 0;
  bytes = 0;

  add(p: Levels, rows: number, values: Uint8Array | Int32Array): void {
    if (p.rep) this.rep.append(p.rep);
    if (p.def) this.def.append(p.def);
    if (values instanceof Int32Array) {
      this.indices.push(values);
      this.bytes += values.length * 4;
    } else {
      if (this.end + values.length > this.buf.length) {
        const next = new Uint8Array(Math.max(this.buf.length * 2, this.end + values.length));
        next.set(this.buf.subarray(0, this.end));
        this.buf = next;
      }
      this.buf.set(values, this.end);
      this.end += values.length;
      this.bytes += values.length;
    }
    this.bytes += p.numValues;
    this.numValues += p.numValues;
    this.nonNull += p.nonNull;
    this.rows += rows;
  }

  reset(): void {
    this.rep = new Runs();
    this.def = new Runs();
    this.end = LEVELS_RESERVE;
    this.indices = [];
    this.numValues = this.nonNull = this.rows = this.bytes = 0;
  }
}

function joined<T extends Uint8Array | Int32Array>(parts: readonly T[], make: (n: number) => T): T {
  if (parts.length === 1) return parts[0];
  const out = make(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The page `a` holds, as bytes: header then payload, in version `v2` or v1, its values in `encoding`. */
function assembledPage(
  a: PageAssembly, leaf: Leaf, v2: boolean, encoding: number, width: number, codec: PageCodec,
): { parts: Uint8Array[]; uncompressed: number; written: WrittenPage } {
  const levels = (runs: Runs, max: number): Uint8Array => (max === 0 ? new Uint8Array(0) : encodeRuns(runs, bitWidth(max)));
  const rep = levels(a.rep, leaf.maxRep);
  const def = levels(a.def, leaf.maxDef);
  // Values at LEVELS_RESERVE of `buf`, a v1 page's levels written just before them.
  let buf = a.buf;
  let start = LEVELS_RESERVE;
  let end = a.end;
  if (a.indices.length > 0) {
    const runs = encodeHybrid(joined(a.indices, (n) => new Int32Array(n)), a.nonNull, width);
    buf = new Uint8Array(LEVELS_RESERVE + 1 + runs.length);
    buf[start] = width;
    buf.set(runs, start + 1);
    end = buf.length;
  }
  const values = buf.subarray(start, end);
  if (v2) {
    const body = codec.compress(values);
    const header = writeTypedStruct([
      { id: PAGE.TYPE, type: ThriftType.I32, value: PageType.DATA_PAGE_V2 },
      { id: PAGE.UNCOMPRESSED, type: ThriftType.I32, value: rep.length + def.length + values.length },
      { id: PAGE.COMPRESSED, type: ThriftType.I32, value: rep.length + def.length + body.length },
      {
        id: PAGE.V2, type: ThriftType.Struct, value: [
          { id: 1, type: ThriftType.I32, value: a.numValues },
          { id: 2, type: ThriftType.I32, value: a.numValues - a.nonNull },
          { id: 3, type: ThriftType.I32, value: a.rows },
          { id: 4, type: ThriftType.I32, value: encoding },
          { id: 5, type: ThriftType.I32, value: def.length },
          { id: 6, type: ThriftType.I32, value: rep.length },
        ],
      },
    ]);
    // The payload before compression, levels then values, for the proof's walk (v2 pages are rarely coalesced: a copy).
    const payload = new Uint8Array(rep.length + def.length + values.length);
    payload.set(rep, 0);
    payload.set(def, rep.length);
    payload.set(values, rep.length + def.length);
    return {
      parts: [header, rep, def, body], uncompressed: header.length + rep.length + def.length + values.length,
      written: { header, payload, compressed: rep.length + def.length + body.length },
    };
  }
  const prefixed = (b: Uint8Array, max: number): number => (max === 0 ? 0 : 4 + b.length);
  const levelBytes = prefixed(rep, leaf.maxRep) + prefixed(def, leaf.maxDef);
  if (levelBytes > start) {
    // Levels past the reserve (pages of very many values): a buffer of their own.
    const wider = new Uint8Array(levelBytes + values.length);
    wider.set(values, levelBytes);
    buf = wider;
    start = levelBytes;
  }
  start -= levelBytes;
  const view = new DataView(buf.buffer, buf.byteOffset);
  let at = start;
  for (const [b, max] of [[rep, leaf.maxRep], [def, leaf.maxDef]] as const) {
    if (max === 0) continue;
    view.setUint32(at, b.length, true);
    buf.set(b, at + 4);
    at += 4 + b.length;
  }
  const whole = buf.subarray(start, start + levelBytes + values.length);
  const body = codec.compress(whole);
  const header = writeTypedStruct([
    { id: PAGE.TYPE, type: ThriftType.I32, value: PageType.DATA_PAGE },
    { id: PAGE.UNCOMPRESSED, type: ThriftType.I32, value: whole.length },
    { id: PAGE.COMPRESSED, type: ThriftType.I32, value: body.length },
    {
      id: PAGE.V1, type: ThriftType.Struct, value: [
        { id: 1, type: ThriftType.I32, value: a.numValues },
        { id: 2, type: ThriftType.I32, value: encoding },
        { id: 3, type: ThriftType.I32, value: Encoding.RLE },
        { id: 4, type: ThriftType.I32, value: Encoding.RLE },
      ],
    },
  ]);
  // `whole` is a view of the assembly's buffer: the proof walks it before the assembly is reset.
  return { parts: [header, body], uncompressed: header.length + whole.length, written: { header, payload: whole, compressed: body.length } };
}

/**
 * What a coalesced column's segment is hashed by, however pages cut it: its level runs of each
 * kind, then its values plain-encoded; gathered until the segment ends.
 */
class SegmentPieces {
  readonly rep = new Runs();
  readonly def = new Runs();
  private valueBytes = 0;

  constructor(private readonly h: DigestHash) {}

  /** Values go straight into the segment's hash (nothing is held); the levels and counts follow at the end. */
  values(v: Uint8Array): void {
    this.h.update(v);
    this.valueBytes += v.length;
  }

  finish(k: number, mode: ColumnMode, levels: number, dictionary = ''): void {
    this.h.update(`column ${k} ${mode} ${levels} ${this.valueBytes} ${this.rep.length} ${this.def.length} ${dictionary}\n`);
    this.h.update(this.rep.bytes());
    this.h.update(this.def.bytes());
  }
}

/**
 * Column `k` of `groups` with its small pages joined: each source page's levels and values are
 * appended to the page being assembled, which is written once it reaches the page size or row
 * limit. Values stay dictionary-indexed when every source page was and the merged dictionary
 * fits, else they are written plain.
 */
function coalesceColumn(
  k: number, leaf: Leaf, groups: readonly SourceGroup[], hasher: DigestHasher, hashes: readonly DigestHash[], outHashes: readonly DigestHash[],
  pageCounts: number[][], modes: ColumnMode[][], codec: PageCodec, options: PageSizes,
): BuiltChunk {
  const parts: Uint8Array[] = [];
  let compressed = 0;
  let uncompressed = 0;
  const stats = new Map<string, number>();
  const emit = (bytes: readonly Uint8Array[], size: number, type: number, encoding: number): void => {
    for (const b of bytes) {
      parts.push(b);
      compressed += b.length;
    }
    uncompressed += size;
    const key = `${type} ${encoding}`;
    stats.set(key, (stats.get(key) ?? 0) + 1);
  };
  const dictPages = groups.map((g) => dictionaryPageOf(g.pages[k]));
  const decoded = dictPages.map((d, i) => inSource(groups[i], k, () => d && dictionaryValues(groups[i].bytes[k], d, keptOr(codec, d, groups[i].kept), leaf)));
  const data = groups.map((g, i) => (dictPages[i] ? g.pages[k].slice(1) : g.pages[k]));
  const allIndexed = data.every((ps, i) => decoded[i] !== undefined && ps.every((p) => isDictionaryEncoding(encodingOf(p))));
  const first = data.find((ps) => ps.length > 0)?.[0];
  // v2 pages must start at a row; v1 pages of repeated columns need not: v2 only when every source page is.
  const v2 = data.every((ps) => ps.every((p) => p.type === PageType.DATA_PAGE_V2));

  // The merged dictionary, when every value is indexed and the union fits.
  let remaps: Int32Array[] | undefined;
  let width = 0;
  let indexEncoding: number = Encoding.RLE_DICTIONARY;
  let dictEncoding: number = Encoding.PLAIN;
  let tag = '';
  // The output's dictionary as the proof's walk reads it: from the dictionary page as written.
  let outDict: PlainValues | undefined;
  const dictPrints = allIndexed ? decoded.map((d) => d && fingerprints(d)) : [];
  const union = allIndexed ? dictionaryUnion(decoded, dictPrints, options.dictionaryBytes) : undefined;
  if (union) {
    remaps = union.remaps.map((m) => m!);
    checkRemaps(plainValues(union.values, union.count, leaf), dictPrints, remaps);
    tag = dictionaryTag(hasher, union.values, union.count);
    const page = dictionaryPage(dictPages.find((d) => d !== undefined)!, union.values, union.count, codec);
    emit(page.parts, page.uncompressed, PageType.DICTIONARY_PAGE, page.encoding);
    outDict = writtenDictionary(page.written, leaf);
    width = bitWidth(union.count - 1);
    indexEncoding = first ? encodingOf(first) : Encoding.RLE_DICTIONARY;
    dictEncoding = page.encoding;
  }
  const dictionaryLength = compressed;
  const encoding = remaps ? indexEncoding : Encoding.PLAIN;

  // The output side of the proof: each page walked as written, before compression.
  const walk = new CoalescedWalk(k, leaf, remaps ? 'indexed' : 'coalesced', outDict, hasher, outHashes, groups.map(() => undefined));
  const page = new PageAssembly();
  const flush = (): void => {
    if (page.numValues === 0) return;
    const out = assembledPage(page, leaf, v2, encoding, width, codec);
    const w = writtenPage(out.written);
    walk.page(w.chunk, w.page, BEFORE_COMPRESSION);
    emit(out.parts, out.uncompressed, v2 ? PageType.DATA_PAGE_V2 : PageType.DATA_PAGE, encoding);
    page.reset();
  };
  let indexed = false;
  const valueWidth = plainWidth(leaf);
  const metas = groups.map((g) => g.metas[k]);
  data.forEach((ps, i) => inSource(groups[i], k, () => {
    const g = groups[i];
    const pieces = new SegmentPieces(hashes[i]);
    const dict = decoded[i];
    const deleted = g.deleted !== undefined && g.deleted.length > 0 ? g.deleted : undefined;
    if (deleted && leaf.maxRep > 0) throw new RleError('deleted rows cannot be dropped from a repeated column');
    const dropStats = deleted && new DroppedStatistics(leaf, metas[i]);
    // The dictionary entries live rows use: bounds to recompute need no second pass over indexed pages.
    const used = dropStats && dict ? new Uint8Array(dict.offsets.length - 1) : undefined;
    const cursor = { at: 0 };
    let levels = 0;
    let row = 0;
    for (const source of ps) {
      const p = takeApart(g.bytes[k], source, leaf, keptOr(codec, source, g.kept));
      if (isDictionaryEncoding(p.encoding)) indexed = true;
      const drop = deleted && dropRows(p, leaf.maxDef, row, deleted, cursor);
      row += p.numValues;
      const lv: Levels = drop ?? p;
      if (drop) {
        dropStats!.nulls += drop.droppedNulls;
        dropStats!.levels += p.numValues - drop.numValues;
      }
      // The page's values less any dropped: indices when dictionary-indexed, else plain.
      let indices: Int32Array | undefined;
      let plain: Uint8Array | undefined;
      if (isDictionaryEncoding(p.encoding)) {
        if (!dict) throw new RleError('a dictionary-indexed page in a chunk without a dictionary');
        const all = indicesOf(p, dict.offsets.length - 1, drop !== undefined);
        if (drop) for (const j of drop.dropped) dropStats!.value(statBytes(dict.bytes, dict.offsets[all[j]], dict.offsets[all[j] + 1], dict.prefix));
        indices = drop ? keptIndices(all, drop.keep) : all;
        if (used) for (let j = 0; j < indices.length; j++) used[indices[j]] = 1;
      } else if (drop) {
        const offset = plainOffsets(p.values, p.nonNull, valueWidth);
        for (const j of drop.dropped) dropStats!.value(statBytes(p.values, offset(j), offset(j + 1), valueWidth > 0 ? 0 : 4));
        plain = keptPlain(p.values, drop.keep, offset);
      } else plain = p.values;
      if (lv.rep) pieces.rep.append(lv.rep);
      if (lv.def) pieces.def.append(lv.def);
      levels += lv.numValues;
      let values: Uint8Array | Int32Array;
      if (remaps) {
        // Indexed on both sides: the proof hashes each value by its index into the output's dictionary.
        const map = remaps[i];
        for (let j = 0; j < indices!.length; j++) indices![j] = map[indices![j]];
        pieces.values(bytesOf(indices!));
        values = indices!;
      } else {
        values = plain ?? gather(dict!, indices!, indices!.length);
        pieces.values(values);
      }
      const pageRows = lv.rep ? lv.rep.countOf(0) : lv.numValues;
      const size = values instanceof Int32Array ? values.length * 4 : values.length;
      if (page.numValues > 0 && (page.bytes + size + lv.numValues > options.pageBytes || page.rows + pageRows > options.pageRows)) flush();
      if (lv.numValues > 0) page.add(lv, pageRows, values);
    }
    if (deleted && cursor.at !== deleted.length) throw new RleError(`deleted position ${deleted[cursor.at]} is past the row group's ${row} rows`);
    if (leaf.maxRep === 0 && levels !== g.rows) throw new RleError(`column ${k} holds ${levels} values in a row group of ${g.rows} live rows`);
    if (dropStats) metas[i] = dropStats.meta(metas[i], dropStats.hit ? liveBounds(leaf, g.bytes[k], ps, dict, deleted!, codec, used) : undefined);
    modes[i][k] = remaps ? 'indexed' : 'coalesced';
    pieces.finish(k, modes[i][k], levels, tag);
    pageCounts[i][k] = levels;
    walk.close(i, levels);
  }));
  flush();
  walk.end();

  return {
    parts, compressed, uncompressed, dictionaryLength, plain: !remaps && indexed,
    meta: chunkMeta(leaf, metas, remaps ? [encoding, dictEncoding, Encoding.RLE] : [Encoding.PLAIN, Encoding.RLE], stats, uncompressed, compressed),
  };
}

// ---------------------------------------------------------------------------------------------
// Deleted rows dropped from the pages of a non-repeated column

/** What is left of a page once deleted rows are dropped: its levels, the value ranges kept and the values dropped. */
interface Dropped extends Levels {
  /** Value indices kept, as [start, end) pairs. */
  readonly keep: readonly number[];
  /** Indices of the non-null values dropped. */
  readonly dropped: readonly number[];
  /** Null levels dropped. */
  readonly droppedNulls: number;
}

/**
 * Drops from `p` (a page of a non-repeated column: one level a row, its first row `first`) the
 * rows `deleted[cursor.at..]` that fall in it, moving the cursor past them; undefined when none do.
 */
function dropRows(p: Levels, maxDef: number, first: number, deleted: Int32Array, cursor: { at: number }): Dropped | undefined {
  const n = p.numValues;
  let d = cursor.at;
  if (d >= deleted.length || deleted[d] >= first + n) return undefined;
  if (deleted[d] < first) throw new RleError(`deleted position ${deleted[d]} is out of order`);
  const def = p.def ? new Runs() : undefined;
  const defAt = { run: 0, used: 0 };
  const take = (count: number, out: Runs | undefined): number => (p.def ? takeRuns(p.def, defAt, count, out, maxDef) : count);
  const keep: number[] = [];
  const dropped: number[] = [];
  let level = 0;
  let value = 0;
  let nulls = 0;
  const keepTo = (end: number): void => {
    const kept = take(end - level, def);
    if (kept > 0) keep.push(value, value + kept);
    value += kept;
    level = end;
  };
  for (; d < deleted.length && deleted[d] < first + n; d++) {
    const at = deleted[d] - first;
    if (at < level) throw new RleError(`deleted position ${deleted[d]} is out of order`);
    keepTo(at);
    if (take(1, undefined) === 1) dropped.push(value++);
    else nulls++;
    level++;
  }
  keepTo(n);
  if (value !== p.nonNull) throw new RleError(`a page's levels count ${value} values, its values ${p.nonNull}`);
  const rows = d - cursor.at;
  cursor.at = d;
  return { rep: undefined, def, numValues: n - rows, nonNull: p.nonNull - dropped.length, keep, dropped, droppedNulls: nulls };
}

/** Where each of `count` plain values starts in `values` (and where the last ends): a fixed width, or walked by length prefixes. */
function plainOffsets(values: Uint8Array, count: number, width: number): (i: number) => number {
  if (width > 0) return (i) => i * width;
  const offsets = byteArrayOffsets(values, count);
  return (i) => offsets[i];
}

/** The indices in `keep`'s ranges, in a new array (the page being assembled holds it). */
function keptIndices(all: Int32Array, keep: readonly number[]): Int32Array {
  let n = 0;
  for (let i = 0; i < keep.length; i += 2) n += keep[i + 1] - keep[i];
  const out = new Int32Array(n);
  let at = 0;
  for (let i = 0; i < keep.length; i += 2) {
    out.set(all.subarray(keep[i], keep[i + 1]), at);
    at += keep[i + 1] - keep[i];
  }
  return out;
}

/** The plain values kept, in a buffer the next page reuses. */
function keptPlain(values: Uint8Array, keep: readonly number[], offset: (i: number) => number): Uint8Array {
  let n = 0;
  for (let i = 0; i < keep.length; i += 2) n += offset(keep[i + 1]) - offset(keep[i]);
  const out = scratch.bytes(n);
  let at = 0;
  for (let i = 0; i < keep.length; i += 2) {
    const s = offset(keep[i]);
    const e = offset(keep[i + 1]);
    out.set(values.subarray(s, e), at);
    at += e - s;
  }
  return out;
}

/** The plain bytes of a statistic's value (a BYTE_ARRAY's without its length prefix). */
function statBytes(plain: Uint8Array, start: number, end: number, prefix: number): Uint8Array {
  return plain.subarray(start + prefix, end);
}

/**
 * What dropping rows does to a source chunk's statistics: the nulls dropped, and whether a value
 * dropped equals a bound (then the bound may no longer be tight, and is recomputed from the live
 * values: Iceberg engines answer min/max from bounds of files without deletes).
 */
class DroppedStatistics {
  nulls = 0;
  levels = 0;
  hit = false;
  private readonly lo: ReturnType<typeof statValue>;
  private readonly hi: ReturnType<typeof statValue>;

  constructor(private readonly leaf: Leaf, meta: readonly TypedField[]) {
    const s = typedField(meta, 12);
    const bound = (id: number): ReturnType<typeof statValue> => {
      const b = Array.isArray(s) ? typedField(s, id) : undefined;
      return leaf.iceberg && b instanceof Uint8Array ? statValue(leaf.iceberg, leaf.physical, b) : undefined;
    };
    this.lo = bound(6);
    this.hi = bound(5);
  }

  value(bytes: Uint8Array): void {
    const t = this.leaf.iceberg;
    if (this.hit || !t || (this.lo === undefined && this.hi === undefined)) return;
    const v = statValue(t, this.leaf.physical, bytes);
    if (v === undefined) return; // NaN: in no bound
    // Numbers compare as numbers: a stored -0.0 minimum (Parquet's rule) is the +0.0 a row held.
    const same = (b: typeof v | undefined): boolean =>
      b !== undefined && (typeof v === 'number' && typeof b === 'number' ? v === b : !less(t, v, b) && !less(t, b, v));
    if (same(this.lo) || same(this.hi)) this.hit = true;
  }

  /** The source chunk's ColumnMetaData for its live rows: `levels` values, nulls less, bounds recomputed when given. */
  meta(meta: readonly TypedField[], bounds: { min: Uint8Array; max: Uint8Array } | null | undefined): TypedField[] {
    const s = typedField(meta, 12);
    const put: TypedField[] = [{ id: 5, type: ThriftType.I64, value: typedNumber(typedField(meta, 5)) - this.levels }];
    if (Array.isArray(s)) {
      const n = typedField(s, 3);
      let stats = edit(s, typeof n === 'number' || typeof n === 'bigint' ? [{ id: 3, type: ThriftType.I64, value: Number(n) - this.nulls }] : [], [1, 2, 4]);
      // null: no live value left to bound.
      if (bounds === null) stats = edit(stats, [], [5, 6, 7, 8]);
      else if (bounds) {
        stats = edit(stats, [
          { id: 5, type: ThriftType.Binary, value: bounds.max }, { id: 6, type: ThriftType.Binary, value: bounds.min },
          { id: 7, type: ThriftType.True, value: true }, { id: 8, type: ThriftType.True, value: true },
        ]);
      }
      put.push({ id: 12, type: ThriftType.Struct, value: stats });
    }
    return edit(meta, put);
  }
}

/**
 * The smallest and largest live values of a source chunk (`pages`, its data pages) once `deleted`
 * rows are dropped, as plain statistic bytes; null when no non-null, non-NaN value is left. Where
 * every page is dictionary-indexed and the entries live rows use are known (`used`), from those alone.
 */
function liveBounds(
  leaf: Leaf, chunk: Uint8Array, pages: readonly Page[], dict: PlainValues | undefined, deleted: Int32Array, codec: PageCodec,
  used?: Uint8Array,
): { min: Uint8Array; max: Uint8Array } | null {
  const t = leaf.iceberg!;
  let min: { v: Exclude<ReturnType<typeof statValue>, undefined>; b: Uint8Array } | undefined;
  let max: typeof min;
  const consider = (b: Uint8Array): void => {
    const v = statValue(t, leaf.physical, b);
    if (v === undefined) return;
    if (!min || less(t, v, min.v)) min = { v, b: b.slice() };
    if (!max || less(t, max.v, v)) max = { v, b: b.slice() };
  };
  const known = used !== undefined && pages.every((page) => isDictionaryEncoding(encodingOf(page)));
  const entries = known ? used : dict ? new Uint8Array(dict.offsets.length - 1) : undefined;
  const width = plainWidth(leaf);
  const cursor = { at: 0 };
  let row = 0;
  for (const page of known ? [] : pages) {
    const p = takeApart(chunk, page, leaf, codec);
    const drop = dropRows(p, leaf.maxDef, row, deleted, cursor);
    row += p.numValues;
    const keep = drop ? drop.keep : [0, p.nonNull];
    if (isDictionaryEncoding(p.encoding)) {
      const indices = indicesOf(p, entries!.length, true);
      for (let i = 0; i < keep.length; i += 2) for (let j = keep[i]; j < keep[i + 1]; j++) entries![indices[j]] = 1;
      continue;
    }
    const offset = plainOffsets(p.values, p.nonNull, width);
    const prefix = width > 0 ? 0 : 4;
    for (let i = 0; i < keep.length; i += 2) for (let j = keep[i]; j < keep[i + 1]; j++) consider(statBytes(p.values, offset(j), offset(j + 1), prefix));
  }
  if (dict && entries) for (let j = 0; j < entries.length; j++) if (entries[j]) consider(statBytes(dict.bytes, dict.offsets[j], dict.offsets[j + 1], dict.prefix));
  if (!min || !max) return null;
  // Parquet's rule for zeros: a minimum of -0.0, a maximum of +0.0.
  const zero = (b: Uint8Array, negative: boolean): Uint8Array => {
    const out = new Uint8Array(b.length);
    if (negative) out[b.length - 1] = 0x80;
    return out;
  };
  const float = t.type === 'float' || t.type === 'double';
  return {
    min: float && min.v === 0 ? zero(min.b, true) : min.b,
    max: float && max.v === 0 ? zero(max.b, false) : max.b,
  };
}

/** Appends `n` values of `src` from the cursor on to `out` (none: skips them); returns how many equal `counted`. */
function takeRuns(src: Runs, cursor: { run: number; used: number }, n: number, out: Runs | undefined, counted: number): number {
  let hit = 0;
  while (n > 0) {
    if (cursor.run >= src.length) throw new RleError('levels end before their values');
    const v = src.data[cursor.run];
    const c = Math.min(n, src.data[cursor.run + 1] - cursor.used);
    out?.push(v, c);
    if (v === counted) hit += c;
    n -= c;
    cursor.used += c;
    if (cursor.used === src.data[cursor.run + 1]) {
      cursor.run += 2;
      cursor.used = 0;
    }
  }
  return hit;
}

/**
 * The walk of a coalesced column's output pages (after the dictionary page, if any) that hashes
 * each segment by its level runs and values, however pages cut them: fed one page at a time, as
 * the writer hands each over before compressing it (BEFORE_COMPRESSION), so the chunk is never
 * held whole. Segment `i` takes `counts[i]` levels; a count not yet known (the segment is still
 * being written) takes the rest of each page until `close` names it.
 */
class CoalescedWalk {
  private i = 0;
  private taken = 0;
  private left: number | undefined;
  private pieces: SegmentPieces | undefined;
  private readonly tag: string;
  private readonly width: number;

  constructor(
    private readonly k: number, private readonly leaf: Leaf, private readonly mode: ColumnMode, private readonly dict: PlainValues | undefined,
    hasher: DigestHasher, private readonly hashes: readonly DigestHash[], private readonly counts: (number | undefined)[],
  ) {
    const indexed = mode === 'indexed';
    if (indexed && !dict) throw new RleError(`column ${k} was written dictionary-indexed but has no dictionary`);
    this.tag = indexed ? dictionaryTag(hasher, dict!.bytes, dict!.offsets.length - 1) : '';
    this.width = indexed ? 4 : plainWidth(leaf);
    this.left = counts[0];
    this.pieces = hashes.length > 0 ? new SegmentPieces(hashes[0]) : undefined;
    this.settle();
  }

  /** Segment `i` holds `levels` levels in all. */
  close(i: number, levels: number): void {
    if (i < this.i || this.counts[i] !== undefined) throw new RleError(`column ${this.k}: segment ${i} closed twice`);
    this.counts[i] = levels;
    if (i !== this.i) return;
    this.left = levels - this.taken;
    if (this.left < 0) throw new RleError(`column ${this.k} holds more values than segment ${i}'s ${levels}`);
    this.settle();
  }

  private settle(): void {
    while (this.i < this.hashes.length && this.left === 0) {
      this.pieces!.finish(this.k, this.mode, this.counts[this.i]!, this.tag);
      this.i++;
      this.taken = 0;
      this.left = this.i < this.hashes.length ? this.counts[this.i] : 0;
      this.pieces = this.i < this.hashes.length ? new SegmentPieces(this.hashes[this.i]) : undefined;
    }
  }

  /** One output page: its payload is taken apart by `codec` (BEFORE_COMPRESSION at write time). */
  page(chunk: Uint8Array, page: Page, codec: PageCodec): void {
    const { k, leaf, dict } = this;
    const p = takeApart(chunk, page, leaf, codec);
    let values: Uint8Array;
    if (this.mode === 'indexed') {
      if (!isDictionaryEncoding(p.encoding)) throw new RleError(`a page of column ${k}, written dictionary-indexed, holds values in encoding ${p.encoding}`);
      values = bytesOf(indicesOf(p, dict!.offsets.length - 1, true));
    } else values = valuesOf(p, dict).values;
    const repAt = { run: 0, used: 0 };
    const defAt = { run: 0, used: 0 };
    let at = 0;
    let vat = 0;
    while (at < p.numValues) {
      if (this.i >= this.hashes.length) throw new RleError(`column ${k} holds more values than its segments`);
      const pieces = this.pieces!;
      const take = this.left === undefined ? p.numValues - at : Math.min(this.left, p.numValues - at);
      if (p.rep) takeRuns(p.rep, repAt, take, pieces.rep, 0);
      const nonNull = p.def ? takeRuns(p.def, defAt, take, pieces.def, leaf.maxDef) : take;
      const n = plainBytes(values, vat, nonNull, this.width);
      pieces.values(values.subarray(vat, vat + n));
      vat += n;
      at += take;
      this.taken += take;
      if (this.left !== undefined) this.left -= take;
      this.settle();
    }
    if (vat !== values.length) throw new RleError(`a page of column ${k} holds ${values.length - vat} bytes past its values`);
  }

  /** After the last page: every segment must be closed and complete. */
  end(): void {
    if (this.i < this.hashes.length) throw new RleError(`column ${this.k} holds fewer values than its segments`);
  }
}

/** Runs `fn` on source row group `g`'s column `k`: what fails there is named after its file and row group. */
function inSource<T>(g: SourceGroup, k: number, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof PackiceError) throw e;
    throw fileFault(g.path, e, `row group ${g.rowGroup}, column ${k}`);
  }
}

function segmentHash(hasher: DigestHasher, rows: number, signature: string): DigestHash {
  return hasher().update(`rows ${rows}\n${signature}\n`);
}

function fileFault(path: string, e: unknown, what: string): InvalidFileError {
  const message = e instanceof Error ? e.message : String(e);
  return new InvalidFileError(`${what}: ${message}`, { path });
}

/**
 * Writes `rowGroups` (each a list of source row groups, all of sources sharing mergeKey) into one
 * new file at `path`, one output row group per list, streaming: the output row group being built
 * and the source row groups read ahead of it (`reads`) are held. A source row group left with no
 * row (its deletes, its key probes, or none to begin with) is left out, and a list of only such
 * makes no row group: the file may then hold none (recordCount 0), which the caller drops.
 */
export async function writeMergedFile(
  io: FileIO,
  path: string,
  template: CopyTemplate,
  rowGroups: readonly (readonly MergePart[])[],
  options: MergeOptions,
): Promise<MergedFile> {
  const parts = rowGroups.flat();
  if (parts.length === 0) throw new InvalidFileError('a merged file needs at least one row group', { path });
  const key = mergeKey(parts[0].source);
  const other = [...new Set(parts.map((p) => p.source))].find((source) => mergeKey(source) !== key);
  if (other) throw new InvalidFileError(`${other.path} was written by another writer or codec than ${parts[0].source.path}`, { path });
  const starts = new Set(rowGroups.map((g) => g[0]));
  const inputs = new Map<string, InputFile>();
  const fetch = (part: MergePart): Promise<Uint8Array[]> => {
    let input = inputs.get(part.source.path);
    if (!input) inputs.set(part.source.path, (input = io.newInputFile(part.source.path)));
    return readChunks(input, chunkSpans(typedFields(typedItems(typedField(part.source.typed, 4))[part.rowGroup])), options.held?.get(part.source.path));
  };
  const window: ReadWindowOptions = { ...options.reads, bytes: options.reads?.bytes ?? DEFAULT_COPY_READ_BYTES, ordered: true };
  async function* items(): AsyncGenerator<MergeItem> {
    for await (const { item: part, value: bytes } of readWindow(parts, partBytes, fetch, window, options.stats)) yield { part, bytes, newRowGroup: starts.has(part) };
  }
  return writeMergedParts(io, path, template, items(), options);
}

/** A source row group to merge with its chunks' bytes, as writeMergedParts takes them. */
export interface MergeItem {
  readonly part: MergePart;
  readonly bytes: readonly Uint8Array[];
  /** It starts an output row group (the file's first item does whatever this says). */
  readonly newRowGroup: boolean;
}

/** A source row group of a row group being built, as its segment will name it. */
interface Placing {
  readonly part: MergePart;
  readonly rows: number;
  readonly deleted: Int32Array | undefined;
}

/**
 * Builds one output row group from `groups` (at least one), column by column: its bytes, its
 * columns' metadata and each source row group's digests as read and as written. Offsets are left
 * to whoever places it in a file (writeMergedParts). Pure but for the codecs' buffers: a merge
 * worker runs the same function (merge-pool.ts).
 */
export function buildRowGroup(shape: RowGroupShape, groups: readonly SourceGroup[], zstd: ZstdCodec | undefined, hasher: DigestHasher): BuiltRowGroup {
  const { leaves } = shape;
  const codecs = shape.codecs.map((c) => pageCodec(c, zstd, shape.level));
  const hashes = groups.map((g) => segmentHash(hasher, g.rows, shape.signature));
  const outHashes = groups.map((g) => segmentHash(hasher, g.rows, shape.signature));
  const pageCounts = groups.map(() => new Array<number>(leaves.length));
  const modes = groups.map(() => new Array<ColumnMode>(leaves.length));
  const parts: Uint8Array[] = [];
  const columns: BuiltColumn[] = [];
  let plainColumns = 0;
  // Rows are dropped from coalesced pages only: with deletes, every column is coalesced.
  const dropping = groups.some((g) => g.deleted !== undefined && g.deleted.length > 0);
  leaves.forEach((leaf, k) => {
    let chunk: BuiltChunk;
    try {
      if (dropping && !coalescable(leaf, groups, k, codecs[k], shape, true)) throw new RleError('deleted rows cannot be dropped from its pages (deleteProblem)');
      chunk = dropping || coalescable(leaf, groups, k, codecs[k], shape)
        ? coalesceColumn(k, leaf, groups, hasher, hashes, outHashes, pageCounts, modes, codecs[k]!, shape)
        : mergeColumn(k, leaf, groups, hashes, outHashes, pageCounts, modes, codecs[k], shape);
    } catch (e) {
      if (e instanceof PackiceError) throw e;
      throw fileFault(groups[0].path, e, `merging column ${shape.leafPaths[k].join('.')} of ${groups.length} row groups starting here`);
    }
    if (chunk.plain) plainColumns++;
    const ch = hasher();
    for (const b of chunk.parts) ch.update(b);
    const path = typedList(shape.leafPaths[k].map((n) => utf8.encode(n)), ThriftType.Binary);
    columns.push({
      meta: edit(chunk.meta, [{ id: 3, type: ThriftType.List, value: path }]),
      compressed: chunk.compressed, uncompressed: chunk.uncompressed, dictionaryLength: chunk.dictionaryLength, digest: ch.digest(),
    });
    parts.push(...chunk.parts);
  });
  return {
    parts, columns, plainColumns,
    numRows: groups.reduce((n, g) => n + g.rows, 0),
    segments: groups.map((_, i) => ({ digest: hashes[i].digest(), written: outHashes[i].digest(), pages: pageCounts[i], modes: modes[i] })),
  };
}

/**
 * Writes the source row groups `items` hands over, in order, into one new file at `path` (their
 * sources sharing mergeKey), a new output row group at each item that starts one: writeMergedFile
 * with the reading left to the caller, who may decide where row groups end as sources arrive
 * (lib/compaction/merge-stream.ts). Holds the output row group being built, and with `builder`
 * (worker threads) those it builds at once.
 */
export async function writeMergedParts(
  io: FileIO,
  path: string,
  template: CopyTemplate,
  items: AsyncIterable<MergeItem>,
  options: Omit<MergeOptions, 'reads' | 'held'>,
): Promise<MergedFile> {
  let first: CopySource | undefined;
  let key = '';
  let last: CopySource | undefined;
  let leaves: Leaf[] = [];
  let shape: RowGroupShape | undefined;
  // The codecs equality keys are probed with (on this thread: the rows to drop are known before a row group is built).
  let probeCodecs: (PageCodec | undefined)[] = [];
  const written: MergedSegment[][] = [];
  const newGroups: TypedField[][] = [];
  let plainColumns = 0;
  const deepRowGroups: number[] = [];
  const faults = { fault: options.fault };
  let at = 0;
  let rows = 0;
  let footer: Uint8Array | undefined;
  const hasher = await digestHasher();
  const { builder } = options;

  // A built row group into the file at `at`: its chunks' offsets, its footer entry and its segments.
  const place = (built: BuiltRowGroup, parts: readonly Placing[]): void => {
    const rgStart = at;
    const chunks: TypedField[][] = [];
    let totalUncompressed = 0;
    let totalCompressed = 0;
    for (const c of built.columns) {
      const dictionary = c.dictionaryLength > 0 ? [{ id: 11, type: ThriftType.I64, value: at }] : [];
      const meta = edit(c.meta as TypedField[], [{ id: 9, type: ThriftType.I64, value: at + c.dictionaryLength }, ...dictionary]);
      chunks.push([{ id: 2, type: ThriftType.I64, value: at }, { id: 3, type: ThriftType.Struct, value: meta }]);
      at += c.compressed;
      totalCompressed += c.compressed;
      totalUncompressed += c.uncompressed;
    }
    const chunkDigests = built.columns.map((c) => c.digest);
    let firstRow = rows;
    written.push(built.segments.map((s, i) => {
      const segment: MergedSegment = {
        part: parts[i].part, rows: parts[i].rows, deleted: parts[i].deleted, firstRow, digest: s.digest, pages: s.pages, modes: s.modes,
        written: s.written, chunks: chunkDigests, signature: template.signature,
      };
      firstRow += segment.rows;
      return segment;
    }));
    rows += built.numRows;
    plainColumns += built.plainColumns;
    if (newGroups.length === 0 || built.fresh === true) deepRowGroups.push(newGroups.length);
    newGroups.push([
      { id: 1, type: ThriftType.List, value: typedList(chunks, ThriftType.Struct) },
      { id: 2, type: ThriftType.I64, value: totalUncompressed },
      { id: 3, type: ThriftType.I64, value: built.numRows },
      { id: 5, type: ThriftType.I64, value: rgStart },
      { id: 6, type: ThriftType.I64, value: totalCompressed },
      { id: 7, type: ThriftType.I16, value: newGroups.length },
    ]);
  };

  async function* content(): AsyncGenerator<Uint8Array> {
    yield PARQUET_MAGIC_BYTES;
    at = PARQUET_MAGIC_BYTES.length;
    let pending: SourceGroup[] = [];
    let pendingParts: Placing[] = [];
    // Row groups handed to the builder, in file order, each with its sources and their bytes.
    const building: { built: Promise<BuiltRowGroup>; parts: Placing[]; bytes: number }[] = [];
    let buildingBytes = 0;
    function* placed(built: BuiltRowGroup, parts: typeof pendingParts): Generator<Uint8Array> {
      place(built, parts);
      yield* damaged([...built.parts], faults);
    }
    // Placed in turn until at most `keep` row groups, within the builder's bytes, are out.
    async function* drain(keep: number): AsyncGenerator<Uint8Array> {
      while (building.length > keep || (building.length > 1 && buildingBytes > builder!.inFlightBytes)) {
        const next = building.shift()!;
        buildingBytes -= next.bytes;
        yield* placed(await next.built, next.parts);
      }
    }
    // The row group so far is built once the next starts (or the items end).
    async function* flush(): AsyncGenerator<Uint8Array> {
      if (pending.length === 0) return;
      const groups = pending;
      const parts = pendingParts;
      pending = [];
      pendingParts = [];
      if (!builder) {
        yield* placed(buildRowGroup(shape!, groups, options.zstd, hasher), parts);
        return;
      }
      const built = builder.build(shape!, groups);
      // Awaited in turn below; a failure before then must not go unhandled.
      built.catch(() => undefined);
      let bytes = 0;
      for (const g of groups) for (const b of g.bytes) bytes += b.length;
      building.push({ built, parts, bytes });
      buildingBytes += bytes;
      yield* drain(builder.inFlight - 1);
    }
    try {
      for await (const { part, bytes, newRowGroup } of items) {
        if (first === undefined) {
          first = part.source;
          key = mergeKey(first);
          leaves = leavesOf(first.footer, options.writeSchema);
          shape = {
            leaves, codecs: chunkFacts(first).codecs, level: options.level, signature: template.signature, leafPaths: template.leafPaths,
            dictionaryBytes: options.dictionaryBytes, pageBytes: options.pageBytes, pageRows: options.pageRows,
          };
          probeCodecs = shape.codecs.map((c) => pageCodec(c, options.zstd, options.level));
        } else if (part.source !== last && mergeKey(part.source) !== key) {
          throw new InvalidFileError(`${part.source.path} was written by another writer or codec than ${first.path}`, { path });
        }
        last = part.source;
        if (newRowGroup) yield* flush();
        const rg = typedFields(typedItems(typedField(part.source.typed, 4))[part.rowGroup]);
        const numRows = typedNumber(typedField(rg, 3));
        let pages: Page[][];
        let deleted: Int32Array | undefined;
        let kept: KeptPages | undefined;
        try {
          pages = bytes.map((b) => readPages(b, 0, b.length));
          // Built on this thread, the row group takes the key pages the probe decompressed.
          if (!builder && part.keys !== undefined && part.keys.length > 0) kept = new Map();
          deleted = part.keys !== undefined && part.keys.length > 0
            ? probedDeletes(part, leaves, probeCodecs, bytes, pages, numRows, kept)
            : part.deleted !== undefined && part.deleted.length > 0 ? part.deleted : undefined;
        } catch (e) {
          throw fileFault(part.source.path, e, `row group ${part.rowGroup}`);
        }
        const live = numRows - (deleted?.length ?? 0);
        // A row group whose rows are all deleted leaves nothing to merge (known here when its keys were probed).
        if (live > 0) {
          pending.push({ path: part.source.path, rowGroup: part.rowGroup, rows: live, deleted, metas: chunkSpans(rg).map((s) => s.meta), bytes: [...bytes], pages, ...(kept ? { kept } : {}) });
          pendingParts.push({ part, rows: live, deleted });
        }
      }
      yield* flush();
      yield* drain(0);
    } finally {
      // Stopped early (an error, or the writer gave up): what is still being built is not waited for.
      building.length = 0;
    }
    if (first === undefined) throw new InvalidFileError('a merged file needs at least one row group', { path });
    const tail = fileTail(first, template, rows, newGroups);
    footer = tail.footer;
    at += tail.bytes.length;
    yield tail.bytes;
  }

  await io.write(path, content(), builder?.upload ?? { partBytes: OUTPUT_PART_BYTES, partsInFlight: OUTPUT_PARTS_IN_FLIGHT });
  const parsed = decodeFooter(footer!);
  return {
    path, fileSizeInBytes: at, recordCount: rows, splitOffsets: splitOffsets(parsed), footer: parsed, footerBytes: footer!,
    rowGroups: written, plainColumns, deepRowGroups,
  };
}

// ---------------------------------------------------------------------------------------------
// The proof's re-read

/** A segment's digest recomputed from a merged file re-read from storage. */
export interface RereadSegment {
  readonly path: string;
  readonly rows: number;
  readonly digest: Digest;
}

/** Throws unless a compressed payload's own framing names `size` bytes uncompressed, where that is cheap to read (ZSTD, GZIP). */
function checkFraming(codec: number, data: Uint8Array, size: number): void {
  if (codec === Codec.ZSTD) {
    const content = zstdContentSize(data);
    if (content !== undefined && content !== size) throw new RleError(`a ZSTD frame of ${content} bytes where the page header says ${size}`);
  } else if (codec === Codec.GZIP) {
    if (data.length < 18 || data[0] !== 0x1f || data[1] !== 0x8b) throw new RleError('a GZIP page does not start with a GZIP member');
    const isize = new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(data.length - 4, true);
    if (isize !== size % 2 ** 32) throw new RleError(`a GZIP member of ${isize} bytes where the page header says ${size}`);
  } else if (codec === Codec.UNCOMPRESSED) {
    if (data.length !== size) throw new RleError(`an uncompressed payload of ${data.length} bytes where the page header says ${size}`);
  }
}

/**
 * The digests of one output row group's segments, checked against its chunks' bytes as re-read:
 * each chunk must be, by XXH64, the one written; its pages must fill it, their headers agree with
 * the footer's ColumnMetaData (values, uncompressed size) and with what the writer recorded (data
 * pages, or values when coalesced), and each compressed payload's framing with its header's size.
 * The digests are then those the writer took from the output's pages before compressing them
 * (MergedSegment.written): nothing is decompressed here.
 */
function segmentDigests(
  hasher: DigestHasher, leaves: readonly Leaf[], spans: readonly ChunkSpan[], segments: readonly MergedSegment[], bytes: readonly Uint8Array[], rows: number,
): Digest[] {
  // The rows the writer recorded must be the footer's, and a non-repeated column's values its rows.
  const recorded = segments.reduce((n, s) => n + s.rows, 0);
  if (recorded !== rows) throw new RleError(`the row group holds ${rows} rows, its segments ${recorded}`);
  if (segments.length === 0) throw new RleError('a row group with no segment was written');
  leaves.forEach((leaf, k) => {
    for (const s of segments) {
      if (isCoalesced(s.modes[k]) && leaf.maxRep === 0 && s.pages[k] !== s.rows) throw new RleError(`column ${k} holds ${s.pages[k]} values for ${s.rows} rows`);
    }
  });
  const chunks = segments[0].chunks;
  if (segments.some((s) => s.chunks !== chunks)) throw new RleError('the segments of a row group name different chunks');
  if (bytes.length !== leaves.length || chunks.length !== leaves.length) throw new RleError(`${bytes.length} column chunks re-read, ${chunks.length} written, ${leaves.length} leaves`);
  leaves.forEach((_, k) => {
    const chunk = bytes[k];
    const [high, low] = hasher().update(chunk).digest();
    if (high !== chunks[k][0] || low !== chunks[k][1]) throw new RleError(`column ${k}'s chunk as re-read is not the chunk written`);
    const meta = spans[k].meta;
    const codec = typedNumber(typedField(meta, 4));
    const coalesced = isCoalesced(segments[0].modes[k]);
    if (segments.some((s) => isCoalesced(s.modes[k]) !== coalesced)) throw new RleError(`column ${k} mixes coalesced and copied segments`);
    const pages = readPages(chunk, 0, chunk.length);
    let values = 0;
    let data = 0;
    let uncompressed = 0;
    pages.forEach((page, j) => {
      uncompressed += headerOf(page) + page.uncompressedSize;
      const payload = chunk.subarray(page.payloadStart, page.end);
      if (page.type === PageType.DICTIONARY_PAGE) {
        if (j !== 0) throw new RleError(`column ${k} has a dictionary page after its first page`);
        checkFraming(codec, payload, page.uncompressedSize);
        return;
      }
      if (page.type === PageType.DATA_PAGE) {
        values += typedNumber(typedField(headerStruct(page, PAGE.V1), 1));
        checkFraming(codec, payload, page.uncompressedSize);
      } else if (page.type === PageType.DATA_PAGE_V2) {
        const h = headerStruct(page, PAGE.V2);
        values += typedNumber(typedField(h, 1));
        const levels = typedNumber(typedField(h, 5)) + typedNumber(typedField(h, 6));
        if (levels > payload.length || levels > page.uncompressedSize) throw new RleError(`levels of ${levels} bytes exceed a page of column ${k}`);
        const rest = payload.subarray(levels);
        if (typedField(h, 7) !== false) checkFraming(codec, rest, page.uncompressedSize - levels);
        else if (rest.length !== page.uncompressedSize - levels) throw new RleError(`an uncompressed page of column ${k} of ${payload.length} bytes claims ${page.uncompressedSize}`);
      } else throw new RleError(`a page of type ${page.type} in column ${k}`);
      data++;
    });
    const want = segments.reduce((n, s) => n + s.pages[k], 0);
    if (coalesced ? values !== want : data !== want) throw new RleError(`column ${k} holds ${coalesced ? values : data} ${coalesced ? 'values' : 'data pages'}, its segments ${want}`);
    const metaValues = typedNumber(typedField(meta, 5));
    if (values !== metaValues) throw new RleError(`column ${k}'s pages hold ${values} values, its metadata says ${metaValues}`);
    const metaUncompressed = typedNumber(typedField(meta, 6));
    if (uncompressed !== metaUncompressed) throw new RleError(`column ${k}'s pages take ${uncompressed} bytes uncompressed, its metadata says ${metaUncompressed}`);
  });
  return segments.map((s) => s.written);
}

/** A re-read row group to decompress and walk again (rewalk): plain data, the same on this thread and on a merge worker. */
export interface RewalkJob {
  readonly leaves: readonly Leaf[];
  /** Per column, its codec (parquet-format Codec). */
  readonly codecs: readonly number[];
  readonly signature: string;
  readonly segments: readonly Pick<MergedSegment, 'rows' | 'modes' | 'pages' | 'written'>[];
  /** Per column, its chunk as re-read. */
  readonly bytes: readonly Uint8Array[];
}

/** Runs rewalk jobs elsewhere (merge-pool.ts); rejects as rewalk throws. */
export interface Rewalker {
  rewalk(job: RewalkJob): Promise<void>;
}

/**
 * The segments' digests recomputed from a re-read row group by decompressing every page and
 * walking it (what the proof did for every row group before the writer walked its pages itself);
 * throws unless each is the digest the writer took before compressing (`written`). The `deep`
 * re-reads of mergedDigests: each output's first row group and each merge worker's first of it
 * in ChunkCopy.prove, every one in tests.
 */
export function rewalk(job: RewalkJob, zstd: ZstdCodec | undefined, hasher: DigestHasher): void {
  const { leaves, segments, bytes } = job;
  const hashes = segments.map((s) => segmentHash(hasher, s.rows, job.signature));
  leaves.forEach((leaf, k) => {
    // Decompressing only: the level is the writer's business.
    const codec = pageCodec(job.codecs[k], zstd, DEFAULT_ZSTD_LEVEL);
    const chunk = bytes[k];
    const pages = readPages(chunk, 0, chunk.length);
    let dict: PlainValues | undefined;
    let next = 0;
    const d = dictionaryPageOf(pages);
    if (d) {
      if (!codec) throw new RleError('no codec to read the dictionary page');
      dict = dictionaryValues(chunk, d, codec, leaf);
      next = 1;
    }
    if (isCoalesced(segments[0].modes[k])) {
      if (!codec) throw new RleError('no codec to read coalesced pages');
      const mode = segments[0].modes[k];
      if (segments.some((s) => s.modes[k] !== mode)) throw new RleError(`column ${k} mixes ${mode} and other segments`);
      const walk = new CoalescedWalk(k, leaf, mode, dict, hasher, hashes, segments.map((s) => s.pages[k]));
      for (const page of pages.slice(next)) walk.page(chunk, page, codec);
      walk.end();
      return;
    }
    segments.forEach((s, i) => {
      const n = s.pages[k];
      const h = hashes[i];
      h.update(`column ${k} ${s.modes[k]} ${n}\n`);
      for (let j = 0; j < n; j++) {
        const page = pages[next++];
        if (!page) throw new RleError(`column ${k} has fewer pages than its segments`);
        if (s.modes[k] === 'bytes') h.update(chunk.subarray(page.start, page.end));
        else {
          const p = takeApart(chunk, page, leaf, codec!);
          hashLogical(h, p, valuesOf(p, dict));
        }
      }
    });
    if (next !== pages.length) throw new RleError(`column ${k} has ${pages.length - next} pages past its segments`);
  });
  hashes.forEach((h, i) => {
    const d = h.digest();
    const w = segments[i].written;
    if (d[0] !== w[0] || d[1] !== w[1]) throw new RleError(`segment ${i} decompressed and walked is not the segment the writer walked before compressing`);
  });
}

/**
 * The segments' digests of merged files, re-read from storage: each file's footer, then every row
 * group through one read window (`reads`), yielded as their reads complete. What the proof
 * compares with the digests `writeMergedFile` took from the sources.
 */
export async function* mergedDigests(
  io: FileIO,
  files: readonly { readonly path: string; readonly length: number; readonly rowGroups: readonly (readonly MergedSegment[])[] }[],
  options: Pick<MergeOptions, 'writeSchema' | 'zstd' | 'level' | 'reads' | 'stats'> & {
    /**
     * Also decompress and walk the pages of every row group (true) or of those it names (by file and
     * row group index), and throw unless that gives the digests the writer took (rewalk).
     */
    readonly deep?: boolean | ((path: string, rowGroup: number) => boolean);
    /** Where those walks run (default: here, as each row group arrives); all are awaited before the last digest. */
    readonly rewalker?: Rewalker;
  },
): AsyncGenerator<RereadSegment> {
  interface Group extends RereadGroup {
    spans: ChunkSpan[]; rows: number; leaves: Leaf[]; signature: string; segments: readonly MergedSegment[];
  }
  const hasher = await digestHasher();
  const groups: Group[] = [];
  for (const f of files) {
    const input = io.newInputFile(f.path, f.length);
    const read = await readFooter(input);
    const leaves = leavesOf(read.footer, options.writeSchema);
    // The schema written is the one the writer hashed into every segment's digest.
    const signature = schemaSignature(typedItems(typedField(read.typed, 2)));
    if (f.rowGroups.flat().some((s) => s.signature !== signature)) throw new InvalidFileError('its schema is not the one its segments were hashed with', { path: f.path });
    const rgs = typedItems(typedField(read.typed, 4));
    if (rgs.length !== f.rowGroups.length) throw new InvalidFileError(`holds ${rgs.length} row groups, ${f.rowGroups.length} were written`, { path: f.path });
    rgs.forEach((rg, index) => {
      groups.push({ input, index, spans: chunkSpans(typedFields(rg)), rows: typedNumber(typedField(typedFields(rg), 3)), leaves, signature, segments: f.rowGroups[index] });
    });
  }
  const fault = (g: Group) => (e: unknown): never => {
    throw fileFault(g.input.path, e, `row group ${g.index} re-read for the proof`);
  };
  const elsewhere: Promise<void>[] = [];
  let last: RereadSegment | undefined;
  for await (const { item: batch, value } of rereadWindow(groups, options.reads, options.stats)) {
    for (const [k, g] of batch.groups.entries()) {
      let digests: Digest[];
      try {
        digests = segmentDigests(hasher, g.leaves, g.spans, g.segments, value[k], g.rows);
        const deep = typeof options.deep === 'function' ? options.deep(g.input.path, g.index) : options.deep === true;
        const job: RewalkJob = { leaves: g.leaves, codecs: g.spans.map((s) => typedNumber(typedField(s.meta, 4))), signature: g.signature, segments: g.segments, bytes: value[k] };
        if (deep && options.rewalker) {
          const walked = options.rewalker.rewalk(job).catch(fault(g));
          // Awaited below; a failure before then must not go unhandled.
          walked.catch(() => undefined);
          elsewhere.push(walked);
        } else if (deep) rewalk(job, options.zstd, hasher);
      } catch (e) {
        fault(g)(e);
      }
      // One digest held back: the caller has the last only once every walk elsewhere passed.
      for (const [i, d] of digests!.entries()) {
        if (last) yield last;
        last = { path: g.input.path, rows: g.segments[i].rows, digest: d };
      }
    }
  }
  for (const walked of elsewhere) await walked;
  if (last) yield last;
}
