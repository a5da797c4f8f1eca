/**
 * One-field equality keys probed by value (lib/table/delete-filter.ts singleFieldKeys): wherever it
 * answers, it answers what printing the value and looking its key up (equalityKey) answers, for
 * bigints, safe and unsafe integers, -0 (apart from 0), NaN, floats, strings of any code points and null; and it
 * answers for every bigint, string, null and safe integer (the probe is what keeps the scan off printing);
 * and a long or int key column probed from its Arrow values in place (markKeys) marks the rows that
 * probing each value marks, nulls, sliced columns and null structs above the key included.
 */
import * as arrow from 'apache-arrow';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { equalityKey, keyColumn, keyData, markKeys, singleFieldKeys } from '../../lib/table/delete-filter.js';
import type { StructType } from '../../lib/iceberg/types.js';

const value: fc.Arbitrary<unknown> = fc.oneof(
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.bigInt({ min: -20n, max: 20n }),
  fc.integer({ min: -20, max: 20 }),
  fc.maxSafeInteger(),
  fc.double(),
  fc.constantFrom(-0, Number.NaN, 2 ** 53, 2 ** 53 + 2, -(2 ** 60), 1e21, 0.5, null, undefined, Number.POSITIVE_INFINITY),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom('', '"', '\\', '\ud800', '[1]', '1', 'null', 'a"b', '\u0000'),
  fc.boolean(),
);

const kind = (v: unknown): boolean => typeof v === 'bigint' || typeof v === 'string' || v === null || v === undefined || (typeof v === 'number' && Number.isSafeInteger(v));

describe('single-field equality keys probed by value', () => {
  it('answers, where it answers, what the printed key answers (property)', () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 12 }), fc.array(fc.oneof(value, fc.constantFrom(7, 'a', 5, 1000)), { maxLength: 12 }), fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('007', '-0', '"a" ', ' 5', '"\\u0061"', '5n', '1e3')), { maxLength: 3 }), (deleted, probes, junk) => {
        // Keys as a delete file gives them, and text no value prints to (some of it parsing to a value that prints otherwise).
        const keys = new Set([...deleted.map((v) => equalityKey([v])), ...junk, ...junk.map((j) => `[${j}]`)]);
        // One delete file's keys, and the same split over two files.
        const half = [...keys].filter((_, i) => i % 2 === 0);
        const fast = singleFieldKeys([keys]);
        const split = singleFieldKeys([new Set(half), new Set([...keys].filter((k) => !half.includes(k)))]);
        for (const v of [...deleted, ...probes]) {
          const answer = fast.has(v);
          if (kind(v)) expect(answer, String(v)).toBeDefined();
          if (answer !== undefined) expect(answer, `${typeof v} ${String(v)}`).toBe(keys.has(equalityKey([v])));
          expect(split.has(v), `split: ${typeof v} ${String(v)}`).toBe(answer);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('prints bigint and integral numbers alike, and -0 apart from 0 (Java: Double.compare)', () => {
    const fast = singleFieldKeys([new Set([equalityKey([5n]), equalityKey([0]), equalityKey([2n ** 60n]), equalityKey(['x'])])]);
    expect([fast.has(5), fast.has(5n), fast.has(-0), fast.has(0), fast.has(0n), fast.has(2n ** 60n), fast.has('x'), fast.has('y'), fast.has(null)]).toEqual([
      true, true, false, true, true, true, true, false, false,
    ]);
    const negative = singleFieldKeys([new Set([equalityKey([-0])])]);
    expect([negative.has(-0), negative.has(0), negative.has(0n)]).toEqual([true, false, false]);
    // Every NaN is one key, whatever its bits; left to the printed key.
    const nanBits = new Float64Array(new BigUint64Array([0xfff8000000000001n]).buffer)[0];
    expect(equalityKey([nanBits])).toBe(equalityKey([Number.NaN]));
    expect(singleFieldKeys([new Set([equalityKey([Number.NaN])])]).has(Number.NaN)).toBeUndefined();
    // 2^60 as a number is not safe: left to the printed key.
    expect(fast.has(2 ** 60)).toBeUndefined();
    expect(singleFieldKeys([new Set([equalityKey([null])])]).has(undefined)).toBe(true);
  });
});

