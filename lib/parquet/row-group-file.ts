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
import { ThriftType, type TypedField, type TypedList, type TypedValue, writeTypedStruct } from './thrift.js';

const MAGIC = Uint8Array.of(0x50, 0x41, 0x52, 0x31);
/** Ranges closer than this are fetched in one read. */
const COALESCE_GAP = 1024 * 1024;
const ARROW_SCHEMA_KEY = 'ARROW:schema';
const utf8 = new TextDecoder();

function field(fields: readonly TypedField[], id: number): TypedValue | undefined {
  return fields.find((f) => f.id === id)?.value;
}

function num(v: TypedValue | undefined): number {
  return typeof v === 'bigint' ? Number(v) : (v as number);
}

function list(v: TypedValue | undefined): TypedValue[] {
  return v !== undefined && typeof v === 'object' && 'kind' in v && v.kind === 'list' ? v.items : [];
}

function set(fields: readonly TypedField[], id: number, type: number, value: TypedValue): TypedField[] {
  const out = fields.filter((f) => f.id !== id);
  out.push({ id, type, value });
  return out.sort((a, b) => a.id - b.id);
}

function withList(items: TypedValue[], elementType: number): TypedList {
  return { kind: 'list', elementType, items };
}

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
  const rootChildren = num(field(schema[0] ?? [], 5) ?? 0);
  let i = 1;
  let leaf = 0;
  const skip = (): void => {
    const el = schema[i++];
    if (!el) throw new InvalidFileError('schema list ends early');
    const n = field(el, 5);
    if (n === undefined || field(el, 1) !== undefined) {
      leaf++;
      return;
    }
    for (let c = 0; c < num(n); c++) skip();
  };
  for (let c = 0; c < rootChildren; c++) {
    const first = i;
    const firstLeaf = leaf;
    const name = utf8.decode(field(schema[i] ?? [], 4) as Uint8Array);
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
      { id: 4, type: ThriftType.List, value: withList([], ThriftType.Struct) },
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
      const kv = list(f.value).filter((e) => {
        const key = field(e as TypedField[], 1);
        return !(key instanceof Uint8Array && utf8.decode(key) === ARROW_SCHEMA_KEY);
      });
      return { ...f, value: withList(kv, ThriftType.Struct) };
    });
}

function frame(chunks: readonly Uint8Array[], footer: Uint8Array): Uint8Array {
  const size = 4 + chunks.reduce((s, c) => s + c.length, 0) + footer.length + 8;
  const out = new Uint8Array(size);
  out.set(MAGIC, 0);
  let at = 4;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  out.set(footer, at);
  at += footer.length;
  new DataView(out.buffer).setUint32(at, footer.length, true);
  out.set(MAGIC, at + 4);
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
  return list(field(meta, 3))
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
  const schema = list(field(footer, 2)) as TypedField[][];
  const rowGroups = list(field(footer, 4)) as TypedField[][];
  const rg = rowGroups[index];
  if (!rg) throw new InvalidArgumentError(`no row group ${index}`);
  const chunks = list(field(rg, 1)) as TypedField[][];
  const tops = topLevelColumns(schema);
  const keep = columns ? tops.filter((t) => columns.includes(t.name)) : tops;

  const leaves: number[] = [];
  for (const t of keep) for (let l = t.leaves[0]; l < t.leaves[1]; l++) leaves.push(l);

  // Each kept chunk's byte span in the source file.
  const spans = leaves.map((l) => {
    const cc = chunks[l];
    if (!cc) throw new InvalidFileError(`row group ${index} has no column chunk ${l}`);
    const meta = field(cc, 3) as TypedField[];
    const data = num(field(meta, 9));
    const dictValue = field(meta, 11);
    const dict = dictValue === undefined ? undefined : num(dictValue);
    const start = dict !== undefined && dict > 0 && dict < data ? dict : data;
    return { cc, meta, start, end: start + num(field(meta, 7)) };
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
        if (options.zstd && num(field(meta, 4)) === ZSTD) {
          let chunk: ChunkBytes;
          try {
            chunk = decompressedChunk(bytes, options.zstd);
          } catch (e) {
            if (!(e instanceof PageError)) throw e;
            throw new InvalidFileError(`row group ${index}, column ${pathInSchema(meta)}: ${e.message}`, { path: options.path, cause: e });
          }
          parts.push(...chunk.parts);
          meta = set(meta, 4, ThriftType.I32, UNCOMPRESSED);
          meta = set(meta, 6, ThriftType.I64, chunk.length);
          meta = set(meta, 7, ThriftType.I64, chunk.length);
          meta = set(meta, 9, ThriftType.I64, at + chunk.dataPage);
          meta = meta.filter((f) => f.id !== 10 && f.id !== 11);
          if (chunk.dictionaryPage !== undefined) meta = set(meta, 11, ThriftType.I64, at + chunk.dictionaryPage);
          at += chunk.length;
        } else {
          parts.push(bytes);
          at += s.end - s.start;
          for (const id of [9, 10, 11]) {
            const f = meta.find((x) => x.id === id);
            if (f) meta = set(meta, id, f.type, num(f.value) + delta);
          }
        }
        let cc = s.cc.filter((f) => f.id <= 3);
        const fileOffset = cc.find((f) => f.id === 2);
        // Rewritten chunks change length: their file_offset (unused by readers) is their start.
        const rewrote = at - chunkStart !== s.end - s.start || num(field(meta, 4)) !== num(field(s.meta, 4));
        if (fileOffset) cc = set(cc, 2, fileOffset.type, rewrote ? chunkStart : Math.max(0, num(fileOffset.value) + delta));
        return set(cc, 3, ThriftType.Struct, meta);
      });

      let newRg = rg.filter((f) => f.id === 2 || f.id === 3 || f.id === 5 || f.id === 6);
      newRg = set(newRg, 1, ThriftType.List, withList(newChunks, ThriftType.Struct));
      const fo = newRg.find((f) => f.id === 5);
      if (fo) newRg = set(newRg, 5, fo.type, 4);
      const tcs = newRg.find((f) => f.id === 6);
      if (tcs) newRg = set(newRg, 6, tcs.type, at - 4);

      let meta = cleanFileMetaData(footer);
      if (columns) {
        const root = schema[0];
        const kept: TypedValue[] = [set(root, 5, ThriftType.I32, keep.length)];
        for (const t of keep) for (let e = t.elements[0]; e < t.elements[1]; e++) kept.push(schema[e]);
        meta = set(meta, 2, ThriftType.List, withList(kept, ThriftType.Struct));
        const orders = meta.find((f) => f.id === 7);
        if (orders) meta = set(meta, 7, ThriftType.List, withList(leaves.map((l) => list(orders.value)[l]), ThriftType.Struct));
      }
      meta = set(meta, 3, ThriftType.I64, num(field(rg, 3)));
      meta = set(meta, 4, ThriftType.List, withList([newRg], ThriftType.Struct));
      return frame(parts, writeTypedStruct(meta));
    },
  };
}
