/**
 * One row group (and some of its columns) of a Parquet file as a small standalone Parquet
 * file: "PAR1", the column chunks' bytes, a footer that describes only them, "PAR1".
 *
 * parquet-wasm's async reader aborts the whole process (a wasm panic) when a range read
 * fails, and hangs on corrupt pages. Its synchronous `readParquet` throws instead, so the
 * reader fetches each row group's byte ranges itself (FileIO retries and errors apply) and
 * hands wasm this rebuilt file.
 *
 * ZSTD column chunks are decompressed here, natively (compression-codec.ts), and go to wasm as
 * UNCOMPRESSED: parquet-wasm's own ZSTD is most of its read. Other codecs are left to wasm
 * (codecs are per column chunk, so one file may mix both).
 */
import { InvalidArgumentError, InvalidFileError } from '../errors.js';
import type { ZstdCodec } from './compression-codec.js';
import { PageError, PageType, pageToDecompress, readPages, writeDecompressedPage, type PageToDecompress } from './page-compression.js';
import { FieldEdits, fieldMask, inIdOrder, ThriftType, ThriftWriter, typedField, typedItems, typedNumber, type TypedField, type TypedValue } from './thrift.js';
import { PARQUET_MAGIC_BYTES } from './footer.js';
import type { ScratchBuffer } from './scratch-buffer.js';

/** Ranges closer than this are fetched in one read. */
const COALESCE_GAP = 1024 * 1024;
const ARROW_SCHEMA_KEY = 'ARROW:schema';
const utf8 = new TextDecoder();

interface TopLevelColumn {
  readonly name: string;
  /** Schema list indexes [first, end) of the field's subtree. */
  readonly elements: readonly [number, number];
  /** Leaf (column chunk) indexes [first, end). */
  readonly leaves: readonly [number, number];
}

/** The top-level fields of the flattened schema, with their element and leaf spans. */
function topLevelColumns(schema: readonly TypedField[][]): TopLevelColumn[] {
  const out: TopLevelColumn[] = [];
  const rootChildren = typedNumber(typedField(schema[0] ?? [], 5) ?? 0);
  let i = 1;
  let leaf = 0;
  const skip = (): void => {
    const el = schema[i++];
    if (!el) throw new InvalidFileError('schema list ends early');
    const n = typedField(el, 5);
    if (n === undefined || typedField(el, 1) !== undefined) {
      leaf++;
      return;
    }
    for (let c = 0; c < typedNumber(n); c++) skip();
  };
  for (let c = 0; c < rootChildren; c++) {
    const first = i;
    const firstLeaf = leaf;
    const name = utf8.decode(typedField(schema[i] ?? [], 4) as Uint8Array);
    skip();
    out.push({ name, elements: [first, i], leaves: [firstLeaf, leaf] });
  }
  return out;
}

export interface RowGroupPlan {
  /** Byte ranges [start, end) to fetch, in this order. */
  readonly reads: ReadonlyArray<readonly [number, number]>;
  /**
   * Builds the standalone file from the bytes of `reads`, in `scratch` when given (the file is
   * then valid until its next use: for bytes copied into wasm at once).
   */
  build(fetched: readonly Uint8Array[], scratch?: ScratchBuffer): Uint8Array;
}

/** The footer of a file with the same columns but no row groups: enough to read the schema. */
export function schemaOnlyFile(footer: readonly TypedField[]): Uint8Array {
  const w = new ThriftWriter();
  writeFileMetaData(w, footer, 0, 0, () => {});
  const footerBytes = w.result();
  return framed(4 + footerBytes.length + 8, footerBytes, () => {});
}

/** Which part of the schema a rebuilt file keeps: the root's element, then the kept top-level fields' subtrees. */
interface KeptSchema {
  readonly schema: readonly TypedField[][];
  readonly keep: readonly TopLevelColumn[];
  readonly leaves: readonly number[];
}

const NUM_ROWS = 3;
const ROW_GROUPS = 4;

