import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { concatBatches, dataBytes } from '../../lib/parquet/concat.js';
import { batchFromRows, rowsFromBatch } from '../../lib/parquet/values.js';
import { ALL_TYPES, chunksArbitrary, slicedParts } from './helpers.js';

describe('concatBatches', () => {
  it('joins batches and slices of every type, nulls and nesting included, into the same rows (property)', () => {
    fc.assert(
      fc.property(chunksArbitrary(ALL_TYPES), ([chunks, cut]) => {
        const parts = slicedParts(chunks.map((rows) => batchFromRows(ALL_TYPES, rows)), cut);
        const joined = concatBatches(parts);
        expect(joined.numRows).toBe(chunks.reduce((n, r) => n + r.length, 0));
        expect(rowsFromBatch(joined, ALL_TYPES)).toEqual(chunks.flat());
        // The joined buffers hold only the rows: a slice of them counts no more than the whole.
        expect(dataBytes(joined.data)).toBeGreaterThan(0);
        expect(dataBytes(joined.slice(0, 1).data)).toBeLessThanOrEqual(dataBytes(joined.data));
      }),
      { numRuns: 40 },
    );
  });

  it('counts only the rows of a slice, not the buffers it shares', () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ({ ...Object.fromEntries(ALL_TYPES.fields.map((f) => [f.name, null])), id: BigInt(i), s: 'x'.repeat(i % 7) }));
    const b = batchFromRows(ALL_TYPES, rows);
    const whole = dataBytes(b.data);
    const tenth = dataBytes(b.slice(0, 100).data);
    expect(tenth).toBeLessThan(whole / 5);
    expect(tenth).toBeGreaterThan(0);
  });
});
