import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromJsonValue, toJsonValue } from '../../lib/iceberg/json-single-value.js';
import { parseJson, stringifyJson } from '../../lib/iceberg/json.js';
import type { IcebergType, PrimitiveType, StructType } from '../../lib/iceberg/types.js';
import { uuidFromBytes, type IcebergValue } from '../../lib/iceberg/values.js';

const p = (type: string): PrimitiveType => ({ type }) as PrimitiveType;
/** Value → JSON text → value, through the project's lossless JSON. */
const text = (t: IcebergType, v: IcebergValue): string => stringifyJson(toJsonValue(t, v));
const back = (t: IcebergType, s: string): IcebergValue => fromJsonValue(t, parseJson(s));

describe('JSON single values: the spec examples (Appendix D)', () => {
  const examples: Array<[IcebergType, IcebergValue, string]> = [
    [p('boolean'), true, 'true'],
    [p('int'), 34, '34'],
    [p('long'), 34n, '34'],
    [p('float'), 1, '1.0'],
    [p('double'), 1, '1.0'],
    [{ type: 'decimal', precision: 4, scale: 2 }, 1420n, '"14.20"'],
    [p('date'), 17486, '"2017-11-16"'],
    [p('time'), 81068123456n, '"22:31:08.123456"'],
    [p('timestamp'), 1510871468123456n, '"2017-11-16T22:31:08.123456"'],
    [p('timestamptz'), 1510871468123456n, '"2017-11-16T22:31:08.123456+00:00"'],
    [p('timestamp_ns'), 1510871468123456789n, '"2017-11-16T22:31:08.123456789"'],
    [p('timestamptz_ns'), 1510871468123456789n, '"2017-11-16T22:31:08.123456789+00:00"'],
    [p('string'), 'iceberg', '"iceberg"'],
    [p('uuid'), 'f79c3e09-677c-4bbd-a479-3f349cb785e7', '"f79c3e09-677c-4bbd-a479-3f349cb785e7"'],
    [{ type: 'fixed', length: 4 }, Uint8Array.of(0, 1, 2, 255), '"000102ff"'],
    [p('binary'), Uint8Array.of(0, 1, 2, 255), '"000102ff"'],
    [
      { type: 'struct', fields: [{ id: 1, name: 'a', required: true, type: p('int') }, { id: 2, name: 'b', required: false, type: p('string') }] },
      { a: 1, b: 'bar' },
      '{"1":1,"2":"bar"}',
    ],
    [{ type: 'list', elementId: 3, elementRequired: true, element: p('int') }, [1, 2, 3], '[1,2,3]'],
    [
      { type: 'map', keyId: 4, key: p('string'), valueId: 5, valueRequired: true, value: p('int') },
      [['a', 1], ['b', 2]],
      '{"keys":["a","b"],"values":[1,2]}',
    ],
  ];
  for (const [type, value, json] of examples) {
    it(`${JSON.stringify(type.type)} ${json}`, () => {
      expect(text(type, value)).toBe(json);
      expect(back(type, json)).toEqual(value);
    });
  }

  it('negative decimal scales use scientific notation ("2E+20")', () => {
    const t: IcebergType = { type: 'decimal', precision: 5, scale: -20 };
    expect(text(t, 2n)).toBe('"2E+20"');
    expect(back(t, '"2E+20"')).toBe(2n);
    expect(text(t, -123n)).toBe('"-1.23E+22"');
  });
  it('small and negative decimals, dates before 1970 and times at midnight', () => {
    expect(text({ type: 'decimal', precision: 9, scale: 3 }, -5n)).toBe('"-0.005"');
    expect(text(p('date'), -1)).toBe('"1969-12-31"');
    expect(text(p('timestamp'), -1n)).toBe('"1969-12-31T23:59:59.999999"');
    expect(text(p('time'), 0n)).toBe('"00:00:00.000000"');
  });
  it('longs beyond 2^53 survive', () => {
    expect(text(p('long'), 2n ** 63n - 1n)).toBe('9223372036854775807');
    expect(back(p('long'), '-9223372036854775808')).toBe(-(2n ** 63n));
  });
  it('floats print their shortest float32 digits', () => {
    expect(text(p('float'), Math.fround(0.1))).toBe('0.1');
    expect(text(p('double'), 0.1)).toBe('0.1');
    expect(text(p('double'), 1e21)).toBe('1e+21');
  });
  it('struct nulls are omitted and missing ids read as null', () => {
    const t: StructType = { type: 'struct', fields: [{ id: 1, name: 'a', required: false, type: p('int') }, { id: 2, name: 'b', required: false, type: p('string') }] };
    expect(text(t, { a: null, b: 'x' })).toBe('{"2":"x"}');
    expect(back(t, '{"1":5}')).toEqual({ a: 5, b: null });
  });
  it('accepts Z and +00:00 for timestamptz, lenient time forms, uppercase hex', () => {
    expect(back(p('timestamptz'), '"2017-11-16T22:31:08Z"')).toBe(1510871468000000n);
    expect(back(p('time'), '"22:31"')).toBe(81060000000n);
    expect(back(p('binary'), '"00FF"')).toEqual(Uint8Array.of(0, 255));
  });
  it('rejects what the spec forbids, naming type and value', () => {
    expect(() => back(p('timestamptz'), '"2017-11-16T22:31:08.123456+01:00"')).toThrow(/offset must be \+00:00/);
    expect(() => back(p('timestamptz'), '"2017-11-16T22:31:08.123456"')).toThrow(/zone offset is required/);
    expect(() => back(p('timestamp'), '"2017-11-16T22:31:08.123456+00:00"')).toThrow(/must not include a zone offset/);
    expect(() => back({ type: 'decimal', precision: 9, scale: 2 }, '"14.2"')).toThrow(/scale 1, expected 2/);
    expect(() => back({ type: 'fixed', length: 3 }, '"0001"')).toThrow(/expected 3 bytes/);
    expect(() => back(p('int'), '2147483648')).toThrow(/out of the int range/);
    expect(() => back(p('int'), '"34"')).toThrow(/cannot parse "34" as a int value/);
    expect(() => back(p('uuid'), '"f79c3e09677c4bbda4793f349cb785e7"')).toThrow(/uuid/);
    expect(() => back(p('date'), '"2017-02-30"')).toThrow(/invalid ISO date/);
    expect(() => toJsonValue(p('double'), Number.NaN)).toThrow(/NaN/);
  });
});

