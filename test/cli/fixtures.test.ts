/**
 * The real tables of test/fixtures/iceberg through the CLI: `relocate` each into a fresh
 * folder (and one onto S3), then `scan` gives exactly the live rows the fixtures' README lists,
 * older snapshots give their own rows, `info` counts the files, and no path inside the relocated
 * metadata still points at the warehouse the tables were written in.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'lossless-json';
import { beforeAll, describe, expect, it } from 'vitest';
import { LocalFileIO } from '../../lib/io/local.js';
import { readPuffinFooter } from '../../lib/iceberg/puffin.js';
import { readRows } from '../../lib/table/data-reader.js';
import { POSITION_DELETE_SCHEMA } from '../../lib/table/delete-filter.js';
import type { TableInfo } from '../../lib/table/info.js';
import { parseJsonLines, type CanonicalRow } from '../support/canonical-rows.js';
import { runCli } from '../support/cli.js';
import { copyFixture, FIXTURE_TABLES, tempDir } from '../support/fixtures.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { hashTree, listTree, readAvroFile, stringsIn } from '../support/table-files.js';

type FixtureTable = (typeof FIXTURE_TABLES)[number];

// ---------------------------------------------------------------------------
// What the fixtures hold (README, and the data files read with pyarrow)

const CLICK = { user: 'Alan', action: 'click', event_time: '2020-01-01T10:00:00.000000' };
const DOWNLOAD = { user: 'Lisa', action: 'download', event_time: '2020-01-01T11:00:00.000000' };
const VIEW = { user: 'Alex', action: 'view', event_time: '2020-01-01T09:00:00.000000' };
const ids = (list: number[], rest: CanonicalRow): CanonicalRow[] => list.map((id) => ({ id, ...rest }));

/** All 20 rows of the three data files, before the position deletes. */
const POSITION_ALL = [
  ...ids([9, 18, 3, 12, 13, 10], CLICK),
  ...ids([2, 5, 14, 8, 7, 16], DOWNLOAD),
  ...ids([6, 15, 17, 20, 11, 1, 19, 4], VIEW),
];
/** The README's live rows: the ten with even id. */
const POSITION_LIVE = [...ids([18, 12, 10], CLICK), ...ids([2, 14, 8, 16], DOWNLOAD), ...ids([6, 20, 4], VIEW)];

const eq = (i: number, s: string, d: string): CanonicalRow => ({ i, s, d });
/** Each Flink commit's live rows: its equality deletes (s, d) remove rows of earlier commits only. */
const EQUALITY_BY_SNAPSHOT: Record<string, CanonicalRow[]> = {
  // seq 1: (1,str1) (2,str2) (3,str3) on 2023-12-24
  '3217166167862484560': [eq(1, 'str1', '2023-12-24'), eq(2, 'str2', '2023-12-24'), eq(3, 'str3', '2023-12-24')],
  // seq 2: (1,str1) (2,str2) on 2023-12-25; its deletes match nothing older
  '7564375228633944060': [
    eq(1, 'str1', '2023-12-24'), eq(2, 'str2', '2023-12-24'), eq(3, 'str3', '2023-12-24'),
    eq(1, 'str1', '2023-12-25'), eq(2, 'str2', '2023-12-25'),
  ],
  // seq 3: (333333,str3) (4,str4) on 2023-12-24 replace (3,str3)
  '3979814664665937114': [
    eq(1, 'str1', '2023-12-24'), eq(2, 'str2', '2023-12-24'), eq(333333, 'str3', '2023-12-24'),
    eq(4, 'str4', '2023-12-24'), eq(1, 'str1', '2023-12-25'), eq(2, 'str2', '2023-12-25'),
  ],
};
/** The README's six live rows (seq 4: (222,str2) on 2023-12-25 replaces (2,str2)). */
const EQUALITY_LIVE = [
  eq(1, 'str1', '2023-12-24'), eq(2, 'str2', '2023-12-24'), eq(333333, 'str3', '2023-12-24'),
  eq(4, 'str4', '2023-12-24'), eq(1, 'str1', '2023-12-25'), eq(222, 'str2', '2023-12-25'),
];

