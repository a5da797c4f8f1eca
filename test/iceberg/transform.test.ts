import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, UnsupportedError, ValidationError } from '../../lib/errors.js';
import {
  applyTransform,
  bucketHash,
  canTransform,
  civilFromDays,
  murmur3_x86_32,
  parseTransform,
  transformResultType,
  transformToString,
  type Transform,
} from '../../lib/iceberg/transform.js';
import type { PrimitiveType } from '../../lib/iceberg/types.js';
import { bigIntToMinimalBytes, type IcebergValue } from '../../lib/iceberg/values.js';

const T = (type: Exclude<PrimitiveType['type'], 'decimal' | 'fixed'>): PrimitiveType => ({ type }) as PrimitiveType;
const INT = T('int');
const LONG = T('long');
const DATE = T('date');
const STRING = T('string');
const BINARY = T('binary');
const TIMESTAMP = T('timestamp');
const TIMESTAMP_NS = T('timestamp_ns');
const DECIMAL_9_2: PrimitiveType = { type: 'decimal', precision: 9, scale: 2 };

const bucket = (n: number): Transform => ({ kind: 'bucket', numBuckets: n });
const truncate = (w: number): Transform => ({ kind: 'truncate', width: w });
const YEAR: Transform = { kind: 'year' };
const MONTH: Transform = { kind: 'month' };
const DAY: Transform = { kind: 'day' };
const HOUR: Transform = { kind: 'hour' };

// 2017-11-16T22:31:08 UTC
const TS = 1510871468000000n;

describe('murmur3_x86_32', () => {
  it('matches the reference vectors of the x86_32 variant (signed results)', () => {
    const h = (bytes: number[], seed = 0) => murmur3_x86_32(Uint8Array.from(bytes), seed);
    expect(h([])).toBe(0);
    expect(h([], 1)).toBe(0x514e28b7);
    expect(h([], 0xffffffff)).toBe(0x81f16f39 | 0);
    expect(h([0, 0, 0, 0])).toBe(0x2362f9de);
    expect(h([0x21, 0x43, 0x65, 0x87])).toBe(0xf55b516b | 0);
    expect(h([0x21, 0x43, 0x65, 0x87], 0x5082edee)).toBe(0x2362f9de);
    expect(h([0x21, 0x43, 0x65])).toBe(0x7e4a8634);
    expect(h([0x21, 0x43])).toBe(0xa0f7b07a | 0);
    expect(h([0x21])).toBe(0x72661cf4);
    expect(h([0xff, 0xff, 0xff, 0xff])).toBe(0x76293b50);
  });
});

