import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import * as zlib from 'node:zlib';
import * as arrow from 'apache-arrow';
import fc from 'fast-check';
import * as pw from 'parquet-wasm';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidFileError } from '../../lib/errors.js';
import { zstdCodec, zstdFrames, type ZstdChoice } from '../../lib/parquet/compression-codec.js';
import { readFooter } from '../../lib/parquet/footer.js';
import { PageType, readPage } from '../../lib/parquet/page-compression.js';
import { readParquetBatches } from '../../lib/parquet/reader.js';
import { batchFromRows } from '../../lib/parquet/values.js';
import { ParquetWriter } from '../../lib/parquet/writer.js';
import { readTypedStruct, ThriftType, writeTypedStruct } from '../../lib/parquet/thrift.js';
import { FIXTURES } from '../support/fixtures.js';
import { ALL_TYPES, io, rowArbitrary, tempPath } from './helpers.js';

const saved = process.env.PACKICE_ZSTD;
afterEach(() => {
  if (saved === undefined) delete process.env.PACKICE_ZSTD;
  else process.env.PACKICE_ZSTD = saved;
});

/** Native codecs this Node has (zlib's from 22.15; zstd-napi from its prebuilt binary). */
const NATIVE = (['zlib', 'zstd-napi'] as const).filter((c) => zstdCodec(c) !== undefined);
const zlibHasZstd = typeof (zlib as unknown as Record<string, unknown>).zstdCompressSync === 'function';

/** Every batch of a file as one Arrow IPC stream, read with ZSTD done by `choice`. */
async function readAs(path: string, choice: ZstdChoice): Promise<Buffer> {
  process.env.PACKICE_ZSTD = choice;
  const batches: arrow.RecordBatch[] = [];
  for await (const b of readParquetBatches(io, path)) batches.push(b);
  return Buffer.from(arrow.tableToIPC(new arrow.Table(batches), 'stream'));
}