/**
 * Writes FileMetaData `footer` as a rebuilt file carries it: fields 1-7 only, without the stored Arrow
 * schema (kept consistent by deriving types) or encryption, with `numRows` and `rowGroups` row groups
 * (written by `writeRowGroups`), and the schema and column orders cut to `kept` when given. Written
 * straight from the parsed fields: no edited copy of the footer is built per row group.
 */
function writeFileMetaData(
  w: ThriftWriter, footer: readonly TypedField[], numRows: number, rowGroups: number, writeRowGroups: () => void, kept?: KeptSchema,
): void {
  const fields = inIdOrder(footer);
  let last = 0;
  // Fields 3 and 4 are always written, in their place among the others.
  let next = NUM_ROWS;
  const writeSet = (): void => {
    if (next === NUM_ROWS) w.field(last, NUM_ROWS, ThriftType.I64, numRows);
    else {
      w.fieldHeader(last, ROW_GROUPS, ThriftType.List);
      w.listHeader(rowGroups, ThriftType.Struct);
      writeRowGroups();
    }
    last = next++;
  };
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    if (f.id > 7) break;
    while (next <= ROW_GROUPS && next <= f.id) writeSet();
    if (f.id === NUM_ROWS || f.id === ROW_GROUPS) continue;
    if (f.id === 2 && kept) {
      const { schema, keep } = kept;
      let count = 1;
      for (const t of keep) count += t.elements[1] - t.elements[0];
      w.fieldHeader(last, 2, ThriftType.List);
      w.listHeader(count, ThriftType.Struct);
      writeStructSetting(w, schema[0], 5, ThriftType.I32, keep.length);
      for (const t of keep) for (let e = t.elements[0]; e < t.elements[1]; e++) w.value(ThriftType.Struct, schema[e]);
    } else if (f.id === 5) {
      const items = typedItems(f.value);
      let count = 0;
      for (const e of items) if (!isArrowSchemaEntry(e)) count++;
      w.fieldHeader(last, 5, f.type);
      w.listHeader(count, ThriftType.Struct);
      for (const e of items) if (!isArrowSchemaEntry(e)) w.value(ThriftType.Struct, e);
    } else if (f.id === 7 && kept) {
      const orders = typedItems(f.value);
      w.fieldHeader(last, 7, ThriftType.List);
      w.listHeader(kept.leaves.length, ThriftType.Struct);
      for (const l of kept.leaves) w.value(ThriftType.Struct, orders[l]);
    } else w.field(last, f.id, f.type, f.value);
    last = f.id;
  }
  while (next <= ROW_GROUPS) writeSet();
  w.stop();
}

function isArrowSchemaEntry(e: TypedValue): boolean {
  const key = typedField(e as TypedField[], 1);
  return key instanceof Uint8Array && utf8.decode(key) === ARROW_SCHEMA_KEY;
}

/** Edits of one struct at a time: builds run one at a time, synchronously. */
const edits = new FieldEdits();

/** Writes struct `fields` with field `id` set to `value`. */
function writeStructSetting(w: ThriftWriter, fields: readonly TypedField[], id: number, type: number, value: TypedValue): void {
  edits.reset(0);
  edits.set(id, type, value);
  w.editedStruct(inIdOrder(fields), edits);
}

/** A file of `size` bytes: magic, what `fill` writes after it, the footer, its length, magic. Every byte is written. */
function framed(size: number, footer: Uint8Array, fill: (out: Uint8Array) => void, scratch?: ScratchBuffer): Uint8Array {
  // Not zeroed: every byte is written below (a rebuilt row group is about its decompressed size).
  const out = scratch ? scratch.take(size) : new Uint8Array(Buffer.allocUnsafeSlow(size).buffer, 0, size);
  out.set(PARQUET_MAGIC_BYTES, 0);
  fill(out);
  const at = size - 8 - footer.length;
  out.set(footer, at);
  new DataView(out.buffer, out.byteOffset, size).setUint32(size - 8, footer.length, true);
  out.set(PARQUET_MAGIC_BYTES, size - 4);
  return out;
}

const ZSTD = 6;
const UNCOMPRESSED = 0;

