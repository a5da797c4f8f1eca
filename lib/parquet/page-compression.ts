/**
 * Compressing and decompressing the pages of a Parquet column chunk outside wasm
 * (compression-codec.ts says why). A column chunk is a run of pages, each a Thrift
 * PageHeader followed by its payload: compressed_page_size bytes that hold
 * uncompressed_page_size bytes once decompressed. In a DATA_PAGE_V2 the repetition and
 * definition levels lead the payload and are never compressed, and `is_compressed` may say
 * the values are not either. Rewritten headers drop the CRC (it covers the old bytes).
 */
import { FieldEdits, inIdOrder, ThriftType, ThriftWriter, typedField, TypedThriftReader, type TypedField } from './thrift.js';

/** parquet-format PageType. */
export const PageType = { DATA_PAGE: 0, INDEX_PAGE: 1, DICTIONARY_PAGE: 2, DATA_PAGE_V2: 3 } as const;

/** PageHeader field ids. */
const TYPE = 1;
const UNCOMPRESSED_PAGE_SIZE = 2;
const COMPRESSED_PAGE_SIZE = 3;
const CRC = 4;
const DATA_PAGE_HEADER_V2 = 8;
/** DataPageHeaderV2 field ids. */
const DEFINITION_LEVELS_BYTE_LENGTH = 5;
const REPETITION_LEVELS_BYTE_LENGTH = 6;
const IS_COMPRESSED = 7;

/** A page's bytes [start, end) within its buffer, with its parsed header. */
export interface Page {
  readonly type: number;
  readonly header: readonly TypedField[];
  readonly start: number;
  readonly payloadStart: number;
  readonly end: number;
  readonly uncompressedSize: number;
}

/** Thrown for bytes that do not make up pages; callers turn it into an InvalidFileError naming the file and column. */
export class PageError extends Error {}

/** A page cut short by the end of the bytes given: more bytes may complete it. */
export class IncompletePageError extends PageError {}

function int(fields: readonly TypedField[], id: number, what: string): number {
  const v = typedField(fields, id);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new PageError(`page header has no valid ${what}`);
  return v;
}

/** The page starting at `at`, which must end by `end`. */
export function readPage(bytes: Uint8Array, at: number, end: number): Page {
  let header: TypedField[];
  let payloadStart: number;
  try {
    const r = new TypedThriftReader(bytes.subarray(0, end), at);
    header = r.typedStruct();
    payloadStart = r.offset;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const Err = /past the end|bytes left/.test(message) ? IncompletePageError : PageError;
    throw new Err(`unreadable page header at byte ${at}: ${message}`);
  }
  const type = int(header, TYPE, 'type');
  const compressed = int(header, COMPRESSED_PAGE_SIZE, 'compressed_page_size');
  const uncompressedSize = int(header, UNCOMPRESSED_PAGE_SIZE, 'uncompressed_page_size');
  if (payloadStart + compressed > end) {
    throw new IncompletePageError(`page at byte ${at} claims ${compressed} bytes but only ${end - payloadStart} are left in the column chunk`);
  }
  return { type, header, start: at, payloadStart, end: payloadStart + compressed, uncompressedSize };
}

/** The pages of bytes [start, end); they must fill it exactly. */
export function readPages(bytes: Uint8Array, start: number, end: number): Page[] {
  const out: Page[] = [];
  for (let at = start; at < end; ) {
    const p = readPage(bytes, at, end);
    out.push(p);
    at = p.end;
  }
  return out;
}

/** Bytes at the head of the payload that stay uncompressed (a v2 page's levels), and whether the rest is compressed. */
function layout(page: Page): { levels: number; compressed: boolean } {
  if (page.type !== PageType.DATA_PAGE_V2) return { levels: 0, compressed: page.type !== PageType.INDEX_PAGE };
  const v2 = typedField(page.header, DATA_PAGE_HEADER_V2);
  if (!Array.isArray(v2)) throw new PageError('DATA_PAGE_V2 without its data_page_header_v2');
  const levels = int(v2, DEFINITION_LEVELS_BYTE_LENGTH, 'definition_levels_byte_length') + int(v2, REPETITION_LEVELS_BYTE_LENGTH, 'repetition_levels_byte_length');
  if (levels > page.end - page.payloadStart || levels > page.uncompressedSize) throw new PageError(`levels of ${levels} bytes exceed the page`);
  return { levels, compressed: typedField(v2, IS_COMPRESSED) !== false };
}

/** A page's new header followed by its new payload parts. */
export interface RewrittenPage {
  readonly parts: readonly Uint8Array[];
  readonly length: number;
}

