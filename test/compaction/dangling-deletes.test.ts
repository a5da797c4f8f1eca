/**
 * Dangling delete files (Iceberg's remove-dangling-deletes): a table on disk where a position
 * delete (v2) or deletion vector (v3) lost its data file and an equality delete has only newer data
 * left in its partition. The rule finds exactly those, health counts them, and `compact` drops them
 * in a `replace` snapshot that changes no data file and no row, as Java Iceberg 1.12 reads it; the
 * Flink upsert fixture carries two real ones. The same on moto S3.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as commitHandler } from '../../functions/commit.js';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { DANGLING_DELETES_SUMMARY } from '../../lib/compaction/commit.js';
import { danglingDeletes, danglingFigures } from '../../lib/compaction/dangling-deletes.js';
import { tableHealth } from '../../lib/compaction/health.js';
import type { CompactionPolicy } from '../../lib/compaction/messages.js';
import { formatHealth, formatRunReport } from '../../lib/cli/format.js';
import { deleteFileKey, deleteFileReadBytes } from '../../lib/iceberg/delete-file.js';
import { FileContent, type DataFile } from '../../lib/iceberg/manifest.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import type { Row } from '../../lib/iceberg/values.js';
import type { FileIO } from '../../lib/io/file-io.js';
import { fileIOFor } from '../../lib/io/index.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { runCompaction } from '../../lib/pipeline/local-runner.js';
import { planStep } from '../../lib/pipeline/steps.js';
import { relocateTable } from '../../lib/table/relocate.js';
import { appendRows, commitChanges, createNewTable, deleteByEquality, deleteRows } from '../../lib/table/operations.js';
import { sortRows } from '../support/canonical-rows.js';
import { FIXTURES, tempDir } from '../support/fixtures.js';
import { ensureJavaHarness, javaRead } from '../support/java.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { liveRows, SMALL_TABLE_SCHEMA } from '../support/small-table.js';

const io = new LocalFileIO();

/** Plans no group on the table below: no small files, and one delete per file is not enough. */
const NO_GROUPS: CompactionPolicy = { minFileSizeBytes: 0, deleteFileThreshold: 10, deleteRatioThreshold: 1 };

const rows = (category: string, from: number, n: number): Row[] => Array.from({ length: n }, (_, i) => ({ id: BigInt(from + i), category }));

async function dataFile(t: Table, category: string): Promise<DataFile> {
  const scan = await planFiles(t.io, t.metadata);
  return scan.tasks.map((x) => x.dataFile).find((f) => f.partition.category === category)!;
}

async function deleteKeys(t: Table): Promise<string[]> {
  return (await planFiles(t.io, t.metadata)).deleteFiles.map(deleteFileKey).sort();
}

/**
 * a: the data file a position delete / DV names is removed (another file stays in a);
 * b: an equality delete's only older data file is removed, newer data is appended after it;
 * c: a live data file with a delete that still applies. Dangling: a's and b's deletes.
 */
async function tableWithDanglingDeletes(
  formatVersion: 2 | 3,
  at: { readonly io: FileIO; readonly location: string } = { io, location: join(tempDir(), 't') },
): Promise<{ table: Table; dangling: string[]; needed: string[] }> {
  let t = await createNewTable(at.io, at.location, {
    schema: SMALL_TABLE_SCHEMA,
    partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
    formatVersion,
  });
  t = await appendRows(t, rows('a', 0, 3));
  const a1 = await dataFile(t, 'a');
  t = await appendRows(t, rows('a', 3, 3));
  t = await appendRows(t, rows('b', 10, 3));
  t = await appendRows(t, rows('c', 20, 3));
  const before = new Set(await deleteKeys(t));
  t = (await deleteRows(t, (r) => r.id === 0n)).table;
  const posA = (await deleteKeys(t)).filter((k) => !before.has(k));
  const b1 = await dataFile(t, 'b');
  t = await deleteByEquality(t, [1], [{ id: 10n, category: 'b' }]);
  const eqB = (await deleteKeys(t)).filter((k) => !before.has(k) && !posA.includes(k));
  t = await deleteRows(t, (r) => r.id === 20n).then((r) => r.table);
  const posC = (await deleteKeys(t)).filter((k) => !before.has(k) && !posA.includes(k) && !eqB.includes(k));
  t = await commitChanges(t, { removedFiles: [a1.filePath, b1.filePath] });
  t = await appendRows(t, rows('b', 30, 3));
  expect([posA.length, eqB.length, posC.length]).toEqual([1, 1, 1]);
  return { table: t, dangling: [...posA, ...eqB].sort(), needed: posC };
}

