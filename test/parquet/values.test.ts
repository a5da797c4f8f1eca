import * as arrow from 'apache-arrow';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors.js';
import type { StructType } from '../../lib/iceberg/types.js';
import type { Row } from '../../lib/iceberg/values.js';
import { openParquet } from '../../lib/parquet/reader.js';
import { batchFromRows, readVector, rowsFromBatch } from '../../lib/parquet/values.js';
import { ParquetWriter } from '../../lib/parquet/writer.js';
import { ALL_TYPES, io, readRows, rowArbitrary, tempPath } from './helpers.js';

const MAX38 = 10n ** 38n - 1n;

const ROWS: Row[] = [
  {
    id: 1n, b: true, i: -2147483648, f: -0, d: Number.NaN, dec9: 1420n, dec18: -(10n ** 18n - 1n), dec38: MAX38,
    date: -719162, time: 86_399_999_999n, ts: -1n, tstz: 1510871468123456n, ts_ns: -(2n ** 63n), tstz_ns: 2n ** 63n - 1n,
    s: 'héllo 😀', u: 'f79c3e09-677c-4bbd-a479-3f349cb785e7', fx: Uint8Array.of(0, 127, 255), bin: Uint8Array.of(),
    st: { a: 7, inner: { z: 'deep' } }, l: [1n, null, -3n], m: [['k1', { v: 1.5 }], ['k2', null]], ll: [[1, 2], [], [3]],
  },
  {
    id: 2n, b: false, i: 2147483647, f: Math.fround(3.4e38), d: Number.NEGATIVE_INFINITY, dec9: -999999999n, dec18: 0n, dec38: -MAX38,
    date: 2932896, time: 0n, ts: 253402300799999999n, tstz: 0n, ts_ns: 1n, tstz_ns: -1n,
    s: '', u: '00000000-0000-0000-0000-000000000000', fx: Uint8Array.of(1, 2, 3), bin: Uint8Array.of(0, 0xff),
    st: { a: -1, inner: null }, l: [], m: [], ll: [],
  },
  {
    id: 3n, b: null, i: null, f: null, d: null, dec9: null, dec18: null, dec38: null, date: null, time: null, ts: null, tstz: null,
    ts_ns: null, tstz_ns: null, s: null, u: null, fx: null, bin: null, st: null, l: null, m: null, ll: null,
  },
];

describe('rows → Arrow → Parquet → Arrow → rows', () => {
  it('round-trips every type, nested types and nulls, with field ids on every field', async () => {
    const path = tempPath('all.parquet');
    const w = ParquetWriter.open(io, path, ALL_TYPES);
    await w.writeRows(ROWS);
    await w.close();
    expect(await readRows(path, ALL_TYPES)).toEqual(ROWS);

    const file = await openParquet(io, path);
    file.close();
    expect([...file.fieldIds.byPath]).toEqual([
      ['id', 1], ['b', 2], ['i', 3], ['f', 4], ['d', 5], ['dec9', 6], ['dec18', 7], ['dec38', 8], ['date', 9], ['time', 10],
      ['ts', 11], ['tstz', 12], ['ts_ns', 13], ['tstz_ns', 14], ['s', 15], ['u', 16], ['fx', 17], ['bin', 18],
      ['st', 19], ['st.a', 20], ['st.inner', 21], ['st.inner.z', 22], ['l', 23], ['l.element', 24],
      ['m', 25], ['m.key', 26], ['m.value', 27], ['m.value.v', 28], ['ll', 29], ['ll.element', 30], ['ll.element.element', 31],
    ]);
    expect(file.fieldIds.missing).toEqual([]);
  });

  it('keeps -0.0, NaN and infinities bit for bit', async () => {
    const path = tempPath('floats.parquet');
    const schema: StructType = { type: 'struct', fields: [{ id: 1, name: 'd', required: false, type: { type: 'double' } }] };
    const values = [-0, 0, Number.NaN, Number.POSITIVE_INFINITY, Number.MIN_VALUE, -Number.MAX_VALUE];
    const w = ParquetWriter.open(io, path, schema);
    await w.writeRows(values.map((d) => ({ d })));
    await w.close();
    const back = (await readRows(path, schema)).map((r) => r.d as number);
    back.forEach((v, i) => expect(Object.is(v, values[i])).toBe(true));
  });

  it('round-trips decimals at every storage width (INT32, INT64, fixed)', async () => {
    const precisions = [1, 2, 9, 10, 18, 19, 28, 38];
    const schema: StructType = {
      type: 'struct',
      fields: precisions.map((p, k) => ({ id: k + 1, name: `p${p}`, required: false, type: { type: 'decimal', precision: p, scale: Math.min(p, 3) } })),
    };
    const max = (p: number): bigint => 10n ** BigInt(p) - 1n;
    const rows: Row[] = [
      Object.fromEntries(precisions.map((p) => [`p${p}`, max(p)])),
      Object.fromEntries(precisions.map((p) => [`p${p}`, -max(p)])),
      Object.fromEntries(precisions.map((p) => [`p${p}`, 0n])),
    ];
    const path = tempPath('decimals.parquet');
    const w = ParquetWriter.open(io, path, schema);
    await w.writeRows(rows);
    await w.close();
    expect(await readRows(path, schema)).toEqual(rows);
  });

  it('round-trips random rows of every type (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(rowArbitrary(ALL_TYPES), { minLength: 1, maxLength: 30 }), async (rows) => {
        const path = tempPath('prop.parquet');
        const w = ParquetWriter.open(io, path, ALL_TYPES);
        await w.writeRows(rows);
        await w.close();
        expect(await readRows(path, ALL_TYPES)).toEqual(rows);
      }),
      { numRuns: 25 },
    );
  });
});

