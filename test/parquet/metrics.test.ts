import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareValues, toBytes } from '../../lib/iceberg/bounds.js';
import { type MetricsConfig } from '../../lib/iceberg/metrics-config.js';
import type { PrimitiveType, StructType } from '../../lib/iceberg/types.js';
import type { IcebergValue, Row } from '../../lib/iceberg/values.js';
import { MetricsCollector } from '../../lib/parquet/metrics.js';
import { batchFromRows } from '../../lib/parquet/values.js';

// The typed-array loops of metrics.ts checked against the plainest reading: sort the values.
const SCHEMA: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 's', required: false, type: { type: 'string' } },
    { id: 2, name: 'b', required: false, type: { type: 'binary' } },
    { id: 3, name: 'd', required: false, type: { type: 'decimal', precision: 38, scale: 2 } },
    { id: 4, name: 'l', required: false, type: { type: 'long' } },
    { id: 5, name: 'i', required: false, type: { type: 'int' } },
    { id: 6, name: 'st', required: false, type: { type: 'struct', fields: [{ id: 7, name: 'v', required: false, type: { type: 'string' } }] } },
    { id: 8, name: 'f', required: false, type: { type: 'double' } },
  ],
};
const FULL: MetricsConfig = { defaultMode: { kind: 'full' }, columnModes: new Map() };

/** Short strings over few letters, many sharing prefixes of 0 to 9 bytes, some non-ASCII. */
const text = fc.array(fc.constantFrom('a', 'b', 'z', 'é', '\u{10000}', '\u{ffff}', '\u0000'), { maxLength: 10 }).map((cs) => cs.join(''));
const decimal = fc.oneof(fc.bigInt(-(2n ** 70n), 2n ** 70n), fc.bigInt(-1000n, 1000n), fc.constantFrom(-(2n ** 63n), 2n ** 63n - 1n, 2n ** 32n, -(2n ** 32n), 0n));
const row = fc.record({
  s: fc.option(text),
  b: fc.option(fc.uint8Array({ maxLength: 9, max: 3 }).map((x) => x.map((v) => (v === 3 ? 0xff : v)))),
  d: fc.option(decimal),
  l: fc.option(fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n)),
  i: fc.option(fc.integer()),
  st: fc.option(fc.record({ v: fc.option(text) })),
  f: fc.option(fc.oneof(fc.double(), fc.constantFrom(0, -0, Number.NaN, -1, 1))),
});

function expected(type: PrimitiveType, values: IcebergValue[]): { lower?: string; upper?: string } {
  // NaN is never a bound.
  const present = values.filter((v) => v !== null && !Number.isNaN(v));
  if (present.length === 0) return {};
  const sorted = [...present].sort((x, y) => compareValues(type, x, y));
  const hex = (v: IcebergValue): string => Buffer.from(toBytes(type, v)).toString('hex');
  return { lower: hex(sorted[0]), upper: hex(sorted[sorted.length - 1]) };
}

describe('column metrics of the values written', () => {
  it('bound every column as sorting its values does, over batches, slices and nulls under structs', () => {
    fc.assert(
      fc.property(fc.array(fc.array(row, { maxLength: 40 }), { minLength: 1, maxLength: 3 }), fc.nat(5), (batches, cut) => {
        const m = new MetricsCollector(SCHEMA, FULL);
        const seen: Row[] = [];
        for (const rows of batches) {
          const batch = batchFromRows(SCHEMA, rows as Row[]);
          // A slice: offsets into the buffers and the validity bitmaps.
          const from = Math.min(cut, rows.length);
          m.add(batch.slice(from));
          seen.push(...(rows as Row[]).slice(from));
        }
        const metrics = m.metrics();
        const columns: Array<[number, PrimitiveType, IcebergValue[]]> = [
          [1, { type: 'string' }, seen.map((r) => r.s ?? null)],
          [2, { type: 'binary' }, seen.map((r) => r.b ?? null)],
          [3, { type: 'decimal', precision: 38, scale: 2 }, seen.map((r) => r.d ?? null)],
          [4, { type: 'long' }, seen.map((r) => r.l ?? null)],
          [5, { type: 'int' }, seen.map((r) => r.i ?? null)],
          [7, { type: 'string' }, seen.map((r) => (r.st as Row | null)?.v ?? null)],
          [8, { type: 'double' }, seen.map((r) => r.f ?? null)],
        ];
        for (const [id, type, values] of columns) {
          const hex = (b: Uint8Array | undefined): string | undefined => (b ? Buffer.from(b).toString('hex') : undefined);
          expect({ lower: hex(metrics.lowerBounds.get(id)), upper: hex(metrics.upperBounds.get(id)) }).toEqual(expected(type, values));
          expect(metrics.nullValueCounts.get(id)).toBe(values.filter((v) => v === null).length);
          expect(metrics.valueCounts.get(id)).toBe(values.length);
        }
        expect(metrics.nanValueCounts.get(8)).toBe(seen.filter((r) => Number.isNaN(r.f)).length);
      }),
      { numRuns: 200 },
    );
  });
});