describe('bucketHash: every vector of spec Appendix B', () => {
  const cases: [string, PrimitiveType, IcebergValue, number][] = [
    ['int 34', INT, 34, 2017239379],
    ['long 34L', LONG, 34n, 2017239379],
    ['decimal 14.20', { type: 'decimal', precision: 4, scale: 2 }, 1420n, -500754589],
    ['date 2017-11-16', DATE, 17486, -653330422],
    ['time 22:31:08', T('time'), 81068000000n, -662762989],
    ['timestamp 2017-11-16T22:31:08', TIMESTAMP, TS, -2047944441],
    ['timestamp 2017-11-16T22:31:08.000001', TIMESTAMP, TS + 1n, -1207196810],
    ['timestamptz 2017-11-16T14:31:08-08:00', T('timestamptz'), TS, -2047944441],
    ['timestamptz 2017-11-16T14:31:08.000001-08:00', T('timestamptz'), TS + 1n, -1207196810],
    ['timestamp_ns 2017-11-16T22:31:08', TIMESTAMP_NS, TS * 1000n, -2047944441],
    ['timestamp_ns 2017-11-16T22:31:08.000001001', TIMESTAMP_NS, TS * 1000n + 1001n, -1207196810],
    ['timestamptz_ns 2017-11-16T14:31:08-08:00', T('timestamptz_ns'), TS * 1000n, -2047944441],
    ['timestamptz_ns 2017-11-16T14:31:08.000001001-08:00', T('timestamptz_ns'), TS * 1000n + 1001n, -1207196810],
    ['string iceberg', STRING, 'iceberg', 1210000089],
    ['uuid f79c3e09-…', T('uuid'), 'f79c3e09-677c-4bbd-a479-3f349cb785e7', 1488055340],
    ['fixed 00 01 02 03', { type: 'fixed', length: 4 }, Uint8Array.of(0, 1, 2, 3), -188683207],
    ['binary 00 01 02 03', BINARY, Uint8Array.of(0, 1, 2, 3), -188683207],
    // the "not currently valid for bucketing" table
    ['boolean true', T('boolean'), true, 1392991556],
    ['float 1.0F', T('float'), 1.0, -142385009],
    ['float 0.0F', T('float'), 0.0, 1669671676],
    ['float -0.0F', T('float'), -0.0, 1669671676],
    ['double 1.0D', T('double'), 1.0, -142385009],
    ['double 0.0D', T('double'), 0.0, 1669671676],
    ['double -0.0D', T('double'), -0.0, 1669671676],
  ];
  it.each(cases)('%s', (_name, type, value, expected) => {
    expect(bucketHash(type, value)).toBe(expected);
  });

  it('hashes the uuid as its 16 big-endian bytes (note 4)', () => {
    const bytes = Uint8Array.from([0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7]);
    expect(murmur3_x86_32(bytes)).toBe(1488055340);
    expect(bucketHash(T('uuid'), bytes)).toBe(1488055340);
  });

  it('agrees with the recomputed vectors of ICEBERG-RULES G', () => {
    expect(bucketHash(INT, 34)).toBe(2017239379);
    expect(bucketHash(STRING, 'iceberg')).toBe(1210000089);
    expect(bucketHash(DATE, 17486)).toBe(-653330422);
    expect(bucketHash(DECIMAL_9_2, 1420n)).toBe(-500754589);
    // the date hashed as a 4-byte int would give a different value: dates widen to 8 bytes
    const four = new Uint8Array(4);
    new DataView(four.buffer).setInt32(0, 17486, true);
    expect(murmur3_x86_32(four)).toBe(1087118125);
  });

  it('canonicalises NaN to 0x7ff8000000000000', () => {
    const canonical = new Uint8Array(8);
    new DataView(canonical.buffer).setBigUint64(0, 0x7ff8000000000000n, true);
    expect(bucketHash(T('double'), NaN)).toBe(murmur3_x86_32(canonical));
  });

  it('encodes a lone surrogate as "?" like Java, and astral code points as 4 UTF-8 bytes', () => {
    expect(bucketHash(STRING, 'a\ud800b')).toBe(bucketHash(STRING, 'a?b'));
    expect(bucketHash(STRING, '😀')).toBe(murmur3_x86_32(Uint8Array.of(0xf0, 0x9f, 0x98, 0x80)));
  });

  it('hashes decimals with the fewest two’s-complement bytes, independent of scale', () => {
    expect(Array.from(bigIntToMinimalBytes(0n))).toEqual([0]);
    expect(Array.from(bigIntToMinimalBytes(127n))).toEqual([0x7f]);
    expect(Array.from(bigIntToMinimalBytes(128n))).toEqual([0x00, 0x80]);
    expect(Array.from(bigIntToMinimalBytes(-1n))).toEqual([0xff]);
    expect(Array.from(bigIntToMinimalBytes(-128n))).toEqual([0x80]);
    expect(Array.from(bigIntToMinimalBytes(-129n))).toEqual([0xff, 0x7f]);
    expect(Array.from(bigIntToMinimalBytes(1420n))).toEqual([0x05, 0x8c]);
    expect(bucketHash({ type: 'decimal', precision: 38, scale: 10 }, 1420n)).toBe(-500754589);
  });

  it('rejects unknown values', () => {
    expect(() => bucketHash(T('unknown'), null)).toThrow(ValidationError);
    expect(() => bucketHash(LONG, 'x')).toThrow(InvalidArgumentError);
  });
});

