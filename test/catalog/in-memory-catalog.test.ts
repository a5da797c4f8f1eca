/**
 * Every commit goes through a Catalog; the in-memory one injects a conflict, or lets another
 * change commit first, at a chosen attempt (as iceberg-rust's tests do). The compaction commit is
 * an action re-run on every attempt: it re-validates each group against the metadata it is given
 * and re-reads metadata only, never data.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InMemoryCatalog, type InMemoryCatalogOptions } from '../../lib/catalog/in-memory-catalog.js';
import { commitTable, openTable } from '../../lib/catalog/table.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { CommitConflictError } from '../../lib/errors.js';
import type { FileIO } from '../../lib/io/file-io.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import type { Row } from '../../lib/iceberg/values.js';
import { expireSnapshots } from '../../lib/maintenance/expire-snapshots.js';
import { appendRows, deleteRows, updateSchema } from '../../lib/table/operations.js';
import { scanRows } from '../../lib/table/scan.js';
import { planAll } from '../support/compaction.js';
import { tempDir } from '../support/fixtures.js';
import { RecordingIO } from '../support/recording-io.js';
import { smallTable } from '../support/small-table.js';

/** The small table (two partitions, 32 live rows) behind an in-memory catalog, planned and rewritten. */
async function rewritten(formatVersion: 2 | 3, options: InMemoryCatalogOptions = {}, io: FileIO = new LocalFileIO()) {
  const location = join(tempDir('packice-catalog-'), 't');
  const written = await smallTable(io, location, formatVersion);
  const catalog = new InMemoryCatalog(io, `memory:${location}`, written, options);
  const table = await openTable(catalog, location);
  const plan = await planAll(io, table.metadata);
  const results = await Promise.all(plan.groups.map((g) => rewriteGroup(io, table.metadata, plan, g)));
  return { io, location, catalog, table, plan, results };
}

async function liveIds(catalog: InMemoryCatalog): Promise<number[]> {
  const t = await openTable(catalog);
  const ids: number[] = [];
  for await (const r of scanRows(t.io, t.metadata)) ids.push(Number(r.id));
  return ids.sort((a, b) => a - b);
}

/** Ids 1..40 but every fifth: what smallTable leaves. */
const SMALL_IDS = Array.from({ length: 40 }, (_, i) => i + 1).filter((i) => i % 5 !== 0);

function rowsOf(ids: readonly number[]): Row[] {
  return ids.map((id) => ({ id: BigInt(id), category: id % 2 === 0 ? 'a' : 'b', amount: BigInt(id * 125) }));
}

async function dataFilesNow(catalog: InMemoryCatalog): Promise<number> {
  const t = await openTable(catalog);
  return (await planFiles(t.io, t.metadata)).tasks.length;
}

