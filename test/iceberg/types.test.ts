import { describe, expect, it } from 'vitest';
import { optionalField, requiredField } from '../../lib/iceberg/types.js';

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
