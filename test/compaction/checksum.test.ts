import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { batchHasher, hashRow, proofHasher, proofSchema, rowHasher, RowSetChecksum } from '../../lib/compaction/checksum.js';
import type { Schema } from '../../lib/iceberg/schema.js';
import type { StructType } from '../../lib/iceberg/types.js';
import type { Row } from '../../lib/iceberg/values.js';

const SCHEMA: Schema = {
  type: 'struct',
  schemaId: 0,
  identifierFieldIds: [],
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'name', required: false, type: { type: 'string' } },
    { id: 3, name: 'score', required: false, type: { type: 'double' } },
    { id: 4, name: 'raw', required: false, type: { type: 'binary' } },
    {
      id: 5,
      name: 'point',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 6, name: 'x', required: false, type: { type: 'int' } },
          { id: 7, name: 'y', required: false, type: { type: 'int' } },
        ],
      },
    },
    { id: 8, name: 'tags', required: false, type: { type: 'list', elementId: 9, elementRequired: false, element: { type: 'string' } } },
    {
      id: 10,
      name: 'attrs',
      required: false,
      type: { type: 'map', keyId: 11, key: { type: 'string' }, valueId: 12, valueRequired: false, value: { type: 'decimal', precision: 38, scale: 0 } },
    },
  ],
};

function row(i: number): Row {
  return {
    id: BigInt(i),
    name: `n${i}`,
    score: i * 0.5,
    raw: Uint8Array.of(i & 0xff, 1, 2),
    point: { x: i, y: -i },
    tags: ['a', `t${i}`],
    attrs: [['k', BigInt(i) * 10n ** 30n]],
  };
}

// Recorded from this implementation: a change here changes every checksum in flight.
const PINNED = '2ef69a50a53a8a37';

describe('row hash', () => {
  const hash = rowHasher(SCHEMA);

  it('is a pinned 64-bit value (changing the encoding changes every stored checksum)', () => {
    expect(hashRow(hash, row(1)).toString(16).padStart(16, '0')).toBe(PINNED);
    expect(hashRow(hash, row(1))).toBe(hashRow(hash, row(1)));
  });

  it('does not depend on the column order, only on field ids', () => {
    const reversed: StructType = {
      type: 'struct',
      fields: [...SCHEMA.fields].reverse().map((f) =>
        f.type.type === 'struct' ? { ...f, type: { ...f.type, fields: [...f.type.fields].reverse() } } : f,
      ),
    };
    expect(hashRow(rowHasher(reversed), row(7))).toBe(hashRow(hash, row(7)));
  });

  it('tells apart values that print alike', () => {
    const base = row(3);
    const variants: Row[] = [
      { ...base, name: null },
      { ...base, name: '' },
      { ...base, score: -0 },
      { ...base, score: null },
      { ...base, raw: Uint8Array.of(3, 1, 2, 0) },
      { ...base, point: null },
      { ...base, point: { x: 3, y: null } },
      { ...base, tags: ['at3'] },
      { ...base, tags: ['a', 't3', null] },
      { ...base, attrs: [] },
      { ...base, attrs: [['k', -(3n * 10n ** 30n)]] },
      { ...base, id: 3n + 2n ** 32n },
    ];
    const hashes = new Set([hashRow(hash, base), ...variants.map((v) => hashRow(hash, v))]);
    expect(hashes.size).toBe(variants.length + 1);
  });

  it('hashes an int promoted to long like the long, and one NaN for all NaNs', () => {
    const asInt: StructType = { type: 'struct', fields: [{ id: 1, name: 'v', required: false, type: { type: 'int' } }] };
    const asLong: StructType = { type: 'struct', fields: [{ id: 1, name: 'v', required: false, type: { type: 'long' } }] };
    expect(hashRow(rowHasher(asInt), { v: -5 })).toBe(hashRow(rowHasher(asLong), { v: -5n }));
    const dbl: StructType = { type: 'struct', fields: [{ id: 1, name: 'v', required: false, type: { type: 'double' } }] };
    const nan2 = new Float64Array(new BigUint64Array([0x7ff8000000000001n]).buffer)[0];
    expect(hashRow(rowHasher(dbl), { v: nan2 })).toBe(hashRow(rowHasher(dbl), { v: Number.NaN }));
  });

  it('over identifier fields ignores the other columns, and finds nested ones', () => {
    const byId = rowHasher(SCHEMA, [1, 6]);
    expect(hashRow(byId, { ...row(4), name: 'other', tags: null })).toBe(hashRow(byId, row(4)));
    expect(hashRow(byId, { ...row(4), point: { x: 99, y: -4 } })).not.toBe(hashRow(byId, row(4)));
    expect(() => rowHasher(SCHEMA, [42])).toThrow(/field id 42/);
  });

  it('sets every output bit about half the time (well mixed)', () => {
    const small: StructType = { type: 'struct', fields: [{ id: 1, name: 'id', required: true, type: { type: 'long' } }] };
    const h = rowHasher(small);
    const n = 20_000;
    const ones = new Array<number>(64).fill(0);
    const seen = new Set<bigint>();
    for (let i = 0; i < n; i++) {
      const x = hashRow(h, { id: BigInt(i) });
      seen.add(x);
      for (let b = 0; b < 64; b++) if ((x >> BigInt(b)) & 1n) ones[b]++;
    }
    expect(seen.size).toBe(n);
    for (const c of ones) expect(Math.abs(c / n - 0.5)).toBeLessThan(0.02);
  });
});

