/**
 * Tables packice writes lay out their files exactly where Java Iceberg 1.12 would put them:
 * partition folders are Java's `PartitionSpec.partitionToPath` of the partition Java reads back
 * from our manifests, and every data, delete and compaction output file sits where the table's
 * Java location provider (`LocationProviders.locationsFor`) names it, object storage included.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { runDemo } from '../../lib/cli/demo.js';
import { PackiceError } from '../../lib/errors.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { locationProvider, partitionFolder } from '../../lib/iceberg/locations.js';
import type { DataFile } from '../../lib/iceberg/manifest.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { currentSchema, specById } from '../../lib/iceberg/table-metadata.js';
import type { Row } from '../../lib/iceberg/values.js';
import { runCompaction } from '../../lib/pipeline/local-runner.js';
import { appendRows, createNewTable, deleteByEquality, deleteRows, type NewTableOptions } from '../../lib/table/operations.js';
import { tempDir } from '../support/fixtures.js';
import { ensureJavaHarness, javaLocationProvider, javaLocations } from '../support/java.js';

const io = new LocalFileIO();

/**
 * Every live file of the table (ours) against where Java puts it; returns Java's partition paths.
 * Without partitioned paths the hash's last part is joined to the file name (`<bits>-<name>`), so
 * Java is asked where it would put the name we started from.
 */
async function expectJavaLayout(table: Table): Promise<string[]> {
  const t = await loadTable(table.location, { io });
  const scan = await planFiles(io, t.metadata);
  const ours = new Map<string, DataFile>();
  for (const task of scan.tasks) ours.set(task.dataFile.filePath, task.dataFile);
  for (const f of scan.deleteFiles) ours.set(f.filePath, f);
  const java = await javaLocations(t.location);
  expect(java.length).toBe(new Set([...ours.keys()]).size);
  const schema = currentSchema(t.metadata);
  const flat = t.metadata.properties['write.object-storage.partitioned-paths']?.toLowerCase() === 'false';
  const names = java.map((j) => (flat ? /\/[01]{8}-([^/]+)$/.exec(j.path)![1] : ''));
  const flatLocations = flat ? await javaLocationProvider(t.location, t.metadata.properties, names) : [];
  for (const [i, j] of java.entries()) {
    const f = ours.get(j.path);
    expect(f, `Java lists ${j.path}, which our scan does not`).toBeDefined();
    const spec = specById(t.metadata, f!.specId);
    expect({ path: j.path, folder: partitionFolder(spec, f!.partition, schema) }).toEqual({
      path: flat ? flatLocations[i].location : j.location,
      folder: j.partitionPath,
    });
  }
  return java.map((j) => j.partitionPath);
}

const TS = (iso: string): bigint => BigInt(Date.parse(iso)) * 1000n;

