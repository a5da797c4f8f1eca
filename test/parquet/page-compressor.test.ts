import { readFileSync, writeFileSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import fc from 'fast-check';
import * as pw from 'parquet-wasm';
import { afterEach, describe, expect, it } from 'vitest';
import { zstdCodec, type ZstdChoice } from '../../lib/parquet/compression-codec.js';
import { readFooter, rowGroupStart } from '../../lib/parquet/footer.js';
import { readPage } from '../../lib/parquet/page-compression.js';
import { PageCompressor } from '../../lib/parquet/page-compressor.js';
import { readParquetBatches } from '../../lib/parquet/reader.js';
import { readTypedStruct, type TypedField, type TypedList } from '../../lib/parquet/thrift.js';
import { batchFromRows } from '../../lib/parquet/values.js';
import { ParquetWriter, type ParquetWriterOptions } from '../../lib/parquet/writer.js';
import type { StructType } from '../../lib/iceberg/types.js';
import type { Row } from '../../lib/iceberg/values.js';
import { newTableMetadata } from '../../lib/table/operations.js';
import { parquetWriteOptions, writeDataFiles } from '../../lib/table/data-writer.js';
import { ALL_TYPES, io, readRows, rowArbitrary, tempPath } from './helpers.js';

const saved = process.env.PACKICE_ZSTD;
afterEach(() => {
  if (saved === undefined) delete process.env.PACKICE_ZSTD;
  else process.env.PACKICE_ZSTD = saved;
});

const NATIVE = (['zlib', 'zstd-napi'] as const).filter((c) => zstdCodec(c) !== undefined);

async function batchesOf(bytes: Uint8Array, choice: ZstdChoice): Promise<Buffer> {
  const path = tempPath('r.parquet');
  writeFileSync(path, bytes);
  process.env.PACKICE_ZSTD = choice;
  const out: arrow.RecordBatch[] = [];
  for await (const b of readParquetBatches(io, path)) out.push(b);
  return Buffer.from(arrow.tableToIPC(new arrow.Table(out), 'stream'));
}

function field(fields: readonly TypedField[], id: number): TypedField['value'] | undefined {
  return fields.find((f) => f.id === id)?.value;
}

/** Checks every OffsetIndex page location of a file against the page it points at. */
function checkOffsetIndexes(bytes: Uint8Array): number {
  const len = new DataView(bytes.buffer, bytes.byteOffset).getUint32(bytes.length - 8, true);
  const footer = readTypedStruct(bytes.subarray(bytes.length - 8 - len, bytes.length - 8));
  let checked = 0;
  for (const rg of (field(footer, 4) as TypedList).items as TypedField[][]) {
    for (const cc of (field(rg, 1) as TypedList).items as TypedField[][]) {
      const at = Number(field(cc, 4));
      const oi = readTypedStruct(bytes.subarray(at, at + Number(field(cc, 5))));
      for (const loc of (field(oi, 1) as TypedList).items as TypedField[][]) {
        const offset = Number(field(loc, 1));
        const page = readPage(bytes, offset, bytes.length);
        expect(page.end - offset).toBe(Number(field(loc, 2)));
        checked++;
      }
    }
  }
  return checked;
}

describe('PageCompressor: native ZSTD on the write side', () => {
  it('compresses an uncompressed file of every type, v1 and v2 pages, with and without dictionaries: the same batches, valid page indexes (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(rowArbitrary(ALL_TYPES), { minLength: 1, maxLength: 300 }), async (rows) => {
        const ipc = arrow.tableToIPC(new arrow.Table([batchFromRows(ALL_TYPES, rows)]), 'stream');
        for (const version of [pw.WriterVersion.V1, pw.WriterVersion.V2]) {
          for (const dictionary of [true, false]) {
            const props = new pw.WriterPropertiesBuilder()
              .setCompression(pw.Compression.UNCOMPRESSED)
              .setWriterVersion(version)
              .setDictionaryEnabled(dictionary)
              .setMaxRowGroupSize(120)
              .setDataPageSizeLimit(512)
              .build();
            const plain = pw.writeParquet(pw.Table.fromIPCStream(ipc), props);
            const expected = await batchesOf(plain, 'wasm');
            for (const c of NATIVE) {
              const compressed = compressInPieces(new PageCompressor(zstdCodec(c)!, 3, 'x'), plain, rows.length);
              const { footer } = await readFooter(fileOf(compressed));
              expect(footer.rowGroups.every((g) => g.columns.every((k) => k.codec === 6))).toBe(true);
              expect(checkOffsetIndexes(compressed)).toBeGreaterThan(0);
              for (const read of ['wasm', c] as const) expect((await batchesOf(compressed, read)).equals(expected)).toBe(true);
            }
          }
        }
      }),
      { numRuns: 5 },
    );
  });

  it('refuses bytes after the end, a stream without PAR1, and a footer that does not match the pages', () => {
    const codec = zstdCodec(NATIVE[0])!;
    const ipc = arrow.tableToIPC(new arrow.Table([batchFromRows(ALL_TYPES, fc.sample(rowArbitrary(ALL_TYPES), { numRuns: 20, seed: 1 }))]), 'stream');
    const plain = pw.writeParquet(pw.Table.fromIPCStream(ipc), new pw.WriterPropertiesBuilder().setCompression(pw.Compression.UNCOMPRESSED).build());
    const c = new PageCompressor(codec, 3, '/t/x.parquet');
    c.push(plain);
    c.finish();
    expect(() => c.push(plain.subarray(4))).toThrow(/x\.parquet.*bytes after the end/);
    expect(() => new PageCompressor(codec, 3, '/t/y.parquet').push(Uint8Array.of(1, 2, 3, 4, 5))).toThrow(/y\.parquet.*no PAR1/);
    // A footer that claims more data than the pages hold.
    const len = new DataView(plain.buffer, plain.byteOffset).getUint32(plain.length - 8, true);
    const cut = new PageCompressor(codec, 3, '/t/z.parquet');
    cut.push(plain.subarray(0, 200));
    cut.push(plain.subarray(plain.length - 8 - len));
    expect(() => cut.finish()).toThrow(/z\.parquet.*cannot compress/);
  });
});