describe.each([2, 3] as const)('dangling deletes, format v%i', (formatVersion) => {
  it('the rule finds exactly the deletes no live data file needs; health counts them', async () => {
    const { table: t, dangling, needed } = await tableWithDanglingDeletes(formatVersion);
    const scan = await planFiles(t.io, t.metadata);
    const found = danglingDeletes(t.metadata, scan);
    expect(found.map((d) => deleteFileKey(d.file)).sort()).toEqual(dangling);
    expect(found.some((d) => d.file.content === FileContent.EqualityDeletes)).toBe(true);
    const bytes = found.reduce((n, d) => n + Number(deleteFileReadBytes(d.file)), 0);
    expect(danglingFigures(found)).toEqual({ files: 2, bytes });

    const h = await tableHealth(t.io, t.metadata, NO_GROUPS, { nowMs: 5 });
    expect(h.deleteFiles).toBe(3);
    expect([h.danglingDeleteFiles, h.danglingDeleteBytes]).toEqual([2, bytes]);
    expect(h.groups).toBe(0);
    expect(formatHealth(h)).toContain(`dangling      2 delete files`);
    expect(await deleteKeys(t)).toEqual([...dangling, ...needed].sort());
  });

  it('compact drops them in their own replace snapshot when no group is planned; rows unchanged', async () => {
    const { table: t, needed } = await tableWithDanglingDeletes(formatVersion);
    const rowsBefore = await liveRows(io, t.location);
    const dataBefore = (await planFiles(t.io, t.metadata)).tasks.map((x) => x.dataFile.filePath).sort();
    const snapshotBefore = t.metadata.currentSnapshotId;

    const dry = await runCompaction({ table: { location: t.location }, policy: NO_GROUPS }, { dryRun: true, parallelism: 0 });
    expect(dry.plan.groups).toEqual([]);
    expect(dry.plan.danglingDeletes?.files).toBe(2);
    expect(dry.commit).toBeNull();
    expect(formatRunReport(dry, true)).toContain('dry run: would drop 2 delete files');
    expect((await loadTable(t.location)).metadata.currentSnapshotId).toBe(snapshotBefore);

    const report = await runCompaction({ table: { location: t.location }, policy: NO_GROUPS }, { parallelism: 0 });
    expect(report.commit?.filesRemoved).toBe(2);
    expect(report.commit?.filesAdded).toBe(0);
    expect(formatRunReport(report, false)).toContain(`dropped 2 dangling delete files in snapshot ${report.commit?.snapshotId}`);

    const after = await loadTable(t.location);
    const snap = after.metadata.snapshots.find((s) => s.snapshotId === after.metadata.currentSnapshotId)!;
    expect(snap.parentSnapshotId).toBe(snapshotBefore);
    expect(snap.summary.operation).toBe('replace');
    expect(snap.summary[DANGLING_DELETES_SUMMARY]).toBe('2');
    expect(snap.summary['removed-delete-files']).toBe('2');
    expect(snap.summary['added-data-files']).toBeUndefined();
    expect((await planFiles(after.io, after.metadata)).tasks.map((x) => x.dataFile.filePath).sort()).toEqual(dataBefore);
    expect(await deleteKeys(after)).toEqual(needed);
    expect(await liveRows(io, t.location)).toEqual(rowsBefore);
    expect((await tableHealth(after.io, after.metadata, NO_GROUPS)).danglingDeleteFiles).toBe(0);

    // Nothing left to drop: a rerun commits nothing.
    const again = await runCompaction({ table: { location: t.location }, policy: NO_GROUPS }, { parallelism: 0 });
    expect(again.commit).toBeNull();
    expect((await loadTable(t.location)).metadata.currentSnapshotId).toBe(after.metadata.currentSnapshotId);
  });

  it('the state machine path: a plan with no group and the Pass state\'s empty results; the commit handler drops them', async () => {
    const { table: t, needed } = await tableWithDanglingDeletes(formatVersion);
    const plan = await planStep({ table: { location: t.location }, policy: NO_GROUPS });
    expect(plan.groups).toEqual([]);
    const result = await commitHandler(JSON.parse(JSON.stringify({ plan, results: [] })));
    expect([result.filesRemoved, result.committedGroups, result.abortedGroups]).toEqual([2, [], []]);
    expect(await deleteKeys(await loadTable(t.location))).toEqual(needed);
  });

  it('a compaction that plans groups drops them with its groups', async () => {
    const { table: t } = await tableWithDanglingDeletes(formatVersion);
    const rowsBefore = await liveRows(io, t.location);
    const report = await runCompaction({ table: { location: t.location }, policy: { minInputFiles: 1, deleteFileThreshold: 1 } }, { parallelism: 0 });
    expect(report.plan.groups.length).toBeGreaterThan(0);
    expect(report.commit?.abortedGroups).toEqual([]);
    const after = await loadTable(t.location);
    expect(await deleteKeys(after)).toEqual([]);
    expect(await liveRows(io, t.location)).toEqual(rowsBefore);
  });
});