describe('interop: file locations as Java Iceberg 1.12 writes them', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 20 * 60_000);

  it('identity, hour, day, month, year, bucket and truncate folders, escaped values and nulls; deletes and compaction outputs', async () => {
    const schema: NewTableOptions['schema'] = {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: { type: 'long' } },
        { id: 2, name: 's', required: false, type: { type: 'string' } },
        { id: 3, name: 'ts', required: false, type: { type: 'timestamptz' } },
        { id: 4, name: 'n', required: false, type: { type: 'int' } },
      ],
    };
    let t = await createNewTable(io, join(tempDir(), 'transforms'), {
      schema,
      partitionFields: [
        { sourceId: 2, name: 's', transform: { kind: 'identity' } },
        { sourceId: 3, name: 'ts_hour', transform: { kind: 'hour' } },
        { sourceId: 3, name: 'ts_day', transform: { kind: 'day' } },
        { sourceId: 3, name: 'ts_month', transform: { kind: 'month' } },
        { sourceId: 3, name: 'ts_year', transform: { kind: 'year' } },
        { sourceId: 2, name: 's_bucket', transform: { kind: 'bucket', numBuckets: 8 } },
        { sourceId: 2, name: 's_trunc', transform: { kind: 'truncate', width: 3 } },
        { sourceId: 4, name: 'n_trunc', transform: { kind: 'truncate', width: 10 } },
      ],
    });
    const strings = ['plain', 'a/b', 'x=y', 'with space', null, 'é€ 😀', '%+&?#', '', 'a/=b c'];
    const times = [TS('2026-01-01T10:00:00Z'), TS('1969-12-31T23:30:00Z'), TS('1900-02-28T05:59:59.999Z'), null];
    const rows: Row[] = strings.map((s, i) => ({ id: BigInt(i), s, ts: times[i % times.length], n: i % 3 === 0 ? null : -7 * i }));
    t = await appendRows(t, rows);
    t = await appendRows(t, rows.map((r) => ({ ...r, id: (r.id as bigint) + 100n })));
    t = (await deleteRows(t, (r) => r.id === 1n || r.id === 104n)).table;
    t = await deleteByEquality(t, [1], [{ id: 102n }]);

    const folders = await expectJavaLayout(t);
    expect(folders).toContain('s=a%2Fb/ts_hour=1969-12-31-23/ts_day=1969-12-31/ts_month=1969-12/ts_year=1969/s_bucket=7/s_trunc=a%2Fb/n_trunc=-10');
    expect(folders).toContain('s=null/ts_hour=2026-01-01-10/ts_day=2026-01-01/ts_month=2026-01/ts_year=2026/s_bucket=null/s_trunc=null/n_trunc=-30');
    expect(folders.some((f) => f.startsWith('s=with+space/') && f.includes('ts_hour=null/'))).toBe(true);
    expect(folders.some((f) => f.startsWith('s=x%3Dy/ts_hour=1900-02-28-05/'))).toBe(true);

    const report = await runCompaction({ table: { location: t.location }, policy: { minInputFiles: 1, deleteFileThreshold: 1 } }, { parallelism: 1 });
    expect(report.commit).not.toBeNull();
    const after = await expectJavaLayout(t);
    expect(after.length).toBeGreaterThan(0);
    for (const folder of after) expect(folders).toContain(folder);
  }, 300_000);

  it('identity of every primitive type: dates, times, timestamps, decimals, floats, binary, uuid', async () => {
    const types = [
      ['b', { type: 'boolean' }], ['i', { type: 'int' }], ['l', { type: 'long' }], ['f', { type: 'float' }],
      ['d', { type: 'double' }], ['dec', { type: 'decimal', precision: 9, scale: 2 }],
      ['tiny', { type: 'decimal', precision: 38, scale: 10 }], ['date', { type: 'date' }], ['time', { type: 'time' }],
      ['ts', { type: 'timestamp' }], ['tstz', { type: 'timestamptz' }], ['u', { type: 'uuid' }],
      ['bin', { type: 'binary' }],
    ] as const;
    // No fixed column: Java 1.12's InternalReader reads an Avro fixed partition value as
    // length-prefixed bytes (InternalReader.primitive, FIXED -> byteBuffers), so it cannot plan
    // any table partitioned by identity(fixed). The unit tests cover fixed (base64, as binary).
    let t = await createNewTable(io, join(tempDir(), 'identity-types'), {
      schema: {
        type: 'struct',
        fields: [
          { id: 1, name: 'id', required: true, type: { type: 'long' } },
          ...types.map(([name, type], i) => ({ id: i + 2, name, required: false, type })),
        ],
      },
      partitionFields: types.map(([name], i) => ({ sourceId: i + 2, name, transform: { kind: 'identity' as const } })),
    });
    t = await appendRows(t, [
      {
        id: 1n, b: true, i: -5, l: 9007199254740993n, f: 0.1, d: 1234.5, dec: -12345n, tiny: 1n, date: -1,
        time: 3_723_000_001n, ts: TS('2026-01-01T10:00:00Z'), tstz: TS('1969-12-31T23:59:59.5Z'),
        u: 'f79c3e09-677c-4bbd-a479-3f349cb785e7', bin: new Uint8Array([0xfb, 0xff, 0x3e]),
      },
      {
        id: 2n, b: false, i: 0, l: -1n, f: 1e10, d: 1e-5, dec: 5n, tiny: 0n, date: 20454,
        time: 0n, ts: TS('1900-01-01T00:00:00Z'), tstz: TS('2026-06-30T12:34:56.789Z'),
        u: '00000000-0000-0000-0000-000000000000', bin: new Uint8Array([]),
      },
      {
        id: 3n, b: null, i: null, l: null, f: null, d: null, dec: null, tiny: null, date: null,
        time: null, ts: null, tstz: null, u: null, bin: null,
      },
    ]);
    const folders = await expectJavaLayout(t);
    expect(folders).toContain(
      'b=true/i=-5/l=9007199254740993/f=0.1/d=1234.5/dec=-123.45/tiny=1E-10/date=1969-12-31/time=01%3A02%3A03.000001/' +
        'ts=2026-01-01T10%3A00%3A00/tstz=1969-12-31T23%3A59%3A59.5%2B00%3A00/u=f79c3e09-677c-4bbd-a479-3f349cb785e7/bin=%2B%2F8%2B',
    );
    expect(folders).toContain(
      'b=false/i=0/l=-1/f=1.0E10/d=1.0E-5/dec=0.05/tiny=0E-10/date=2026-01-01/time=00%3A00/ts=1900-01-01T00%3A00%3A00/' +
        'tstz=2026-06-30T12%3A34%3A56.789%2B00%3A00/u=00000000-0000-0000-0000-000000000000/bin=',
    );
  }, 300_000);

  it('object storage: hash folders over the partition path, deletion vectors outside partitions', async () => {
    let t = await createNewTable(io, join(tempDir(), 'object-store'), {
      formatVersion: 3,
      schema: {
        type: 'struct',
        fields: [
          { id: 1, name: 'id', required: true, type: { type: 'long' } },
          { id: 2, name: 'ts', required: false, type: { type: 'timestamp_ns' } },
          { id: 3, name: 's', required: false, type: { type: 'string' } },
        ],
      },
      partitionFields: [
        { sourceId: 2, name: 'ts', transform: { kind: 'identity' } },
        { sourceId: 3, name: 's_day', transform: { kind: 'identity' } },
      ],
      properties: { 'write.object-storage.enabled': 'true' },
    });
    t = await appendRows(t, [
      { id: 1n, ts: -1n, s: 'a b' },
      { id: 2n, ts: 1_767_261_600_123_456_789n, s: null },
      { id: 3n, ts: null, s: 'c/d' },
    ]);
    t = (await deleteRows(t, (r) => r.id === 1n)).table;
    const folders = await expectJavaLayout(t);
    expect(folders).toContain('ts=1969-12-31T23%3A59%3A59.999999999/s_day=a+b');
    const paths = (await javaLocations(t.location)).map((j) => j.path);
    expect(paths.every((p) => /\/data\/[01]{4}\/[01]{4}\/[01]{4}\/[01]{8}\//.test(p))).toBe(true);
    expect(paths.some((p) => p.endsWith('.puffin'))).toBe(true);
  }, 300_000);

  it('write.data.path inside and outside the table, and object storage without partition folders', async () => {
    const base = tempDir();
    const schema: NewTableOptions['schema'] = {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: { type: 'long' } },
        { id: 2, name: 's', required: false, type: { type: 'string' } },
      ],
    };
    const partitionFields: NewTableOptions['partitionFields'] = [{ sourceId: 2, name: 's', transform: { kind: 'identity' } }];
    const rows: Row[] = [{ id: 1n, s: 'x y' }, { id: 2n, s: null }];
    const cases: Record<string, Record<string, string>> = {
      'simple-elsewhere': { 'write.data.path': join(base, 'elsewhere', 'files/') },
      'object-elsewhere': { 'write.object-storage.enabled': 'true', 'write.data.path': join(base, 'bucket') },
      'object-flat': { 'write.object-storage.enabled': 'TRUE', 'write.object-storage.partitioned-paths': 'false' },
    };
    for (const [name, properties] of Object.entries(cases)) {
      let t = await createNewTable(io, join(base, 'db', name), { schema, partitionFields, properties });
      t = await appendRows(t, rows);
      t = (await deleteRows(t, (r) => r.id === 2n)).table;
      await expectJavaLayout(t);
    }
    // The outside data path carries the table's context: <hash>/db/object-elsewhere/s=x+y/...
    const elsewhere = await readdir(join(base, 'bucket'), { recursive: true });
    expect(elsewhere.some((p) => p.endsWith(join('db', 'object-elsewhere', 's=x+y')))).toBe(true);
  }, 300_000);

  it('the location provider for object-store locations and deprecated properties, against Java', async () => {
    const names = ['a', '00000-0-6e1c.parquet', 's=x+y/00001-6e1c.parquet'];
    const cases: [string, Record<string, string>][] = [
      ['s3://bucket/db/tbl', {}],
      ['s3://bucket/db/tbl/', { 'write.data.path': 's3://bucket/db/tbl/custom/' }],
      ['s3://bucket/db/tbl', { 'write.object-storage.enabled': 'true' }],
      ['s3://bucket/tbl', { 'write.object-storage.enabled': 'true', 'write.data.path': 's3://other/data' }],
      ['s3://bucket/db/tbl', { 'write.object-storage.enabled': 'true', 'write.object-storage.partitioned-paths': 'false' }],
      ['s3://bucket/db/tbl', { 'write.object-storage.enabled': 'yes' }],
      ['s3://bucket/db/tbl', { 'write.folder-storage.path': 's3://x/y' }],
      ['s3://bucket/db/tbl', { 'write.object-storage.enabled': 'true', 'write.object-storage.path': 's3://x/y' }],
      ['s3://bucket/db/tbl', { 'write.object-storage.enabled': 'true', 'write.folder-storage.path': 's3://x/y' }],
      ['s3://bucket/db/tbl', { 'write.object-storage.path': 's3://x/y' }],
      ['s3://bucket/db/tbl', { 'write.folder-storage.path': 's3://x/y', 'write.data.path': 's3://d' }],
    ];
    for (const [table, properties] of cases) {
      const java = await javaLocationProvider(table, properties, names);
      let ours: { fileName: string; location?: string; refused?: boolean }[];
      try {
        const p = locationProvider(table, properties);
        ours = names.map((fileName) => ({ fileName, location: p.newDataLocation(fileName) }));
      } catch (e) {
        expect(e).toBeInstanceOf(PackiceError);
        ours = names.map((fileName) => ({ fileName, refused: true }));
      }
      expect(ours, `${table} ${JSON.stringify(properties)}`).toEqual(
        java.map((j) => (j.error !== undefined ? { fileName: j.fileName, refused: true } : { fileName: j.fileName, location: j.location })),
      );
    }
  }, 300_000);

  it('the demo table writes ts_hour=YYYY-MM-DD-HH folders, as Java does', async () => {
    const folder = join(tempDir(), 'demo');
    let out = '';
    await runDemo(folder, { json: true, out: (s) => (out += s), commits: 6, rowsPerCommit: 40 });
    expect((JSON.parse(out) as { after: { dataFiles: number } }).after.dataFiles).toBeGreaterThan(0);
    for (const action of await readdir(join(folder, 'data'))) {
      for (const hour of await readdir(join(folder, 'data', action))) expect(hour).toMatch(/^ts_hour=\d{4}-\d{2}-\d{2}-\d{2}$/);
    }
    const folders = await expectJavaLayout(await loadTable(folder, { io }));
    expect(folders).toContain('action=click/ts_hour=2026-01-01-00');
  }, 300_000);
});
