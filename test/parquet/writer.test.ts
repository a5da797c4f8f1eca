import * as arrow from 'apache-arrow';
import { openAsBlob, statSync } from 'node:fs';
import * as pw from 'parquet-wasm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors.js';
import { metricsConfigFromProperties } from '../../lib/iceberg/metrics-config.js';
import { compareValues, fromBytes } from '../../lib/iceberg/bounds.js';
import { isPrimitive, type PrimitiveType, type StructType } from '../../lib/iceberg/types.js';
import type { Row } from '../../lib/iceberg/values.js';
import { footerFromBytes, rowGroupStart } from '../../lib/parquet/footer.js';
import { openParquet } from '../../lib/parquet/reader.js';
import { arrowSchema } from '../../lib/parquet/schema.js';
import { batchFromRows } from '../../lib/parquet/values.js';
import { ParquetWriter, RollingParquetWriter } from '../../lib/parquet/writer.js';
import { ALL_TYPES, hex, io, readRows, rowArbitrary, tempPath } from './helpers.js';

const SCHEMA: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 's', required: false, type: { type: 'string' } },
    { id: 3, name: 'f', required: false, type: { type: 'float' } },
    { id: 4, name: 'd', required: false, type: { type: 'double' } },
    { id: 5, name: 'dec', required: false, type: { type: 'decimal', precision: 9, scale: 2 } },
    { id: 6, name: 'u', required: false, type: { type: 'uuid' } },
    { id: 7, name: 'b', required: false, type: { type: 'binary' } },
    {
      id: 8,
      name: 'st',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 9, name: 'a', required: true, type: { type: 'int' } },
          { id: 10, name: 'n', required: false, type: { type: 'struct', fields: [{ id: 11, name: 'z', required: false, type: { type: 'string' } }] } },
        ],
      },
    },
    { id: 12, name: 'l', required: false, type: { type: 'list', elementId: 13, elementRequired: false, element: { type: 'int' } } },
    { id: 14, name: 'm', required: false, type: { type: 'map', keyId: 15, key: { type: 'string' }, valueId: 16, valueRequired: false, value: { type: 'long' } } },
    { id: 17, name: 'flag', required: false, type: { type: 'boolean' } },
    { id: 18, name: 'ts', required: false, type: { type: 'timestamptz' } },
    { id: 19, name: 'fx', required: false, type: { type: 'fixed', length: 4 } },
    { id: 20, name: 'gone', required: false, type: { type: 'unknown' } },
  ],
};

const A20 = 'a'.repeat(20);
const ROWS: Row[] = [
  { id: 1n, s: A20, f: Number.NaN, d: Number.NaN, dec: 1420n, u: 'ffffffff-0000-0000-0000-000000000000', b: Uint8Array.of(0xff, 0xff, 0xff, 1),
    st: { a: 1, n: { z: 'q' } }, l: [1, 2], m: [['k', 1n]], flag: true, ts: 5n, fx: Uint8Array.of(9, 9, 9, 9), gone: null },
  { id: 2n, s: 'b', f: -0, d: Number.NaN, dec: -5n, u: '00000000-0000-0000-0000-000000000001', b: Uint8Array.of(0, 1),
    st: null, l: null, m: null, flag: false, ts: -5n, fx: Uint8Array.of(0, 0, 0, 1), gone: null },
  { id: 3n, s: null, f: 0, d: null, dec: null, u: null, b: null,
    st: { a: 3, n: null }, l: [], m: [], flag: null, ts: null, fx: null, gone: null },
  { id: 4n, s: '😀x', f: 1.5, d: null, dec: 99999n, u: '80000000-0000-0000-0000-000000000000', b: Uint8Array.of(),
    st: { a: 4, n: { z: null } }, l: [3], m: [['j', null]], flag: true, ts: 1_700_000_000_000_000n, fx: Uint8Array.of(1, 2, 3, 4), gone: null },
  { id: 5n, s: 'zz', f: null, d: Number.NaN, dec: 0n, u: '7fffffff-ffff-ffff-ffff-ffffffffffff', b: Uint8Array.of(0xff),
    st: { a: 5, n: { z: 'p' } }, l: [null], m: [['k', 2n], ['l', 3n]], flag: true, ts: 0n, fx: Uint8Array.of(255, 0, 0, 0), gone: null },
];

