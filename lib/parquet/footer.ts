/**
 * The Parquet footer (parquet-format FileMetaData), read with our own Thrift
 * decoder: parquet-wasm does not expose page offsets, physical types or
 * statistics, and split offsets, column sizes and type checks need them.
 */
import { InvalidFileError } from '../errors.js';
import type { InputFile } from '../io/file-io.js';
import type { ReadAheadRange } from '../io/read-ahead.js';
import { readTypedStruct, ThriftReader, ThriftType, typedItems, type TypedField, type TypedValue } from './thrift.js';

export const PARQUET_MAGIC = 'PAR1';
/** The magic as bytes, at both ends of a file. */
export const PARQUET_MAGIC_BYTES = Uint8Array.of(0x50, 0x41, 0x52, 0x31);
/** Tail bytes fetched in the first footer read; most footers fit, saving a second request. */
const TAIL_GUESS = 64 * 1024;

export const PhysicalType = {
  BOOLEAN: 0,
  INT32: 1,
  INT64: 2,
  INT96: 3,
  FLOAT: 4,
  DOUBLE: 5,
  BYTE_ARRAY: 6,
  FIXED_LEN_BYTE_ARRAY: 7,
} as const;
export type PhysicalType = (typeof PhysicalType)[keyof typeof PhysicalType];

export type Repetition = 'required' | 'optional' | 'repeated';
export type TimeUnit = 'millis' | 'micros' | 'nanos';

/** parquet-format LogicalType (a union); only the members Iceberg uses are named. */
export type LogicalType =
  | { readonly type: 'string' | 'map' | 'list' | 'enum' | 'date' | 'json' | 'bson' | 'uuid' | 'float16' | 'unknown' | 'variant' }
  | { readonly type: 'decimal'; readonly scale: number; readonly precision: number }
  | { readonly type: 'time' | 'timestamp'; readonly isAdjustedToUTC: boolean; readonly unit: TimeUnit }
  | { readonly type: 'integer'; readonly bitWidth: number; readonly isSigned: boolean }
  | { readonly type: 'other'; readonly id: number };

export interface SchemaElement {
  readonly name: string;
  /** Physical type; absent on groups. */
  readonly type?: PhysicalType;
  readonly typeLength?: number;
  readonly repetition?: Repetition;
  readonly numChildren?: number;
  readonly convertedType?: number;
  readonly scale?: number;
  readonly precision?: number;
  readonly fieldId?: number;
  readonly logicalType?: LogicalType;
}

export interface ColumnStatistics {
  readonly min?: Uint8Array;
  readonly max?: Uint8Array;
  readonly nullCount?: number;
  readonly distinctCount?: number;
}

export interface ColumnChunkMeta {
  readonly path: readonly string[];
  readonly type: PhysicalType;
  readonly codec: number;
  readonly numValues: number;
  readonly totalUncompressedSize: number;
  readonly totalCompressedSize: number;
  readonly dataPageOffset: number;
  readonly dictionaryPageOffset?: number;
  readonly statistics?: ColumnStatistics;
}

export interface RowGroupMeta {
  readonly numRows: number;
  readonly totalByteSize: number;
  readonly columns: readonly ColumnChunkMeta[];
  readonly fileOffset?: number;
  readonly totalCompressedSize?: number;
}

export interface ParquetFooter {
  readonly version: number;
  /** Depth-first flattened schema; element 0 is the root. */
  readonly schema: readonly SchemaElement[];
  readonly numRows: number;
  readonly rowGroups: readonly RowGroupMeta[];
  readonly keyValueMetadata: ReadonlyMap<string, string>;
  readonly createdBy?: string;
}

/** Codec numbers of parquet-format's CompressionCodec. */
export const Codec = { UNCOMPRESSED: 0, SNAPPY: 1, GZIP: 2, LZO: 3, BROTLI: 4, LZ4: 5, ZSTD: 6, LZ4_RAW: 7 } as const;

const utf8 = new TextDecoder('utf-8');

// The decoders below read the typed form (thrift.ts TypedField[]) that rebuilt footers are edited
// from: a footer is parsed once, into one form.

function num(v: TypedValue | undefined, what: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') {
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new InvalidFileError(`${what} ${v} is beyond 2^53`);
    }
    return Number(v);
  }
  throw new InvalidFileError(`${what} is missing or not a number`);
}

function optNum(v: TypedValue | undefined, what: string): number | undefined {
  return v === undefined ? undefined : num(v, what);
}