/** What the rebuilt file holds of one column chunk: its pages once decompressed, and where its pages start within them. */
interface ChunkBytes {
  readonly pages: readonly PageToDecompress[];
  readonly length: number;
  /** Offsets within the chunk of its first data page, and of its dictionary page when it has one. */
  readonly dataPage: number;
  readonly dictionaryPage: number | undefined;
}

/** A ZSTD column chunk's pages as they read decompressed (nothing decompressed yet), or throws PageError. */
function decompressedChunk(bytes: Uint8Array): ChunkBytes {
  const pages: PageToDecompress[] = [];
  let length = 0;
  let dataPage: number | undefined;
  let dictionaryPage: number | undefined;
  for (const page of readPages(bytes, 0, bytes.length)) {
    if (page.type === PageType.DICTIONARY_PAGE) dictionaryPage ??= length;
    else if (page.type === PageType.DATA_PAGE || page.type === PageType.DATA_PAGE_V2) dataPage ??= length;
    const p = pageToDecompress(bytes, page);
    pages.push(p);
    length += p.length;
  }
  if (dataPage === undefined) throw new PageError('no data page');
  return { pages, length, dataPage, dictionaryPage };
}

function pathInSchema(meta: readonly TypedField[]): string {
  return typedItems(typedField(meta, 3))
    .map((p) => utf8.decode(p as Uint8Array))
    .join('.');
}

export interface RowGroupFileOptions {
  /** Decompresses ZSTD pages natively when given (compression-codec.ts `zstdCodec()`). */
  readonly zstd?: ZstdCodec;
  /** The file, for errors. */
  readonly path?: string;
}

/**
 * Plans the standalone file of row group `index`, keeping the top-level columns named in
 * `columns` (all when undefined), in file order.
 */
