import { describe, expect, it } from 'vitest';
import { type PrimitiveType, isLongValued, optionalField, parsePrimitive, requiredField } from '../../lib/iceberg/types.js';

describe('metadata schema fields', () => {
  it('requiredField and optionalField differ only in required, and carry a doc only when given', () => {
    expect(requiredField(509, 'contains_null', { type: 'boolean' })).toEqual({
      id: 509,
      name: 'contains_null',
      required: true,
      type: { type: 'boolean' },
    });
    expect('doc' in requiredField(1, 'a', { type: 'int' })).toBe(false);
    expect(optionalField(510, 'lower_bound', { type: 'binary' }, 'Partition lower bound for all files')).toEqual({
      id: 510,
      name: 'lower_bound',
      required: false,
      type: { type: 'binary' },
      doc: 'Partition lower bound for all files',
    });
  });
});

describe('isLongValued', () => {
  it('holds for exactly the types whose values are 64-bit integers', () => {
    const all = [
      'boolean', 'int', 'long', 'float', 'double', 'decimal(9,2)', 'date', 'time', 'timestamp', 'timestamptz',
      'timestamp_ns', 'timestamptz_ns', 'string', 'uuid', 'fixed[4]', 'binary', 'unknown',
    ].map(parsePrimitive);
    const longValued = all.filter((t: PrimitiveType) => isLongValued(t)).map((t) => t.type);
    expect(longValued).toEqual(['long', 'time', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);
    expect(isLongValued({ type: 'list', elementId: 1, elementRequired: true, element: { type: 'long' } })).toBe(false);
  });
});