describe('JSON single values round trip (property)', () => {
  const cases: Array<[IcebergType, fc.Arbitrary<IcebergValue>]> = [
    [p('boolean'), fc.boolean()],
    [p('int'), fc.integer()],
    [p('long'), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })],
    [p('float'), fc.float({ noNaN: true, noDefaultInfinity: true })],
    [p('double'), fc.double({ noNaN: true, noDefaultInfinity: true })],
    [{ type: 'decimal', precision: 38, scale: 7 }, fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n })],
    [{ type: 'decimal', precision: 9, scale: 0 }, fc.bigInt({ min: -999999999n, max: 999999999n })],
    [p('date'), fc.integer({ min: -719162, max: 2932896 })],
    [p('time'), fc.bigInt({ min: 0n, max: 86_400_000_000n - 1n })],
    [p('timestamp'), fc.bigInt({ min: -62135596800000000n, max: 253402300799999999n })],
    [p('timestamptz'), fc.bigInt({ min: -62135596800000000n, max: 253402300799999999n })],
    [p('timestamp_ns'), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })],
    [p('timestamptz_ns'), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })],
    [p('string'), fc.string({ unit: 'binary' })],
    [p('uuid'), fc.uint8Array({ minLength: 16, maxLength: 16 }).map(uuidFromBytes)],
    [{ type: 'fixed', length: 5 }, fc.uint8Array({ minLength: 5, maxLength: 5 })],
    [p('binary'), fc.uint8Array()],
  ];
  for (const [type, arb] of cases) {
    it(JSON.stringify(type), () => {
      fc.assert(
        fc.property(arb, (v) => {
          const r = back(type, text(type, v));
          if (typeof v === 'number') expect(Object.is(r, v)).toBe(true);
          else expect(r).toEqual(v);
        }),
        { numRuns: 300 },
      );
    });
  }
  it('nested list<map<string, struct>>', () => {
    const t: IcebergType = {
      type: 'list', elementId: 1, elementRequired: false,
      element: { type: 'map', keyId: 2, key: p('string'), valueId: 3, valueRequired: false,
        value: { type: 'struct', fields: [{ id: 4, name: 'n', required: false, type: p('long') }] } },
    };
    const arb = fc.array(fc.option(fc.array(fc.tuple(fc.string(), fc.option(fc.record({ n: fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })) }))))));
    fc.assert(
      fc.property(arb, (v) => {
        expect(back(t, text(t, v as IcebergValue))).toEqual(v);
      }),
      { numRuns: 200 },
    );
  });
});