describe('commits through an in-memory catalog', () => {
  it('a conflict injected at attempts 1 and 2: the compaction commits on attempt 3, once', async () => {
    // Prepare
    const { catalog, table, plan, results } = await rewritten(2);
    catalog.failAt(1).failAt(2);

    // Act
    const r = await commitCompaction(table, plan, results);

    // Assess
    expect(r.attempts).toBe(3);
    expect([...r.committedGroups].sort()).toEqual(['g0', 'g1']);
    expect(r.abortedGroups).toEqual([]);
    expect(catalog.commits).toBe(1);
    expect(await dataFilesNow(catalog)).toBe(2);
    expect(await liveIds(catalog)).toEqual(SMALL_IDS);
  });

  it('another compaction removes an input of g0 first: only g0 aborts, g1 commits', async () => {
    // Prepare
    const { io, location, catalog, table, plan, results } = await rewritten(2);
    catalog.beforeAttempt(1, async (c) => {
      const other = await openTable(c, location);
      await commitCompaction(other, plan, [await rewriteGroup(io, other.metadata, plan, plan.groups[0])]);
    });

    // Act
    const r = await commitCompaction(table, plan, results);

    // Assess
    expect(r.attempts).toBe(2);
    expect(r.committedGroups).toEqual(['g1']);
    expect(r.abortedGroups.map((a) => a.groupId)).toEqual(['g0']);
    expect(r.abortedGroups[0].reason).toMatch(/no longer live \(removed by another commit\)/);
    expect(catalog.commits).toBe(2);
    expect(await dataFilesNow(catalog)).toBe(2);
    expect(await liveIds(catalog)).toEqual(SMALL_IDS);
  });

  it('a writer appends first: the compaction commits on attempt 2 and the append is kept', async () => {
    // Prepare
    const { location, catalog, table, plan, results } = await rewritten(2);
    catalog.beforeAttempt(1, async (c) => {
      await appendRows(await openTable(c, location), rowsOf([41, 42, 43]));
    });

    // Act
    const r = await commitCompaction(table, plan, results);

    // Assess
    expect(r.attempts).toBe(2);
    expect([...r.committedGroups].sort()).toEqual(['g0', 'g1']);
    expect(await dataFilesNow(catalog)).toBe(4); // two outputs, and the append's file per partition
    expect(await liveIds(catalog)).toEqual([...SMALL_IDS, 41, 42, 43]);
  });

  for (const formatVersion of [2, 3] as const) {
    it(`v${formatVersion}: a writer deletes a row of an input first: the delete is rebased onto the output`, async () => {
      // Prepare
      const { location, catalog, table, plan, results } = await rewritten(formatVersion);
      catalog.beforeAttempt(1, async (c) => {
        await deleteRows(await openTable(c, location), (row) => row.id === 3n);
      });

      // Act
      const r = await commitCompaction(table, plan, results);

      // Assess
      expect(r.attempts).toBe(2);
      expect(r.abortedGroups).toEqual([]);
      expect(r.deletesRebased).toBe(1);
      expect(await liveIds(catalog)).toEqual(SMALL_IDS.filter((i) => i !== 3));
    });
  }

  it('retries exhausted: a CommitConflictError naming the table and the attempts; nothing committed', async () => {
    // Prepare
    const { catalog, table, plan, results } = await rewritten(2);
    catalog.failAt(1).failAt(2).failAt(3);

    // Act
    const err = await commitCompaction(table, plan, results, { retries: 2 }).catch((e: unknown) => e);

    // Assess
    expect(err).toBeInstanceOf(CommitConflictError);
    const conflict = err as CommitConflictError;
    expect(conflict.message).toContain(catalog.name);
    expect(conflict.message).toContain('after 3 attempts');
    expect(conflict.attempts).toBe(3);
    expect(conflict.path).toBe(catalog.name);
    expect(catalog.attempts).toBe(3);
    expect(catalog.commits).toBe(0);
  });

  it('a server that checks requirements: the failed one names itself, and the retry commits', async () => {
    // Prepare
    const { location, catalog, table } = await rewritten(2, { checks: 'server' });
    catalog.beforeAttempt(1, async (c) => {
      await appendRows(await openTable(c, location), rowsOf([41]));
    });
    const conflicts: CommitConflictError[] = [];

    // Act
    const r = await commitTable(
      table,
      (base) => ({
        updates: [{ action: 'set-properties', updates: { 'packice.test': 'yes' } }],
        requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', snapshotId: base.metadata.currentSnapshotId }],
      }),
      { onRetry: (_, e) => conflicts.push(e) },
    );

    // Assess
    expect(r.attempts).toBe(2);
    expect(conflicts).toHaveLength(1);
    expect(conflicts[0].requirement).toBe('assert-ref-snapshot-id');
    expect(conflicts[0].message).toMatch(/Requirement failed \(assert-ref-snapshot-id\): branch main snapshot: expected \d+, found \d+/);
    expect(r.table.metadata.properties['packice.test']).toBe('yes');
    expect(await liveIds(catalog)).toEqual([...SMALL_IDS, 41]);
  });

  it('a pointer catalog refuses a stale base as "pointer moved", naming no requirement', async () => {
    // Prepare
    const { catalog, table } = await rewritten(2);
    await updateSchema(table, table.metadata.schemas[0].fields);
    const conflicts: CommitConflictError[] = [];

    // Act: commit on the stale base, with no retry
    const err = await commitTable(table, () => ({ updates: [], requirements: [] }), { retries: 0, onRetry: (_, e) => conflicts.push(e) }).catch(
      (e: unknown) => e,
    );

    // Assess
    expect(err).toBeInstanceOf(CommitConflictError);
    expect((err as CommitConflictError).requirement).toBeUndefined();
    expect((err as CommitConflictError).message).toMatch(/pointer moved/);
    expect(catalog.commits).toBe(1);
  });

  it('expiry is re-decided on the metadata each attempt sees: a snapshot appended meanwhile stays', async () => {
    // Prepare
    const { location, catalog, table } = await rewritten(2);
    const before = table.metadata.snapshots.length;
    catalog.beforeAttempt(1, async (c) => {
      await appendRows(await openTable(c, location), rowsOf([41]));
    });

    // Act
    const r = await expireSnapshots(table, { retainLast: 1, olderThanMs: 0, nowMs: Date.now() + 1000 });

    // Assess
    expect(r.commitAttempts).toBe(2);
    expect(r.expiredSnapshots).toHaveLength(before);
    const after = await openTable(catalog);
    expect(after.metadata.snapshots).toHaveLength(1);
    expect(after.metadata.snapshots[0].snapshotId).toBe(after.metadata.currentSnapshotId);
    expect(await liveIds(catalog)).toEqual([...SMALL_IDS, 41]);
  });
});