describe('reading with the table schema', () => {
  it('matches columns by field id, applies promotions and fills missing columns with initial defaults', async () => {
    const path = tempPath('old.parquet');
    const written: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'n', required: true, type: { type: 'int' } },
        { id: 2, name: 'x', required: false, type: { type: 'float' } },
        { id: 3, name: 'day', required: false, type: { type: 'date' } },
      ],
    };
    const w = ParquetWriter.open(io, path, written);
    await w.writeRows([{ n: 5, x: 1.5, day: 1 }, { n: -6, x: null, day: -1 }]);
    await w.close();

    const table: StructType = {
      type: 'struct',
      fields: [
        { id: 3, name: 'when', required: false, type: { type: 'timestamp' } },
        { id: 1, name: 'renamed', required: true, type: { type: 'long' } },
        { id: 2, name: 'x', required: false, type: { type: 'double' } },
        { id: 9, name: 'added', required: false, type: { type: 'string' }, initialDefault: 'dflt' },
        { id: 10, name: 'added_null', required: false, type: { type: 'long' } },
      ],
    };
    expect(await readRows(path, table)).toEqual([
      { when: 86_400_000_000n, renamed: 5n, x: 1.5, added: 'dflt', added_null: null },
      { when: -86_400_000_000n, renamed: -6n, x: null, added: 'dflt', added_null: null },
    ]);
  });

  it('reads Arrow columns the Arrow JS getters would damage: µs timestamps and decimals', () => {
    const schema: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 't', required: false, type: { type: 'timestamptz' } },
        { id: 2, name: 'n', required: false, type: { type: 'decimal', precision: 38, scale: 0 } },
      ],
    };
    const batch = batchFromRows(schema, [{ t: 1_700_000_000_123_457n, n: -(2n ** 100n) }]);
    // Arrow JS's own getter returns milliseconds as a float: the microseconds would be lost.
    expect(batch.getChild('t')?.get(0)).toBe(1_700_000_000_123.457);
    expect(readVector(schema.fields[0].type, batch.getChild('t') as arrow.Vector)).toEqual([1_700_000_000_123_457n]);
    expect(rowsFromBatch(batch, schema)).toEqual([{ t: 1_700_000_000_123_457n, n: -(2n ** 100n) }]);
  });

  it('makes plain (not dictionary-encoded) string columns and the schema.ts types', () => {
    const batch = batchFromRows(ALL_TYPES, [ROWS[0]]);
    expect(batch.getChild('s')?.type.typeId).toBe(arrow.Type.Utf8);
    expect(String(batch.schema.fields.find((f) => f.name === 'ts_ns')?.type)).toBe('Timestamp<NANOSECOND>');
    expect(String(batch.schema.fields.find((f) => f.name === 'tstz')?.type)).toBe('Timestamp<MICROSECOND, UTC>');
  });

  it('rejects values that do not fit, naming the column', () => {
    const schema: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'req', required: true, type: { type: 'int' } },
        { id: 2, name: 'dec', required: false, type: { type: 'decimal', precision: 3, scale: 1 } },
        { id: 3, name: 'st', required: false, type: { type: 'struct', fields: [{ id: 4, name: 'q', required: true, type: { type: 'int' } }] } },
      ],
    };
    expect(() => batchFromRows(schema, [{ req: null, dec: null, st: null }])).toThrow(ValidationError);
    expect(() => batchFromRows(schema, [{ req: 1, dec: 1000n, st: null }])).toThrow(/dec: invalid decimal\(3, 1\) value 1000n: does not fit precision 3/);
    expect(() => batchFromRows(schema, [{ req: 1, dec: null, st: { q: null } }])).toThrow(/st.q: required field is null at row 0/);
    // A required child under a null struct is fine.
    expect(batchFromRows(schema, [{ req: 1, dec: null, st: null }]).numRows).toBe(1);
    expect(() => batchFromRows(schema, [{ req: 'x', dec: null, st: null }])).toThrow(/req: invalid int value "x"/);
  });
});