/** Writes `rows` of ALL_TYPES with parquet-wasm directly, ZSTD, in the given page format. */
function writeWithWasm(path: string, table: arrow.Table, version: pw.WriterVersion, dictionary: boolean): void {
  const props = new pw.WriterPropertiesBuilder()
    .setCompression(pw.Compression.ZSTD)
    .setWriterVersion(version)
    .setDictionaryEnabled(dictionary)
    .setMaxRowGroupSize(150)
    .setDataPageSizeLimit(512)
    .build();
  writeFileSync(path, pw.writeParquet(pw.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')), props));
}

describe('native ZSTD codec', () => {
  it('auto picks node:zlib where Node has zstd, else zstd-napi', () => {
    expect(NATIVE.length).toBeGreaterThan(0);
    expect(zstdCodec('auto')?.name).toBe(zlibHasZstd ? 'node:zlib' : 'zstd-napi');
    expect(zstdCodec('wasm')).toBeUndefined();
  });

  for (const choice of NATIVE) {
    it(`${choice}: round trips one and several frames, also into a given buffer, and refuses a wrong size or a corrupt frame`, () => {
      const codec = zstdCodec(choice)!;
      const data = new TextEncoder().encode('parquet page '.repeat(500));
      const one = codec.compress(data, 3);
      expect(Buffer.from(codec.decompress(one, data.length)).equals(Buffer.from(data))).toBe(true);
      const two = Buffer.concat([one, codec.compress(data.subarray(0, 100), 1)]);
      expect(zstdFrames(two).map((f) => f.length)).toEqual([one.length, two.length - one.length]);
      // A skippable frame must be whole too: cut short, the page is refused (a kept context would wait for the rest).
      const skip = Buffer.alloc(8 + 100);
      skip.writeUInt32LE(0x184d2a50, 0);
      skip.writeUInt32LE(100, 4);
      expect(zstdFrames(Buffer.concat([one, skip])).length).toBe(1);
      expect(() => zstdFrames(Buffer.concat([one, skip.subarray(0, 18)]))).toThrow(/cut short/);
      expect(() => codec.decompress(Buffer.concat([one, skip.subarray(0, 18)]), data.length)).toThrow();
      expect(Buffer.from(codec.decompress(Buffer.concat([one, skip]), data.length)).equals(Buffer.from(data))).toBe(true);
      expect(codec.decompress(two, data.length + 100).length).toBe(data.length + 100);
      expect(() => codec.decompress(one, data.length - 1)).toThrow();
      expect(() => codec.decompress(one, data.length + 1)).toThrow();
      const corrupt = Buffer.from(one);
      corrupt.fill(0, 0, 4);
      expect(() => codec.decompress(corrupt, data.length)).toThrow();
      // Into a given buffer: exactly its size, frames one after the other; called unbound, as the reader passes it.
      const { decompressInto } = codec;
      const dst = new Uint8Array(data.length + 108).fill(7);
      decompressInto(two, dst.subarray(4, 4 + data.length + 100));
      expect(Buffer.from(dst.subarray(4, 4 + data.length)).equals(Buffer.from(data))).toBe(true);
      expect([...dst.subarray(0, 4), ...dst.subarray(data.length + 104)]).toEqual(new Array(8).fill(7));
      expect(() => codec.decompressInto(one, new Uint8Array(data.length - 1))).toThrow();
      expect(() => codec.decompressInto(one, new Uint8Array(data.length + 1))).toThrow();
      expect(() => codec.decompressInto(corrupt, new Uint8Array(data.length))).toThrow();
    });

    it(`${choice}: a compressed page holds no more memory than about its own bytes`, () => {
      // Compressed pages are held until their row group is written: a view into a page-sized buffer would hold the page's size.
      const out = zstdCodec(choice)!.compress(new Uint8Array(1 << 20).fill(5), 3);
      expect(out.length).toBeLessThan(1024);
      // (a small Buffer may sit in Node's shared 8 KiB pool)
      expect(out.buffer.byteLength).toBeLessThan(64 * 1024);
    });
  }

  // Node >= 22.15 only (the Lambda's runtime): not a test on older Nodes rather than a skipped one.
  if (zlibHasZstd) it('node:zlib: page after page through kept contexts, each the frame zstdCompressSync writes at its level; a failed page spoils no later one', () => {
    const codec = zstdCodec('zlib')!;
    expect(codec.contexts).toBe('kept');
    const z = zlib as unknown as { zstdCompressSync(d: Uint8Array, o: { params: Record<number, number> }): Buffer; constants: Record<string, number> };
    const oneShot = (d: Uint8Array, level: number): Buffer => z.zstdCompressSync(d, { params: { [z.constants.ZSTD_c_compressionLevel]: level } });
    const pages = [
      new TextEncoder().encode('page of text '.repeat(3000)),
      new Uint8Array(0),
      Uint8Array.from({ length: 200_000 }, (_, i) => (i * 2654435761) >>> 24),
      new Uint8Array(70_000).fill(9),
      Uint8Array.from({ length: 1 << 20 }, (_, i) => ((i >>> 3) * 40503) & 0xff),
    ];
    for (let round = 0; round < 2; round++) {
      for (const [i, page] of pages.entries()) {
        for (const level of [3, 1, 9]) {
          const out = codec.compress(page, level);
          expect(Buffer.from(out).equals(oneShot(page, level)), `page ${i} level ${level}`).toBe(true);
          expect(Buffer.from(codec.decompress(out, page.length)).equals(Buffer.from(page))).toBe(true);
        }
      }
    }
    // A page that fails leaves no trace in the next one: corrupt inside its frame, cut short, too long, too short.
    const page = pages[4];
    const good = codec.compress(page, 3);
    const corrupt = Buffer.from(good);
    for (let j = 0; j < 64; j++) corrupt[(good.length >> 1) + j] ^= 0x5a;
    const bad: [string, Uint8Array, number][] = [
      ['corrupt', corrupt, page.length],
      ['cut short', good.subarray(0, good.length - 7), page.length],
      ['too long', good, page.length - 1],
      ['too short', good, page.length + 1],
    ];
    for (const [what, data, size] of bad) {
      expect(() => codec.decompress(data, size), what).toThrow();
      expect(Buffer.from(codec.decompress(good, page.length)).equals(Buffer.from(page)), `after ${what}`).toBe(true);
      const into = new Uint8Array(page.length);
      codec.decompressInto(good, into);
      expect(Buffer.from(into).equals(Buffer.from(page)), `into, after ${what}`).toBe(true);
    }
  });

  it('compresses better at level 3 than at level 1', () => {
    const codec = zstdCodec(NATIVE[0])!;
    const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
    const text = new TextEncoder().encode(Array.from({ length: 20_000 }, (_, i) => `${words[(i * i) % 5]} ${((i * 2654435761) >>> 0) % 1000}`).join(' '));
    expect(codec.compress(text, 3).length).toBeLessThan(codec.compress(text, 1).length);
  });
});

describe('reading ZSTD pages natively', () => {
  const choices: ZstdChoice[] = [...NATIVE];

  it('gives the same batches as parquet-wasm alone: every type, nulls, nesting, v1 and v2 pages, with and without dictionaries (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(rowArbitrary(ALL_TYPES), { minLength: 1, maxLength: 400 }), async (rows) => {
        const table = new arrow.Table([batchFromRows(ALL_TYPES, rows)]);
        for (const version of [pw.WriterVersion.V1, pw.WriterVersion.V2]) {
          for (const dictionary of [true, false]) {
            const path = tempPath('t.parquet');
            writeWithWasm(path, table, version, dictionary);
            const { footer } = await readFooter(io.newInputFile(path));
            const first = footer.rowGroups[0].columns[0];
            expect(first.codec).toBe(6);
            expect(readPage(readFileSync(path), first.dataPageOffset, first.dataPageOffset + first.totalCompressedSize).type).toBe(
              version === pw.WriterVersion.V2 ? PageType.DATA_PAGE_V2 : PageType.DATA_PAGE,
            );
            const expected = await readAs(path, 'wasm');
            for (const c of choices) expect((await readAs(path, c)).equals(expected)).toBe(true);
          }
        }
      }),
      { numRuns: 6 },
    );
  });

  it('reads the real engines fixtures (parquet-mr ZSTD and GZIP) as parquet-wasm does', async () => {
    const files = execFileSync('find', [FIXTURES, '-name', '*.parquet']).toString().trim().split('\n');
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      const expected = await readAs(f, 'wasm');
      for (const c of choices) expect((await readAs(f, c)).equals(expected)).toBe(true);
    }
  });

  async function zstdFile(): Promise<{ path: string; bytes: Buffer; pageAt: number }> {
    const path = tempPath('c.parquet');
    const w = ParquetWriter.open(io, path, ALL_TYPES, { compression: 'zstd' });
    await w.writeRows(fc.sample(rowArbitrary(ALL_TYPES), { numRuns: 200, seed: 7 }));
    await w.close();
    const { footer } = await readFooter(io.newInputFile(path));
    const s = footer.rowGroups[0].columns.find((c) => c.path.join('.') === 's')!;
    return { path, bytes: readFileSync(path), pageAt: s.dataPageOffset };
  }

  it('names the file, row group, column and fault of a corrupt ZSTD frame', async () => {
    const { path, bytes, pageAt } = await zstdFile();
    const page = readPage(bytes, pageAt, bytes.length);
    bytes.fill(0, page.payloadStart, page.payloadStart + 4); // the frame's magic number
    writeFileSync(path, bytes);
    for (const c of choices) {
      const err = await readAs(path, c).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidFileError);
      expect((err as Error).message).toContain(path);
      expect((err as Error).message).toMatch(/row group 0, column s: page at byte \d+ does not decompress/);
    }
  });

  it('names a page whose uncompressed size does not match its frame', async () => {
    const { path, bytes, pageAt } = await zstdFile();
    const page = readPage(bytes, pageAt, bytes.length);
    const header = readTypedStruct(bytes.subarray(pageAt, page.payloadStart));
    const size = header.find((f) => f.id === 2)!.value as number;
    // A size of the same varint length, so nothing else moves.
    const wrong = writeTypedStruct(header.map((f) => (f.id === 2 ? { id: 2, type: ThriftType.I32, value: size ^ 1 } : f)));
    expect(wrong.length).toBe(page.payloadStart - pageAt);
    bytes.set(wrong, pageAt);
    writeFileSync(path, bytes);
    for (const c of choices) {
      await expect(readAs(path, c)).rejects.toThrow(/row group 0, column s: page at byte \d+ does not decompress: .*(expected|small)/);
    }
  });
});