const le64 = (v: bigint): string => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigInt64(0, v, true);
  return hex(b) as string;
};

describe('metrics from the values written', () => {
  it('equal the values computed by hand (default truncate(16))', async () => {
    const path = tempPath('metrics.parquet');
    const w = ParquetWriter.open(io, path, SCHEMA);
    await w.writeRows(ROWS);
    const { metrics, recordCount, fileSizeInBytes } = await w.close();
    expect(recordCount).toBe(5);
    expect(fileSizeInBytes).toBe(statSync(path).size);

    // Primitive columns at the top level or in structs only; nothing for list/map contents.
    const counted = [1, 2, 3, 4, 5, 6, 7, 9, 11, 17, 18, 19];
    expect([...metrics.valueCounts.keys()].sort((a, b) => a - b)).toEqual(counted);
    for (const id of counted) expect(metrics.valueCounts.get(id)).toBe(5);
    expect(Object.fromEntries(metrics.nullValueCounts)).toEqual({
      1: 0, 2: 1, 3: 1, 4: 2, 5: 1, 6: 1, 7: 1, 9: 1, 11: 3, 17: 1, 18: 1, 19: 1,
    });
    expect(Object.fromEntries(metrics.nanValueCounts)).toEqual({ 3: 1, 4: 3 });

    const lower = Object.fromEntries([...metrics.lowerBounds].map(([k, v]) => [k, hex(v)]));
    const upper = Object.fromEntries([...metrics.upperBounds].map(([k, v]) => [k, hex(v)]));
    expect(lower).toEqual({
      1: le64(1n),
      2: hex(new TextEncoder().encode('a'.repeat(16))), // truncated to 16 code points
      3: '00000080', // -0.0 sorts before +0.0; NaN is never a bound
      5: 'fb', // -5, minimal two's complement
      6: '00000000000000000000000000000001', // unsigned byte order
      7: '', // the empty binary value
      9: '01000000',
      11: hex(new TextEncoder().encode('p')),
      17: '00',
      18: le64(-5n),
      19: '00000001', // fixed is never truncated
    });
    expect(upper).toEqual({
      1: le64(5n),
      2: hex(new TextEncoder().encode('😀x')),
      3: '0000c03f', // 1.5
      5: '01869f', // 99999
      6: 'ffffffff000000000000000000000000',
      7: 'ffffff01',
      9: '05000000',
      11: hex(new TextEncoder().encode('q')),
      17: '01',
      18: le64(1_700_000_000_000_000n),
      19: 'ff000000',
    });
    // All values NaN or null: no bounds for d.
    expect(metrics.lowerBounds.has(4)).toBe(false);

    // Column sizes for every leaf column (list element and map key/value too), matching the footer.
    expect([...metrics.columnSizes.keys()].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 15, 16, 17, 18, 19]);
    const wasm = await pw.ParquetFile.fromFile(await openAsBlob(path));
    const chunks = wasm.metadata().rowGroup(0).columns();
    const byPath = new Map(chunks.map((c) => [c.columnPath().join('.'), c.compressedSize()]));
    wasm.free();
    expect(metrics.columnSizes.get(2)).toBe(byPath.get('s'));
    expect(metrics.columnSizes.get(11)).toBe(byPath.get('st.n.z'));
    expect(metrics.columnSizes.get(15)).toBe(byPath.get('m.key_value.key'));
    expect(metrics.columnSizes.get(13)).toBe(byPath.get('l.list.element'));
  });

  it('agree with the statistics parquet-wasm wrote into the footer', async () => {
    const path = tempPath('stats.parquet');
    const w = ParquetWriter.open(io, path, SCHEMA, { rowGroupRows: 2 });
    await w.writeRows(ROWS);
    const { metrics } = await w.close();
    const footer = footerFromBytes(path, await io.read(path));
    expect(footer.rowGroups.map((g) => g.numRows)).toEqual([2, 2, 1]);
    const sum = (p: string, f: (c: { numValues: number; statistics?: { nullCount?: number } }) => number): number =>
      footer.rowGroups.reduce((s, g) => s + f(g.columns.find((c) => c.path.join('.') === p) as never), 0);
    for (const [id, p] of [[2, 's'], [3, 'f'], [9, 'st.a'], [11, 'st.n.z'], [19, 'fx']] as const) {
      expect(metrics.valueCounts.get(id)).toBe(sum(p, (c) => c.numValues));
      expect(metrics.nullValueCounts.get(id)).toBe(sum(p, (c) => c.statistics?.nullCount ?? -1));
    }
    // The int64 footer minimum of id over all row groups is our lower bound.
    const mins = footer.rowGroups.map((g) => hex(g.columns[0].statistics?.min));
    expect(mins).toEqual([le64(1n), le64(3n), le64(5n)]);
    expect(hex(metrics.lowerBounds.get(1))).toBe(le64(1n));
  });

  it('follow the metrics modes: none, counts, truncate(N), full', async () => {
    const path = tempPath('modes.parquet');
    const metricsConfig = metricsConfigFromProperties(
      {
        'write.metadata.metrics.column.id': 'none',
        'write.metadata.metrics.column.flag': 'counts',
        'write.metadata.metrics.column.s': 'full',
        'write.metadata.metrics.column.b': 'truncate(2)',
        'write.metadata.metrics.column.fx': 'truncate(2)',
        'write.metadata.metrics.column.st.n.z': 'truncate(1)',
      },
      SCHEMA,
    );
    const w = ParquetWriter.open(io, path, SCHEMA, { metricsConfig });
    await w.writeRows(ROWS);
    const { metrics } = await w.close();
    expect(metrics.valueCounts.has(1)).toBe(false);
    expect(metrics.columnSizes.has(1)).toBe(false);
    expect(metrics.lowerBounds.has(1)).toBe(false);
    expect(metrics.valueCounts.get(17)).toBe(5);
    expect(metrics.lowerBounds.has(17)).toBe(false);
    expect(new TextDecoder().decode(metrics.lowerBounds.get(2))).toBe(A20);
    // binary truncate(2): lower ff ff; upper: ff ff cannot be incremented, so it is omitted.
    expect(hex(metrics.lowerBounds.get(7))).toBe('');
    expect(metrics.upperBounds.has(7)).toBe(false);
    expect(hex(metrics.lowerBounds.get(19))).toBe('00000001');
    expect(hex(metrics.upperBounds.get(19))).toBe('ff000000');
    expect(new TextDecoder().decode(metrics.upperBounds.get(11))).toBe('q');
  });

  it('equal counts and bounds computed from the row values, over several batches (property)', async () => {
    const prims = ALL_TYPES.fields.filter((f) => isPrimitive(f.type));
    const metricsConfig = metricsConfigFromProperties({ 'write.metadata.metrics.default': 'full' }, ALL_TYPES);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(rowArbitrary(ALL_TYPES), { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }), async (chunks) => {
        const path = tempPath('metrics-prop.parquet');
        const w = ParquetWriter.open(io, path, ALL_TYPES, { metricsConfig });
        for (const rows of chunks) await w.writeRows(rows);
        const { metrics } = await w.close();
        const rows = chunks.flat();
        for (const f of prims) {
          const type = f.type as PrimitiveType;
          const values = rows.map((r) => r[f.name]).filter((v) => v !== null && !(typeof v === 'number' && Number.isNaN(v)));
          expect(metrics.valueCounts.get(f.id)).toBe(rows.length);
          expect(metrics.nullValueCounts.get(f.id)).toBe(rows.filter((r) => r[f.name] === null).length);
          const sorted = [...values].sort((a, b) => compareValues(type, a, b));
          const bound = (b: Uint8Array | undefined): unknown => (b === undefined ? undefined : fromBytes(type, b));
          expect(bound(metrics.lowerBounds.get(f.id))).toEqual(sorted[0]);
          expect(bound(metrics.upperBounds.get(f.id))).toEqual(sorted[sorted.length - 1]);
        }
      }),
      { numRuns: 20 },
    );
  });

  it('float columns: only NaN gives NaN counts and no bounds; -0.0 and +0.0 bound correctly', async () => {
    const schema: StructType = { type: 'struct', fields: [{ id: 1, name: 'x', required: false, type: { type: 'double' } }] };
    const run = async (xs: Array<number | null>): Promise<[string | undefined, string | undefined, number | undefined]> => {
      const path = tempPath('f.parquet');
      const w = ParquetWriter.open(io, path, schema);
      await w.writeRows(xs.map((x) => ({ x })));
      const { metrics } = await w.close();
      return [hex(metrics.lowerBounds.get(1)), hex(metrics.upperBounds.get(1)), metrics.nanValueCounts.get(1)];
    };
    expect(await run([0, -0])).toEqual(['0000000000000080', '0000000000000000', 0]);
    expect(await run([-0, -0])).toEqual(['0000000000000080', '0000000000000080', 0]);
    expect(await run([Number.NaN, null, Number.NaN])).toEqual([undefined, undefined, 2]);
    expect(await run([Number.NEGATIVE_INFINITY, Number.NaN])).toEqual(['000000000000f0ff', '000000000000f0ff', 1]);
  });
});

