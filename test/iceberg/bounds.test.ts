import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareBytes,
  compareStrings,
  compareValues,
  fromBytes,
  toBytes,
  truncateBinaryMax,
  truncateBinaryMin,
  truncateLowerBound,
  truncateStringMax,
  truncateStringMin,
  truncateUpperBound,
} from '../../lib/iceberg/bounds.js';
import type { PrimitiveType } from '../../lib/iceberg/types.js';
import { bigIntFromTwosComplement, bigIntToMinimalBytes, uuidFromBytes, type IcebergValue } from '../../lib/iceberg/values.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

const T = {
  boolean: { type: 'boolean' },
  int: { type: 'int' },
  long: { type: 'long' },
  float: { type: 'float' },
  double: { type: 'double' },
  date: { type: 'date' },
  time: { type: 'time' },
  timestamp: { type: 'timestamp' },
  timestamptz: { type: 'timestamptz' },
  timestamp_ns: { type: 'timestamp_ns' },
  timestamptz_ns: { type: 'timestamptz_ns' },
  string: { type: 'string' },
  uuid: { type: 'uuid' },
  binary: { type: 'binary' },
} as const satisfies Record<string, PrimitiveType>;
const dec = (precision: number, scale: number): PrimitiveType => ({ type: 'decimal', precision, scale });
const fixed = (length: number): PrimitiveType => ({ type: 'fixed', length });

describe('toBytes / fromBytes: vectors of Java TestConversions and the spec', () => {
  const vectors: Array<[string, PrimitiveType, IcebergValue, string]> = [
    ['false', T.boolean, false, '00'],
    ['true', T.boolean, true, '01'],
    ['int 84202', T.int, 84202, 'ea480100'],
    ['int -1', T.int, -1, 'ffffffff'],
    ['long 200', T.long, 200n, 'c800000000000000'],
    ['float -4.5', T.float, -4.5, '000090c0'],
    ['double 6.0', T.double, 6, '0000000000001840'],
    ['date 1000', T.date, 1000, 'e8030000'],
    ['time 10000', T.time, 10000n, '1027000000000000'],
    ['timestamp 400000', T.timestamp, 400000n, '801a060000000000'],
    ['timestamptz 400000', T.timestamptz, 400000n, '801a060000000000'],
    ['timestamp_ns 400000000', T.timestamp_ns, 400000000n, '0084d71700000000'],
    ['timestamptz_ns 400000000', T.timestamptz_ns, 400000000n, '0084d71700000000'],
    ['string ABC', T.string, 'ABC', '414243'],
    ['string é€😀', T.string, 'é€😀', 'c3a9e282acf09f9880'],
    ['uuid', T.uuid, 'f79c3e09-677c-4bbd-a479-3f349cb785e7', 'f79c3e09677c4bbda4793f349cb785e7'],
    ['fixed ab', fixed(2), utf8('ab'), '6162'],
    ['binary Z', T.binary, utf8('Z'), '5a'],
    ['decimal 3.45', dec(3, 2), 345n, '0159'],
    ['decimal 14.20 (unscaled 1420)', dec(4, 2), 1420n, '058c'],
    ['decimal 123.4567 on 3 bytes', dec(7, 4), 1234567n, '12d687'],
    ['decimal -123.4567', dec(7, 4), -1234567n, 'ed2979'],
    ['decimal 0.011', dec(10, 3), 11n, '0b'],
    ['decimal 0', dec(9, 2), 0n, '00'],
    ['decimal 127', dec(9, 0), 127n, '7f'],
    ['decimal 128 needs a sign byte', dec(9, 0), 128n, '0080'],
    ['decimal -128', dec(9, 0), -128n, '80'],
    ['decimal -129', dec(9, 0), -129n, 'ff7f'],
    ['decimal -1', dec(38, 10), -1n, 'ff'],
    ['decimal 10^38-1', dec(38, 0), 10n ** 38n - 1n, '4b3b4ca85a86c47a098a223fffffffff'],
  ];
  for (const [name, type, value, bytes] of vectors) {
    it(name, () => {
      expect(hex(toBytes(type, value))).toBe(bytes);
      expect(fromBytes(type, unhex(bytes))).toEqual(value);
    });
  }

  it('uuid reads back lowercase and writes any case', () => {
    expect(hex(toBytes(T.uuid, 'F79C3E09-677C-4BBD-A479-3F349CB785E7'))).toBe('f79c3e09677c4bbda4793f349cb785e7');
  });

  it('reads true from any non-zero byte', () => {
    expect(fromBytes(T.boolean, Uint8Array.of(7))).toBe(true);
  });

  it('rejects values of the wrong kind and lengths that no promotion explains', () => {
    expect(() => toBytes(T.long, 'x')).toThrow(/cannot serialize "x" as long/);
    expect(() => toBytes(T.int, 2 ** 31)).toThrow(/32-bit/);
    expect(() => toBytes(T.long, 2n ** 63n)).toThrow(/64-bit/);
    expect(() => toBytes(fixed(3), utf8('ab'))).toThrow(/expected 3 bytes/);
    expect(() => toBytes(T.string, null)).toThrow(/null/);
    expect(() => fromBytes(T.int, unhex('0102'))).toThrow(/cannot read a int from 2 bytes/);
    expect(() => fromBytes(T.timestamptz, unhex('01020304'))).toThrow(/expected 8/);
    expect(() => fromBytes(T.uuid, unhex('00'))).toThrow(/expected 16/);
    expect(() => fromBytes(T.string, unhex('c3'))).toThrow();
  });
});