interface Expected {
  readonly live: CanonicalRow[];
  readonly olderSnapshot: string;
  readonly olderRows: CanonicalRow[];
  /** info --json of the current snapshot (the fields that must be exact). */
  readonly info: Partial<TableInfo>;
  /** info --json --snapshot <olderSnapshot>. */
  readonly olderInfo: Partial<TableInfo>;
}

const EXPECTED: Record<FixtureTable, Expected> = {
  iceberg_v2_partitioned_position_deletes: {
    live: POSITION_LIVE,
    olderSnapshot: '2057976186205897384',
    olderRows: POSITION_ALL,
    info: {
      formatVersion: 2, currentSnapshotId: '8885697082976537578', sequenceNumber: '2', snapshots: 2, columns: 4,
      partitionSpec: 'identity(action)', partitions: 3, dataFiles: 3, records: '20', dataBytes: '3568',
      positionDeleteFiles: 3, deletionVectors: 0, equalityDeleteFiles: 0, deleteRecords: '10', fileFormats: { PARQUET: 3 },
    },
    olderInfo: {
      currentSnapshotId: '2057976186205897384', sequenceNumber: '1', dataFiles: 3, records: '20', dataBytes: '3568',
      positionDeleteFiles: 0, deletionVectors: 0, equalityDeleteFiles: 0, deleteRecords: '0', deleteBytes: '0',
    },
  },
  iceberg_v2_delete_equality_partitioned: {
    live: EQUALITY_LIVE,
    olderSnapshot: '7564375228633944060',
    olderRows: EQUALITY_BY_SNAPSHOT['7564375228633944060'],
    info: {
      formatVersion: 2, currentSnapshotId: '4821964189199835313', sequenceNumber: '4', snapshots: 4, columns: 3,
      partitionSpec: 'identity(d)', partitions: 2, dataFiles: 4, records: '8', dataBytes: '3557',
      positionDeleteFiles: 0, deletionVectors: 0, equalityDeleteFiles: 4, deleteRecords: '8', deleteBytes: '2770',
      fileFormats: { PARQUET: 4 },
    },
    olderInfo: {
      currentSnapshotId: '7564375228633944060', sequenceNumber: '2', partitions: 2, dataFiles: 2, records: '5',
      positionDeleteFiles: 0, deletionVectors: 0, equalityDeleteFiles: 2, deleteRecords: '5',
    },
  },
  iceberg_v3_deletion_vectors: {
    live: [{ i: 1 }, { i: 3 }, { i: 5 }],
    olderSnapshot: '2700858159721908397',
    olderRows: [{ i: 1 }, { i: 2 }, { i: 3 }, { i: 4 }, { i: 5 }],
    info: {
      formatVersion: 3, currentSnapshotId: '3685752423136077685', sequenceNumber: '2', snapshots: 2, columns: 1,
      partitionSpec: 'unpartitioned', partitions: 1, dataFiles: 5, records: '5', dataBytes: '1960',
      // DVs count their blob's content size: the summary's added-files-size, 84.
      positionDeleteFiles: 0, deletionVectors: 2, equalityDeleteFiles: 0, deleteRecords: '2', deleteBytes: '84',
      fileFormats: { PARQUET: 5 },
    },
    olderInfo: {
      currentSnapshotId: '2700858159721908397', sequenceNumber: '1', dataFiles: 5, records: '5', dataBytes: '1960',
      positionDeleteFiles: 0, deletionVectors: 0, equalityDeleteFiles: 0, deleteRecords: '0', deleteBytes: '0',
    },
  },
};

// ---------------------------------------------------------------------------
// Helpers

/** A row as text, independent of key order. */
const canon = (r: CanonicalRow): string => JSON.stringify(Object.keys(r).sort().map((k) => [k, r[k]]));

/** Rows as a sorted multiset, independent of file order and key order. */
function sorted(rows: readonly CanonicalRow[]): CanonicalRow[] {
  return [...rows].sort((a, b) => (canon(a) < canon(b) ? -1 : canon(a) > canon(b) ? 1 : 0));
}

