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
import { decompressPage, PageError, PageType, readPages } from './page-compression.js';
import { ThriftType, typedField, typedItems, typedList, typedNumber, withTypedField, writeTypedStruct, type TypedField, type TypedValue } from './thrift.js';
import { PARQUET_MAGIC_BYTES } from './footer.js';

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
  /** Builds the standalone file from the bytes of `reads`. */
  build(fetched: readonly Uint8Array[]): Uint8Array;
}

/** The footer of a file with the same columns but no row groups: enough to read the schema. */
export function schemaOnlyFile(footer: readonly TypedField[]): Uint8Array {
  const meta = cleanFileMetaData(footer)
    .filter((f) => f.id !== 3 && f.id !== 4)
    .concat([
      { id: 3, type: ThriftType.I64, value: 0 },
      { id: 4, type: ThriftType.List, value: typedList([], ThriftType.Struct) },
    ])
    .sort((a, b) => a.id - b.id);
  return frame([], writeTypedStruct(meta));
}

/** Drops what a rebuilt file must not carry: the stored Arrow schema (kept consistent by deriving types) and encryption. */
function cleanFileMetaData(footer: readonly TypedField[]): TypedField[] {
  return footer
    .filter((f) => f.id <= 7)
    .map((f) => {
      if (f.id !== 5) return f;
      const kv = typedItems(f.value).filter((e) => {
        const key = typedField(e as TypedField[], 1);
        return !(key instanceof Uint8Array && utf8.decode(key) === ARROW_SCHEMA_KEY);
      });
      return { ...f, value: typedList(kv, ThriftType.Struct) };
    });
}

function frame(chunks: readonly Uint8Array[], footer: Uint8Array): Uint8Array {
  const size = 4 + chunks.reduce((s, c) => s + c.length, 0) + footer.length + 8;
  const out = new Uint8Array(size);
  out.set(PARQUET_MAGIC_BYTES, 0);
  let at = 4;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  out.set(footer, at);
  at += footer.length;
  new DataView(out.buffer).setUint32(at, footer.length, true);
  out.set(PARQUET_MAGIC_BYTES, at + 4);
  return out;
}

const ZSTD = 6;
const UNCOMPRESSED = 0;

/** What the rebuilt file holds of one column chunk: its bytes, and where its pages start within them. */
interface ChunkBytes {
  readonly parts: readonly Uint8Array[];
  readonly length: number;
  /** Offsets within the chunk of its first data page, and of its dictionary page when it has one. */
  readonly dataPage: number;
  readonly dictionaryPage: number | undefined;
}

/** A ZSTD column chunk with every page decompressed by `zstd`, or throws PageError. */
function decompressedChunk(bytes: Uint8Array, zstd: ZstdCodec): ChunkBytes {
  const parts: Uint8Array[] = [];
  let length = 0;
  let dataPage: number | undefined;
  let dictionaryPage: number | undefined;
  for (const page of readPages(bytes, 0, bytes.length)) {
    if (page.type === PageType.DICTIONARY_PAGE) dictionaryPage ??= length;
    else if (page.type === PageType.DATA_PAGE || page.type === PageType.DATA_PAGE_V2) dataPage ??= length;
    const p = decompressPage(bytes, page, (data, size) => zstd.decompress(data, size));
    parts.push(...p.parts);
    length += p.length;
  }
  if (dataPage === undefined) throw new PageError('no data page');
  return { parts, length, dataPage, dictionaryPage };
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

  return {
    reads,
    build(fetched) {
      let at = 4;
      const parts: Uint8Array[] = [];
      const newChunks: TypedField[][] = spans.map((s, k) => {
        const { read, offset } = where[k];
        const bytes = fetched[read].subarray(offset, offset + (s.end - s.start));
        const delta = at - s.start;
        const chunkStart = at;
        let meta = s.meta.filter((f) => f.id !== 14 && f.id !== 15);
        if (options.zstd && typedNumber(typedField(meta, 4)) === ZSTD) {
          let chunk: ChunkBytes;
          try {
            chunk = decompressedChunk(bytes, options.zstd);
          } catch (e) {
            if (!(e instanceof PageError)) throw e;
            throw new InvalidFileError(`row group ${index}, column ${pathInSchema(meta)}: ${e.message}`, { path: options.path, cause: e });
          }
          parts.push(...chunk.parts);
          meta = withTypedField(meta, 4, ThriftType.I32, UNCOMPRESSED);
          meta = withTypedField(meta, 6, ThriftType.I64, chunk.length);
          meta = withTypedField(meta, 7, ThriftType.I64, chunk.length);
          meta = withTypedField(meta, 9, ThriftType.I64, at + chunk.dataPage);
          meta = meta.filter((f) => f.id !== 10 && f.id !== 11);
          if (chunk.dictionaryPage !== undefined) meta = withTypedField(meta, 11, ThriftType.I64, at + chunk.dictionaryPage);
          at += chunk.length;
        } else {
          parts.push(bytes);
          at += s.end - s.start;
          for (const id of [9, 10, 11]) {
            const f = meta.find((x) => x.id === id);
            if (f) meta = withTypedField(meta, id, f.type, typedNumber(f.value) + delta);
          }
        }
        let cc = s.cc.filter((f) => f.id <= 3);
        const fileOffset = cc.find((f) => f.id === 2);
        // Rewritten chunks change length: their file_offset (unused by readers) is their start.
        const rewrote = at - chunkStart !== s.end - s.start || typedNumber(typedField(meta, 4)) !== typedNumber(typedField(s.meta, 4));
        if (fileOffset) cc = withTypedField(cc, 2, fileOffset.type, rewrote ? chunkStart : Math.max(0, typedNumber(fileOffset.value) + delta));
        return withTypedField(cc, 3, ThriftType.Struct, meta);
      });

      let newRg = rg.filter((f) => f.id === 2 || f.id === 3 || f.id === 5 || f.id === 6);
      newRg = withTypedField(newRg, 1, ThriftType.List, typedList(newChunks, ThriftType.Struct));
      const fo = newRg.find((f) => f.id === 5);
      if (fo) newRg = withTypedField(newRg, 5, fo.type, 4);
      const tcs = newRg.find((f) => f.id === 6);
      if (tcs) newRg = withTypedField(newRg, 6, tcs.type, at - 4);

      let meta = cleanFileMetaData(footer);
      if (columns) {
        const root = schema[0];
        const kept: TypedValue[] = [withTypedField(root, 5, ThriftType.I32, keep.length)];
        for (const t of keep) for (let e = t.elements[0]; e < t.elements[1]; e++) kept.push(schema[e]);
        meta = withTypedField(meta, 2, ThriftType.List, typedList(kept, ThriftType.Struct));
        const orders = meta.find((f) => f.id === 7);
        if (orders) meta = withTypedField(meta, 7, ThriftType.List, typedList(leaves.map((l) => typedItems(orders.value)[l]), ThriftType.Struct));
      }
      meta = withTypedField(meta, 3, ThriftType.I64, typedNumber(typedField(rg, 3)));
      meta = withTypedField(meta, 4, ThriftType.List, typedList([newRg], ThriftType.Struct));
      return frame(parts, writeTypedStruct(meta));
    },
  };
}