describe('proof hasher', () => {
  it('includes the row lineage columns in v3', () => {
    const h = proofHasher(SCHEMA, true);
    const a = { ...row(1), _row_id: 10n, _last_updated_sequence_number: 3n };
    expect(hashRow(h, a)).not.toBe(hashRow(h, { ...a, _row_id: 11n }));
    expect(hashRow(h, a)).not.toBe(hashRow(h, { ...a, _last_updated_sequence_number: null }));
    expect(proofSchema(SCHEMA, true).fields.map((f) => f.id).slice(-2)).toEqual([2147483540, 2147483539]);
  });

  it('hashes only identifier fields (plus lineage) when the schema has them', () => {
    const withIds: Schema = { ...SCHEMA, identifierFieldIds: [1] };
    const h = proofHasher(withIds, true);
    const a = { ...row(1), _row_id: 10n, _last_updated_sequence_number: 3n };
    expect(hashRow(h, { ...a, name: 'changed' })).toBe(hashRow(h, a));
    expect(hashRow(h, { ...a, _row_id: 12n })).not.toBe(hashRow(h, a));
    expect(hashRow(proofHasher(withIds, false), { ...a, _row_id: 12n })).toBe(hashRow(proofHasher(withIds, false), a));
  });
});

describe('row set checksum', () => {
  it('is the sum of the row hashes mod 2^64, whatever the order', () => {
    const hash = rowHasher(SCHEMA);
    fc.assert(
      fc.property(
        fc
          .array(fc.integer({ min: -1000, max: 1000 }), { maxLength: 60 })
          .chain((ids) => fc.tuple(fc.constant(ids), fc.shuffledSubarray(ids, { minLength: ids.length, maxLength: ids.length }))),
        ([ids, permuted]) => {
          const rows = ids.map(row);
          const a = new RowSetChecksum(hash);
          a.addAll(rows);
          let expected = 0n;
          for (const r of rows) expected = (expected + hashRow(hash, r)) % 2n ** 64n;
          expect(a.sum).toBe(expected);
          expect(a.hex).toBe(expected.toString(16).padStart(16, '0'));
          expect(a.count).toBe(rows.length);
          const b = new RowSetChecksum(hash);
          b.addAll(permuted.map(row));
          expect(b.hex).toBe(a.hex);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('changes when a row is lost or duplicated', () => {
    const hash = rowHasher(SCHEMA);
    const all = new RowSetChecksum(hash);
    all.addAll([row(1), row(2), row(3)]);
    const lost = new RowSetChecksum(hash);
    lost.addAll([row(1), row(3)]);
    const dup = new RowSetChecksum(hash);
    dup.addAll([row(1), row(2), row(3), row(3)]);
    expect(new Set([all.hex, lost.hex, dup.hex]).size).toBe(3);
    expect(new RowSetChecksum(hash).hex).toBe('0000000000000000');
  });
});

describe('batch hasher (column-wise)', () => {
  const WIDE: StructType = {
    type: 'struct',
    fields: [
      ...SCHEMA.fields,
      { id: 20, name: 'flag', required: false, type: { type: 'boolean' } },
      { id: 21, name: 'day', required: false, type: { type: 'date' } },
      { id: 22, name: 'ts', required: false, type: { type: 'timestamptz' } },
      { id: 23, name: 'amount', required: false, type: { type: 'decimal', precision: 38, scale: 2 } },
      { id: 24, name: 'u', required: false, type: { type: 'uuid' } },
      { id: 25, name: 'f', required: false, type: { type: 'float' } },
      { id: 26, name: 'fx', required: false, type: { type: 'fixed', length: 3 } },
      { id: 27, name: 'gone', required: false, type: { type: 'unknown' } },
      {
        id: 28,
        name: 'deep',
        required: false,
        type: { type: 'struct', fields: [{ id: 29, name: 'inner', required: false, type: { type: 'struct', fields: [{ id: 30, name: 'v', required: false, type: { type: 'string' } }] } }] },
      },
    ],
  };
  const UNICODE = ['', 'a', 'ab', 'abc', 'é', 'naïve', '日本語', '😀x', null];
  // All ASCII: the fused string loop (ids and values in one pass) takes these.
  const ASCII = ['', 'a', 'ab', 'abc', 'abcd', 'hello world', null];
  const wideRow = (i: number, texts: ReadonlyArray<string | null> = UNICODE): Row => {
    const base = row(i);
    const nul = i % 7 === 3;
    return {
      ...base,
      name: texts[i % texts.length],
      score: i % 5 === 0 ? Number.NaN : i % 5 === 1 ? -0 : base.score,
      point: nul ? null : { x: i % 3 === 0 ? null : i, y: -i },
      flag: nul ? null : i % 2 === 0,
      day: nul ? null : -i * 3,
      ts: nul ? null : BigInt(i) * 1_000_000_007n - 5_000_000_000n,
      amount: i % 4 === 0 ? -(10n ** 30n) * BigInt(i) - 7n : i % 4 === 1 ? null : BigInt(-i * 12345),
      u: nul ? null : `0000000${i % 10}-0000-4000-8000-00000000000${i % 10}`,
      f: nul ? null : Math.fround(i / 3),
      fx: nul ? null : Uint8Array.of(i & 0xff, 2, 3),
      gone: null,
      deep: i % 6 === 0 ? null : { inner: i % 6 === 1 ? null : { v: texts[(i + 2) % texts.length] } },
    };
  };

  it.each([
    ['non-ASCII', UNICODE],
    ['ASCII', ASCII],
  ])('adds exactly what the row hasher adds, for every type, nulls and %s text', async (_, texts) => {
    const { batchFromRows } = await import('../../lib/parquet/values.js');
    const rows = Array.from({ length: 120 }, (_, i) => wideRow(i, texts));
    const batch = batchFromRows(WIDE, rows);
    for (const ids of [undefined, [1], [30, 6, 22], [23, 27, 2]]) {
      const byRows = new RowSetChecksum(rowHasher(WIDE, ids));
      byRows.addAll(rows);
      const byColumns = new RowSetChecksum(rowHasher(WIDE, ids));
      batchHasher(WIDE, ids)(batch, byColumns);
      expect(byColumns.count).toBe(rows.length);
      expect(byColumns.hex).toBe(byRows.hex);
      // And on a slice (offsets into the buffers and the validity bitmaps).
      const part = new RowSetChecksum(rowHasher(WIDE, ids));
      part.addAll(rows.slice(13, 77));
      const sliced = new RowSetChecksum(rowHasher(WIDE, ids));
      batchHasher(WIDE, ids)(batch.slice(13, 77), sliced);
      expect(sliced.hex).toBe(part.hex);
    }
  });
  it('adds what the row hasher adds for random rows, one hasher over batches of every size', async () => {
    const { batchFromRows } = await import('../../lib/parquet/values.js');
    const text = fc.array(fc.constantFrom('a', 'b', 'é', '日', '😀', '\u0000', '\u007f'), { maxLength: 9 }).map((cs) => cs.join(''));
    const struct: StructType = {
      type: 'struct',
      fields: [
        { id: 3, name: 's', required: false, type: { type: 'string' } },
        { id: 1, name: 'l', required: false, type: { type: 'long' } },
        { id: 2, name: 'd', required: false, type: { type: 'decimal', precision: 38, scale: 2 } },
        { id: 4, name: 'x', required: false, type: { type: 'double' } },
        { id: 5, name: 'i', required: false, type: { type: 'int' } },
        { id: 6, name: 't', required: false, type: { type: 'timestamptz' } },
      ],
    };
    const value = fc.record({
      s: fc.option(text),
      l: fc.option(fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n)),
      d: fc.option(fc.oneof(fc.bigInt(-(2n ** 64n), 2n ** 64n), fc.constantFrom(-(2n ** 63n), 2n ** 63n - 1n, 2n ** 63n, -(2n ** 63n) - 1n))),
      x: fc.option(fc.oneof(fc.double(), fc.constantFrom(Number.NaN, -0, 0))),
      i: fc.option(fc.integer()),
      t: fc.option(fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n)),
    });
    for (const ids of [undefined, [3], [2, 4]]) {
      const hash = batchHasher(struct, ids);
      fc.assert(
        fc.property(fc.array(fc.array(value, { maxLength: 50 }), { maxLength: 4 }), (batches) => {
          const byRows = new RowSetChecksum(rowHasher(struct, ids));
          const byColumns = new RowSetChecksum(rowHasher(struct, ids));
          for (const rows of batches) {
            byRows.addAll(rows as Row[]);
            hash(batchFromRows(struct, rows as Row[]), byColumns);
          }
          expect(byColumns.count).toBe(byRows.count);
          expect(byColumns.hex).toBe(byRows.hex);
        }),
        { numRuns: 100 },
      );
    }
  });

  it('hashes any NaN payload in a double column as the one NaN', async () => {
    const { batchFromRows } = await import('../../lib/parquet/values.js');
    const dbl: StructType = { type: 'struct', fields: [{ id: 1, name: 'v', required: false, type: { type: 'double' } }] };
    const rows: Row[] = [{ v: Number.NaN }, { v: 1.5 }, { v: Number.NaN }, { v: Number.POSITIVE_INFINITY }];
    const batch = batchFromRows(dbl, rows);
    const words = new BigUint64Array((batch.data.children[0].values as Float64Array).buffer, (batch.data.children[0].values as Float64Array).byteOffset, 4);
    words[0] = 0x7ff8000000000001n;
    words[2] = 0xfff0000000000123n;
    const byRows = new RowSetChecksum(rowHasher(dbl));
    byRows.addAll(rows);
    const byColumns = new RowSetChecksum(rowHasher(dbl));
    batchHasher(dbl)(batch, byColumns);
    expect(byColumns.hex).toBe(byRows.hex);
  });

  it('carries the sum right over a batch of more than 2^20 rows', async () => {
    const { batchFromRows } = await import('../../lib/parquet/values.js');
    const ints: StructType = { type: 'struct', fields: [{ id: 1, name: 'v', required: true, type: { type: 'int' } }] };
    const rows: Row[] = Array.from({ length: 2 ** 20 + 3 }, (_, i) => ({ v: i }));
    const byRows = new RowSetChecksum(rowHasher(ints));
    byRows.addAll(rows);
    const byColumns = new RowSetChecksum(rowHasher(ints));
    batchHasher(ints)(batchFromRows(ints, rows), byColumns);
    expect(byColumns.count).toBe(rows.length);
    expect(byColumns.hex).toBe(byRows.hex);
  });
});