describe('long and int keys probed from their Arrow values (markKeys)', () => {
  const schemaOf = (type: 'long' | 'int', nested: boolean): StructType => {
    const key = { id: 1, name: 'k', required: false, type: { type } } as StructType['fields'][number];
    return { type: 'struct', fields: nested ? [{ id: 2, name: 's', required: false, type: { type: 'struct', fields: [key] } }] : [key] };
  };
  const batchOf = (type: 'long' | 'int', values: (bigint | null)[], structNulls: boolean[] | undefined, offset: number): arrow.RecordBatch => {
    const arrowType = type === 'long' ? new arrow.Int64() : new arrow.Int32();
    const column = arrow.vectorFromArray(type === 'long' ? values : values.map((v) => (v === null ? null : Number(v))), arrowType as arrow.DataType);
    let data = column.data[0];
    if (structNulls) {
      const field = new arrow.Field('k', arrowType, true);
      const struct = new arrow.Struct([field]);
      const bitmap = new Uint8Array((values.length + 7) >> 3);
      structNulls.forEach((isNull, i) => { if (!isNull) bitmap[i >> 3] |= 1 << (i & 7); });
      data = arrow.makeData({ type: struct, length: values.length, nullBitmap: bitmap, nullCount: structNulls.filter(Boolean).length, children: [data] }) as arrow.Data;
    }
    const table = new arrow.Table({ [structNulls ? 's' : 'k']: arrow.makeVector(data) });
    const batch = table.batches[0];
    // Sliced: values and validity bits then start at an offset.
    return batch.slice(offset, values.length);
  };

  it('marks what probing each value marks (property)', () => {
    const key = (type: 'long' | 'int'): fc.Arbitrary<bigint> => type === 'long'
      ? fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: -5n, max: 5n }), fc.constantFrom(2n ** 32n, -(2n ** 32n), 2n ** 31n))
      : fc.oneof(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map(BigInt), fc.bigInt({ min: -5n, max: 5n }));
    fc.assert(
      fc.property(fc.constantFrom<'long' | 'int'>('long', 'int'), fc.boolean(), fc.nat({ max: 3 }), fc.boolean(), fc.integer(), (type, nested, offset, nullKey, seed) => {
        const rnd = fc.sample(fc.tuple(
          fc.array(fc.option(key(type), { freq: 5 }), { minLength: offset + 1, maxLength: 40 }),
          fc.array(fc.oneof(key(type), fc.bigInt({ min: 2n ** 63n, max: 2n ** 64n + 5n })), { maxLength: 10 }),
        ), { seed, numRuns: 1 })[0];
        const [values, extra] = rnd;
        const deleted = [...values.filter((_, i) => i % 3 === 0 && values[i] !== null), ...extra];
        const keys = singleFieldKeys([new Set([...deleted.map((v) => equalityKey([v])), ...(nullKey ? [equalityKey([null])] : [])])]);
        const schema = schemaOf(type, nested);
        const structNulls = nested ? values.map((_, i) => i % 5 === 4) : undefined;
        const batch = batchOf(type, values, structNulls, offset);
        const n = batch.numRows;
        const preset = new Uint8Array(n);
        if (n > 0) preset[0] = 1;
        const marked = markKeys({ type }, keyData(schema, 1).of(batch), keys, n, n > 0 ? preset.slice() : undefined);
        // An empty column has no values buffer: left to the probe by value.
        if (n > 0) expect(marked).not.toBe(false);
        const byValue = keyColumn(schema, 1)(batch);
        const expected = byValue.map((v, i) => (preset[i] === 1 || keys.has(v) === true ? 1 : 0));
        expect(Array.from((marked || new Uint8Array(n)) as Uint8Array)).toEqual(expected);
      }),
      { numRuns: 400 },
    );
  });

  it('leaves to the probe by value a long column without a values buffer of its length (all null)', () => {
    const schema: StructType = { type: 'struct', fields: [{ id: 1, name: 'k', required: false, type: { type: 'long' } }] };
    const data = arrow.makeData({ type: new arrow.Int64(), length: 3, nullCount: 3, nullBitmap: new Uint8Array(1) });
    const batch = new arrow.Table({ k: arrow.makeVector(data) }).batches[0];
    expect(markKeys({ type: 'long' }, keyData(schema, 1).of(batch), singleFieldKeys([new Set([equalityKey([null])])]), 3, undefined)).toBe(false);
  });

  it('leaves other key types to the probe by value', () => {
    const schema: StructType = { type: 'struct', fields: [{ id: 1, name: 'k', required: false, type: { type: 'string' } }] };
    const batch = new arrow.Table({ k: arrow.vectorFromArray(['a', 'b']) }).batches[0];
    expect(markKeys({ type: 'string' }, keyData(schema, 1).of(batch), singleFieldKeys([new Set([equalityKey(['a'])])]), 2, undefined)).toBe(false);
  });
});
