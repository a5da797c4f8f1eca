/**
 * The reference engines themselves: each Java scenario reads back (through Java) exactly the rows
 * Scenarios.java documents, and PyIceberg agrees with Java where it can read the table.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'lossless-json';
import { beforeAll, describe, expect, it } from 'vitest';
import { type CanonicalRow, sortRows } from '../support/canonical-rows.js';
import { tempDir } from '../support/fixtures.js';
import { type JavaScenario, ensureJavaHarness, javaInfo, javaRead, javaWrite } from '../support/java.js';
import { pyRead } from '../support/pyiceberg.js';

/** Every column but category (which each scenario sets) of Scenarios.row(id), as Java prints it. */
const BASE: Record<number, CanonicalRow> = {
  1: { id: 1, big: 1000000007, score: 1.1, day: '2024-01-11', ts: '2024-01-02T01:01:01.000001', tstz: '2024-06-01T13:00:01.000123Z', amount: '123.45', flag: false },
  2: { id: 2, big: 2000000014, score: 2.2, day: '2024-01-21', ts: '2024-01-03T02:02:02.000002', tstz: '2024-06-01T14:00:02.000246Z', amount: '0.05', flag: true },
  3: { id: 3, big: '9007199254740993', score: 3.3000000000000003, day: '2024-01-31', ts: '2024-01-04T03:03:03.000003', tstz: '2024-06-01T15:00:03.000369Z', amount: '370.35', flag: false },
  4: { id: 4, big: 4000000028, score: 'NaN', day: '2024-02-10', ts: '2024-01-05T04:04:04.000004', tstz: '2024-06-01T16:00:04.000492Z', amount: '-493.80', flag: true },
  5: { id: 5, big: null, score: 5.5, day: '2024-02-20', ts: '2024-01-06T05:05:05.000005', tstz: '2024-06-01T17:00:05.000615Z', amount: '617.25', flag: false },
  6: { id: 6, big: 6000000042, score: null, day: '2024-03-01', ts: '2024-01-07T06:06:06.000006', tstz: '2024-06-01T18:00:06.000738Z', amount: '740.70', flag: true },
  7: { id: 7, big: 7000000049, score: 7.700000000000001, day: '2024-03-11', ts: '2024-01-08T07:07:07.000007', tstz: null, amount: '864.15', flag: null },
  8: { id: 8, big: 8000000056, score: 8.8, day: '2024-03-21', ts: '2024-01-09T08:08:08.000008', tstz: '2024-06-01T20:00:08.000984Z', amount: '-987.60', flag: true },
  9: { id: 9, big: '-9007199254740995', score: 9.9, day: '2024-03-31', ts: '2024-01-10T09:09:09.000009', tstz: '2024-06-01T21:00:09.001107Z', amount: '1111.05', flag: false },
  10: { id: 10, big: 10000000070, score: 11, day: '1969-07-20', ts: '2024-01-11T10:10:10.000010', tstz: '2024-06-01T22:00:10.001230Z', amount: '1234.50', flag: true },
  11: { id: 11, big: 11000000077, score: 12.100000000000001, day: '2024-04-20', ts: '2024-01-12T11:11:11.000011', tstz: '2024-06-01T23:00:11.001353Z', amount: '1357.95', flag: false },
  12: { id: 12, big: 12000000084, score: 13.200000000000001, day: '2024-04-30', ts: '2024-01-13T12:12:12.000012', tstz: '2024-06-02T00:00:12.001476Z', amount: '-1481.40', flag: true },
  14: { id: 14, big: 14000000098, score: 15.400000000000002, day: '2024-05-20', ts: '2024-01-15T14:14:14.000014', tstz: '2024-06-02T02:00:14.001722Z', amount: '1728.30', flag: true },
  15: { id: 15, big: 15000000105, score: 16.5, day: '2024-05-30', ts: '2024-01-16T15:15:15.000015', tstz: '2024-06-02T03:00:15.001845Z', amount: '1851.75', flag: false },
};

/** A row of the original schema, columns in schema order. */
function row(id: number, category: string): CanonicalRow {
  const { big, score, day, ts, tstz, amount, flag } = BASE[id];
  return { id, big, category, score, day, ts, tstz, amount, flag };
}

/** A row of v2-mixed's evolved schema: score renamed to rating, note added. */
function mixedRow(id: number, category: string, note: string | null): CanonicalRow {
  const { big, score, day, ts, tstz, amount, flag } = BASE[id];
  return { id, big, category, rating: score, day, ts, tstz, amount, flag, note };
}