async function scan(table: string, ...args: string[]): Promise<CanonicalRow[]> {
  return parseJsonLines(await runCli(['scan', ...args, table]), `packice scan ${table}`);
}

async function info(table: string, ...args: string[]): Promise<TableInfo> {
  return JSON.parse(await runCli(['info', '--json', ...args, table])) as TableInfo;
}

const OLD_LOCATIONS = ['hdfs://', '/test-warehouse'];
const looksLikePath = (s: string): boolean => s.startsWith('/') || /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(s);

interface PathReport {
  /** "file: string" for every string that names an old location. */
  readonly stale: string[];
  /** "file: string" for every path-like string outside the target. */
  readonly outside: string[];
  /** How many path-like strings were checked (so an empty walk cannot pass). */
  readonly checked: number;
}

/**
 * Every string in the relocated table's metadata files, manifest lists and manifests (decoded),
 * position delete files and Puffin footers, checked against the old locations and the target.
 */
async function pathReport(target: string): Promise<PathReport> {
  const stale: string[] = [];
  const outside: string[] = [];
  let checked = 0;
  const check = (file: string, strings: readonly string[], pathsToo: boolean): void => {
    for (const s of strings) {
      if (OLD_LOCATIONS.some((old) => s.includes(old))) stale.push(`${file}: ${s}`);
      if (pathsToo && looksLikePath(s)) {
        checked++;
        if (s !== target && !s.startsWith(`${target}/`)) outside.push(`${file}: ${s}`);
      }
    }
  };
  const io = new LocalFileIO();
  for (const rel of listTree(target)) {
    const path = join(target, rel);
    if (rel.endsWith('.json')) {
      check(rel, stringsIn(parse(readFileSync(path, 'utf8'))), true);
    } else if (rel.endsWith('.avro')) {
      const avro = await readAvroFile(path);
      check(rel, [...avro.meta.values()], false);
      // Bounds are bytes: checked for old locations only (a binary bound may start with '/').
      check(rel, stringsIn(avro.records), false);
      const paths = avro.records.flatMap((r) => {
        const df = r.data_file as Record<string, unknown> | undefined;
        return df
          ? [df.file_path, df.referenced_data_file].filter((x): x is string => typeof x === 'string')
          : [String(r.manifest_path)];
      });
      check(rel, paths, true);
    } else if (rel.endsWith('.puffin')) {
      const footer = await readPuffinFooter(io, path);
      check(rel, footer.blobs.flatMap((b) => Object.values(b.properties)), true);
    } else if (rel.includes('-delete-')) {
      const filePaths: string[] = [];
      for await (const batch of readRows(io, { filePath: path, fileFormat: 'PARQUET' }, POSITION_DELETE_SCHEMA)) {
        for (const r of batch.rows) filePaths.push(String(r.file_path));
      }
      check(rel, filePaths, true);
    }
  }
  return { stale, outside, checked };
}

// ---------------------------------------------------------------------------