describe('applyTransform', () => {
  it('buckets as (hash & MAX_INT) % N', () => {
    expect(applyTransform(bucket(16), INT, 34)).toBe(2017239379 % 16);
    expect(applyTransform(bucket(100), STRING, 'iceberg')).toBe(1210000089 % 100);
    expect(applyTransform(bucket(100), DATE, 17486)).toBe((-653330422 & 0x7fffffff) % 100);
    expect(applyTransform(bucket(7), TIMESTAMP, TS)).toBe((-2047944441 & 0x7fffffff) % 7);
  });

  it('truncates ints and longs towards negative infinity (spec examples)', () => {
    expect(applyTransform(truncate(10), INT, 1)).toBe(0);
    expect(applyTransform(truncate(10), INT, -1)).toBe(-10);
    expect(applyTransform(truncate(10), INT, -10)).toBe(-10);
    expect(applyTransform(truncate(10), INT, -11)).toBe(-20);
    expect(applyTransform(truncate(10), INT, 19)).toBe(10);
    expect(applyTransform(truncate(10), LONG, 1n)).toBe(0n);
    expect(applyTransform(truncate(10), LONG, -1n)).toBe(-10n);
    expect(applyTransform(truncate(3), LONG, -9223372036854775805n)).toBe(-9223372036854775806n);
    // Java's int and long arithmetic wraps at the very bottom, and partition values must match Java's
    expect(applyTransform(truncate(10), INT, -2147483648)).toBe(2147483646);
    expect(applyTransform(truncate(3), LONG, -9223372036854775807n)).toBe(9223372036854775807n);
  });

  it('truncates decimals on the unscaled value', () => {
    expect(applyTransform(truncate(50), DECIMAL_9_2, 1065n)).toBe(1050n); // 10.65 → 10.50
    expect(applyTransform(truncate(50), DECIMAL_9_2, -1065n)).toBe(-1100n); // -10.65 → -11.00
    expect(applyTransform(truncate(10), DECIMAL_9_2, -1n)).toBe(-10n); // -0.01 → -0.10
    expect(applyTransform(truncate(10), DECIMAL_9_2, 12345678901234567890123n)).toBe(12345678901234567890120n);
  });

  it('truncates strings by code points and binary by bytes', () => {
    expect(applyTransform(truncate(3), STRING, 'iceberg')).toBe('ice');
    expect(applyTransform(truncate(2), STRING, '😀😁😂a')).toBe('😀😁');
    expect(applyTransform(truncate(3), STRING, 'a😀b😁')).toBe('a😀b');
    expect(applyTransform(truncate(4), STRING, 'ab')).toBe('ab');
    // A lone surrogate counts as one code point, as in Java's UnicodeUtil.
    expect(applyTransform(truncate(2), STRING, '\ud800x\udc00y')).toBe('\ud800x');
    expect(Array.from(applyTransform(truncate(3), BINARY, Uint8Array.of(1, 2, 3, 4, 5)) as Uint8Array)).toEqual([1, 2, 3]);
    expect(Array.from(applyTransform(truncate(9), BINARY, Uint8Array.of(1, 2)) as Uint8Array)).toEqual([1, 2]);
  });

  it('extracts years, months, days and hours from dates, counting back from 1970', () => {
    const at = (t: Transform, days: number) => applyTransform(t, DATE, days);
    expect([at(YEAR, 17486), at(MONTH, 17486), at(DAY, 17486)]).toEqual([47, 574, 17486]); // 2017-11-16
    expect([at(YEAR, 0), at(MONTH, 0), at(DAY, 0)]).toEqual([0, 0, 0]);
    expect([at(YEAR, -1), at(MONTH, -1), at(DAY, -1)]).toEqual([-1, -1, -1]); // 1969-12-31
    expect([at(YEAR, -31), at(MONTH, -31)]).toEqual([-1, -1]); // 1969-12-01
    expect([at(YEAR, -32), at(MONTH, -32)]).toEqual([-1, -2]); // 1969-11-30
    expect([at(YEAR, -365), at(MONTH, -365)]).toEqual([-1, -12]); // 1969-01-01
    expect([at(YEAR, -366), at(MONTH, -366)]).toEqual([-2, -13]); // 1968-12-31
    expect([at(YEAR, -25567), at(MONTH, -25567)]).toEqual([-70, -840]); // 1900-01-01
  });

  it('extracts years, months, days and hours from timestamps, pre-1970 included', () => {
    const all = (type: PrimitiveType, v: bigint) => [YEAR, MONTH, DAY, HOUR].map((t) => applyTransform(t, type, v));
    expect(all(TIMESTAMP, TS)).toEqual([47, 574, 17486, 419686]);
    expect(all(T('timestamptz'), TS)).toEqual([47, 574, 17486, 419686]);
    expect(all(TIMESTAMP, 0n)).toEqual([0, 0, 0, 0]);
    expect(all(TIMESTAMP, -1n)).toEqual([-1, -1, -1, -1]); // 1969-12-31T23:59:59.999999
    expect(all(TIMESTAMP, -3_600_000_000n)).toEqual([-1, -1, -1, -1]); // 1969-12-31T23:00
    expect(all(TIMESTAMP, -3_600_000_001n)).toEqual([-1, -1, -1, -2]);
    expect(all(TIMESTAMP, -86_400_000_001n)).toEqual([-1, -1, -2, -25]); // 1969-12-30T23:59:59.999999
    expect(all(TIMESTAMP, -25567n * 86_400_000_000n)).toEqual([-70, -840, -25567, -25567 * 24]); // 1900-01-01
    expect(all(TIMESTAMP_NS, TS * 1000n + 999n)).toEqual([47, 574, 17486, 419686]);
    expect(all(TIMESTAMP_NS, -1n)).toEqual([-1, -1, -1, -1]);
    expect(all(T('timestamptz_ns'), -3_600_000_000_000n)).toEqual([-1, -1, -1, -1]);
    expect(all(T('timestamptz_ns'), -3_600_000_000_001n)).toEqual([-1, -1, -1, -2]);
  });

  it('keeps identity values, returns null for null input and for void', () => {
    expect(applyTransform({ kind: 'identity' }, STRING, 'x')).toBe('x');
    expect(applyTransform({ kind: 'identity' }, LONG, 5n)).toBe(5n);
    for (const t of [bucket(4), YEAR, MONTH, DAY, HOUR, { kind: 'identity' } as Transform]) {
      expect(applyTransform(t, TIMESTAMP, null)).toBeNull();
    }
    expect(applyTransform(truncate(2), STRING, null)).toBeNull();
    expect(applyTransform({ kind: 'void' }, STRING, 'x')).toBeNull();
  });

  it('refuses unknown transforms and unsupported source types', () => {
    expect(() => applyTransform({ kind: 'unknown', name: 'zorder' }, INT, 1)).toThrow(UnsupportedError);
    expect(() => applyTransform(bucket(4), T('boolean'), true)).toThrow(ValidationError);
    expect(() => applyTransform(HOUR, DATE, 1)).toThrow(ValidationError);
    expect(() => applyTransform(truncate(4), T('uuid'), 'f79c3e09-677c-4bbd-a479-3f349cb785e7')).toThrow(ValidationError);
  });
});

