/**
 * The writer's side of compaction maps (lib/compaction/row-delta.ts): deletes prepared in a
 * snapshot that compactions have since replaced commit against the current files; a compaction
 * committed during the writer's commit is followed by its retry; a file an overwrite removed is a
 * genuine conflict; v3 keeps one deletion vector per data file.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { commitPositionDeletes, deleteWhere } from '../../lib/compaction/row-delta.js';
import { DataFileRemovedError, ValidationError } from '../../lib/errors.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { commitStep, rewriteStep } from '../../lib/pipeline/steps.js';
import { currentSchema } from '../../lib/iceberg/table-metadata.js';
import { commitChanges, deleteRows } from '../../lib/table/operations.js';
import { readTask } from '../../lib/table/scan.js';
import { planAll } from '../support/compaction.js';
import { tempDir } from '../support/fixtures.js';
import { RecordingIO } from '../support/recording-io.js';
import { liveRows, smallTable } from '../support/small-table.js';

const io = new LocalFileIO();
/** The small table's live ids: 1..40 without every fifth. */
const LIVE = Array.from({ length: 40 }, (_, i) => i + 1).filter((i) => i % 5 !== 0);

async function ids(location: string): Promise<number[]> {
  return (await liveRows(io, location)).map((r) => Number(r.id));
}

async function compact(location: string): Promise<void> {
  const t = await loadTable(location);
  const plan = await planAll(t.io, t.metadata);
  const results = await Promise.all(plan.groups.map((g) => rewriteStep({ plan, groupId: g.id })));
  const commit = await commitStep({ plan, results });
  expect(commit.abortedGroups).toEqual([]);
  expect(commit.committedGroups.length).toBe(2);
}

const idsIn = (list: readonly number[]) => (r: { id?: unknown }): boolean => list.includes(Number(r.id));

describe('a writer commits deletes prepared before compactions', () => {
  for (const v of [2, 3] as const) {
    it(`v${v}: deletes found in a snapshot two compactions ago land on the current files; rows the compactions removed drop`, async () => {
      const t0 = await smallTable(io, join(tempDir(), 't'), v);
      const before = t0.metadata.currentSnapshotId!;
      await compact(t0.location);
      // Between the two compactions another writer deletes 7 (which the writer deletes too) and 9.
      await deleteRows(await loadTable(t0.location), idsIn([7, 9]));
      await compact(t0.location);
      const r = await deleteWhere(await loadTable(t0.location), idsIn([3, 7, 12, 5]), { snapshotId: before });
      expect(r.matched).toBe(3); // 5 was deleted already in that snapshot
      expect(r.maps).toBe(4);
      expect(r.dropped).toBe(1); // 7: the second compaction removed its row
      expect(r.rebased).toBe(2);
      expect(r.rowsDeleted).toBe(2);
      expect(r.filesWritten).toBe(2); // both partitions: one delete file (v2) or one DV (v3) each
      expect(await ids(t0.location)).toEqual(LIVE.filter((i) => ![3, 7, 9, 12].includes(i)));
      const scan = await planFiles(io, (await loadTable(t0.location)).metadata);
      if (v === 3) for (const task of scan.tasks) expect(task.deletes.deletionVector).toBeDefined();
    });
  }

  it('v3: a compaction committed during the writer\'s commit is followed by the retry; the first attempt\'s files are removed', async () => {
    const t0 = await smallTable(io, join(tempDir(), 't'), 3);
    const before = t0.metadata.currentSnapshotId!;
    const prepared = await deleteWhere(t0, () => false); // nothing: no commit
    expect(prepared.committed).toBe(false);
    // Positions of ids 1 and 2 in the snapshot's files.
    const positions = new Map<string, number[]>();
    for (const task of (await planFiles(io, t0.metadata)).tasks) {
      for await (const rows of readTask(io, t0.metadata, task, currentSchema(t0.metadata), { positions: true })) {
        for (const row of rows) if (row.id === 1n || row.id === 2n) positions.set(task.dataFile.filePath, [Number(row._pos)]);
      }
    }
    let compacted = false;
    const racing = new RecordingIO(io);
    const written: string[] = [];
    racing.write = async (path, data) => {
      written.push(path);
      return io.write(path, data);
    };
    racing.createIfAbsent = async (path: string, data: Uint8Array): Promise<void> => {
      if (!compacted && /\.metadata\.json$/.test(path)) {
        compacted = true;
        await compact(t0.location);
      }
      return io.createIfAbsent(path, data);
    };
    const r = await commitPositionDeletes(await loadTable(t0.location, { io: racing }), { snapshotId: before, positions });
    expect(compacted).toBe(true);
    expect(r.attempts).toBe(2);
    expect(r.maps).toBe(2);
    expect(r.rebased).toBe(2);
    expect(r.rowsDeleted).toBe(2);
    expect(await ids(t0.location)).toEqual(LIVE.filter((i) => i > 2));
    // The first attempt's Puffin file and manifests are gone; the second's are referenced.
    const puffins = written.filter((p) => p.endsWith('.puffin'));
    expect(puffins.length).toBe(2);
    expect(existsSync(puffins[0])).toBe(false);
    expect(existsSync(puffins[1])).toBe(true);
  });

  it('a delete aimed at a file an overwrite removed is a DataFileRemovedError naming the file; nothing commits', async () => {
    const t0: Table = await smallTable(io, join(tempDir(), 't'), 2);
    const before = t0.metadata.currentSnapshotId!;
    const victim = (await planFiles(io, t0.metadata)).tasks[0].dataFile.filePath;
    await commitChanges(t0, { removedFiles: [victim], operation: 'overwrite' });
    const table = await loadTable(t0.location);
    const error = await commitPositionDeletes(table, { snapshotId: before, positions: new Map([[victim, [0]]]) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataFileRemovedError);
    expect((error as DataFileRemovedError).dataFile).toBe(victim);
    expect((error as Error).message).toContain(`for ${victim}: the file is no longer live`);
    expect((await loadTable(t0.location)).metadata.currentSnapshotId).toBe(table.metadata.currentSnapshotId);
  });

  it('a snapshot that is not an ancestor of the current one is refused', async () => {
    const t0 = await smallTable(io, join(tempDir(), 't'), 2);
    const error = await commitPositionDeletes(t0, { snapshotId: 42n, positions: new Map([['x', [0]]]) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/prepared in snapshot 42, which is not an ancestor/);
  });
});