describe('ParquetWriter', () => {
  it('reports split offsets at each row group start and the row count', async () => {
    const schema: StructType = { type: 'struct', fields: [{ id: 1, name: 'n', required: true, type: { type: 'long' } }] };
    const path = tempPath('splits.parquet');
    const w = ParquetWriter.open(io, path, schema, { rowGroupRows: 100, compression: 'uncompressed' });
    await w.writeRows(Array.from({ length: 1000 }, (_, k) => ({ n: BigInt(k) })));
    const result = await w.close();
    const footer = footerFromBytes(path, await io.read(path));
    expect(result.rowGroupCount).toBe(10);
    expect(result.splitOffsets).toEqual(footer.rowGroups.map(rowGroupStart));
    expect(result.splitOffsets[0]).toBe(4);
    expect(result.splitOffsets).toEqual([...result.splitOffsets].sort((a, b) => a - b));
    expect(new Set(result.splitOffsets).size).toBe(10);
    const file = await openParquet(io, path);
    file.close();
    expect(file.rowGroups.map((g) => g.startOffset)).toEqual(result.splitOffsets);
    expect(footer.rowGroups.every((g) => g.columns.every((c) => c.codec === 0))).toBe(true);
  });

  it('keeps a dictionary only where it pays for itself (parquet-mr rule), unless told', async () => {
    const schema: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: { type: 'long' } },
        { id: 2, name: 'city', required: false, type: { type: 'string' } },
        { id: 3, name: 'note', required: false, type: { type: 'string' } },
      ],
    };
    const rows = Array.from({ length: 20_000 }, (_, k) => ({ id: BigInt(k), city: `city-${k % 40}`, note: `note-${k}-${(k * 7919) % 10007}` }));
    const dictionaries = async (options: { dictionary?: boolean }): Promise<boolean[]> => {
      const path = tempPath('dict.parquet');
      const w = ParquetWriter.open(io, path, schema, options);
      // Several writes: the choice is made on the first rows of the file, not only its first batch.
      for (let k = 0; k < rows.length; k += 500) await w.writeRows(rows.slice(k, k + 500));
      await w.close();
      expect(await readRows(path, schema)).toEqual(rows);
      const footer = footerFromBytes(path, await io.read(path));
      return footer.rowGroups[0].columns.map((c) => c.dictionaryPageOffset !== undefined);
    };
    expect(await dictionaries({})).toEqual([false, true, false]);
    expect(await dictionaries({ dictionary: true })).toEqual([true, true, true]);
    expect(await dictionaries({ dictionary: false })).toEqual([false, false, false]);
  });

  it('compresses with ZSTD by default and writes field ids, also for Arrow batches written directly', async () => {
    const path = tempPath('zstd.parquet');
    const w = ParquetWriter.open(io, path, SCHEMA);
    // A batch built elsewhere with another field naming (no ids): conformed to the schema.
    const batch = batchFromRows(SCHEMA, ROWS);
    const plain = new arrow.RecordBatch(
      new arrow.Schema(batch.schema.fields.map((f) => new arrow.Field(`x_${f.name}`, f.type, f.nullable))),
      batch.data,
    );
    await w.write(plain);
    await w.close();
    const footer = footerFromBytes(path, await io.read(path));
    expect(footer.rowGroups[0].columns.every((c) => c.codec === 6)).toBe(true);
    expect(footer.schema.filter((e) => e.fieldId !== undefined).map((e) => e.fieldId)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
    ]);
    expect(await readRows(path, SCHEMA)).toEqual(ROWS);
  });

  it('rejects batches that do not fit the schema, naming the column and file', async () => {
    const path = tempPath('bad.parquet');
    const schema: StructType = { type: 'struct', fields: [{ id: 1, name: 'n', required: true, type: { type: 'long' } }] };
    const w = ParquetWriter.open(io, path, schema);
    const ints = arrow.tableFromArrays({ n: new Int32Array([1, 2]) }).batches[0];
    await expect(w.write(ints)).rejects.toThrow(`${path}: column n: the batch holds Arrow Int32, the file needs Int64`);
    const withNull = new arrow.RecordBatch(
      new arrow.Schema([new arrow.Field('n', new arrow.Int64(), true)]),
      arrow.makeData({
        type: new arrow.Struct([new arrow.Field('n', new arrow.Int64(), true)]),
        length: 2,
        nullCount: 0,
        children: [arrow.makeData({ type: new arrow.Int64(), length: 2, nullCount: 1, nullBitmap: Uint8Array.of(1), data: new BigInt64Array(2) })],
      }),
    );
    await expect(w.write(withNull)).rejects.toThrow(ValidationError);
    await expect(w.write(withNull)).rejects.toThrow('column n is required but the batch has 1 null(s)');
    await w.writeRows([{ n: 7n }]);
    expect((await w.close()).recordCount).toBe(1);
  });

  it('joins small batches before the wasm writer: the same bytes as one batch, row groups of the configured size', async () => {
    const schema: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: { type: 'long' } },
        { id: 2, name: 's', required: false, type: { type: 'string' } },
      ],
    };
    const rows = Array.from({ length: 150_000 }, (_, k) => ({ id: BigInt(k), s: k % 11 === 0 ? null : `s-${(k * 7919) % 10007}` }));
    const write = async (name: string, batchRows: number): Promise<Uint8Array> => {
      const path = tempPath(name);
      const w = ParquetWriter.open(io, path, schema, { rowGroupRows: 70_000 });
      const all = batchFromRows(schema, rows);
      for (let k = 0; k < rows.length; k += batchRows) await w.write(all.slice(k, Math.min(rows.length, k + batchRows)));
      const result = await w.close();
      expect(result.recordCount).toBe(rows.length);
      const footer = footerFromBytes(path, await io.read(path));
      expect(footer.rowGroups.map((g) => g.numRows)).toEqual([70_000, 70_000, 10_000]);
      expect(await readRows(path, schema)).toEqual(rows);
      return io.read(path);
    };
    const small = await write('small-batches.parquet', 1_499);
    expect(Buffer.from(small).equals(Buffer.from(await write('one-batch.parquet', rows.length)))).toBe(true);
  });

  it('joins small batches of every type, nulls and nesting included (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(rowArbitrary(ALL_TYPES), { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 5 }), async (chunks) => {
        const path = tempPath('joined.parquet');
        const w = ParquetWriter.open(io, path, ALL_TYPES);
        for (const rows of chunks) await w.writeRows(rows);
        await w.close();
        expect(await readRows(path, ALL_TYPES)).toEqual(chunks.flat());
      }),
      { numRuns: 15 },
    );
  });

  it('abort leaves nothing behind', async () => {
    const path = tempPath('aborted.parquet');
    const schema: StructType = { type: 'struct', fields: [{ id: 1, name: 'n', required: true, type: { type: 'long' } }] };
    const w = ParquetWriter.open(io, path, schema, { rowGroupRows: 100 });
    await w.writeRows(Array.from({ length: 1000 }, (_, k) => ({ n: BigInt(k) })));
    await w.abort();
    expect(await io.exists(path)).toBe(false);
    await expect(w.writeRows([{ n: 1n }])).rejects.toThrow(/closed|aborted/);
  });

  it('writes an empty file that reads back with its schema', async () => {
    const path = tempPath('empty.parquet');
    const result = await ParquetWriter.open(io, path, SCHEMA).close();
    expect(result.recordCount).toBe(0);
    expect(result.splitOffsets).toEqual([]);
    const file = await openParquet(io, path);
    file.close();
    expect(file.numRows).toBe(0);
    expect(file.arrowSchema.fields.map((f) => f.name)).toEqual(arrowSchema(SCHEMA).fields.map((f) => f.name));
    expect(await readRows(path, SCHEMA)).toEqual([]);
  });
});