function str(v: TypedValue | undefined, what: string): string {
  if (v instanceof Uint8Array) return utf8.decode(v);
  throw new InvalidFileError(`${what} is missing or not a string`);
}

type Struct = readonly TypedField[];

function struct(v: TypedValue | undefined): Struct | undefined {
  return Array.isArray(v) ? v : undefined;
}

/** Field `id` of a struct; the last one when it repeats. */
function get(s: Struct, id: number): TypedValue | undefined {
  for (let i = s.length - 1; i >= 0; i--) if (s[i].id === id) return s[i].value;
  return undefined;
}

function timeUnit(v: TypedValue | undefined): TimeUnit {
  const u = struct(v) ?? [];
  if (get(u, 1) !== undefined) return 'millis';
  if (get(u, 2) !== undefined) return 'micros';
  return 'nanos';
}

function logicalType(v: TypedValue | undefined): LogicalType | undefined {
  const u = struct(v);
  if (!u) return undefined;
  // A union sets exactly one member.
  if (u.length === 0 || u.some((f) => f.id !== u[0].id)) return undefined;
  const id = u[0].id;
  const body = struct(get(u, id)) ?? [];
  switch (id) {
    case 1: return { type: 'string' };
    case 2: return { type: 'map' };
    case 3: return { type: 'list' };
    case 4: return { type: 'enum' };
    case 5: return { type: 'decimal', scale: num(get(body, 1), 'decimal scale'), precision: num(get(body, 2), 'decimal precision') };
    case 6: return { type: 'date' };
    case 7: return { type: 'time', isAdjustedToUTC: get(body, 1) === true, unit: timeUnit(get(body, 2)) };
    case 8: return { type: 'timestamp', isAdjustedToUTC: get(body, 1) === true, unit: timeUnit(get(body, 2)) };
    case 10: return { type: 'integer', bitWidth: num(get(body, 1), 'integer bit width'), isSigned: get(body, 2) === true };
    case 11: return { type: 'unknown' };
    case 12: return { type: 'json' };
    case 13: return { type: 'bson' };
    case 14: return { type: 'uuid' };
    case 15: return { type: 'float16' };
    case 16: return { type: 'variant' };
    default: return { type: 'other', id };
  }
}

const REPETITION: readonly Repetition[] = ['required', 'optional', 'repeated'];

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function schemaElement(s: Struct): SchemaElement {
  const out: Mutable<SchemaElement> = { name: str(get(s, 4), 'schema element name') };
  const type = get(s, 1);
  if (type !== undefined) out.type = num(type, 'type') as PhysicalType;
  const length = get(s, 2);
  if (length !== undefined) out.typeLength = num(length, 'type_length');
  const rep = optNum(get(s, 3), 'repetition_type');
  if (rep !== undefined) out.repetition = REPETITION[rep];
  const children = get(s, 5);
  if (children !== undefined) out.numChildren = num(children, 'num_children');
  const converted = get(s, 6);
  if (converted !== undefined) out.convertedType = num(converted, 'converted_type');
  const scale = get(s, 7);
  if (scale !== undefined) out.scale = num(scale, 'scale');
  const precision = get(s, 8);
  if (precision !== undefined) out.precision = num(precision, 'precision');
  const fieldId = get(s, 9);
  if (fieldId !== undefined) out.fieldId = num(fieldId, 'field_id');
  const lt = logicalType(get(s, 10));
  if (lt) out.logicalType = lt;
  return out;
}

function statistics(v: TypedValue | undefined): ColumnStatistics | undefined {
  const s = struct(v);
  if (!s) return undefined;
  const out: Mutable<ColumnStatistics> = {};
  // min_value/max_value (5, 6) use the column order; the deprecated min/max (2, 1) are signed.
  const min = get(s, 6) ?? get(s, 2);
  const max = get(s, 5) ?? get(s, 1);
  if (min instanceof Uint8Array) out.min = min;
  if (max instanceof Uint8Array) out.max = max;
  const nulls = get(s, 3);
  if (nulls !== undefined) out.nullCount = num(nulls, 'null_count');
  const distinct = get(s, 4);
  if (distinct !== undefined) out.distinctCount = num(distinct, 'distinct_count');
  return out;
}