describe('old metadata files behind a catalog', () => {
  it('expiry with delete-after-commit removes NNNNN-<uuid> files below the kept log, never the v<N> files of the folder', async () => {
    // Prepare: the folder table's own v<N> files, then catalog commits past previous-versions-max.
    const { location, catalog } = await rewritten(2);
    const folderFiles = readdirSync(join(location, 'metadata')).filter((f) => /^v\d+\.metadata\.json$/.test(f));
    await commitTable(await openTable(catalog), () => ({
      updates: [{ action: 'set-properties', updates: { 'write.metadata.delete-after-commit.enabled': 'true', 'write.metadata.previous-versions-max': '2' } }],
      requirements: [],
    }));
    for (let i = 0; i < 4; i++) await appendRows(await openTable(catalog), rowsOf([41 + i]));
    const catalogFiles = (): string[] => readdirSync(join(location, 'metadata')).filter((f) => /^\d{5}-[0-9a-f-]{36}\.metadata\.json$/.test(f)).sort();
    const before = catalogFiles();

    // Act
    const table = await openTable(catalog);
    const r = await expireSnapshots(table, { retainLast: 100, olderThanMs: 0, nowMs: Date.now() + 1000 });

    // Assess: what the log and the pointer name stays, the older catalog files went, the folder's stayed.
    const after = await openTable(catalog);
    const named = new Set([after.metadataLocation, ...after.metadata.metadataLog.map((e) => e.metadataFile)].map((p) => p.slice(p.lastIndexOf('/') + 1)));
    expect(before.length).toBeGreaterThan(named.size);
    expect(catalogFiles()).toEqual(before.filter((f) => named.has(f)));
    expect(r.files.filter((f) => f.kind === 'metadata')).toHaveLength(before.length - catalogFiles().length);
    expect(readdirSync(join(location, 'metadata')).filter((f) => folderFiles.includes(f))).toEqual(folderFiles);
    expect(await liveIds(catalog)).toEqual([...SMALL_IDS, 41, 42, 43, 44]);
  });
});

describe('the compaction commit reads metadata, never data', () => {
  it('a retry after a writer appended opens no data file, delete file or map', async () => {
    // Prepare
    const io = new RecordingIO(new LocalFileIO());
    const { location, catalog, table, plan, results } = await rewritten(2, {}, io);
    catalog.beforeAttempt(1, async (c) => {
      await appendRows(await openTable(c, location), rowsOf([41, 42]));
    });
    io.reads.length = 0;

    // Act
    const r = await commitCompaction(table, plan, results);

    // Assess
    expect(r.attempts).toBe(2);
    expect(r.committedGroups.length).toBe(2);
    const opened = io.reads.filter((p) => /\.(parquet|puffin)$/.test(p));
    expect(opened).toEqual([]);
    expect(io.reads.some((p) => p.endsWith('.avro'))).toBe(true); // it did re-read manifests
  });
});
