import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors.js';
import { parsePartitionFilter } from '../../lib/compaction/partition-filter.js';
import { toBytes } from '../../lib/iceberg/bounds.js';
import { FileContent, type DataFile } from '../../lib/iceberg/manifest.js';
import type { PartitionField } from '../../lib/iceberg/partition.js';
import type { TableMetadata } from '../../lib/iceberg/table-metadata.js';
import type { PrimitiveType } from '../../lib/iceberg/types.js';
import type { IcebergValue, Row } from '../../lib/iceberg/values.js';
import { newTableMetadata } from '../../lib/table/operations.js';

const TIMESTAMPTZ: PrimitiveType = { type: 'timestamptz' };
const SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'action', required: false, type: { type: 'string' as const } },
    { id: 3, name: 'ts', required: false, type: TIMESTAMPTZ },
    { id: 4, name: 'd', required: false, type: { type: 'date' as const } },
    { id: 5, name: 'n', required: false, type: { type: 'int' as const } },
    { id: 6, name: 'amount', required: false, type: { type: 'decimal' as const, precision: 10, scale: 2 } },
    { id: 7, name: 'flag', required: false, type: { type: 'boolean' as const } },
  ],
};
const FIELDS: Omit<PartitionField, 'fieldId'>[] = [
  { sourceId: 2, name: 'action', transform: { kind: 'identity' } },
  { sourceId: 3, name: 'ts_hour', transform: { kind: 'hour' } },
  { sourceId: 4, name: 'd_day', transform: { kind: 'day' } },
  { sourceId: 3, name: 'ts_month', transform: { kind: 'month' } },
  { sourceId: 3, name: 'ts_year', transform: { kind: 'year' } },
  { sourceId: 1, name: 'id_bucket', transform: { kind: 'bucket', numBuckets: 8 } },
  { sourceId: 5, name: 'n_trunc', transform: { kind: 'truncate', width: 10 } },
  { sourceId: 6, name: 'amount', transform: { kind: 'identity' } },
  { sourceId: 7, name: 'flag', transform: { kind: 'identity' } },
];
/** Spec 0 as above; spec 1 (an older layout) has only `action`. */
const BASE = newTableMetadata('/tables/t', { schema: SCHEMA, partitionFields: FIELDS });
const METADATA: TableMetadata = {
  ...BASE,
  partitionSpecs: [...BASE.partitionSpecs, { specId: 1, fields: [{ sourceId: 2, fieldId: 1000, name: 'action', transform: { kind: 'identity' } }] }],
};

const HOUR = 3_600_000_000n;
/** 2026-01-01T04:00:00Z in µs, and its hour ordinal. */
const T4 = 1_767_240_000_000_000n;
const H4 = Number(T4 / HOUR);

/** One partition: 2026-01-01-04, day 2026-01-01, bucket 3, n_trunc 10, amount 12.50. */
const P: Row = { action: 'click', ts_hour: H4, d_day: 20454, ts_month: 672, ts_year: 56, id_bucket: 3, n_trunc: 10, amount: 1250n, flag: true };

function file(partition: Row = P, specId = 0, metrics: Partial<DataFile> = {}): DataFile {
  return { content: FileContent.Data, filePath: '/f', fileFormat: 'PARQUET', specId, partition, recordCount: 10n, fileSizeInBytes: 100n, ...metrics };
}
const matches = (text: string, f: DataFile = file()): boolean => parsePartitionFilter(text, METADATA).mayMatch(f);
const error = (text: string, metadata = METADATA): string => {
  try {
    parsePartitionFilter(text, metadata);
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as Error).message;
  }
  throw new Error(`"${text}" parsed`);
};
/** Column metrics of one column: bounds and counts. */
function metrics(id: number, type: PrimitiveType, lower: IcebergValue, upper: IcebergValue, nulls = 0n, values = 10n): Partial<DataFile> {
  return {
    lowerBounds: new Map([[id, toBytes(type, lower)]]),
    upperBounds: new Map([[id, toBytes(type, upper)]]),
    nullValueCounts: new Map([[id, nulls]]),
    valueCounts: new Map([[id, values]]),
  };
}