const EXPECTED: Record<JavaScenario, CanonicalRow[]> = {
  'v2-position-deletes': [
    row(1, 'a'), row(3, 'a'), row(4, 'a'), row(5, 'b'), row(6, 'b'),
    row(7, 'b'), row(10, 'c'), row(12, 'c'), row(14, 'a'), row(15, 'a'),
  ],
  'v2-equality-deletes': [
    row(1, 'a'), row(3, 'a'), row(4, 'reinserted'), row(5, 'a'), row(6, 'b'),
    row(7, 'updated'), row(8, 'b'), row(9, 'b'), row(10, 'b'), row(11, 'c'),
  ],
  'v3-deletion-vectors': [row(2, 'a'), row(5, 'b'), row(7, 'b'), row(8, 'b'), row(9, 'c'), row(10, 'c')],
  'v2-mixed': [
    mixedRow(1, 'a', null), mixedRow(3, 'a', null), mixedRow(4, 'b', null), mixedRow(5, 'b', null),
    mixedRow(6, 'b', null), mixedRow(7, 'c', 'note-7'), mixedRow(9, 'd', 'note-9'), mixedRow(10, 'd', null),
    mixedRow(11, 'e', 'naïve ✓ "q"'), mixedRow(12, 'e', 'note-12'),
  ],
  'v2-all-types': [
    {
      id: 1, f: 0.10000000149011612, t: '13:45:30.123456', u: 'f79c3e09-677c-4c4c-9a5b-1e8d3a3d8f01', bin: '00ff10',
      fix: '616263', st: { a: 1, b: 'x' }, l: [1, '9007199254740993'], m: [['k1', 1], ['k2', 2]],
    },
    {
      id: 2, f: '-Infinity', t: '00:00:00.000000', u: '00000000-0000-0000-0000-000000000000', bin: '',
      fix: '000000', st: { a: null, b: null }, l: [null, -5], m: [],
    },
    { id: 3, f: null, t: null, u: null, bin: null, fix: null, st: null, l: null, m: null },
  ],
};

const EXPECTED_INFO: Record<JavaScenario, object> = {
  'v2-position-deletes': { formatVersion: 2, dataFiles: 4, deleteFiles: 3, positionDeleteFiles: 3, equalityDeleteFiles: 0, deletionVectors: 0 },
  'v2-equality-deletes': { formatVersion: 2, dataFiles: 4, deleteFiles: 2, positionDeleteFiles: 0, equalityDeleteFiles: 2, deletionVectors: 0 },
  'v3-deletion-vectors': { formatVersion: 3, dataFiles: 3, deleteFiles: 2, positionDeleteFiles: 0, equalityDeleteFiles: 0, deletionVectors: 2 },
  'v2-mixed': { formatVersion: 2, dataFiles: 5, deleteFiles: 2, positionDeleteFiles: 1, equalityDeleteFiles: 1, deletionVectors: 0 },
  'v2-all-types': { formatVersion: 2, dataFiles: 1, deleteFiles: 0, positionDeleteFiles: 0, equalityDeleteFiles: 0, deletionVectors: 0 },
};

/** The current metadata file of a HadoopTables table, from its version hint. */
function currentMetadata(location: string): string {
  const version = readFileSync(join(location, 'metadata', 'version-hint.text'), 'utf8').trim();
  return join(location, 'metadata', `v${version}.metadata.json`);
}

/** Snapshot ids in commit order, as decimal strings (they exceed 2^53). */
function snapshotIds(location: string): string[] {
  const metadata = parse(readFileSync(currentMetadata(location), 'utf8'), null, (n) => n) as {
    snapshots: { 'snapshot-id': string }[];
  };
  return metadata.snapshots.map((s) => s['snapshot-id']);
}

describe('Java Iceberg 1.12 harness', () => {
  const root = tempDir('packice-interop-');
  const tables = new Map<JavaScenario, string>();

  beforeAll(async () => {
    await ensureJavaHarness();
  }, 20 * 60_000);

  for (const scenario of Object.keys(EXPECTED) as JavaScenario[]) {
    it(`writes ${scenario} and reads back exactly its live rows`, async () => {
      const location = join(root, scenario);
      await javaWrite(scenario, location);
      tables.set(scenario, location);

      const rows = await javaRead(location);
      expect(sortRows(rows)).toEqual(EXPECTED[scenario]);
      // keys in schema order, as packice's scan prints them
      expect(Object.keys(rows[0])).toEqual(Object.keys(EXPECTED[scenario][0]));

      const info = await javaInfo(location);
      const ids = snapshotIds(location);
      expect(info).toEqual({ ...EXPECTED_INFO[scenario], currentSnapshotId: ids[ids.length - 1] });
    });
  }

  it('reads an older snapshot of v2-mixed with the schema it was written with', async () => {
    const location = tables.get('v2-mixed');
    expect(location).toBeDefined();
    const [first] = snapshotIds(location!);
    const rows = await javaRead(location!, first);
    expect(sortRows(rows)).toEqual([row(1, 'a'), row(2, 'a'), row(3, 'a'), row(4, 'b'), row(5, 'b'), row(6, 'b')]);
  });

  it('fails with Java’s reason for a missing table', async () => {
    await expect(javaRead(join(root, 'nothing-here'))).rejects.toThrow(/NoSuchTableException|Table does not exist/);
  });

  it('PyIceberg 0.12 reads the v2-position-deletes table with the same rows as Java', async () => {
    const location = tables.get('v2-position-deletes');
    expect(location).toBeDefined();
    const rows = await pyRead(currentMetadata(location!));
    expect(sortRows(rows)).toEqual(EXPECTED['v2-position-deletes']);
  });

  // PyIceberg 0.12 refuses equality deletes, so v2-equality-deletes and v2-mixed are Java-only.
  for (const scenario of ['v3-deletion-vectors', 'v2-all-types'] as const) {
    it(`PyIceberg 0.12 reads the ${scenario} table with the same rows as Java`, async () => {
      const location = tables.get(scenario);
      expect(location).toBeDefined();
      const rows = await pyRead(currentMetadata(location!));
      expect(sortRows(rows)).toEqual(EXPECTED[scenario]);
    });
  }
});