function columnChunk(c: Struct): ColumnChunkMeta {
  const m = struct(get(c, 3));
  if (!m) throw new InvalidFileError('column chunk without meta_data');
  const path = typedItems(get(m, 3));
  const out: Mutable<ColumnChunkMeta> = {
    path: path.map((p) => str(p, 'path_in_schema')),
    type: num(get(m, 1), 'column type') as PhysicalType,
    codec: num(get(m, 4), 'codec'),
    numValues: num(get(m, 5), 'num_values'),
    totalUncompressedSize: num(get(m, 6), 'total_uncompressed_size'),
    totalCompressedSize: num(get(m, 7), 'total_compressed_size'),
    dataPageOffset: num(get(m, 9), 'data_page_offset'),
  };
  const dict = get(m, 11);
  if (dict !== undefined) out.dictionaryPageOffset = num(dict, 'dictionary_page_offset');
  const stats = statistics(get(m, 12));
  if (stats) out.statistics = stats;
  return out;
}

function rowGroup(r: Struct): RowGroupMeta {
  const out: Mutable<RowGroupMeta> = {
    columns: typedItems(get(r, 1)).map((c) => columnChunk(struct(c) ?? [])),
    totalByteSize: num(get(r, 2), 'total_byte_size'),
    numRows: num(get(r, 3), 'num_rows'),
  };
  const fileOffset = get(r, 5);
  if (fileOffset !== undefined) out.fileOffset = num(fileOffset, 'row group file_offset');
  const compressed = get(r, 6);
  if (compressed !== undefined) out.totalCompressedSize = num(compressed, 'row group total_compressed_size');
  return out;
}

/** Decodes the Thrift FileMetaData bytes (the footer without its length and magic). */
export function decodeFooter(bytes: Uint8Array): ParquetFooter {
  return footerOf(readTypedStruct(bytes));
}

function footerOf(s: Struct): ParquetFooter {
  const kv = new Map<string, string>();
  for (const e of typedItems(get(s, 5))) {
    const k = struct(e);
    const key = k && get(k, 1);
    if (k && key !== undefined) {
      const value = get(k, 2);
      kv.set(str(key, 'key'), value === undefined ? '' : str(value, 'value'));
    }
  }
  const out: Mutable<ParquetFooter> = {
    version: num(get(s, 1), 'version'),
    schema: typedItems(get(s, 2)).map((e) => schemaElement(struct(e) ?? [])),
    numRows: num(get(s, 3), 'num_rows'),
    rowGroups: typedItems(get(s, 4)).map((r) => rowGroup(struct(r) ?? [])),
    keyValueMetadata: kv,
  };
  const createdBy = get(s, 6);
  if (createdBy !== undefined) out.createdBy = str(createdBy, 'created_by');
  return out;
}

function isMagic(b: Uint8Array, at: number): boolean {
  return b[at] === 0x50 && b[at + 1] === 0x41 && b[at + 2] === 0x52 && b[at + 3] === 0x31;
}

/** Where the footer sits, given the file length and its last 8 bytes; throws naming the file. */
export function footerLocation(path: string, fileLength: number, last8: Uint8Array): { start: number; length: number } {
  if (fileLength < 12) {
    throw new InvalidFileError(`not a Parquet file: ${fileLength} bytes is shorter than the 12-byte minimum`, { path });
  }
  if (!isMagic(last8, 4)) {
    throw new InvalidFileError('not a Parquet file: the last 4 bytes are not the magic "PAR1" (cut short or another format)', { path });
  }
  const length = new DataView(last8.buffer, last8.byteOffset, 8).getUint32(0, true);
  const start = fileLength - 8 - length;
  if (start < 4) {
    throw new InvalidFileError(`invalid Parquet footer: footer length ${length} does not fit in a ${fileLength}-byte file`, {
      path,
    });
  }
  return { start, length };
}

export interface FooterRead {
  readonly footer: ParquetFooter;
  readonly fileLength: number;
  /** The bytes read from the end of the file (at least the footer, its length and the magic). */
  readonly tail: Uint8Array;
  readonly tailStart: number;
  /** The Thrift FileMetaData bytes. */
  readonly footerBytes: Uint8Array;
  /** The same, decoded with each field's wire type (thrift.ts readTypedStruct): what a rebuilt footer is edited from. */
  readonly typed: readonly TypedField[];
}

function decodeOrThrow(path: string, bytes: Uint8Array): ParquetFooter {
  try {
    return decodeFooter(bytes);
  } catch (e) {
    throw new InvalidFileError(`invalid Parquet footer: ${(e as Error).message}`, { path, cause: e });
  }
}

/** Both forms of a footer from one parse of its bytes. */
function decodeTypedOrThrow(path: string, bytes: Uint8Array): { footer: ParquetFooter; typed: TypedField[] } {
  try {
    const typed = readTypedStruct(bytes);
    return { footer: footerOf(typed), typed };
  } catch (e) {
    throw new InvalidFileError(`invalid Parquet footer: ${(e as Error).message}`, { path, cause: e });
  }
}

