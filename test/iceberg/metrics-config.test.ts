import { describe, expect, it } from 'vitest';
import {
  DEFAULT_METRICS_MODE,
  limitFieldIds,
  metricsConfigFromProperties,
  metricsModeFor,
  metricsModesById,
  metricsModeToString,
  parseMetricsMode,
} from '../../lib/iceberg/metrics-config.js';
import type { IcebergType, NestedField, StructType } from '../../lib/iceberg/types.js';

const INT: IcebergType = { type: 'int' };
const STR: IcebergType = { type: 'string' };
const f = (id: number, name: string, type: IcebergType, required = false): NestedField => ({ id, name, type, required });
const struct = (...fields: NestedField[]): StructType => ({ type: 'struct', fields });

describe('parseMetricsMode', () => {
  it('parses the four modes, case-insensitively', () => {
    expect(parseMetricsMode('none')).toEqual({ kind: 'none' });
    expect(parseMetricsMode('Counts')).toEqual({ kind: 'counts' });
    expect(parseMetricsMode('FULL')).toEqual({ kind: 'full' });
    expect(parseMetricsMode('truncate(8)')).toEqual({ kind: 'truncate', length: 8 });
    expect(metricsModeToString({ kind: 'truncate', length: 8 })).toBe('truncate(8)');
  });
  it('rejects truncate(0) and unknown text', () => {
    expect(() => parseMetricsMode('truncate(0)')).toThrow(/invalid metrics mode "truncate\(0\)"/);
    expect(() => parseMetricsMode('some')).toThrow(/invalid metrics mode/);
  });
});

describe('limitFieldIds (vectors of Java TestMetricsConfig)', () => {
  it('nested structs: primitives of a struct before its nested structs', () => {
    const schema = struct(
      f(11, 'level1_struct_a', struct(
        f(21, 'level2_primitive_i', INT),
        f(22, 'level2_struct_a', struct(f(31, 'level3_primitive_s', STR))),
        f(23, 'level2_primitive_b', { type: 'boolean' }),
      )),
      f(12, 'level1_struct_b', struct(
        f(24, 'level2_primitive_i', INT),
        f(25, 'level2_struct_b', struct(f(32, 'level3_primitive_s', STR))),
      )),
      f(13, 'level1_primitive_i', INT),
    );
    const expected = [[13], [13, 21], [13, 21, 23], [13, 21, 23, 31], [13, 21, 23, 31, 24], [13, 21, 23, 31, 24, 32], [13, 21, 23, 31, 24, 32]];
    expected.forEach((ids, i) => expect([...limitFieldIds(schema, i + 1)].sort()).toEqual([...ids].sort()));
  });
  it('maps and lists of maps', () => {
    const map = struct(f(1, 'map', { type: 'map', keyId: 2, key: INT, valueId: 3, valueRequired: true, value: INT }, true), f(4, 'top', INT, true));
    expect([...limitFieldIds(map, 1)]).toEqual([4]);
    expect([...limitFieldIds(map, 2)]).toEqual([4, 2]);
    expect([...limitFieldIds(map, 4)]).toEqual([4, 2, 3]);
    const listOfMaps = struct(
      f(1, 'array_of_maps', { type: 'list', elementId: 2, elementRequired: true, element: { type: 'map', keyId: 3, key: INT, valueId: 4, valueRequired: true, value: INT } }, true),
      f(5, 'top', INT, true),
    );
    expect([...limitFieldIds(listOfMaps, 2)]).toEqual([5, 3]);
    expect([...limitFieldIds(listOfMaps, 4)]).toEqual([5, 3, 4]);
  });
});