/** Pushes `bytes` in pieces of varying sizes (cut anywhere, as a buffered writer cuts), then finishes. */
function compressInPieces(c: PageCompressor, bytes: Uint8Array, seed: number): Uint8Array {
  const out: Uint8Array[] = [];
  for (let at = 0, k = seed; at < bytes.length; k++) {
    const n = [1, 3, 7, 100, 1000, 8192, 65536][k % 7];
    out.push(c.push(bytes.subarray(at, at + n)));
    at += n;
  }
  out.push(c.finish());
  return Buffer.concat(out);
}

function fileOf(bytes: Uint8Array): ReturnType<typeof io.newInputFile> {
  const path = tempPath('f.parquet');
  writeFileSync(path, bytes);
  return io.newInputFile(path);
}

const SIX: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'n', required: false, type: { type: 'int' } },
    { id: 3, name: 'x', required: false, type: { type: 'double' } },
    { id: 4, name: 's', required: false, type: { type: 'string' } },
    { id: 5, name: 'ts', required: false, type: { type: 'timestamptz' } },
    { id: 6, name: 'amount', required: false, type: { type: 'decimal', precision: 18, scale: 2 } },
  ],
};

/** Rows like bench/compaction.ts's: ids, small ints, prices, a few hundred strings, times a second apart. */
function sixRows(n: number): Row[] {
  return Array.from({ length: n }, (_, i) => ({
    id: BigInt(i),
    n: (i * 7919) % 1000,
    x: ((i * 104729) % 100_000) / 100,
    s: `customer-${(i * 31) % 500}`,
    ts: 1_767_225_600_000_000n + BigInt(i) * 1_000_000n,
    amount: BigInt((i * 7907) % 1_000_000),
  }));
}

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];

/** Text rows on which ZSTD level 3 beats level 1. */
function textRows(n: number): Row[] {
  return Array.from({ length: n }, (_, i) => ({ s: `${WORDS[(i * i) % 5]} ${((i * 2654435761) >>> 0) % 1000} ${WORDS[i % 3]} #${i}` }));
}

const TEXT: StructType = { type: 'struct', fields: [{ id: 1, name: 's', required: true, type: { type: 'string' } }] };