describe('--where on partition fields', () => {
  it('takes each transform result in the human form health prints (Java partition paths)', () => {
    expect(matches("ts_hour >= '2026-01-01-04'")).toBe(true);
    expect(matches("ts_hour < '2026-01-01-04'")).toBe(false);
    expect(matches("ts_hour = '2026-01-01-04' and ts_hour > '2025-12-31-23' and ts_hour <= '2026-01-01-04'")).toBe(true);
    expect(matches("d_day = '2026-01-01' and d_day < '2026-01-02' and d_day > '2025-12-31'")).toBe(true);
    expect(matches("ts_month = '2026-01' and ts_month > '2025-12'")).toBe(true);
    expect(matches("ts_year = '2026' and ts_year < '2027'")).toBe(true);
    expect(matches("amount = '12.50' and amount = 12.5 and amount > '12.49'")).toBe(true);
    expect(matches("action in ('view', 'click') and flag = true and n_trunc = 10 and id_bucket in (1, 3)")).toBe(true);
  });

  it('keeps ordinals for hour, day, month and year, compared as numbers (not everything)', () => {
    expect(matches(`ts_hour = ${H4}`)).toBe(true);
    expect(matches(`ts_hour > ${H4}`)).toBe(false);
    expect(matches('ts_hour >= 10')).toBe(true);
    expect(matches('ts_hour < 10')).toBe(false);
    expect(matches('d_day = 20454 and ts_month = 672 and ts_year = 56')).toBe(true);
  });

  it('refuses a literal of another type, naming the field, the literal and both types', () => {
    expect(error('ts_hour >= 1.5')).toBe(
      `/tables/t: filter "ts_hour >= 1.5": cannot compare partition field ts_hour (hour(ts), int) with 1.5 (a number): not a whole number; expected an hour 'yyyy-MM-dd-HH' or hours since 1970-01-01 00:00`,
    );
    expect(error("ts_hour >= '2026-01-01T04'")).toBe(
      `/tables/t: filter "ts_hour >= '2026-01-01T04'": cannot compare partition field ts_hour (hour(ts), int) with '2026-01-01T04' (a string): "2026-01-01T04" is not an hour 'yyyy-MM-dd-HH'; expected an hour 'yyyy-MM-dd-HH' or hours since 1970-01-01 00:00`,
    );
    expect(error("ts_month = '2026-13'")).toMatch(/"2026-13" is not a month 'yyyy-MM'/);
    expect(error("d_day = '2026-02-30'")).toMatch(/"2026-02-30" is not a day 'yyyy-MM-dd'/);
    expect(error("id_bucket = '3'")).toBe(`/tables/t: filter "id_bucket = '3'": cannot compare partition field id_bucket (bucket[8](id), int) with '3' (a string)`);
    expect(error('flag = 1')).toBe('/tables/t: filter "flag = 1": cannot compare column flag (boolean) with 1 (a number)');
    expect(error("amount = '12.505'")).toMatch(/cannot compare column amount \(decimal\(10, 2\)\) with '12.505' \(a string\)/);
  });

  it('has SQL null semantics; a file of a spec without the field holds nulls there', () => {
    const nulls = file({ ...P, ts_hour: null });
    expect(matches("ts_hour = '2026-01-01-04'", nulls)).toBe(false);
    expect(matches("ts_hour != '2026-01-01-04'", nulls)).toBe(false);
    expect(matches("not (ts_hour < '2026-01-01-04')", nulls)).toBe(false);
    expect(matches('ts_hour not in (5)', nulls)).toBe(false);
    expect(matches('ts_hour is null and ts_hour = null', nulls)).toBe(true);
    expect(matches('ts_hour is not null', nulls)).toBe(false);
    const older = file({ action: 'click' }, 1);
    expect(matches("ts_hour >= '2026-01-01-04'", older)).toBe(false);
    expect(matches('ts_hour is null', older)).toBe(true);
    expect(matches("action = 'click'", older)).toBe(true);
  });

  it('binds and tighter than or; not is pushed to the predicates; keywords are case-insensitive', () => {
    expect(matches("action = 'x' or action = 'click' and ts_hour = 11")).toBe(false);
    expect(matches(`(action = 'x' or action = 'click') and ts_hour = ${H4}`)).toBe(true);
    expect(matches("NOT action IN ('x') AND ts_hour IS NOT NULL")).toBe(true);
    expect(matches("not (action = 'click' and flag = false)")).toBe(true);
    expect(matches("action = 'it''s'", file({ ...P, action: "it's" }))).toBe(true);
    expect(matches('"ts_hour" >= 0')).toBe(true);
  });
});

