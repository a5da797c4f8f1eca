/**
 * Human-form partition values (format ↔ parse) and the inclusive projection of each transform:
 * whenever a value satisfies a predicate, its transform satisfies the projection (the property
 * that makes skipping a partition safe), plus the exact projections Java's Transform.project gives.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toBytes } from '../../lib/iceberg/bounds.js';
import { testValue } from '../../lib/iceberg/inclusive-metrics-evaluator.js';
import { ManifestContent, type ManifestFile, type PartitionFieldSummary } from '../../lib/iceberg/manifest-list.js';
import { manifestEvaluator } from '../../lib/iceberg/manifest-evaluator.js';
import { parseExpression } from '../../lib/iceberg/expression.js';
import { bindToTable, projectInclusive, type PredicateOp, type TypedPredicate } from '../../lib/iceberg/projections.js';
import { applyTransform, fromHumanString, toHumanString, transformResultType, type Transform } from '../../lib/iceberg/transform.js';
import type { PrimitiveType } from '../../lib/iceberg/types.js';
import type { IcebergValue } from '../../lib/iceberg/values.js';
import { newTableMetadata } from '../../lib/table/operations.js';

const T = (type: Exclude<PrimitiveType['type'], 'decimal' | 'fixed'>): PrimitiveType => ({ type }) as PrimitiveType;
const INT = T('int');
const LONG = T('long');
const DATE = T('date');
const STRING = T('string');
const TIMESTAMPTZ = T('timestamptz');
const TIMESTAMP_NS = T('timestamp_ns');
const DECIMAL: PrimitiveType = { type: 'decimal', precision: 9, scale: 2 };
const HOUR: Transform = { kind: 'hour' };
const DAY: Transform = { kind: 'day' };
const MONTH: Transform = { kind: 'month' };
const YEAR: Transform = { kind: 'year' };
const IDENTITY: Transform = { kind: 'identity' };

/** Timestamps (µs) from 1900 to 2100, dates likewise; pre-1970 values exercise the floor division. */
const micros = fc.bigInt({ min: -2_208_988_800_000_000n, max: 4_102_444_800_000_000n });
const days = fc.integer({ min: -25_567, max: 47_482 });