describe('fromBytes infers the write-time type from the length (spec "Schema Evolution")', () => {
  it('4 bytes under long are an int', () => {
    expect(fromBytes(T.long, toBytes(T.int, -5))).toBe(-5n);
    expect(fromBytes(T.long, toBytes(T.int, 2147483647))).toBe(2147483647n);
  });
  it('4 bytes under double are a float', () => {
    expect(fromBytes(T.double, toBytes(T.float, 1.5))).toBe(1.5);
    expect(fromBytes(T.double, toBytes(T.float, 0.1))).toBe(Math.fround(0.1));
  });
  it('4 bytes under timestamp / timestamp_ns are a date, returned in the current unit', () => {
    expect(fromBytes(T.timestamp, toBytes(T.date, 17486))).toBe(17486n * 86_400_000_000n);
    expect(fromBytes(T.timestamp_ns, toBytes(T.date, -1))).toBe(-86_400_000_000_000n);
  });
  it('a decimal of smaller precision reads under a wider one', () => {
    expect(fromBytes(dec(38, 2), toBytes(dec(4, 2), 1420n))).toBe(1420n);
  });
});

describe('compareValues', () => {
  it('orders floats as IEEE totalOrder with one NaN: -0.0 < +0.0, NaN last', () => {
    const sorted = [Number.NEGATIVE_INFINITY, -1, -0, 0, 1e-300, Number.POSITIVE_INFINITY, Number.NaN];
    for (let i = 0; i < sorted.length; i++) {
      for (let j = 0; j < sorted.length; j++) {
        expect(Math.sign(compareValues(T.double, sorted[i], sorted[j]))).toBe(Math.sign(i - j));
      }
    }
  });
  it('orders strings by code point (UTF-8 bytes), not UTF-16 units', () => {
    // U+FFFD (one unit 0xFFFD) < U+1F600 (high surrogate 0xD83D): UTF-16 order would say otherwise.
    expect(compareValues(T.string, '\uFFFD', '😀')).toBe(-1);
    expect(compareValues(T.string, 'a', 'ab')).toBe(-1);
    expect(compareValues(T.string, 'b', 'ab')).toBe(1);
  });
  it('orders decimals, longs, binary, uuids', () => {
    expect(compareValues(dec(9, 2), -5n, 3n)).toBe(-1);
    expect(compareValues(T.long, 2n ** 62n, -(2n ** 62n))).toBe(1);
    expect(compareValues(T.binary, unhex('ff'), unhex('00ff'))).toBe(1);
    expect(compareValues(T.binary, unhex('00'), unhex('0000'))).toBe(-1);
    expect(compareValues(T.uuid, '80000000-0000-0000-0000-000000000000', '7fffffff-ffff-ffff-ffff-ffffffffffff')).toBe(1);
    expect(compareValues(T.boolean, false, true)).toBe(-1);
    expect(compareValues(T.date, 3, 3)).toBe(0);
  });
  it('string order equals UTF-8 byte order (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        expect(Math.sign(compareStrings(a, b))).toBe(Math.sign(compareBytes(utf8(a), utf8(b))));
      }),
      { numRuns: 2000 },
    );
  });
  it('uuid order equals unsigned byte order (property)', () => {
    const uuid = fc.uint8Array({ minLength: 16, maxLength: 16 });
    fc.assert(
      fc.property(uuid, uuid, (a, b) => {
        expect(Math.sign(compareValues(T.uuid, uuidFromBytes(a), uuidFromBytes(b)))).toBe(Math.sign(compareBytes(a, b)));
      }),
    );
  });
});