describe('parseTransform / transformToString / result types', () => {
  it('parses every spec name and keeps unknown ones readable', () => {
    expect(parseTransform('bucket[16]')).toEqual({ kind: 'bucket', numBuckets: 16 });
    expect(parseTransform('truncate[4]')).toEqual({ kind: 'truncate', width: 4 });
    expect(parseTransform('BUCKET[3]')).toEqual({ kind: 'bucket', numBuckets: 3 });
    expect(parseTransform('Day')).toEqual({ kind: 'day' });
    for (const name of ['identity', 'year', 'month', 'day', 'hour', 'void', 'bucket[1]', 'truncate[10]']) {
      expect(transformToString(parseTransform(name))).toBe(name);
    }
    expect(parseTransform('zorder[1,2]')).toEqual({ kind: 'unknown', name: 'zorder[1,2]' });
    expect(transformToString(parseTransform('zorder[1,2]'))).toBe('zorder[1,2]');
    expect(parseTransform('frobnicate[3]')).toEqual({ kind: 'unknown', name: 'frobnicate[3]' });
  });

  it('rejects non-positive widths like Java', () => {
    expect(() => parseTransform('bucket[0]')).toThrow('Invalid number of buckets: 0 (must be > 0)');
    expect(() => parseTransform('truncate[0]')).toThrow('Invalid truncate width: 0 (must be > 0)');
  });

  it('gives the result types of the spec table', () => {
    expect(transformResultType(bucket(4), STRING)).toEqual({ type: 'int' });
    expect(transformResultType(truncate(4), DECIMAL_9_2)).toEqual(DECIMAL_9_2);
    expect(transformResultType({ kind: 'identity' }, TIMESTAMP)).toEqual(TIMESTAMP);
    expect(transformResultType(YEAR, TIMESTAMP)).toEqual({ type: 'int' });
    expect(transformResultType(MONTH, DATE)).toEqual({ type: 'int' });
    expect(transformResultType(DAY, TIMESTAMP_NS)).toEqual({ type: 'date' });
    expect(transformResultType(HOUR, TIMESTAMP)).toEqual({ type: 'int' });
    expect(transformResultType({ kind: 'void' }, LONG)).toEqual(LONG);
    expect(transformResultType({ kind: 'unknown', name: 'x' }, LONG)).toEqual({ type: 'string' });
  });

  it('says which source types each transform accepts', () => {
    const all: PrimitiveType[] = [
      T('boolean'), INT, LONG, T('float'), T('double'), DECIMAL_9_2, DATE, T('time'), TIMESTAMP, T('timestamptz'),
      TIMESTAMP_NS, T('timestamptz_ns'), STRING, T('uuid'), { type: 'fixed', length: 3 }, BINARY,
    ];
    const accepted = (t: Transform) => all.filter((s) => canTransform(t, s)).map((s) => s.type);
    expect(accepted(bucket(2))).toEqual([
      'int', 'long', 'decimal', 'date', 'time', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns',
      'string', 'uuid', 'fixed', 'binary',
    ]);
    expect(accepted(truncate(2))).toEqual(['int', 'long', 'decimal', 'string', 'binary']);
    expect(accepted(YEAR)).toEqual(['date', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);
    expect(accepted(DAY)).toEqual(['date', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);
    expect(accepted(HOUR)).toEqual(['timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);
    expect(accepted({ kind: 'identity' })).toHaveLength(all.length);
    expect(accepted({ kind: 'void' })).toHaveLength(all.length);
    expect(accepted({ kind: 'unknown', name: 'x' })).toEqual([]);
  });
});

describe('properties', () => {
  const int32 = fc.integer({ min: -2147483648, max: 2147483647 });
  const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
  // Dates and timestamps within ±1,000,000 days of 1970 (years -768 … 4707).
  const days = fc.integer({ min: -1_000_000, max: 1_000_000 });
  const micros = fc.bigInt({ min: -86_400_000_000n * 1_000_000n, max: 86_400_000_000n * 1_000_000n });

  it('bucket values lie in [0, N)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2147483647 }), int32, int64, fc.string({ unit: 'grapheme' }), (n, i, l, s) => {
        for (const [type, v] of [[INT, i], [LONG, l], [STRING, s]] as [PrimitiveType, IcebergValue][]) {
          const b = applyTransform(bucket(n), type, v) as number;
          expect(Number.isInteger(b) && b >= 0 && b < n).toBe(true);
        }
      }),
    );
  });

  it('int and long of the same value hash the same; a date hashes as the long of its day', () => {
    fc.assert(
      fc.property(int32, (v) => {
        expect(bucketHash(INT, v)).toBe(bucketHash(LONG, BigInt(v)));
        expect(bucketHash(DATE, v)).toBe(bucketHash(LONG, BigInt(v)));
      }),
    );
  });

  it('nanosecond timestamps hash as their floored microseconds', () => {
    fc.assert(
      fc.property(int64, (ns) => {
        const us = ns / 1000n - (ns % 1000n < 0n ? 1n : 0n);
        expect(bucketHash(TIMESTAMP_NS, ns)).toBe(bucketHash(TIMESTAMP, us));
      }),
    );
  });

  it('truncate is idempotent and never exceeds the value', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), (w) => {
        const ints = fc.sample(fc.integer({ min: -2147483648 + w, max: 2147483647 }), 20);
        for (const v of ints) {
          const t = applyTransform(truncate(w), INT, v) as number;
          expect(t <= v && v - t < w).toBe(true);
          expect(applyTransform(truncate(w), INT, t)).toBe(t);
        }
        for (const v of fc.sample(fc.bigInt({ min: -(2n ** 63n) + BigInt(w), max: 2n ** 63n - 1n }), 20)) {
          const t = applyTransform(truncate(w), LONG, v) as bigint;
          expect(t <= v && v - t < BigInt(w)).toBe(true);
          expect(applyTransform(truncate(w), LONG, t)).toBe(t);
        }
        for (const v of fc.sample(fc.bigInt({ min: -(10n ** 38n), max: 10n ** 38n }), 20)) {
          const t = applyTransform(truncate(w), DECIMAL_9_2, v) as bigint;
          expect(t <= v && v - t < BigInt(w)).toBe(true);
          expect(applyTransform(truncate(w), DECIMAL_9_2, t)).toBe(t);
        }
      }),
    );
  });

  it('string and binary truncation is an idempotent prefix of at most W code points / bytes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.string({ unit: 'binary' }), fc.uint8Array(), (w, s, b) => {
        const t = applyTransform(truncate(w), STRING, s) as string;
        expect(s.startsWith(t)).toBe(true);
        expect([...t].length).toBe(Math.min(w, [...s].length));
        expect(applyTransform(truncate(w), STRING, t)).toBe(t);
        const tb = applyTransform(truncate(w), BINARY, b) as Uint8Array;
        expect(Array.from(tb)).toEqual(Array.from(b.subarray(0, w)));
      }),
    );
  });

  it('time transforms are monotonic', () => {
    fc.assert(
      fc.property(days, days, (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        for (const t of [YEAR, MONTH, DAY]) {
          expect((applyTransform(t, DATE, lo) as number) <= (applyTransform(t, DATE, hi) as number)).toBe(true);
        }
      }),
    );
    fc.assert(
      fc.property(micros, micros, (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        for (const t of [YEAR, MONTH, DAY, HOUR]) {
          expect((applyTransform(t, TIMESTAMP, lo) as number) <= (applyTransform(t, TIMESTAMP, hi) as number)).toBe(true);
          expect(applyTransform(t, TIMESTAMP_NS, lo * 1000n)).toBe(applyTransform(t, TIMESTAMP, lo));
        }
      }),
    );
  });

  it('years and months agree with the JS calendar, and day agrees for dates and timestamps', () => {
    fc.assert(
      fc.property(fc.integer({ min: -100_000_000, max: 100_000_000 }), (d) => {
        const date = new Date(d * 86_400_000);
        expect(civilFromDays(d)).toEqual({ year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() });
        const years = date.getUTCFullYear() - 1970;
        expect(applyTransform(YEAR, DATE, d)).toBe(years);
        expect(applyTransform(MONTH, DATE, d)).toBe(years * 12 + date.getUTCMonth());
        expect(applyTransform(DAY, TIMESTAMP, BigInt(d) * 86_400_000_000n + 1n)).toBe(d);
      }),
    );
  });
});