describe.each(FIXTURE_TABLES.map((name) => [name]))('%s relocated with the CLI', (name) => {
  const expected = EXPECTED[name];
  let source: string;
  let target: string;
  let before: Record<string, string>;
  let relocateOutput: string;

  beforeAll(async () => {
    source = copyFixture(name);
    before = hashTree(source);
    target = join(tempDir('packice-relocated-'), name);
    relocateOutput = await runCli(['relocate', source, target]);
  });

  it('reports where it moved the table', () => {
    expect(relocateOutput).toMatch(new RegExp(`^relocated \\S+${name} -> ${target}: \\d+ files copied, \\d+ rewritten`));
  });

  it("scans to exactly the README's live rows", async () => {
    expect(sorted(await scan(target))).toEqual(sorted(expected.live));
  });

  it('scans an older snapshot to the rows it held', async () => {
    expect(sorted(await scan(target, '--snapshot', expected.olderSnapshot))).toEqual(sorted(expected.olderRows));
  });

  it('stops after --limit rows', async () => {
    const rows = await scan(target, '--limit', '2');
    expect(rows).toHaveLength(2);
    const live = expected.live.map(canon);
    for (const r of rows) expect(live).toContain(canon(r));
    expect(canon(rows[0])).not.toBe(canon(rows[1]));
  });

  it('counts files and records with info --json', async () => {
    const current = await info(target);
    expect(current).toMatchObject({ ...expected.info, location: target });
    if (current.positionDeleteFiles > 0) {
      // Rewritten position delete files: their sizes as written.
      const sizes = listTree(target).filter((f) => f.includes('-delete-')).map((f) => statSync(join(target, f)).size);
      expect(sizes).toHaveLength(current.positionDeleteFiles);
      expect(current.deleteBytes).toBe(String(sizes.reduce((a, b) => a + b, 0)));
    }
    const older = await info(target, '--snapshot', expected.olderSnapshot);
    expect(older).toMatchObject({ ...expected.olderInfo, location: target });
  });

  it('keeps the bytes of data files and moves every data and delete file', () => {
    const data = (files: string[]): string[] => files.filter((f) => f.startsWith('data/'));
    expect(data(listTree(target))).toEqual(data(listTree(source)));
    // Data files (and equality deletes) are copied byte for byte; position deletes are rewritten.
    const after = hashTree(target);
    for (const f of data(listTree(source))) {
      if (!f.includes('-delete-') && !f.endsWith('.puffin')) expect(after[f], f).toBe(before[f]);
    }
  });

  it('leaves no path outside the target in metadata, manifest lists, manifests and delete files', async () => {
    const report = await pathReport(target);
    expect(report.stale).toEqual([]);
    expect(report.outside).toEqual([]);
    expect(report.checked).toBeGreaterThan(5);
  });

  it('(the same check finds the old locations in the source)', async () => {
    const report = await pathReport(source);
    expect(report.stale.length).toBeGreaterThan(5);
    expect(report.outside.length).toBeGreaterThan(5);
  });

  it('writes a loadable catalog: version-hint.text names the current metadata file', () => {
    const hint = readFileSync(join(target, 'metadata', 'version-hint.text'), 'utf8').trim();
    const current = JSON.parse(readFileSync(join(target, 'metadata', `v${hint}.metadata.json`), 'utf8')) as { location: string };
    expect(current.location).toBe(target);
  });

  it('leaves the source folder byte for byte as it was', () => {
    expect(hashTree(source)).toEqual(before);
  });
});

describe('the equality-delete fixture, snapshot by snapshot', () => {
  it('gives each Flink commit the rows its deletes leave', async () => {
    const target = join(tempDir('packice-relocated-'), 'eq');
    await runCli(['relocate', copyFixture('iceberg_v2_delete_equality_partitioned'), target]);
    for (const [snapshot, rows] of Object.entries(EQUALITY_BY_SNAPSHOT)) {
      expect(sorted(await scan(target, '--snapshot', snapshot)), snapshot).toEqual(sorted(rows));
    }
  });
});

describe('relocating onto S3', () => {
  it.each([['iceberg_v2_partitioned_position_deletes' as const], ['iceberg_v3_deletion_vectors' as const]])(
    '%s scans to its live rows from the bucket',
    async (name) => {
      const endpoint = testS3Endpoint();
      const target = `s3://${await freshBucket()}/warehouse/${name}`;
      const source = copyFixture(name);
      const before = hashTree(source);
      await runCli(['--s3-endpoint', endpoint, 'relocate', source, target]);
      const rows = parseJsonLines(await runCli(['--s3-endpoint', endpoint, 'scan', target]), target);
      expect(sorted(rows)).toEqual(sorted(EXPECTED[name].live));
      const t = JSON.parse(await runCli(['--s3-endpoint', endpoint, 'info', '--json', target])) as TableInfo;
      expect(t).toMatchObject({ ...EXPECTED[name].info, location: target });
      expect(hashTree(source)).toEqual(before);
    },
  );
});
