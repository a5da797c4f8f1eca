import { describe, expect, it } from 'vitest';
import { partitionFromJson, partitionToJson } from '../../lib/iceberg/data-file-json.js';
import { fromJsonValue } from '../../lib/iceberg/json-single-value.js';
import { partitionKey } from '../../lib/iceberg/partition.js';
import type { StructType } from '../../lib/iceberg/types.js';

const TYPE: StructType = {
  type: 'struct',
  fields: [
    { id: 1000, name: 'big', required: false, type: { type: 'long' } },
    { id: 1001, name: 'day', required: false, type: { type: 'date' } },
    { id: 1002, name: 'score', required: false, type: { type: 'double' } },
    { id: 1003, name: 'amount', required: false, type: { type: 'decimal', precision: 10, scale: 2 } },
    { id: 1004, name: 'name', required: false, type: { type: 'string' } },
  ],
};

describe('partition values in messages', () => {
  it('are plain JSON that survives JSON.stringify and parses back exactly', () => {
    const partition = { big: 9007199254740993n, day: 19000, score: 1.5, amount: -1234n, name: '42' };
    const json = partitionToJson(partition, TYPE);
    expect(JSON.stringify(json)).toBe('{"big":"9007199254740993","day":"2022-01-08","score":1.5,"amount":"-12.34","name":"42"}');
    expect(partitionFromJson(JSON.parse(JSON.stringify(json)) as Record<string, unknown>, TYPE)).toEqual(partition);
    const small = { big: 7n, day: null, score: null, amount: null, name: null };
    expect(JSON.stringify(partitionToJson(small, TYPE))).toBe('{"big":7,"day":null,"score":null,"amount":null,"name":null}');
    expect(partitionFromJson(partitionToJson(small, TYPE), TYPE)).toEqual(small);
  });

  it('keep a double -0.0 apart from 0.0, and read an int "-0" as 0', () => {
    const type: StructType = { type: 'struct', fields: [{ id: 1000, name: 'd', required: false, type: { type: 'double' } }, { id: 1001, name: 'i', required: false, type: { type: 'int' } }] };
    const json = JSON.parse(JSON.stringify(partitionToJson({ d: -0, i: -0 }, type))) as Record<string, unknown>;
    expect(json).toEqual({ d: '-0.0', i: 0 });
    const back = partitionFromJson(json, type);
    expect(Object.is(back.d, -0)).toBe(true);
    expect(Object.is(back.i, 0)).toBe(true);
    expect(partitionKey(0, { d: -0, i: 0 })).not.toBe(partitionKey(0, { d: 0, i: 0 }));
    expect(Object.is(fromJsonValue({ type: 'int' }, -0), 0)).toBe(true);
    expect(partitionKey(0, { i: fromJsonValue({ type: 'int' }, -0) })).toBe(partitionKey(0, { i: 0 }));
  });

  it('carry NaN and the infinities of a float or double by name', () => {
    const type: StructType = { type: 'struct', fields: [{ id: 1000, name: 'd', required: false, type: { type: 'double' } }, { id: 1001, name: 'f', required: false, type: { type: 'float' } }] };
    for (const x of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      const json = JSON.parse(JSON.stringify(partitionToJson({ d: x, f: x }, type))) as Record<string, unknown>;
      expect(json).toEqual({ d: String(x), f: String(x) });
      expect(partitionFromJson(json, type)).toEqual({ d: x, f: x });
    }
  });
});
