/**
 * ZSTD-compresses the pages of an UNCOMPRESSED Parquet file as it streams out of the writer,
 * natively at a chosen level (compression-codec.ts says why), and rewrites what points into
 * it: every column chunk's codec, sizes and page offsets, the row groups' file_offset and
 * total_compressed_size, and the OffsetIndex page locations (ColumnIndex bytes are copied as
 * they are: they hold no offsets).
 *
 * parquet-wasm's chunks need not end where pages end (its writer buffers), so pages are taken
 * as they complete and the rest carried to the next chunk. The first bytes that are not a page
 * header start the page indexes and footer: they wait for the end (`finish`), where the footer
 * says where the data ends and where each index is. Anything the footer does not account for
 * is an error, never a file with wrong offsets.
 */
import { InvalidFileError } from '../errors.js';
import type { ZstdCodec } from './compression-codec.js';
import { compressPage, IncompletePageError, PageError, readPage, type Page } from './page-compression.js';
import {
  optionalNumber, readTypedStruct, ThriftType, typedField, typedItems, typedList, withTypedField, writeTypedStruct, type TypedField,
} from './thrift.js';
import { PARQUET_MAGIC_BYTES } from './footer.js';

const ZSTD = 6;

export class PageCompressor {
  /** Bytes of the uncompressed stream taken (compressed or dropped), and of the compressed one given out. */
  private oldPos = 0;
  private newPos = 0;
  /** Per page, in order: its old and new start, and the uncompressed bytes (new headers) before it. */
  private readonly oldStarts: number[] = [];
  private readonly newStarts: number[] = [];
  private readonly uncompressedBefore: number[] = [];
  private uncompressedTotal = 0;
  /** Bytes from oldPos on not taken yet: a page cut by the chunk's end, or (once `pagesEnded`) the indexes and footer. */
  private carry: Uint8Array = new Uint8Array(0);
  /** Set at the first bytes that are not a page: the rest is the page indexes and the footer. */
  private pagesEnded = false;
  private finished = false;
  /** Bytes in the parts of the output being assembled. */
  private partsLength = 0;

  constructor(
    private readonly zstd: ZstdCodec,
    private readonly level: number,
    /** The file, for errors. */
    private readonly path: string,
  ) {}

  private error(message: string, cause?: unknown): InvalidFileError {
    return new InvalidFileError(`cannot compress the Parquet writer's output: ${message}`, { path: this.path, cause });
  }

  /**
   * The next chunk of the uncompressed stream; returns the compressed bytes of the pages it
   * completes (maybe none: chunks need not end at a page's end).
   */
  push(chunk: Uint8Array): Uint8Array {
    if (this.finished) throw this.error('bytes after the end');
    let bytes = chunk;
    if (this.carry.length > 0) {
      bytes = new Uint8Array(this.carry.length + chunk.length);
      bytes.set(this.carry, 0);
      bytes.set(chunk, this.carry.length);
    }
    const parts: Uint8Array[] = [];
    this.partsLength = 0;
    let at = 0;
    if (this.oldPos === 0 && this.newPos === 0) {
      if (bytes.length < 4) {
        this.carry = bytes.slice();
        return new Uint8Array(0);
      }
      if (!PARQUET_MAGIC_BYTES.every((b, i) => bytes[i] === b)) throw this.error('no PAR1 at the start');
      parts.push(PARQUET_MAGIC_BYTES);
      this.partsLength = 4;
      at = 4;
    }
    const pages: Page[] = [];
    while (!this.pagesEnded && at < bytes.length) {
      try {
        const p = readPage(bytes, at, bytes.length);
        pages.push(p);
        at = p.end;
      } catch (e) {
        if (e instanceof IncompletePageError) break;
        if (!(e instanceof PageError)) throw e;
        // Not a page: the indexes and footer (checked against the footer in finish).
        this.pagesEnded = true;
      }
    }
    this.compressed(bytes, pages, parts, this.oldPos);
    // Keep what is not taken; a copy, so that the wasm output buffer is not held.
    this.carry = bytes.slice(at);
    return this.taken(at, parts);
  }

  /** Compresses `pages` of `bytes` (whose byte 0 is at old offset `base`) into `parts`. */
  private compressed(bytes: Uint8Array, pages: readonly Page[], parts: Uint8Array[], base: number): void {
    for (const page of pages) {
      this.oldStarts.push(base + page.start);
      this.newStarts.push(this.newPos + this.partsLength);
      this.uncompressedBefore.push(this.uncompressedTotal);
      let p;
      try {
        p = compressPage(bytes, page, (data) => this.zstd.compress(data, this.level));
      } catch (e) {
        throw this.error(e instanceof Error ? e.message : String(e), e);
      }
      parts.push(...p.parts);
      this.partsLength += p.length;
      this.uncompressedTotal += p.parts[0].length + (page.end - page.payloadStart);
    }
  }

