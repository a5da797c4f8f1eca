import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../lib/errors.js';
import { bigIntFromTwosComplement, bigIntToMinimalBytes, bigIntToTwosComplement } from '../../lib/iceberg/values.js';

describe("two's-complement big-endian integers", () => {
  it('writes exactly `size` bytes, sign-extended, and refuses a value that does not fit', () => {
    expect(Array.from(bigIntToTwosComplement(-2n, 4))).toEqual([0xff, 0xff, 0xff, 0xfe]);
    expect(Array.from(bigIntToTwosComplement(1420n, 3))).toEqual([0x00, 0x05, 0x8c]);
    expect(() => bigIntToTwosComplement(128n, 1)).toThrow(InvalidArgumentError);
  });

  it('reads any length back, the empty array as 0', () => {
    expect(bigIntFromTwosComplement(new Uint8Array(0))).toBe(0n);
    expect(bigIntFromTwosComplement(Uint8Array.of(0xff, 0x7f))).toBe(-129n);
  });

  it('round-trips through the minimal and the fixed-size forms', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(1n << 130n), max: 1n << 130n }), (v) => {
        const minimal = bigIntToMinimalBytes(v);
        expect(bigIntFromTwosComplement(minimal)).toBe(v);
        expect(bigIntToTwosComplement(v, minimal.length + 3).slice(3)).toEqual(minimal);
        expect(bigIntFromTwosComplement(bigIntToTwosComplement(v, 17))).toBe(v);
      }),
    );
  });
});