describe('human-form partition values', () => {
  it('parse what toHumanString prints, for every time transform and identity type', () => {
    const cases: [Transform, PrimitiveType, fc.Arbitrary<IcebergValue>][] = [
      [HOUR, INT, fc.integer({ min: -1_000_000, max: 1_500_000 })],
      [DAY, DATE, days],
      [MONTH, INT, fc.integer({ min: -2_000, max: 2_000 })],
      [YEAR, INT, fc.integer({ min: -1_969, max: 8_000 })],
      [IDENTITY, DATE, days],
      [IDENTITY, TIMESTAMPTZ, micros],
      [IDENTITY, T('timestamp'), micros],
      [IDENTITY, TIMESTAMP_NS, micros.map((m) => m * 1000n + 7n)],
      [IDENTITY, T('time'), fc.bigInt({ min: 0n, max: 86_399_999_999n })],
      [IDENTITY, DECIMAL, fc.bigInt({ min: -999_999_999n, max: 999_999_999n })],
      [IDENTITY, { type: 'decimal', precision: 20, scale: 9 }, fc.bigInt({ min: -(10n ** 20n) + 1n, max: 10n ** 20n - 1n })],
      [IDENTITY, T('uuid'), fc.uuid()],
      [IDENTITY, T('binary'), fc.uint8Array({ maxLength: 20 })],
      [IDENTITY, LONG, fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })],
      [IDENTITY, INT, fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })],
      [IDENTITY, T('double'), fc.double()],
      [IDENTITY, T('float'), fc.float()],
      [IDENTITY, STRING, fc.string()],
      [IDENTITY, T('boolean'), fc.boolean()],
    ];
    for (const [t, type, arb] of cases) {
      fc.assert(
        fc.property(arb, (v) => {
          const text = toHumanString(t, type, v);
          const back = fromHumanString(t, type, text);
          expect(toHumanString(t, type, back)).toBe(text);
          if (typeof v === 'number' && Number.isNaN(v)) expect(Number.isNaN(back)).toBe(true);
          else if (!(typeof v === 'number' && Object.is(v, -0))) expect(back).toEqual(v);
        }),
        { numRuns: 300 },
      );
    }
  });

  it('are what Java writes in partition paths', () => {
    expect(fromHumanString(HOUR, INT, '2026-01-01-04')).toBe(490_900);
    expect(fromHumanString(HOUR, INT, '1969-12-31-23')).toBe(-1);
    expect(fromHumanString(DAY, DATE, '2026-01-01')).toBe(20_454);
    expect(fromHumanString(MONTH, INT, '2026-01')).toBe(672);
    expect(fromHumanString(MONTH, INT, '1969-12')).toBe(-1);
    expect(fromHumanString(YEAR, INT, '2026')).toBe(56);
    expect(fromHumanString(IDENTITY, TIMESTAMPTZ, '2026-01-01T04:00:00+00:00')).toBe(1_767_240_000_000_000n);
    expect(fromHumanString(IDENTITY, TIMESTAMPTZ, '2026-01-01T04:00:00Z')).toBe(1_767_240_000_000_000n);
    expect(fromHumanString(IDENTITY, DECIMAL, '1.5E+3')).toBe(150_000n);
    expect(() => fromHumanString(HOUR, INT, '2026-01-01-24')).toThrow(`"2026-01-01-24" is not an hour 'yyyy-MM-dd-HH'`);
    expect(() => fromHumanString(DAY, DATE, '2026-1-1')).toThrow(`"2026-1-1" is not a day 'yyyy-MM-dd'`);
    expect(() => fromHumanString(IDENTITY, T('timestamp'), '2026-01-01T04:00:00Z')).toThrow(/is not a timestamp/);
    expect(() => fromHumanString(IDENTITY, DECIMAL, '0.001')).toThrow(/more than 2 digits after the point/);
  });
});

const OPS: PredicateOp[] = ['<', '<=', '>', '>=', '=', '!=', 'in', 'not in', 'is null', 'not null'];

/** Checks inclusiveness: x satisfies p ⇒ transform(x) satisfies project(p). */
function inclusive(t: Transform, type: PrimitiveType, values: fc.Arbitrary<IcebergValue>): void {
  fc.assert(
    fc.property(
      fc.oneof(values, fc.constant(null)),
      fc.constantFrom(...OPS),
      fc.array(values, { minLength: 1, maxLength: 3 }),
      (x, op, literals) => {
        const p: TypedPredicate = { op, type, values: op === 'is null' || op === 'not null' ? [] : op === 'in' || op === 'not in' ? literals : [literals[0]] };
        const projected = projectInclusive(t, p);
        if (!testValue(p, x) || projected === undefined) return;
        expect(projected.type).toEqual(transformResultType(t, type));
        expect(testValue(projected, x === null ? null : applyTransform(t, type, x))).toBe(true);
      },
    ),
    { numRuns: 2000 },
  );
}