/** The range readFooter reads first from a file of this length: its last 64 KiB, all of a smaller file. */
export function footerReadRange(fileLength: number): { start: number; end: number } {
  return { start: Math.max(0, fileLength - TAIL_GUESS), end: fileLength };
}

/** A file read ahead of its reader whole when it is no larger: the reader reads all of it (tail, then row groups) in one fetch. */
export const READ_AHEAD_WHOLE_FILE_BYTES = 1024 * 1024;

/** What to fetch ahead of a reader of all of a Parquet file (lib/io/read-ahead.ts): all of a small file, else the footer read. */
export function readAheadRange(path: string, fileLength: number): ReadAheadRange {
  const range = fileLength <= READ_AHEAD_WHOLE_FILE_BYTES ? { start: 0, end: fileLength } : footerReadRange(fileLength);
  return { path, ...range };
}

/**
 * Reads and checks a file's footer by range: the trailing magic, the footer length, the Thrift, and the
 * leading magic when the read reaches it. One request for most files (two when the footer passes 64 KiB).
 */
export async function readFooter(file: InputFile): Promise<FooterRead> {
  const fileLength = await file.length();
  if (fileLength < 12) footerLocation(file.path, fileLength, new Uint8Array(8));
  const tailStart = footerReadRange(fileLength).start;
  let tail = await file.read(tailStart, fileLength);
  if (tail.length !== fileLength - tailStart) {
    throw new InvalidFileError(`short read: asked for ${fileLength - tailStart} bytes, got ${tail.length}`, { path: file.path });
  }
  const { start, length } = footerLocation(file.path, fileLength, tail.subarray(tail.length - 8));
  let realStart = tailStart;
  if (start < tailStart) {
    const head = await file.read(start, tailStart);
    const joined = new Uint8Array(fileLength - start);
    joined.set(head, 0);
    joined.set(tail, head.length);
    tail = joined;
    realStart = start;
  }
  // The leading magic costs a request of its own unless the tail read holds it (files up to 64 KiB):
  // not fetched. A file of another format fails the trailing magic above; no chunk is read from
  // bytes [0, 4) (checkColumnChunks), and the column-chunk copy checks them with its first read.
  if (realStart === 0) checkLeadingMagic(file.path, tail);
  // A copy (a Buffer's slice would be a view): the decoded footer's byte fields are views of it,
  // and should not keep the whole tail alive.
  const footerBytes = new Uint8Array(tail.subarray(start - realStart, start - realStart + length));
  const { footer, typed } = decodeTypedOrThrow(file.path, footerBytes);
  checkColumnChunks(file.path, footer, start);
  return { footer, fileLength, tail, tailStart: realStart, footerBytes, typed };
}

/** Throws unless `head` (bytes from offset 0 of the file at `path`) starts with the magic "PAR1". */
export function checkLeadingMagic(path: string, head: Uint8Array): void {
  if (head.length < 4 || !isMagic(head, 0)) {
    throw new InvalidFileError('not a Parquet file: the first 4 bytes are not the magic "PAR1"', { path });
  }
}

/** Every column chunk must lie between the leading magic and the footer. */
function checkColumnChunks(path: string, footer: ParquetFooter, footerStart: number): void {
  footer.rowGroups.forEach((rg, g) => {
    for (const c of rg.columns) {
      const dict = c.dictionaryPageOffset;
      const start = dict !== undefined && dict > 0 && dict < c.dataPageOffset ? dict : c.dataPageOffset;
      if (start < 4 || start + c.totalCompressedSize > footerStart) {
        throw new InvalidFileError(
          `invalid Parquet footer: column ${c.path.join('.')} of row group ${g} spans bytes ` +
            `[${start}, ${start + c.totalCompressedSize}) outside the data region [4, ${footerStart})`,
          { path },
        );
      }
    }
  });
}

/** Footer of a whole file held in memory. */
export function footerFromBytes(path: string, bytes: Uint8Array): ParquetFooter {
  const { start, length } = footerLocation(path, bytes.length, bytes.subarray(Math.max(0, bytes.length - 8)));
  checkLeadingMagic(path, bytes);
  return decodeOrThrow(path, bytes.subarray(start, start + length));
}