async function written(rows: Row[], options: ParquetWriterOptions, schema = SIX): Promise<{ path: string; size: number; splits: readonly number[] }> {
  const path = tempPath('w.parquet');
  const w = ParquetWriter.open(io, path, schema, options);
  await w.writeRows(rows);
  const f = await w.close();
  return { path, size: f.fileSizeInBytes, splits: f.splitOffsets };
}

describe('ParquetWriter with native ZSTD', () => {
  it('writes the rows parquet-wasm writes, at the asked level, with split offsets and size of the compressed file', async () => {
    const rows = sixRows(60_000);
    process.env.PACKICE_ZSTD = 'wasm';
    const wasm = await written(rows, { rowGroupRows: 25_000 });
    for (const c of NATIVE) {
      process.env.PACKICE_ZSTD = c;
      const level1 = await written(rows, { rowGroupRows: 25_000, compressionLevel: 1 });
      const level3 = await written(rows, { rowGroupRows: 25_000 });
      // The level is honoured. Level 3 is not smaller than 1 on every data: on these plain-encoded
      // numbers (and on bench/compaction.ts's rows) it is 1-7 % larger; on text it is smaller (below).
      expect(readFileSync(level3.path).equals(readFileSync(level1.path))).toBe(false);
      const text = textRows(rows.length);
      expect((await written(text, { compressionLevel: 3 }, TEXT)).size).toBeLessThan((await written(text, { compressionLevel: 1 }, TEXT)).size);
      for (const f of [level1, level3]) {
        expect(readFileSync(f.path).length).toBe(f.size);
        const { footer } = await readFooter(io.newInputFile(f.path));
        expect(footer.rowGroups.length).toBe(3);
        expect(footer.rowGroups.every((g) => g.columns.every((k) => k.codec === 6))).toBe(true);
        expect(f.splits).toEqual(footer.rowGroups.map(rowGroupStart));
        expect(checkOffsetIndexes(readFileSync(f.path))).toBeGreaterThan(0);
        expect(await readRows(f.path, SIX)).toEqual(rows);
      }
    }
    expect(await readRows(wasm.path, SIX)).toEqual(rows);
  });

  it('leaves other codecs, and ZSTD without a native codec, to parquet-wasm', async () => {
    const rows = sixRows(5_000);
    process.env.PACKICE_ZSTD = 'wasm';
    const a = await written(rows, {});
    const b = await written(rows, { compressionLevel: 9 });
    // parquet-wasm has no level: the same bytes.
    expect(readFileSync(a.path).equals(readFileSync(b.path))).toBe(true);
    process.env.PACKICE_ZSTD = 'auto';
    const snappy = await written(rows, { compression: 'snappy' });
    const { footer } = await readFooter(io.newInputFile(snappy.path));
    expect(footer.rowGroups[0].columns.every((k) => k.codec === 1)).toBe(true);
    expect(await readRows(snappy.path, SIX)).toEqual(rows);
  });
});

describe('table property write.parquet.compression-level', () => {
  it('reaches the data writer (default 3); a level outside zstd is refused', async () => {
    const schema = { schemaId: 0, identifierFieldIds: [], ...TEXT };
    const meta = (properties: Record<string, string>) => newTableMetadata(tempPath('t'), { schema, properties });
    expect(parquetWriteOptions(meta({})).compressionLevel).toBeUndefined();
    expect(parquetWriteOptions(meta({ 'write.parquet.compression-level': '9' })).compressionLevel).toBe(9);
    expect(() => parquetWriteOptions(meta({ 'write.parquet.compression-level': '23' }))).toThrow(/compression-level=23/);
    process.env.PACKICE_ZSTD = NATIVE[0];
    const rows = textRows(60_000);
    const sizes: Record<string, number> = {};
    for (const level of ['1', '3', '']) {
      const [file] = await writeDataFiles(io, meta(level ? { 'write.parquet.compression-level': level } : {}), rows);
      sizes[level] = Number(file.fileSizeInBytes);
      expect(await readRows(file.filePath, TEXT)).toEqual(rows);
    }
    expect(sizes['']).toBe(sizes['3']);
    expect(sizes['3']).toBeLessThan(sizes['1']);
  });
});