describe('metricsConfigFromProperties', () => {
  const schema = struct(f(1, 'id', INT, true), f(2, 'data', STR), f(3, 'category', STR), f(4, 'nested', struct(f(5, 'x', STR))));

  it('defaults to truncate(16) everywhere', () => {
    const c = metricsConfigFromProperties({}, schema);
    expect(c.defaultMode).toEqual(DEFAULT_METRICS_MODE);
    expect(metricsModeFor(c, schema, 5)).toEqual({ kind: 'truncate', length: 16 });
  });

  it('per-column properties by dotted name override the default', () => {
    const c = metricsConfigFromProperties(
      {
        'write.metadata.metrics.default': 'counts',
        'write.metadata.metrics.column.id': 'full',
        'write.metadata.metrics.column.data': 'none',
        'write.metadata.metrics.column.nested.x': 'truncate(4)',
      },
      schema,
    );
    expect(metricsModeFor(c, schema, 1)).toEqual({ kind: 'full' });
    expect(metricsModeFor(c, schema, 2)).toEqual({ kind: 'none' });
    expect(metricsModeFor(c, schema, 3)).toEqual({ kind: 'counts' });
    expect(metricsModeFor(c, schema, 5)).toEqual({ kind: 'truncate', length: 4 });
  });

  it('an invalid column mode falls back to the default, an invalid default to truncate(16)', () => {
    const c = metricsConfigFromProperties(
      new Map([
        ['write.metadata.metrics.default', 'bogus'],
        ['write.metadata.metrics.column.data', 'truncate(0)'],
      ]),
      schema,
    );
    expect(c.defaultMode).toEqual(DEFAULT_METRICS_MODE);
    expect(metricsModeFor(c, schema, 2)).toEqual(DEFAULT_METRICS_MODE);
  });

  it('sort columns get at least truncate(16) when the default is none or counts', () => {
    const c = metricsConfigFromProperties({ 'write.metadata.metrics.default': 'none' }, schema, [3]);
    expect(metricsModeFor(c, schema, 3)).toEqual({ kind: 'truncate', length: 16 });
    expect(metricsModeFor(c, schema, 2)).toEqual({ kind: 'none' });
    const full = metricsConfigFromProperties({ 'write.metadata.metrics.default': 'full' }, schema, [3]);
    expect(metricsModeFor(full, schema, 3)).toEqual({ kind: 'full' });
    // An explicit column property still wins over the sort promotion.
    const explicit = metricsConfigFromProperties({ 'write.metadata.metrics.column.category': 'counts' }, schema, [3]);
    expect(metricsModeFor(explicit, schema, 3)).toEqual({ kind: 'counts' });
  });

  it('beyond max-inferred-column-defaults only the first columns keep metrics', () => {
    const wide = struct(...Array.from({ length: 105 }, (_, i) => f(i + 1, `c${i + 1}`, INT)));
    const c = metricsConfigFromProperties({}, wide);
    const modes = metricsModesById(c, wide);
    expect(c.defaultMode).toEqual({ kind: 'none' });
    expect(modes.get(100)).toEqual(DEFAULT_METRICS_MODE);
    expect(modes.get(101)).toEqual({ kind: 'none' });
    expect([...modes.values()].filter((m) => m.kind === 'truncate')).toHaveLength(100);

    const small = metricsConfigFromProperties({ 'write.metadata.metrics.max-inferred-column-defaults': '3' }, schema);
    // 4 fields + struct id 4 = 5 ids > 3: ids 1, 2, 3 keep truncate(16), the struct's x gets none.
    expect(metricsModeFor(small, schema, 3)).toEqual(DEFAULT_METRICS_MODE);
    expect(metricsModeFor(small, schema, 5)).toEqual({ kind: 'none' });
    // An explicit default disables the inference.
    const explicit = metricsConfigFromProperties({ 'write.metadata.metrics.default': 'full' }, wide);
    expect(metricsModeFor(explicit, wide, 105)).toEqual({ kind: 'full' });
  });

  it('exactly 100 ids (structs counted) keep the default everywhere', () => {
    const hundred = struct(...Array.from({ length: 99 }, (_, i) => f(i + 1, `c${i + 1}`, INT)), f(100, 's', struct()));
    expect(metricsConfigFromProperties({}, hundred).defaultMode).toEqual(DEFAULT_METRICS_MODE);
    const over = struct(...Array.from({ length: 99 }, (_, i) => f(i + 1, `c${i + 1}`, INT)), f(100, 's', struct(f(101, 'y', INT))));
    expect(metricsConfigFromProperties({}, over).defaultMode).toEqual({ kind: 'none' });
  });
});