describe('round trips for every primitive type (property)', () => {
  const long = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
  const roundTrip = (type: PrimitiveType, arb: fc.Arbitrary<IcebergValue>): void => {
    fc.assert(
      fc.property(arb, (v) => {
        const back = fromBytes(type, toBytes(type, v));
        if (typeof v === 'number') expect(Object.is(back, v) || (Number.isNaN(v) && Number.isNaN(back))).toBe(true);
        else expect(back).toEqual(v);
      }),
      { numRuns: 500 },
    );
  };
  it('boolean', () => roundTrip(T.boolean, fc.boolean()));
  it('int, date', () => {
    roundTrip(T.int, fc.integer());
    roundTrip(T.date, fc.integer());
  });
  it('long, time, timestamps', () => {
    for (const t of [T.long, T.time, T.timestamp, T.timestamptz, T.timestamp_ns, T.timestamptz_ns]) roundTrip(t, long);
  });
  it('float (incl. -0.0 and NaN)', () => roundTrip(T.float, fc.float()));
  it('double (incl. -0.0 and NaN)', () => roundTrip(T.double, fc.double()));
  it('string', () => roundTrip(T.string, fc.string({ unit: 'binary' })));
  it('uuid', () => roundTrip(T.uuid, fc.uint8Array({ minLength: 16, maxLength: 16 }).map(uuidFromBytes)));
  it('fixed, binary', () => {
    roundTrip(fixed(7), fc.uint8Array({ minLength: 7, maxLength: 7 }));
    roundTrip(T.binary, fc.uint8Array());
  });
  it('decimal, with minimal two\'s-complement bytes', () => {
    const max = 10n ** 38n - 1n;
    fc.assert(
      fc.property(fc.bigInt({ min: -max, max }), (v) => {
        const b = toBytes(dec(38, 5), v);
        expect(fromBytes(dec(38, 5), b)).toBe(v);
        if (b.length > 1) {
          // Minimal: the first byte is not a pure sign extension of the second.
          const redundant = (b[0] === 0x00 && b[1] < 0x80) || (b[0] === 0xff && b[1] >= 0x80);
          expect(redundant).toBe(false);
        }
        expect(bigIntFromTwosComplement(bigIntToMinimalBytes(v))).toBe(v);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('truncation (Java UnicodeUtil / BinaryUtil)', () => {
  it('string vectors', () => {
    expect(truncateStringMin('abcdef', 3)).toBe('abc');
    expect(truncateStringMax('abcdef', 3)).toBe('abd');
    expect(truncateStringMax('abc', 3)).toBe('abc');
    expect(truncateStringMin('😀😁😂', 2)).toBe('😀😁');
    expect(truncateStringMin('\ud800x\udc00y', 2)).toBe('\ud800x');
    expect(truncateStringMax('😀😁😂', 2)).toBe('😀😂');
    // U+D7FF increments past the surrogates to U+E000.
    expect(truncateStringMax('a\uD7FFz', 2)).toBe('a\uE000');
    // U+10FFFF cannot grow: the code point before it is incremented instead.
    expect(truncateStringMax('a\u{10FFFF}z', 2)).toBe('b');
    expect(truncateStringMax('\u{10FFFF}\u{10FFFF}z', 2)).toBeUndefined();
    expect(truncateStringMax('\uFFFFx', 1)).toBe('\u{10000}');
  });
  it('binary vectors', () => {
    expect(hex(truncateBinaryMin(unhex('010203'), 2))).toBe('0102');
    expect(hex(truncateBinaryMax(unhex('010203'), 2) as Uint8Array)).toBe('0103');
    expect(hex(truncateBinaryMax(unhex('01ff03'), 2) as Uint8Array)).toBe('02');
    expect(truncateBinaryMax(unhex('ffff03'), 2)).toBeUndefined();
    expect(hex(truncateBinaryMax(unhex('ffff'), 2) as Uint8Array)).toBe('ffff');
  });
  it('never truncates fixed, uuid or other types', () => {
    const f = unhex('00112233445566778899');
    expect(truncateLowerBound(fixed(10), f, 2)).toBe(f);
    expect(truncateUpperBound(fixed(10), f, 2)).toBe(f);
    const u = 'f79c3e09-677c-4bbd-a479-3f349cb785e7';
    expect(truncateUpperBound(T.uuid, u, 2)).toBe(u);
    expect(truncateUpperBound(T.long, 5n, 1)).toBe(5n);
    expect(truncateUpperBound(T.string, 'abc', 1)).toBe('b');
  });

  // Strings that often hit the edge cases: U+D7FF, U+E000, U+FFFF, U+10FFFF, ASCII boundaries.
  const edgyCodePoint = fc.oneof(
    fc.constantFrom(0x41, 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xffff, 0x10000, 0x10ffff),
    fc.integer({ min: 0, max: 0x10ffff }).filter((c) => c < 0xd800 || c > 0xdfff),
  );
  const edgyString = fc.array(edgyCodePoint, { maxLength: 12 }).map((cps) => String.fromCodePoint(...cps));
  const codePoints = (s: string): number => Array.from(s).length;
  const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
  const isValidUtf8 = (s: string): boolean => {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(utf8(s)) === s && !LONE_SURROGATE.test(s);
    } catch {
      return false;
    }
  };

  it('string lower bound: a prefix of at most N code points, <= the value and every extension of its prefix', () => {
    fc.assert(
      fc.property(edgyString, fc.integer({ min: 1, max: 8 }), edgyString, (s, n, tail) => {
        const lower = truncateStringMin(s, n);
        expect(codePoints(lower)).toBeLessThanOrEqual(n);
        expect(s.startsWith(lower)).toBe(true);
        expect(compareStrings(lower, s)).toBeLessThanOrEqual(0);
        expect(compareStrings(lower, lower + tail)).toBeLessThanOrEqual(0);
        expect(isValidUtf8(lower)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('string upper bound: at most N code points, no surrogates, valid UTF-8, > every string sharing the prefix', () => {
    fc.assert(
      fc.property(edgyString, fc.integer({ min: 1, max: 8 }), edgyString, (s, n, tail) => {
        const upper = truncateStringMax(s, n);
        const prefix = truncateStringMin(s, n);
        if (codePoints(s) <= n) {
          expect(upper).toBe(s);
          return;
        }
        if (upper === undefined) {
          // Only when every code point of the prefix is U+10FFFF.
          expect(Array.from(prefix).every((c) => c === '\u{10FFFF}')).toBe(true);
          return;
        }
        expect(codePoints(upper)).toBeLessThanOrEqual(n);
        expect(isValidUtf8(upper)).toBe(true);
        expect(LONE_SURROGATE.test(upper)).toBe(false);
        expect(compareStrings(upper, s)).toBe(1);
        expect(compareStrings(upper, prefix + tail)).toBe(1);
        expect(compareBytes(utf8(upper), utf8(prefix + tail))).toBe(1);
      }),
      { numRuns: 3000 },
    );
  });

  const edgyBytes = fc.uint8Array({ maxLength: 12 }).chain((b) =>
    fc.array(fc.boolean(), { minLength: b.length, maxLength: b.length }).map((ff) => b.map((x, i) => (ff[i] ? 0xff : x))),
  );

  it('binary bounds: lower <= value, upper > every extension of the prefix, or omitted when all 0xFF', () => {
    fc.assert(
      fc.property(edgyBytes, fc.integer({ min: 1, max: 8 }), fc.uint8Array({ maxLength: 6 }), (b, n, tail) => {
        const lower = truncateBinaryMin(b, n);
        expect(lower.length).toBeLessThanOrEqual(n);
        expect(compareBytes(lower, b)).toBeLessThanOrEqual(0);
        const upper = truncateBinaryMax(b, n);
        if (b.length <= n) {
          expect(upper).toBe(b);
          return;
        }
        const prefix = b.subarray(0, n);
        if (upper === undefined) {
          expect(prefix.every((x) => x === 0xff)).toBe(true);
          return;
        }
        expect(upper.length).toBeLessThanOrEqual(n);
        expect(compareBytes(upper, b)).toBe(1);
        expect(compareBytes(upper, Uint8Array.from([...prefix, ...tail]))).toBe(1);
      }),
      { numRuns: 3000 },
    );
  });
});