/** Byte offset where a row group's data starts: Java's BlockMetaData.getStartingPos. */
export function rowGroupStart(rg: RowGroupMeta): number {
  const first = rg.columns[0];
  if (!first) return rg.fileOffset ?? 0;
  const dict = first.dictionaryPageOffset;
  return dict !== undefined && dict > 0 && dict < first.dataPageOffset ? dict : first.dataPageOffset;
}

/** Iceberg split_offsets: row-group start offsets, ascending. */
export function splitOffsets(footer: ParquetFooter): number[] {
  return footer.rowGroups.map(rowGroupStart).sort((a, b) => a - b);
}

/** A node of the footer's schema tree. */
export interface SchemaNode {
  readonly element: SchemaElement;
  readonly children: readonly SchemaNode[];
  /** Names from below the root to this node. */
  readonly path: readonly string[];
}

/** Rebuilds the tree from the flattened, depth-first schema list. */
export function schemaTree(footer: ParquetFooter): SchemaNode {
  const elems = footer.schema;
  let i = 0;
  const build = (path: readonly string[]): SchemaNode => {
    const element = elems[i++];
    if (!element) throw new InvalidFileError('schema list ends early');
    const children: SchemaNode[] = [];
    const n = element.numChildren ?? 0;
    for (let c = 0; c < n; c++) {
      const childName = elems[i]?.name;
      children.push(build([...path, childName ?? '']));
    }
    return { element, children, path };
  };
  const root = build([]);
  return root;
}

/** Leaf columns in schema order, with their dotted paths. */
export function leafColumns(root: SchemaNode): SchemaNode[] {
  const out: SchemaNode[] = [];
  const visit = (n: SchemaNode): void => {
    if (n.children.length === 0 && n !== root) out.push(n);
    for (const c of n.children) visit(c);
  };
  visit(root);
  return out;
}

/**
 * Adds the UUID logical type to FIXED_LEN_BYTE_ARRAY(16) columns with the given field ids
 * (spec Appendix A: uuid is `fixed_len_byte_array[16]` annotated `UUID`), which parquet-wasm
 * cannot write. Works on the Thrift bytes: each such schema element gets a `logicalType`
 * field (id 10) holding the union member UUIDType (id 14) inserted before its STOP byte;
 * nothing else moves, so offsets in the file stay valid.
 */
export function annotateUuidColumns(footerBytes: Uint8Array, fieldIds: ReadonlySet<number>): Uint8Array {
  if (fieldIds.size === 0) return footerBytes;
  const r = new ThriftReader(footerBytes);
  const inserts: Array<{ at: number; bytes: number[] }> = [];
  let last = 0;
  for (;;) {
    const h = r.fieldHeader(last);
    if (!h) break;
    last = h.id;
    if (h.id !== 2 || h.type !== ThriftType.List) {
      r.read(h.type);
      continue;
    }
    const { size, elementType } = r.listHeader();
    for (let k = 0; k < size; k++) {
      if (elementType !== ThriftType.Struct) {
        r.read(elementType);
        continue;
      }
      let eLast = 0;
      let physical: unknown;
      let length: unknown;
      let fieldId: unknown;
      let hasLogicalType = false;
      for (;;) {
        const stopAt = r.offset;
        const eh = r.fieldHeader(eLast);
        if (!eh) {
          if (physical === PhysicalType.FIXED_LEN_BYTE_ARRAY && length === 16 && !hasLogicalType && fieldIds.has(Number(fieldId))) {
            // Short header when the id delta fits in 4 bits, else type byte + zigzag i16 id (10 → 20).
            const header = eLast < 10 && 10 - eLast <= 15 ? [((10 - eLast) << 4) | ThriftType.Struct] : [ThriftType.Struct, 20];
            inserts.push({ at: stopAt, bytes: [...header, (14 << 4) | ThriftType.Struct, 0, 0] });
          }
          break;
        }
        eLast = eh.id;
        const v = r.read(eh.type);
        if (eh.id === 1) physical = v;
        else if (eh.id === 2) length = v;
        else if (eh.id === 9) fieldId = v;
        else if (eh.id === 10) hasLogicalType = true;
      }
    }
  }
  if (inserts.length === 0) return footerBytes;
  const out = new Uint8Array(footerBytes.length + inserts.reduce((s, i) => s + i.bytes.length, 0));
  let from = 0;
  let to = 0;
  for (const ins of inserts) {
    out.set(footerBytes.subarray(from, ins.at), to);
    to += ins.at - from;
    out.set(ins.bytes, to);
    to += ins.bytes.length;
    from = ins.at;
  }
  out.set(footerBytes.subarray(from), to);
  return out;
}
