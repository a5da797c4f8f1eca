import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors.js';
import {
  catalogMetadataFolder,
  hashFolders,
  locationProvider,
  newMetadataLocation,
  partitionFolder,
  partitionToPath,
  urlEncode,
} from '../../lib/iceberg/locations.js';
import { partitionType, type PartitionSpec } from '../../lib/iceberg/partition.js';
import type { TableMetadata } from '../../lib/iceberg/table-metadata.js';
import { javaBigDecimalString, javaFloatingString, toHumanString, type Transform } from '../../lib/iceberg/transform.js';
import type { PrimitiveType, StructType } from '../../lib/iceberg/types.js';
import type { IcebergValue } from '../../lib/iceberg/values.js';
import { newTableMetadata } from '../../lib/table/operations.js';

const T = (type: Exclude<PrimitiveType['type'], 'decimal' | 'fixed'>): PrimitiveType => ({ type }) as PrimitiveType;
const IDENTITY: Transform = { kind: 'identity' };
const human = (t: Transform, type: PrimitiveType, v: IcebergValue): string => toHumanString(t, type, v);

/** µs since the epoch of an ISO instant (`Z`). */
const micros = (iso: string): bigint => BigInt(Date.parse(iso)) * 1000n;

describe('toHumanString: time transforms (TransformUtil)', () => {
  it('renders hour, day, month and year ordinals', () => {
    // 2026-01-01T10:00Z: 56 years, 672 months, 20454 days, 490906 hours after the epoch.
    expect(human({ kind: 'hour' }, T('int'), 490906)).toBe('2026-01-01-10');
    expect(human({ kind: 'hour' }, T('int'), 490896)).toBe('2026-01-01-00');
    expect(human({ kind: 'day' }, T('date'), 20454)).toBe('2026-01-01');
    expect(human({ kind: 'month' }, T('int'), 672)).toBe('2026-01');
    expect(human({ kind: 'year' }, T('int'), 56)).toBe('2026');
  });

  it('floors before 1970', () => {
    expect(human({ kind: 'hour' }, T('int'), -1)).toBe('1969-12-31-23');
    expect(human({ kind: 'hour' }, T('int'), -25)).toBe('1969-12-30-23');
    expect(human({ kind: 'day' }, T('date'), -1)).toBe('1969-12-31');
    expect(human({ kind: 'month' }, T('int'), -1)).toBe('1969-12');
    expect(human({ kind: 'month' }, T('int'), -13)).toBe('1968-12');
    expect(human({ kind: 'year' }, T('int'), -1)).toBe('1969');
  });

  it('pads years as Java %04d does, the sign inside the width', () => {
    expect(human({ kind: 'year' }, T('int'), -1970)).toBe('0000');
    expect(human({ kind: 'year' }, T('int'), -1971)).toBe('-001');
    expect(human({ kind: 'year' }, T('int'), -1969)).toBe('0001');
    expect(human({ kind: 'year' }, T('int'), 8030)).toBe('10000');
    expect(human({ kind: 'day' }, T('date'), -719528)).toBe('0000-01-01');
    expect(human({ kind: 'day' }, T('date'), -719529)).toBe('-001-12-31');
    expect(human({ kind: 'month' }, T('int'), -23640)).toBe('0000-01');
    expect(human({ kind: 'month' }, T('int'), -23641)).toBe('-001-12');
  });

  it('writes null as "null" for every transform', () => {
    for (const t of [IDENTITY, { kind: 'hour' }, { kind: 'day' }, { kind: 'bucket', numBuckets: 4 }, { kind: 'void' }] as Transform[]) {
      expect(human(t, T('int'), null)).toBe('null');
    }
  });
});

