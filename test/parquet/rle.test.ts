/**
 * The RLE / bit-packing hybrid (lib/parquet/rle.ts): what it encodes decodes back, as values and
 * as runs, for every bit width; and bytes from the format's own description decode as written.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bitWidth, decodeBitPacked, decodeHybrid, decodeRuns, encodeHybrid, encodeRuns, RleError, Runs } from '../../lib/parquet/rle.js';

/** Values with long repeats and short literal stretches, each below 2^width. */
const sequences = fc.integer({ min: 0, max: 32 }).chain((width) =>
  fc
    .array(fc.record({ v: fc.nat(), n: fc.oneof(fc.integer({ min: 1, max: 7 }), fc.integer({ min: 8, max: 600 })) }), { maxLength: 40 })
    .map((runs) => {
      const max = width === 32 ? 0xffffffff : 2 ** width - 1;
      const out: number[] = [];
      for (const r of runs) for (let i = 0; i < r.n; i++) out.push((r.n < 8 ? (r.v + i * 7919) % (max + 1) : r.v % (max + 1)) | 0);
      return { width, values: Int32Array.from(out) };
    }),
);

function expand(runs: Runs): number[] {
  const out: number[] = [];
  for (let i = 0; i < runs.length; i += 2) for (let j = 0; j < runs.data[i + 1]; j++) out.push(runs.data[i]);
  return out;
}

describe('RLE / bit-packing hybrid', () => {
  it('decodes what it encodes, for every width', () => {
    fc.assert(
      fc.property(sequences, ({ width, values }) => {
        const bytes = encodeHybrid(values, values.length, width);
        const out = new Int32Array(values.length);
        expect(decodeHybrid(bytes, 0, bytes.length, width, values.length, out)).toBe(bytes.length);
        expect(Array.from(out)).toEqual(Array.from(values));
      }),
      { numRuns: 300 },
    );
  });

  it('long bit-packed runs decode at any offset in a buffer that ends with them, for every width', () => {
    const random = fc.integer({ min: 1, max: 32 }).chain((width) =>
      fc.record({
        width: fc.constant(width),
        // Unbiased: every bit of a width used, runs long enough for the word-at-a-time path.
        values: fc.record({ n: fc.noBias(fc.integer({ min: 1, max: 700 })), seed: fc.noBias(fc.nat()) }).map(({ n, seed }) =>
          Int32Array.from({ length: n }, (_, i) => Math.imul(seed + i, 0x9e3779b1) >>> (32 - width) | 0)),
        offset: fc.integer({ min: 0, max: 9 }),
      }),
    );
    fc.assert(
      fc.property(random, ({ width, values, offset }) => {
        const encoded = encodeHybrid(values, values.length, width);
        // Nothing past the runs: the last values are read without 4 bytes after them; a view into a larger buffer.
        const bytes = new Uint8Array(new ArrayBuffer(offset + encoded.length + 8), 3, offset + encoded.length);
        bytes.set(encoded, offset);
        const out = new Int32Array(values.length + 3);
        expect(decodeHybrid(bytes, offset, bytes.length, width, values.length, out, 3)).toBe(bytes.length);
        expect(Array.from(out.subarray(3))).toEqual(Array.from(values));
      }),
      { numRuns: 400 },
    );
  });

  it('runs: decoded runs are maximal and expand to the values; encoded runs decode back', () => {
    fc.assert(
      fc.property(sequences, ({ width, values }) => {
        const bytes = encodeHybrid(values, values.length, width);
        const runs = new Runs();
        decodeRuns(bytes, 0, bytes.length, width, values.length, runs);
        expect(expand(runs)).toEqual(Array.from(values));
        for (let i = 2; i < runs.length; i += 2) expect(runs.data[i]).not.toBe(runs.data[i - 2]);
        const again = encodeRuns(runs, width);
        const out = new Int32Array(values.length);
        decodeHybrid(again, 0, again.length, width, values.length, out);
        expect(Array.from(out)).toEqual(Array.from(values));
      }),
      { numRuns: 300 },
    );
  });

  it('runs appended in pieces are the runs of the whole', () => {
    fc.assert(
      fc.property(sequences, fc.nat(), ({ values }, cut) => {
        const at = values.length === 0 ? 0 : cut % values.length;
        const whole = new Runs();
        const a = new Runs();
        const b = new Runs();
        values.forEach((v, i) => {
          whole.push(v, 1);
          (i < at ? a : b).push(v, 1);
        });
        a.append(b);
        expect(Array.from(a.data.subarray(0, a.length))).toEqual(Array.from(whole.data.subarray(0, whole.length)));
      }),
    );
  });

  it('reads the format description\'s examples: a repeated run, a bit-packed run, deprecated BIT_PACKED', () => {
    // Encodings.md: values 0..7 at width 3, bit-packed: header (1 group << 1 | 1), then 10001000 11000110 11111010.
    const packed = Uint8Array.of(0x03, 0b10001000, 0b11000110, 0b11111010);
    const out = new Int32Array(8);
    decodeHybrid(packed, 0, packed.length, 3, 8, out);
    expect(Array.from(out)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // 300 fives at width 3: header 600 as a varint, one value byte.
    const repeated = Uint8Array.of(0xd8, 0x04, 0x05);
    const runs = new Runs();
    decodeRuns(repeated, 0, repeated.length, 3, 300, runs);
    expect(Array.from(runs.data.subarray(0, runs.length))).toEqual([5, 300]);
    // BIT_PACKED, most significant bit first: 0..7 at width 3 is 00000101 00111001 01110111.
    const old = new Int32Array(8);
    decodeBitPacked(Uint8Array.of(0b00000101, 0b00111001, 0b01110111), 0, 3, 3, 8, old);
    expect(Array.from(old)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('refuses runs that end early', () => {
    expect(() => decodeHybrid(Uint8Array.of(0x03, 0x01), 0, 2, 3, 8, new Int32Array(8))).toThrow(RleError);
    expect(() => decodeRuns(Uint8Array.of(0x10), 0, 1, 3, 8, new Runs())).toThrow(RleError);
  });

  it('bitWidth is the bits of the largest value', () => {
    expect([0, 1, 2, 3, 4, 255, 256].map(bitWidth)).toEqual([0, 1, 2, 2, 3, 8, 9]);
  });
});