describe('Java Iceberg 1.12 reads the same rows after dangling deletes are dropped', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  it.each([2, 3] as const)('format v%i', async (formatVersion) => {
    const { table: t } = await tableWithDanglingDeletes(formatVersion);
    const before = sortRows(await javaRead(t.location));
    // 5 files of 3 rows, two removed, one row deleted.
    expect(before.length).toBe(8);
    const report = await runCompaction({ table: { location: t.location }, policy: NO_GROUPS }, { parallelism: 0 });
    expect(report.commit?.filesRemoved).toBe(2);
    expect(sortRows(await javaRead(t.location))).toEqual(before);
  }, 300_000);

  it('Flink upsert fixture: the first equality delete of each partition is dangling; dropping them changes no row', async () => {
    const name = 'iceberg_v2_delete_equality_partitioned';
    const location = join(tempDir(), name);
    await relocateTable(join(FIXTURES, name), location);
    const before = sortRows(await javaRead(location), 'i');
    expect(before.length).toBe(6);
    const t = await loadTable(location);
    expect((await tableHealth(t.io, t.metadata, NO_GROUPS)).danglingDeleteFiles).toBe(2);
    const report = await runCompaction({ table: { location }, policy: NO_GROUPS }, { parallelism: 0 });
    expect(report.plan.groups).toEqual([]);
    expect(report.commit?.filesRemoved).toBe(2);
    expect((await planFiles(t.io, (await loadTable(location)).metadata)).deleteFiles.length).toBe(2);
    expect(sortRows(await javaRead(location), 'i')).toEqual(before);
  }, 300_000);
});

describe.each([2, 3] as const)('dangling deletes on moto S3, format v%i', (formatVersion) => {
  it('compact drops them in a replace snapshot; no data file or row changes', async () => {
    const s3Endpoint = testS3Endpoint();
    const location = `s3://${await freshBucket()}/warehouse/events`;
    const s3 = fileIOFor(location, { s3Endpoint });
    const { table: t, needed } = await tableWithDanglingDeletes(formatVersion, { io: s3, location });
    const rowsBefore = await liveRows(s3, location, s3Endpoint);
    const dataBefore = (await planFiles(t.io, t.metadata)).tasks.map((x) => x.dataFile.filePath).sort();
    expect((await tableHealth(t.io, t.metadata, NO_GROUPS)).danglingDeleteFiles).toBe(2);

    const report = await runCompaction({ table: { location, s3Endpoint }, policy: NO_GROUPS }, { parallelism: 0 });
    expect(report.commit?.filesRemoved).toBe(2);
    const after = await loadTable(location, { s3Endpoint });
    const snap = after.metadata.snapshots.find((s) => s.snapshotId === after.metadata.currentSnapshotId)!;
    expect(snap.summary.operation).toBe('replace');
    expect((await planFiles(after.io, after.metadata)).tasks.map((x) => x.dataFile.filePath).sort()).toEqual(dataBefore);
    expect(await deleteKeys(after)).toEqual(needed);
    expect(await liveRows(s3, location, s3Endpoint)).toEqual(rowsBefore);
  });
});