describe('inclusive projection (Java Transform.project)', () => {
  it('never rules out a partition holding a matching value', () => {
    for (const t of [HOUR, DAY, MONTH, YEAR]) inclusive(t, TIMESTAMPTZ, micros);
    for (const t of [HOUR, DAY]) inclusive(t, TIMESTAMP_NS, micros.map((m) => m * 1000n));
    for (const t of [DAY, MONTH, YEAR]) inclusive(t, DATE, days);
    inclusive({ kind: 'bucket', numBuckets: 16 }, LONG, fc.bigInt({ min: -1000n, max: 1000n }));
    inclusive({ kind: 'bucket', numBuckets: 4 }, STRING, fc.string({ maxLength: 3 }));
    inclusive({ kind: 'truncate', width: 10 }, INT, fc.integer({ min: -100, max: 100 }));
    inclusive({ kind: 'truncate', width: 10 }, LONG, fc.bigInt({ min: -100n, max: 100n }));
    inclusive({ kind: 'truncate', width: 50 }, DECIMAL, fc.bigInt({ min: -1000n, max: 1000n }));
    inclusive({ kind: 'truncate', width: 2 }, STRING, fc.string({ maxLength: 4, unit: fc.constantFrom('a', 'b', 'c') }));
    inclusive(IDENTITY, STRING, fc.string({ maxLength: 2 }));
  });

  it('gives the predicates Java gives', () => {
    const ts = (iso: string): bigint => fromHumanString(IDENTITY, TIMESTAMPTZ, iso) as bigint;
    const p = (op: PredicateOp, ...values: IcebergValue[]): TypedPredicate => ({ op, type: TIMESTAMPTZ, values });
    const hour = (op: PredicateOp, ...values: IcebergValue[]): TypedPredicate => ({ op, type: INT, values });
    const h4 = fromHumanString(HOUR, INT, '2026-01-01-04') as number;
    expect(projectInclusive(HOUR, p('<', ts('2026-01-01T04:00:00Z')))).toEqual(hour('<=', h4 - 1));
    expect(projectInclusive(HOUR, p('<=', ts('2026-01-01T04:00:00Z')))).toEqual(hour('<=', h4));
    expect(projectInclusive(HOUR, p('>', ts('2026-01-01T04:59:59.999999Z')))).toEqual(hour('>=', h4 + 1));
    expect(projectInclusive(HOUR, p('>=', ts('2026-01-01T04:30:00Z')))).toEqual(hour('>=', h4));
    expect(projectInclusive(HOUR, p('=', ts('2026-01-01T04:30:00Z')))).toEqual(hour('=', h4));
    expect(projectInclusive(HOUR, p('!=', ts('2026-01-01T04:30:00Z')))).toBeUndefined();
    expect(projectInclusive(HOUR, p('not in', ts('2026-01-01T04:30:00Z')))).toBeUndefined();
    expect(projectInclusive(HOUR, p('is null'))).toEqual(hour('is null'));
    // Before 1970, Java 0.10 wrote one more: the projection accepts both (fixInclusiveTimeProjection).
    expect(projectInclusive(HOUR, p('=', ts('1969-12-31T22:30:00Z')))).toEqual(hour('in', -2, -1));
    expect(projectInclusive(HOUR, p('<=', ts('1969-12-31T22:30:00Z')))).toEqual(hour('<=', -1));
    expect(projectInclusive(DAY, { op: '=', type: DATE, values: [-5] })).toEqual({ op: '=', type: DATE, values: [-5] });
    const bucket: Transform = { kind: 'bucket', numBuckets: 8 };
    expect(projectInclusive(bucket, { op: '<', type: LONG, values: [5n] })).toBeUndefined();
    expect(projectInclusive(bucket, { op: 'in', type: LONG, values: [5n, 5n] })?.values).toHaveLength(1);
    const trunc: Transform = { kind: 'truncate', width: 3 };
    expect(projectInclusive(trunc, { op: '>', type: STRING, values: ['abcd'] })).toEqual({ op: '>=', type: STRING, values: ['abc'] });
    expect(projectInclusive(trunc, { op: '<', type: INT, values: [9] })).toEqual({ op: '<=', type: INT, values: [6] });
    expect(projectInclusive({ kind: 'void' }, { op: '=', type: INT, values: [9] })).toBeUndefined();
  });
});