export function planRowGroup(
  footer: readonly TypedField[],
  index: number,
  columns?: readonly string[],
  options: RowGroupFileOptions = {},
): RowGroupPlan {
  const schema = typedItems(typedField(footer, 2)) as TypedField[][];
  const rowGroups = typedItems(typedField(footer, 4)) as TypedField[][];
  const rg = rowGroups[index];
  if (!rg) throw new InvalidArgumentError(`no row group ${index}`);
  const chunks = typedItems(typedField(rg, 1)) as TypedField[][];
  const tops = topLevelColumns(schema);
  const keep = columns ? tops.filter((t) => columns.includes(t.name)) : tops;

  const leaves: number[] = [];
  for (const t of keep) for (let l = t.leaves[0]; l < t.leaves[1]; l++) leaves.push(l);

  // Each kept chunk's byte span in the source file.
  const spans = leaves.map((l) => {
    const cc = chunks[l];
    if (!cc) throw new InvalidFileError(`row group ${index} has no column chunk ${l}`);
    const meta = typedField(cc, 3) as TypedField[];
    const data = typedNumber(typedField(meta, 9));
    const dictValue = typedField(meta, 11);
    const dict = dictValue === undefined ? undefined : typedNumber(dictValue);
    const start = dict !== undefined && dict > 0 && dict < data ? dict : data;
    return { cc, meta, start, end: start + typedNumber(typedField(meta, 7)) };
  });

  // Coalesced reads.
  const order = spans.map((_, k) => k).sort((a, b) => spans[a].start - spans[b].start);
  const reads: Array<[number, number]> = [];
  const where = new Array<{ read: number; offset: number }>(spans.length);
  for (const k of order) {
    const s = spans[k];
    const last = reads[reads.length - 1];
    if (last && s.start <= last[1] + COALESCE_GAP) last[1] = Math.max(last[1], s.end);
    else reads.push([s.start, s.end]);
    const r = reads.length - 1;
    where[k] = { read: r, offset: s.start - reads[r][0] };
  }

  const rgFields = inIdOrder(rg);
  const kept: KeptSchema | undefined = columns ? { schema, keep, leaves } : undefined;
  const numRows = typedNumber(typedField(rg, 3));

  return {
    reads,
    build(fetched, scratch) {
      // Each kept chunk's bytes as the rebuilt file holds them, and where they start in it.
      let at = 4;
      const sources: Uint8Array[] = [];
      const starts: number[] = [];
      const rebuilt: Array<ChunkBytes | undefined> = [];
      const failed = (k: number, e: unknown): never => {
        if (!(e instanceof PageError)) throw e;
        throw new InvalidFileError(`row group ${index}, column ${pathInSchema(spans[k].meta)}: ${e.message}`, { path: options.path, cause: e });
      };
      for (let k = 0; k < spans.length; k++) {
        const s = spans[k];
        const { read, offset } = where[k];
        const bytes = fetched[read].subarray(offset, offset + (s.end - s.start));
        starts.push(at);
        sources.push(bytes);
        if (options.zstd && typedNumber(typedField(s.meta, 4)) === ZSTD) {
          let chunk: ChunkBytes;
          try {
            chunk = decompressedChunk(bytes);
          } catch (e) {
            return failed(k, e);
          }
          rebuilt.push(chunk);
          at += chunk.length;
        } else {
          rebuilt.push(undefined);
          at += s.end - s.start;
        }
      }

      const writeChunk = (k: number): void => {
        const s = spans[k];
        const chunk = rebuilt[k];
        const chunkStart = starts[k];
        const delta = chunkStart - s.start;
        const cc = inIdOrder(s.cc);
        let last = 0;
        for (let i = 0; i < cc.length && cc[i].id <= 3; i++) {
          const f = cc[i];
          if (f.id === 2) {
            // Rewritten chunks change length: their file_offset (unused by readers) is their start.
            w.field(last, 2, f.type, chunk ? chunkStart : Math.max(0, typedNumber(f.value) + delta));
          } else if (f.id === 3) {
            w.fieldHeader(last, 3, ThriftType.Struct);
            if (chunk) {
              edits.reset(fieldMask(10, 11, 14, 15));
              edits.set(4, ThriftType.I32, UNCOMPRESSED);
              edits.set(6, ThriftType.I64, chunk.length);
              edits.set(7, ThriftType.I64, chunk.length);
              edits.set(9, ThriftType.I64, chunkStart + chunk.dataPage);
              if (chunk.dictionaryPage !== undefined) edits.set(11, ThriftType.I64, chunkStart + chunk.dictionaryPage);
            } else {
              // The data (9), index (10) and dictionary (11) page offsets move with the chunk.
              edits.reset(fieldMask(14, 15));
              for (const m of inIdOrder(s.meta)) if (m.id >= 9 && m.id <= 11) edits.set(m.id, m.type, typedNumber(m.value) + delta);
            }
            w.editedStruct(inIdOrder(s.meta), edits);
          } else w.field(last, f.id, f.type, f.value);
          last = f.id;
        }
        w.stop();
      };

      const writeRowGroup = (): void => {
        // Column chunks (field 1) first, then fields 2, 3, 5 and 6 as the row group has them.
        w.fieldHeader(0, 1, ThriftType.List);
        w.listHeader(spans.length, ThriftType.Struct);
        for (let k = 0; k < spans.length; k++) writeChunk(k);
        let last = 1;
        for (const f of rgFields) {
          if (f.id === 2 || f.id === 3) w.field(last, f.id, f.type, f.value);
          else if (f.id === 5) w.field(last, 5, f.type, 4);
          else if (f.id === 6) w.field(last, 6, f.type, at - 4);
          else continue;
          last = f.id;
        }
        w.stop();
      };

      const w = new ThriftWriter();
      writeFileMetaData(w, footer, numRows, 1, writeRowGroup, kept);
      const footerBytes = w.result();
      // Each page decompressed straight into its place in the file.
      const zstd = options.zstd;
      return framed(at + footerBytes.length + 8, footerBytes, (out) => {
        for (let k = 0; k < spans.length; k++) {
          const chunk = rebuilt[k];
          if (!chunk || !zstd) {
            out.set(sources[k], starts[k]);
            continue;
          }
          let pageAt = starts[k];
          try {
            for (const p of chunk.pages) {
              writeDecompressedPage(p, out, pageAt, zstd.decompressInto);
              pageAt += p.length;
            }
          } catch (e) {
            failed(k, e);
          }
        }
      }, scratch);
    },
  };
}