  /** Joins `parts`, the output for `oldLength` bytes of input taken. */
  private taken(oldLength: number, parts: readonly Uint8Array[]): Uint8Array {
    let length = 0;
    for (const p of parts) length += p.length;
    const out = new Uint8Array(length);
    let k = 0;
    for (const p of parts) {
      out.set(p, k);
      k += p.length;
    }
    this.oldPos += oldLength;
    this.newPos += out.length;
    return out;
  }

  /** Index of the page starting at old offset `old` (the end of the data region is one past the last). */
  private pageAt(old: number): number {
    let lo = 0;
    let hi = this.oldStarts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = this.oldStarts[mid];
      if (v === old) return mid;
      if (v < old) lo = mid + 1;
      else hi = mid - 1;
    }
    throw this.error(`offset ${old} is not a page start`);
  }

  /** After the last chunk: the last pages, the page indexes and the footer, read through the footer. */
  finish(): Uint8Array {
    if (this.finished) throw this.error('finished twice');
    this.finished = true;
    const chunk = this.carry;
    this.carry = new Uint8Array(0);
    const parts: Uint8Array[] = [];
    this.partsLength = 0;
    const at = 0;
    if (this.oldPos === 0 && this.newPos === 0) throw this.error('no PAR1 at the start');
    if (chunk.length < 8) throw this.error('no footer at the end');
    const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const footerLength = view.getUint32(chunk.length - 8, true);
    const footerStart = chunk.length - 8 - footerLength;
    if (footerStart < 0 || !PARQUET_MAGIC_BYTES.every((b, i) => chunk[chunk.length - 4 + i] === b)) throw this.error('no footer at the end');
    let footer: TypedField[];
    try {
      footer = readTypedStruct(chunk.subarray(footerStart, chunk.length - 8));
    } catch (e) {
      throw this.error('unreadable footer', e);
    }
    const rowGroups = typedItems(typedField(footer, 4)) as TypedField[][];
    const chunks = rowGroups.flatMap((rg) => typedItems(typedField(rg, 1)) as TypedField[][]);

    // Where the data ends (old offsets): the last column chunk's end.
    let dataEnd = this.oldPos + at;
    for (const cc of chunks) {
      const meta = typedField(cc, 3) as TypedField[];
      dataEnd = Math.max(dataEnd, chunkStart(meta) + optionalNumber(typedField(meta, 7))!);
    }
    if (dataEnd > this.oldPos + footerStart) throw this.error('column chunks reach into the footer');
    if (dataEnd < this.oldPos) throw this.error(`bytes after the data's end (${dataEnd}) were taken for pages`);
    // Pages the walk in push stopped short of (it stops at the first bytes that are not a page).
    const pages: Page[] = [];
    try {
      for (let p = at; p < dataEnd - this.oldPos; ) {
        const page = readPage(chunk, p, dataEnd - this.oldPos);
        pages.push(page);
        p = page.end;
      }
    } catch (e) {
      throw this.error(`the last pages do not end where the footer says the data ends (${dataEnd})`, e);
    }
    this.compressed(chunk, pages, parts, this.oldPos);
    // One past the last page: the end of the data region.
    this.oldStarts.push(dataEnd);
    this.newStarts.push(this.newPos + this.partsLength);
    this.uncompressedBefore.push(this.uncompressedTotal);

    // The page indexes, in the order written; they must fill the rest exactly.
    interface Index {
      readonly cc: number;
      readonly kind: 'offset' | 'column';
      readonly start: number;
      readonly length: number;
    }
    const indexes: Index[] = [];
    chunks.forEach((cc, k) => {
      const oi = optionalNumber(typedField(cc, 4));
      if (oi !== undefined) indexes.push({ cc: k, kind: 'offset', start: oi, length: optionalNumber(typedField(cc, 5)) ?? -1 });
      const ci = optionalNumber(typedField(cc, 6));
      if (ci !== undefined) indexes.push({ cc: k, kind: 'column', start: ci, length: optionalNumber(typedField(cc, 7)) ?? -1 });
    });
    indexes.sort((a, b) => a.start - b.start);
    let pos = dataEnd;
    let newPos = this.newStarts[this.newStarts.length - 1];
    const placed = new Map<string, [number, number]>();
    for (const ix of indexes) {
      if (ix.start !== pos || ix.length < 0) throw this.error(`unexpected bytes at ${pos} before the ${ix.kind} index at ${ix.start}`);
      let bytes = chunk.subarray(ix.start - this.oldPos, ix.start - this.oldPos + ix.length);
      if (ix.kind === 'offset') bytes = this.offsetIndex(bytes);
      parts.push(bytes);
      placed.set(`${ix.kind}${ix.cc}`, [newPos, bytes.length]);
      pos += ix.length;
      newPos += bytes.length;
    }
    if (pos !== this.oldPos + footerStart) throw this.error(`unexpected bytes between ${pos} and the footer`);

    // The footer, with new offsets and sizes.
    let k = 0;
    const newRowGroups = rowGroups.map((rg) => {
      let total = 0;
      const newChunks = (typedItems(typedField(rg, 1)) as TypedField[][]).map((cc) => {
        const meta = typedField(cc, 3) as TypedField[];
        const start = chunkStart(meta);
        const end = start + optionalNumber(typedField(meta, 7))!;
        const [s, e] = [this.pageAt(start), this.pageAt(end)];
        const size = this.newStarts[e] - this.newStarts[s];
        total += size;
        let m = withTypedField(meta, 4, ThriftType.I32, ZSTD);
        m = withTypedField(m, 6, ThriftType.I64, this.uncompressedBefore[e] - this.uncompressedBefore[s]);
        m = withTypedField(m, 7, ThriftType.I64, size);
        for (const id of [9, 10, 11]) {
          const v = optionalNumber(typedField(meta, id));
          if (v !== undefined) m = withTypedField(m, id, ThriftType.I64, this.newStarts[this.pageAt(v)]);
        }
        let c = withTypedField(cc, 3, ThriftType.Struct, m);
        const fileOffset = optionalNumber(typedField(cc, 2));
        // parquet-rs puts it at the chunk's end (where parquet-mr wrote its metadata); keep it there.
        if (fileOffset !== undefined) c = withTypedField(c, 2, ThriftType.I64, fileOffset === end ? this.newStarts[e] : this.newStarts[s]);
        for (const [kind, offsetId] of [['offset', 4], ['column', 6]] as const) {
          const p = placed.get(`${kind}${k}`);
          if (p) c = withTypedField(withTypedField(c, offsetId, ThriftType.I64, p[0]), offsetId + 1, ThriftType.I32, p[1]);
        }
        k++;
        return c;
      });
      let r = withTypedField(rg, 1, ThriftType.List, typedList(newChunks, ThriftType.Struct));
      const fileOffset = optionalNumber(typedField(rg, 5));
      if (fileOffset !== undefined) r = withTypedField(r, 5, ThriftType.I64, this.newStarts[this.pageAt(fileOffset)]);
      if (typedField(rg, 6) !== undefined) r = withTypedField(r, 6, ThriftType.I64, total);
      return r;
    });
    const newFooter = writeTypedStruct(withTypedField(footer, 4, ThriftType.List, typedList(newRowGroups, ThriftType.Struct)));
    const tail = new Uint8Array(newFooter.length + 8);
    tail.set(newFooter, 0);
    new DataView(tail.buffer).setUint32(newFooter.length, newFooter.length, true);
    tail.set(PARQUET_MAGIC_BYTES, newFooter.length + 4);
    parts.push(tail);
    return this.taken(chunk.length, parts);
  }

  /** An OffsetIndex with its page locations moved to the compressed pages. */
  private offsetIndex(bytes: Uint8Array): Uint8Array {
    const oi = readTypedStruct(bytes);
    const locations = (typedItems(typedField(oi, 1)) as TypedField[][]).map((loc) => {
      const i = this.pageAt(optionalNumber(typedField(loc, 1))!);
      return withTypedField(withTypedField(loc, 1, ThriftType.I64, this.newStarts[i]), 2, ThriftType.I32, this.newStarts[i + 1] - this.newStarts[i]);
    });
    return writeTypedStruct(withTypedField(oi, 1, ThriftType.List, typedList(locations, ThriftType.Struct)));
  }
}

/** Where a column chunk's pages start: its dictionary page if it has one, else its first data page. */
function chunkStart(meta: readonly TypedField[]): number {
  const data = optionalNumber(typedField(meta, 9))!;
  const dict = optionalNumber(typedField(meta, 11));
  return dict !== undefined && dict > 0 && dict < data ? dict : data;
}