describe('toHumanString: identity, bucket and truncate by result type', () => {
  it('renders numbers, booleans, strings and uuids as Java toString', () => {
    expect(human({ kind: 'bucket', numBuckets: 16 }, T('int'), 7)).toBe('7');
    expect(human({ kind: 'truncate', width: 10 }, T('int'), -10)).toBe('-10');
    expect(human({ kind: 'truncate', width: 3 }, T('string'), 'a/b')).toBe('a/b');
    expect(human(IDENTITY, T('long'), 9007199254740993n)).toBe('9007199254740993');
    expect(human(IDENTITY, T('boolean'), false)).toBe('false');
    expect(human(IDENTITY, T('uuid'), 'f79c3e09-677c-4bbd-a479-3f349cb785e7')).toBe('f79c3e09-677c-4bbd-a479-3f349cb785e7');
  });

  it('renders dates, times and timestamps as Java ISO text', () => {
    expect(human(IDENTITY, T('date'), -1)).toBe('1969-12-31');
    expect(human(IDENTITY, T('time'), 0n)).toBe('00:00');
    expect(human(IDENTITY, T('time'), 3_723_000_000n)).toBe('01:02:03');
    expect(human(IDENTITY, T('time'), 3_720_500_000n)).toBe('01:02:00.500');
    expect(human(IDENTITY, T('time'), 3_723_000_001n)).toBe('01:02:03.000001');
    expect(human(IDENTITY, T('timestamp'), micros('2026-01-01T10:00:00Z'))).toBe('2026-01-01T10:00:00');
    expect(human(IDENTITY, T('timestamptz'), micros('2026-01-01T10:00:00Z') + 500_000n)).toBe('2026-01-01T10:00:00.5+00:00');
    expect(human(IDENTITY, T('timestamptz'), -1n)).toBe('1969-12-31T23:59:59.999999+00:00');
    expect(human(IDENTITY, T('timestamp_ns'), 1n)).toBe('1970-01-01T00:00:00.000000001');
    expect(human(IDENTITY, T('timestamptz_ns'), -1_000_000_000n)).toBe('1969-12-31T23:59:59+00:00');
    // ISO_LOCAL_DATE signs years beyond four digits; humanDay (%04d) does not.
    expect(human(IDENTITY, T('timestamp'), micros('+010000-01-01T00:00:00Z'))).toBe('+10000-01-01T00:00:00');
    expect(human(IDENTITY, T('timestamp'), micros('-000001-06-01T00:00:00Z'))).toBe('-0001-06-01T00:00:00');
  });

  it('renders binary and fixed as base64', () => {
    expect(human(IDENTITY, T('binary'), new Uint8Array([0xfb, 0xff, 0x3e]))).toBe('+/8+');
    expect(human(IDENTITY, { type: 'fixed', length: 2 }, new Uint8Array([1, 2]))).toBe('AQI=');
    expect(human({ kind: 'truncate', width: 2 }, T('binary'), new Uint8Array([]))).toBe('');
  });

  it('renders decimals as BigDecimal.toString', () => {
    const dec = (scale: number): PrimitiveType => ({ type: 'decimal', precision: 38, scale });
    expect(human(IDENTITY, dec(2), -12345n)).toBe('-123.45');
    expect(human(IDENTITY, dec(2), 5n)).toBe('0.05');
    expect(human(IDENTITY, dec(0), 42n)).toBe('42');
    expect(javaBigDecimalString(1n, 7)).toBe('1E-7');
    expect(javaBigDecimalString(0n, 10)).toBe('0E-10');
    expect(javaBigDecimalString(123n, 8)).toBe('0.00000123');
    expect(javaBigDecimalString(12n, 9)).toBe('1.2E-8');
    expect(javaBigDecimalString(-12n, -2)).toBe('-1.2E+3');
  });

  it('renders floats and doubles as Java toString', () => {
    expect(javaFloatingString(1, false)).toBe('1.0');
    expect(javaFloatingString(-0, false)).toBe('-0.0');
    expect(javaFloatingString(0.001, false)).toBe('0.001');
    expect(javaFloatingString(0.0001, false)).toBe('1.0E-4');
    expect(javaFloatingString(1234567.5, false)).toBe('1234567.5');
    expect(javaFloatingString(1e7, false)).toBe('1.0E7');
    expect(javaFloatingString(-1.5e300, false)).toBe('-1.5E300');
    expect(javaFloatingString(Number.NaN, false)).toBe('NaN');
    expect(javaFloatingString(-Infinity, false)).toBe('-Infinity');
    expect(human(IDENTITY, T('float'), 0.1)).toBe('0.1');
    expect(human(IDENTITY, T('float'), 1 / 3)).toBe('0.33333334');
    expect(human(IDENTITY, T('double'), 1 / 3)).toBe('0.3333333333333333');
  });
});