describe('--where on source columns', () => {
  it('projects a timestamp range onto hour, month and year partitions (Java Timestamps.project)', () => {
    expect(matches("ts >= '2026-01-01T04:00:00Z'")).toBe(true);
    expect(matches("ts >= '2026-01-01T04:59:59.999999+00:00'")).toBe(true);
    expect(matches("ts >= '2026-01-01T05:00:00Z'")).toBe(false);
    expect(matches("ts < '2026-01-01T04:00:00Z'")).toBe(false);
    expect(matches("ts < '2026-01-01T04:00:00.000001Z'")).toBe(true);
    expect(matches("ts = '2026-01-01T04:30:00Z'")).toBe(true);
    expect(matches("ts in ('2025-01-01T04:30:00Z', '2026-01-01T05:00:00Z')")).toBe(false);
    // != has no inclusive projection: the partition alone cannot rule it out.
    expect(matches("ts != '2026-01-01T04:30:00Z'")).toBe(true);
  });

  it('projects through day, bucket, truncate and identity', () => {
    expect(matches("d = '2026-01-01' and d < '2026-01-02' and d > '2025-12-31'")).toBe(true);
    expect(matches("d > '2026-01-01'")).toBe(false);
    // bucket[8] of 3 is 3? Only equality and in project through a bucket.
    const inBucket = [...Array(200).keys()].map(BigInt).filter((id) => matches(`id = ${id}`));
    expect(inBucket.length).toBeGreaterThan(0);
    expect(inBucket.length).toBeLessThan(200);
    expect(matches('id > 0 and id < 1000000')).toBe(true);
    expect(matches('n >= 10 and n < 20 and n = 15')).toBe(true);
    expect(matches('n < 10')).toBe(false);
    expect(matches('n >= 20')).toBe(false);
    expect(matches("action >= 'click' and action != 'view'")).toBe(true);
    expect(matches("action != 'click'")).toBe(false);
  });

  it('prunes files by column metrics (InclusiveMetricsEvaluator)', () => {
    const f = file(P, 0, metrics(3, TIMESTAMPTZ, T4 + 600_000_000n, T4 + 1_200_000_000n));
    expect(matches("ts >= '2026-01-01T04:10:00Z'", f)).toBe(true);
    expect(matches("ts > '2026-01-01T04:20:00Z'", f)).toBe(false);
    expect(matches("ts < '2026-01-01T04:10:00Z'", f)).toBe(false);
    expect(matches("ts <= '2026-01-01T04:10:00Z'", f)).toBe(true);
    expect(matches("ts = '2026-01-01T04:30:00Z'", f)).toBe(false);
    expect(matches("ts in ('2026-01-01T04:15:00Z', '2026-01-01T05:15:00Z')", f)).toBe(true);
    expect(matches('ts is null', f)).toBe(false);
    expect(matches('ts is not null', f)).toBe(true);
    // Null ids land in a null bucket, so `id is null` projects to `id_bucket is null`.
    const allNull = file({ ...P, id_bucket: null }, 0, { nullValueCounts: new Map([[1, 10n]]), valueCounts: new Map([[1, 10n]]) });
    expect(matches('id is not null', allNull)).toBe(false);
    expect(matches('id > 0', allNull)).toBe(false);
    expect(matches('id is null', allNull)).toBe(true);
    expect(matches('id is null', file(P, 0, { nullValueCounts: new Map([[1, 1n]]) }))).toBe(false);
    const one = file(P, 0, metrics(1, { type: 'long' }, 5n, 5n));
    expect(matches('id != 5', one)).toBe(false);
    expect(matches('id not in (4, 5)', one)).toBe(false);
    expect(matches('id != 6', one)).toBe(true);
    // No metrics: the file may match; no rows: it cannot.
    expect(matches('id > 12345')).toBe(true);
    expect(matches('id is null', file(P, 0, { recordCount: 0n }))).toBe(false);
  });

  it('mixes partition fields and columns in one filter', () => {
    const f = file(P, 0, metrics(1, { type: 'long' }, 100n, 200n));
    expect(matches("ts_hour = '2026-01-01-04' and id < 150", f)).toBe(true);
    expect(matches("ts_hour = '2026-01-01-04' and id < 100", f)).toBe(false);
    expect(matches("ts_hour = '2026-01-01-05' or id < 150", f)).toBe(true);
    expect(matches("not (ts_hour = '2026-01-01-04' and id >= 100)", f)).toBe(false);
  });

  it('refuses type mismatches, unknown and ambiguous names', () => {
    expect(error('action > 5')).toBe('/tables/t: filter "action > 5": cannot compare column action (string) with 5 (a number)');
    expect(error("ts >= '2026-01-01T04:00:00'")).toMatch(/cannot compare column ts \(timestamptz\) with '2026-01-01T04:00:00' \(a string\): .*zone offset is required/);
    expect(error("category = 'a'")).toBe(
      `/tables/t: filter "category = 'a'": unknown partition field or column "category"; partition fields: action, ts_hour, d_day, ts_month, ts_year, id_bucket, n_trunc, amount, flag; columns: id, action, ts, d, n, amount, flag`,
    );
    const clash: TableMetadata = {
      ...METADATA,
      schemas: [{ ...METADATA.schemas[0], fields: [...SCHEMA.fields, { id: 8, name: 'ts_hour', required: false, type: { type: 'int' } }] }],
    };
    expect(error('ts_hour = 1', clash)).toBe(
      '/tables/t: filter "ts_hour = 1": "ts_hour" names both a column and the partition field ts_hour (hour(ts), int); rename one of them to filter on it',
    );
  });

  it('reports syntax errors with the position', () => {
    expect(error('')).toBe('/tables/t: filter "": the filter is empty');
    expect(error("action == 'x'")).toBe(`/tables/t: filter "action == 'x'": expected a number, a 'string', true, false or null, found "=" at position 9`);
    expect(error('ts_hour < null')).toBe('/tables/t: filter "ts_hour < null": null can only be compared with = or != at position 9');
  });
});