describe('RollingParquetWriter', () => {
  const schema: StructType = {
    type: 'struct',
    fields: [
      { id: 1, name: 'n', required: true, type: { type: 'long' } },
      { id: 2, name: 's', required: false, type: { type: 'string' } },
      { id: 3, name: 'x', required: false, type: { type: 'double' } },
    ],
  };
  // Pseudo-random but reproducible rows that compress only moderately.
  const rowsOf = (from: number, n: number): Row[] =>
    Array.from({ length: n }, (_, k) => {
      const i = from + k;
      const h = Math.imul(i, 2654435761) >>> 0;
      return { n: BigInt(i), s: `user-${h.toString(36)}-${(h % 977).toString(16)}`, x: (h % 100000) / 7 };
    });

  it('starts a new file at the target size, naming files by the callback', async () => {
    const dir = tempPath('roll');
    const target = 256 * 1024;
    const names: number[] = [];
    const w = new RollingParquetWriter(io, schema, {
      targetFileSizeBytes: target,
      nextPath: (i) => {
        names.push(i);
        return `${dir}/part-${i}.parquet`;
      },
    });
    const total = 200_000;
    for (let from = 0; from < total; from += 25_000) await w.write(batchFromRows(schema, rowsOf(from, 25_000)));
    const files = await w.close();

    expect(files.length).toBeGreaterThanOrEqual(5);
    expect(names).toEqual(files.map((_, i) => i));
    expect(files.reduce((s, f) => s + f.recordCount, 0)).toBe(total);
    for (const f of files.slice(0, -1)) {
      expect(f.fileSizeInBytes).toBeGreaterThan(target * 0.75);
      expect(f.fileSizeInBytes).toBeLessThan(target * 1.25);
    }
    expect(files[files.length - 1].fileSizeInBytes).toBeLessThan(target * 1.25);
    for (const f of files) expect(f.fileSizeInBytes).toBe(statSync(f.path).size);

    // The files hold the rows in order.
    let next = 0;
    for (const f of files) {
      const rows = await readRows(f.path, schema);
      expect(rows).toEqual(rowsOf(next, rows.length));
      next += rows.length;
    }
    expect(next).toBe(total);
  });

  it('writes no file when given no rows, and abort removes finished files', async () => {
    const dir = tempPath('roll2');
    const empty = new RollingParquetWriter(io, schema, { targetFileSizeBytes: 1024, nextPath: (i) => `${dir}/e-${i}.parquet` });
    expect(await empty.close()).toEqual([]);

    const w = new RollingParquetWriter(io, schema, { targetFileSizeBytes: 64 * 1024, nextPath: (i) => `${dir}/a-${i}.parquet` });
    await w.writeRows(rowsOf(0, 30_000));
    expect(w.files.length).toBeGreaterThan(0);
    const paths = w.files.map((f) => f.path);
    await w.abort();
    for (const p of paths) expect(await io.exists(p)).toBe(false);
  });
});