describe('partitionToPath', () => {
  const schema: StructType = {
    type: 'struct',
    fields: [
      { id: 1, name: 'ts', required: false, type: { type: 'timestamptz' } },
      { id: 2, name: 's', required: false, type: { type: 'string' } },
      { id: 3, name: 'n', required: false, type: { type: 'long' } },
    ],
  };
  const spec: PartitionSpec = {
    specId: 0,
    fields: [
      { sourceId: 1, fieldId: 1000, name: 'y', transform: { kind: 'year' } },
      { sourceId: 1, fieldId: 1001, name: 'm', transform: { kind: 'month' } },
      { sourceId: 1, fieldId: 1002, name: 'd', transform: { kind: 'day' } },
      { sourceId: 1, fieldId: 1003, name: 'h', transform: { kind: 'hour' } },
      { sourceId: 2, fieldId: 1004, name: 's', transform: { kind: 'identity' } },
      { sourceId: 3, fieldId: 1005, name: 'n', transform: { kind: 'identity' } },
    ],
  };

  it('joins name=humanString per field, escaped as URLEncoder does', () => {
    const type = partitionType(spec, schema);
    expect(partitionToPath(spec, { y: 56, m: 672, d: 20454, h: 490906, s: 'a b/c=d', n: 9007199254740993n }, type)).toBe(
      'y=2026/m=2026-01/d=2026-01-01/h=2026-01-01-10/s=a+b%2Fc%3Dd/n=9007199254740993',
    );
    expect(partitionToPath(spec, { y: -1, m: -1, d: -1, h: -1, s: null, n: null }, type)).toBe(
      'y=1969/m=1969-12/d=1969-12-31/h=1969-12-31-23/s=null/n=null',
    );
    expect(partitionFolder(spec, { y: 0, m: 0, d: 0, h: 0, s: '', n: -1n }, schema)).toBe(
      'y=1970/m=1970-01/d=1970-01-01/h=1970-01-01-00/s=/n=-1',
    );
  });

  it('escapes field names too, and gives an empty path for an unpartitioned spec', () => {
    const odd: PartitionSpec = { specId: 1, fields: [{ sourceId: 2, fieldId: 1000, name: 'a b', transform: IDENTITY }] };
    expect(partitionFolder(odd, { 'a b': 'x' }, schema)).toBe('a+b=x');
    expect(partitionFolder({ specId: 0, fields: [] }, {}, schema)).toBe('');
  });

  it('URL-encodes as Java URLEncoder.encode(s, UTF_8)', () => {
    expect(urlEncode('azAZ09.-*_')).toBe('azAZ09.-*_');
    expect(urlEncode(' /=+%&?~#:')).toBe('+%2F%3D%2B%25%26%3F%7E%23%3A');
    expect(urlEncode('é€😀')).toBe('%C3%A9%E2%82%AC%F0%9F%98%80');
    // A lone surrogate is '?' in Java's UTF-8 encoder.
    expect(urlEncode('a\ud800b')).toBe('a%3Fb');
  });
});