/** Edits of one header at a time: pages are rewritten one at a time, synchronously. */
const edits = new FieldEdits();

function rewritten(header: readonly TypedField[], page: Page, compressedSize: number, v2Compressed: boolean | undefined, body: Uint8Array[]): RewrittenPage {
  // Written from the parsed header with its edits applied: a page header is rewritten per page of every chunk read.
  const w = new ThriftWriter();
  const fields = inIdOrder(header);
  let last = 0;
  let sizeSet = false;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    if (!sizeSet && f.id >= COMPRESSED_PAGE_SIZE) {
      w.field(last, COMPRESSED_PAGE_SIZE, ThriftType.I32, compressedSize);
      last = COMPRESSED_PAGE_SIZE;
      sizeSet = true;
      if (f.id === COMPRESSED_PAGE_SIZE) continue;
    }
    if (f.id === CRC) continue;
    if (f.id === DATA_PAGE_HEADER_V2 && v2Compressed !== undefined) {
      w.fieldHeader(last, DATA_PAGE_HEADER_V2, ThriftType.Struct);
      edits.reset();
      edits.set(IS_COMPRESSED, ThriftType.True, v2Compressed);
      w.editedStruct(inIdOrder(f.value as TypedField[]), edits);
    } else w.field(last, f.id, f.type, f.value);
    last = f.id;
  }
  if (!sizeSet) w.field(last, COMPRESSED_PAGE_SIZE, ThriftType.I32, compressedSize);
  w.stop();
  const head = w.result();
  return { parts: [head, ...body], length: head.length + compressedSize };
}

/**
 * A page as it is once its payload is decompressed: its new header, the payload bytes that stay
 * as they are (a v2 page's levels, or all of an uncompressed page's), then the values that
 * `compressed` decompresses to. Sized before anything is decompressed, so that a rebuilt
 * file is allocated once and each page decompressed straight into its place.
 */
export interface PageToDecompress {
  /** Where the page starts in its column chunk (for errors). */
  readonly start: number;
  readonly header: Uint8Array;
  readonly kept: Uint8Array;
  readonly compressed: Uint8Array | undefined;
  /** Bytes `compressed` decompresses to. */
  readonly valuesSize: number;
  /** Bytes of the page once decompressed: header, kept and values. */
  readonly length: number;
}

/** How the page reads once decompressed. */
export function pageToDecompress(bytes: Uint8Array, page: Page): PageToDecompress {
  const { levels, compressed } = layout(page);
  const payload = bytes.subarray(page.payloadStart, page.end);
  if (!compressed && payload.length !== page.uncompressedSize) throw new PageError(`uncompressed page of ${payload.length} bytes claims ${page.uncompressedSize}`);
  const header = rewritten(page.header, page, page.uncompressedSize, page.type === PageType.DATA_PAGE_V2 ? false : undefined, []).parts[0];
  const kept = compressed ? payload.subarray(0, levels) : payload;
  const valuesSize = compressed ? page.uncompressedSize - levels : 0;
  return {
    start: page.start, header, kept, compressed: compressed ? payload.subarray(levels) : undefined, valuesSize,
    length: header.length + kept.length + valuesSize,
  };
}

/** Writes the decompressed page at `at` of `dst` (`page.length` bytes); `decompressInto` must fill exactly the bytes it is given. */
export function writeDecompressedPage(page: PageToDecompress, dst: Uint8Array, at: number, decompressInto: (data: Uint8Array, dst: Uint8Array) => void): void {
  dst.set(page.header, at);
  at += page.header.length;
  dst.set(page.kept, at);
  at += page.kept.length;
  if (!page.compressed) return;
  try {
    decompressInto(page.compressed, dst.subarray(at, at + page.valuesSize));
  } catch (e) {
    throw new PageError(`page at byte ${page.start} does not decompress: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The (uncompressed) page with its payload compressed by `compress`. */
export function compressPage(bytes: Uint8Array, page: Page, compress: (data: Uint8Array) => Uint8Array): RewrittenPage {
  const { levels } = layout(page);
  const payload = bytes.subarray(page.payloadStart, page.end);
  if (payload.length !== page.uncompressedSize) throw new PageError(`page at byte ${page.start} is not uncompressed`);
  if (page.type === PageType.INDEX_PAGE) return rewritten(page.header, page, payload.length, undefined, [payload]);
  const values = compress(payload.subarray(levels));
  return rewritten(page.header, page, levels + values.length, page.type === PageType.DATA_PAGE_V2 ? true : undefined, [payload.subarray(0, levels), values]);
}