describe('manifest evaluator (Java ManifestEvaluator)', () => {
  const metadata = newTableMetadata('/t', {
    schema: {
      type: 'struct',
      fields: [
        { id: 1, name: 'ts', required: false, type: TIMESTAMPTZ },
        { id: 2, name: 'action', required: false, type: STRING },
      ],
    },
    partitionFields: [
      { sourceId: 1, name: 'ts_hour', transform: HOUR },
      { sourceId: 2, name: 'action', transform: IDENTITY },
    ],
  });
  const withUnpartitioned = { ...metadata, partitionSpecs: [...metadata.partitionSpecs, { specId: 1, fields: [] }] };
  const specs = new Map(withUnpartitioned.partitionSpecs.map((s) => [s.specId, s]));
  const h = (s: string): number => fromHumanString(HOUR, INT, s) as number;
  const summary = (type: PrimitiveType, lower: IcebergValue, upper: IcebergValue, containsNull = false): PartitionFieldSummary => ({
    containsNull,
    containsNan: false,
    lowerBound: lower === null ? null : toBytes(type, lower),
    upperBound: upper === null ? null : toBytes(type, upper),
  });
  const manifest = (partitions: PartitionFieldSummary[] | null, specId = 0, content: ManifestContent = ManifestContent.Data): ManifestFile => ({
    manifestPath: '/m.avro',
    manifestLength: 1n,
    partitionSpecId: specId,
    content,
    sequenceNumber: 1n,
    minSequenceNumber: 1n,
    addedSnapshotId: 1n,
    addedFilesCount: 1,
    existingFilesCount: 0,
    deletedFilesCount: 0,
    addedRowsCount: 1n,
    existingRowsCount: 0n,
    deletedRowsCount: 0n,
    partitions,
  });
  const may = (where: string, m: ManifestFile): boolean =>
    manifestEvaluator(bindToTable(parseExpression(where), withUnpartitioned), specs).mayMatch(m);
  const hours = manifest([summary(INT, h('2026-01-01-02'), h('2026-01-01-05')), summary(STRING, 'click', 'view', true)]);

  it('skips a manifest whose partition ranges cannot match', () => {
    expect(may("ts_hour >= '2026-01-01-05'", hours)).toBe(true);
    expect(may("ts_hour > '2026-01-01-05'", hours)).toBe(false);
    expect(may("ts_hour < '2026-01-01-02'", hours)).toBe(false);
    expect(may("ts_hour in ('2026-01-01-01', '2026-01-01-06')", hours)).toBe(false);
    expect(may("ts >= '2026-01-01T06:00:00Z'", hours)).toBe(false);
    expect(may("ts < '2026-01-01T02:00:00.000001Z'", hours)).toBe(true);
    expect(may("action = 'buy'", hours)).toBe(false);
    expect(may('action is null', hours)).toBe(true);
    expect(may('ts_hour is null', hours)).toBe(false);
    expect(may("action = 'buy' or ts_hour = '2026-01-01-03'", hours)).toBe(true);
    expect(may("not (ts_hour <= '2026-01-01-05')", hours)).toBe(false);
  });

  it('keeps what it cannot judge: no summaries, all-null fields for is null, unpartitioned delete manifests', () => {
    expect(may("ts_hour > '2030-01-01-00'", manifest(null))).toBe(true);
    const allNull = manifest([summary(INT, null, null, true), summary(STRING, null, null, true)]);
    expect(may("ts_hour > '2030-01-01-00'", allNull)).toBe(false);
    expect(may('ts_hour is null', allNull)).toBe(true);
    expect(may('ts_hour is not null', allNull)).toBe(false);
    // An unpartitioned spec holds nulls for partition fields; its deletes apply everywhere.
    expect(may("ts_hour > '2030-01-01-00'", manifest([], 1))).toBe(false);
    expect(may("ts_hour > '2030-01-01-00'", manifest([], 1, ManifestContent.Deletes))).toBe(true);
    expect(may("ts > '2030-01-01T00:00:00Z'", manifest([], 1))).toBe(true);
  });
});