describe('locationProvider: simple', () => {
  it('puts data under <table>/data and partitions in their folders', () => {
    const p = locationProvider('s3://b/db/t/', {});
    expect(p.dataLocation).toBe('s3://b/db/t/data');
    expect(p.newDataLocation('f.parquet')).toBe('s3://b/db/t/data/f.parquet');
    expect(p.newDataLocation('f.parquet', 'ts_hour=2026-01-01-10')).toBe('s3://b/db/t/data/ts_hour=2026-01-01-10/f.parquet');
    expect(p.newDataLocation('f.parquet', '')).toBe('s3://b/db/t/data/f.parquet');
  });

  it('honours write.data.path, trailing slashes stripped', () => {
    const p = locationProvider('s3://b/t', { 'write.data.path': 's3://other/place//' });
    expect(p.newDataLocation('f.parquet', 'a=1')).toBe('s3://other/place/a=1/f.parquet');
    expect(locationProvider('s3://b/t', { 'write.object-storage.enabled': 'FALSE' }).newDataLocation('f')).toBe('s3://b/t/data/f');
  });

  it('refuses the deprecated folder-storage path unless write.data.path wins', () => {
    expect(() => locationProvider('/t', { 'write.folder-storage.path': '/x' })).toThrow(ValidationError);
    expect(() => locationProvider('/t', { 'write.folder-storage.path': '/x' })).toThrow(/'write.folder-storage.path' has been deprecated.*'write.data.path'/);
    expect(locationProvider('/t', { 'write.folder-storage.path': '/x', 'write.data.path': '/d' }).newDataLocation('f')).toBe('/d/f');
    // The object-storage path only matters to the object-store provider.
    expect(locationProvider('/t', { 'write.object-storage.path': '/x' }).newDataLocation('f')).toBe('/t/data/f');
  });
});

describe('locationProvider: object storage', () => {
  const on = { 'write.object-storage.enabled': 'true' };

  it('hashes file names as Java and PyIceberg do', () => {
    // Expected values from PyIceberg's tests/table/test_locations.py (which match Java's).
    expect(hashFolders('a')).toBe('0101/0110/1001/10110010');
    expect(hashFolders('b')).toBe('1110/0111/1110/00000011');
    expect(hashFolders('c')).toBe('0010/1101/0110/01011111');
    expect(hashFolders('d')).toBe('1001/0001/0100/01110011');
    const p = locationProvider('table_location', on);
    expect(p.newDataLocation('a')).toBe('table_location/data/0101/0110/1001/10110010/a');
    expect(p.newDataLocation('test.parquet', 'string_field=example_string')).toBe(
      'table_location/data/0001/0010/1001/00000011/string_field=example_string/test.parquet',
    );
  });

  it('without partitioned paths, joins the last hash part to the name', () => {
    const p = locationProvider('table_location', { ...on, 'write.object-storage.partitioned-paths': 'false' });
    expect(p.newDataLocation('test.parquet', 'string_field=example_string')).toBe('table_location/data/0110/1010/0011/11101000-test.parquet');
    expect(p.newDataLocation('test.parquet')).toBe('table_location/data/0110/1010/0011/11101000-test.parquet');
  });

  it('adds <parent>/<table> when the data path lies outside the table', () => {
    const p = locationProvider('s3://b/db/tbl', { ...on, 'write.data.path': 's3://other/data' });
    expect(p.newDataLocation('a')).toBe('s3://other/data/0101/0110/1001/10110010/db/tbl/a');
    const legacy = { ...on, 'write.object-storage.path': 's3://x' };
    expect(() => locationProvider('s3://b/t', legacy)).toThrow(/'write.object-storage.path' has been deprecated/);
  });
});

describe('metadata locations', () => {
  const metadata = (properties: Record<string, string>): TableMetadata => ({
    ...newTableMetadata('s3://b/t', { schema: { type: 'struct', fields: [] } }),
    properties,
  });

  it('puts manifests under write.metadata.path, else <table>/metadata; the catalog always in <table>/metadata', () => {
    expect(newMetadataLocation(metadata({}), 'm0.avro')).toBe('s3://b/t/metadata/m0.avro');
    expect(newMetadataLocation(metadata({ 'write.metadata.path': 's3://m/p/' }), 'm0.avro')).toBe('s3://m/p/m0.avro');
    expect(catalogMetadataFolder('s3://b/t/')).toBe('s3://b/t/metadata');
  });
});
