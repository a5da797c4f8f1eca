/**
 * Manifests on commit, as Java's MergingSnapshotProducer: manifests without a live entry are
 * dropped by the next commit, small ones merge per spec once min-count-to-merge is reached,
 * and Java 1.12 reads the same rows from every snapshot.
 */
import { describe, expect, it } from 'vitest';
import type { Table } from '../../lib/catalog/table.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { readManifestList, type ManifestFile } from '../../lib/iceberg/manifest-list.js';
import { packEnd } from '../../lib/iceberg/manifest-merge.js';
import { currentSnapshot } from '../../lib/iceberg/table-metadata.js';
import type { Row } from '../../lib/iceberg/values.js';
import { appendRows, commitChanges, createNewTable, deleteRows } from '../../lib/table/operations.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { writeDataFiles } from '../../lib/table/data-writer.js';
import { sortRows } from '../support/canonical-rows.js';
import { tempDir } from '../support/fixtures.js';
import { javaRead } from '../support/java.js';

const io = new LocalFileIO();

async function manifests(t: Table): Promise<ManifestFile[]> {
  const s = currentSnapshot(t.metadata);
  return s?.manifestList ? readManifestList(io, s.manifestList, t.metadata.formatVersion) : [];
}

async function newTable(properties: Record<string, string>): Promise<Table> {
  return createNewTable(io, tempDir('packice-merge-'), {
    formatVersion: 2,
    schema: {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: { type: 'long' } },
        { id: 2, name: 'part', required: true, type: { type: 'string' } },
      ],
    },
    partitionFields: [{ sourceId: 2, name: 'part', transform: { kind: 'identity' } }],
    properties,
  });
}

const rows = (from: number, n: number, part: string): Row[] => Array.from({ length: n }, (_, i) => ({ id: BigInt(from + i), part }));

describe('packEnd', () => {
  it('packs consecutive runs from the end, the under-filled run first', () => {
    expect(packEnd([5, 5, 5, 5, 5], (x) => x, 10)).toEqual([[5], [5, 5], [5, 5]]);
    expect(packEnd([1, 20, 1, 1], (x) => x, 10)).toEqual([[1], [20], [1, 1]]);
    expect(packEnd([], (x: number) => x, 10)).toEqual([]);
  });
});

describe('manifests on commit', () => {
  it('keeps one manifest per commit below min-count-to-merge, and merges the bin holding the new one at it', async () => {
    let t = await newTable({ 'commit.manifest.min-count-to-merge': '4' });
    for (let c = 0; c < 3; c++) t = await appendRows(t, rows(c * 10, 10, `p${c}`));
    expect((await manifests(t)).length).toBe(3);
    t = await appendRows(t, rows(30, 10, 'p3'));
    const merged = await manifests(t);
    expect(merged.length).toBe(1);
    // The new files stay ADDED, the older ones become EXISTING.
    expect(merged[0]).toMatchObject({ addedFilesCount: 1, existingFilesCount: 3, deletedFilesCount: 0 });
    expect(currentSnapshot(t.metadata)!.summary).toMatchObject({ 'manifests-created': '1', 'manifests-replaced': '3' });
    expect(sortRows(await javaRead(t.location))).toHaveLength(40);
  });

  it('merges nothing when commit.manifest-merge.enabled is false', async () => {
    let t = await newTable({ 'commit.manifest.min-count-to-merge': '2', 'commit.manifest-merge.enabled': 'false' });
    for (let c = 0; c < 4; c++) t = await appendRows(t, rows(c * 10, 10, `p${c}`));
    expect((await manifests(t)).length).toBe(4);
  });

  it('records deletes in the snapshot that made them, and the next commit drops the manifest with no live entry', async () => {
    let t = await newTable({ 'commit.manifest-merge.enabled': 'false' });
    for (let c = 0; c < 3; c++) t = await appendRows(t, rows(c * 10, 10, `p${c}`));
    const p1 = (await planFiles(io, t.metadata)).tasks.filter((x) => x.dataFile.partition.part === 'p1').map((x) => x.dataFile.filePath);
    t = await commitChanges(t, { removedFiles: p1 });
    const afterDelete = await manifests(t);
    // The emptied manifest is rewritten with its entry DELETED, in this snapshot.
    expect(afterDelete.map((m) => [m.addedFilesCount, m.existingFilesCount, m.deletedFilesCount])).toContainEqual([0, 0, 1]);
    const deleting = currentSnapshot(t.metadata)!.snapshotId;
    t = await appendRows(t, rows(100, 5, 'p9'));
    const next = await manifests(t);
    expect(next.length).toBe(3);
    expect(next.every((m) => (m.addedFilesCount ?? 1) + (m.existingFilesCount ?? 1) > 0)).toBe(true);
    expect(sortRows(await javaRead(t.location)).map((r) => r.id)).toEqual([...Array.from({ length: 10 }, (_, i) => i), ...Array.from({ length: 10 }, (_, i) => 20 + i), 100, 101, 102, 103, 104]);
    expect(sortRows(await javaRead(t.location, deleting))).toHaveLength(20);
  });

  it('merges the DELETED entries of this commit and drops those of earlier ones', async () => {
    let t = await newTable({ 'commit.manifest.min-count-to-merge': '3' });
    t = await appendRows(t, rows(0, 10, 'a'));
    t = await appendRows(t, rows(10, 10, 'b'));
    const a = (await planFiles(io, t.metadata)).tasks.filter((x) => x.dataFile.partition.part === 'a').map((x) => x.dataFile.filePath);
    const c = await writeDataFiles(io, t.metadata, rows(20, 1, 'c'));
    // The new manifest, b's and a's emptied one: the bin reaches 3 and merges, keeping this commit's delete.
    t = await commitChanges(t, { addedDataFiles: c, removedFiles: a });
    expect((await manifests(t)).map((m) => [m.addedFilesCount, m.existingFilesCount, m.deletedFilesCount])).toEqual([[1, 1, 1]]);
    t = (await deleteRows(t, (r) => r.id === 15n)).table;
    t = await appendRows(t, rows(21, 1, 'd'));
    // Carried as it is until a merge takes it in: [d, merged] is below the count.
    expect((await manifests(t)).filter((m) => m.content === 0).map((m) => m.deletedFilesCount)).toEqual([0, 1]);
    t = await appendRows(t, rows(22, 1, 'e'));
    const data = (await manifests(t)).filter((m) => m.content === 0);
    // Merged again: the earlier commit's DELETED entry is not carried.
    expect(data.map((m) => [m.addedFilesCount, m.existingFilesCount, m.deletedFilesCount])).toEqual([[1, 3, 0]]);
    expect(sortRows(await javaRead(t.location)).map((r) => r.id)).toEqual([10, 11, 12, 13, 14, 16, 17, 18, 19, 20, 21, 22]);
  });
});
