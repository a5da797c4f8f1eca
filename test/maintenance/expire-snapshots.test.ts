/**
 * Expiry never deletes what a retained snapshot reaches, on disk and on moto S3: files reachable
 * only from a tag, a branch or a snapshot inside the horizon stay; a Puffin file shared by a live
 * and an expired DV stays; files a metadata file names outside the table location are never
 * touched; `s3a://` references count as the `s3://` objects they are. Java Iceberg reads every
 * retained snapshot with the same rows before and after.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitTable, loadTable } from '../../lib/catalog/table.js';
import { ValidationError } from '../../lib/errors.js';
import { fileIOFor } from '../../lib/io/index.js';
import type { FileIO } from '../../lib/io/file-io.js';
import { expireSnapshots, type ExpireResult } from '../../lib/maintenance/expire-snapshots.js';
import { writeDataFiles } from '../../lib/table/data-writer.js';
import { commitChanges } from '../../lib/table/operations.js';
import { pendingExpiryFolder } from '../../lib/maintenance/pending-expiry.js';
import { sortRows } from '../support/canonical-rows.js';
import { javaRead } from '../support/java.js';
import { tempDir } from '../support/fixtures.js';
import { localOutside, retentionTable, s3RetentionTable, type RetentionTable, type SnapshotName } from '../support/retention-table.js';

const DAY = 86_400_000;
const RETAINED: readonly SnapshotName[] = ['s10', 's9', 's8', 's2', 'dev'];
const EXPIRED: readonly SnapshotName[] = ['s1', 's3', 's4', 's5', 's6', 's7'];

async function exists(io: FileIO, path: string): Promise<boolean> {
  return io.exists(path.replace(/^s3a:/, 's3:').replace(/^file:\/\//, ''));
}

async function checkExpiry(rt: RetentionTable, result: ExpireResult): Promise<void> {
  const t = await loadTable(rt.location, { io: rt.io });
  const kept = new Set(t.metadata.snapshots.map((s) => s.snapshotId));
  for (const name of RETAINED) expect(kept.has(rt.ids[name]), `${name} retained`).toBe(true);
  for (const name of EXPIRED) expect(kept.has(rt.ids[name]), `${name} expired`).toBe(false);
  expect(Object.keys(t.metadata.refs).sort()).toEqual(['audit', 'dev', 'main']);

  // Every file a retained snapshot reaches is still there.
  for (const p of [...rt.files.a, ...rt.files.b, ...rt.files.c, ...rt.files.e, ...rt.files.g, rt.files.sharedPuffin]) {
    expect(await exists(rt.io, p), p).toBe(true);
  }
  // F was reachable only from expired snapshots.
  for (const p of rt.files.f) expect(await exists(rt.io, p), p).toBe(false);
  const deletedData = result.files.filter((f) => f.kind === 'data').map((f) => f.path).sort();
  expect(deletedData).toEqual([...rt.files.f].sort());
  expect(result.files.some((f) => f.kind === 'deletion-vector')).toBe(false);
  expect(result.files.filter((f) => f.kind === 'manifest-list').length).toBeGreaterThanOrEqual(EXPIRED.length);
  // Named by an expired manifest, outside the location: reported, never deleted.
  expect([...result.outsideLocation].sort()).toEqual([...rt.files.outside].sort());
  for (const p of rt.files.outside) expect(await exists(rt.io, p), p).toBe(true);
  // Nothing left pending.
  const pending: string[] = [];
  for await (const f of rt.io.list(pendingExpiryFolder(rt.location))) pending.push(f.path);
  expect(pending).toEqual([]);
}

describe('expire on disk', () => {
  it('keeps tag, branch and horizon snapshots and the shared Puffin file; Java reads the same rows before and after', async () => {
    const dir = tempDir('packice-expire-');
    const location = join(dir, 'table');
    const io = fileIOFor(location);
    const rt = await retentionTable(io, location, localOutside(location), (p) => `file://${p}`);
    const before = new Map<SnapshotName, unknown>();
    for (const name of RETAINED) before.set(name, sortRows(await javaRead(location, rt.ids[name])));

    const dry = await expireSnapshots(location, { olderThanMs: DAY, horizonsMs: [3 * DAY], dryRun: true });
    expect(dry.deleted).toBe(0);
    for (const f of dry.files) expect(existsSync(f.path), f.path).toBe(true);

    const result = await expireSnapshots(location, { olderThanMs: DAY, horizonsMs: [3 * DAY] });
    expect(result.expiredSnapshots.length).toBeGreaterThanOrEqual(EXPIRED.length);
    expect(result.files.map((f) => f.path).sort()).toEqual(dry.files.map((f) => f.path).sort());
    expect(result.deleted).toBe(result.files.length);
    await checkExpiry(rt, result);
    for (const name of RETAINED) expect(sortRows(await javaRead(location, rt.ids[name])), `Java rows of ${name}`).toEqual(before.get(name));

    // A second run finds nothing more to do.
    const again = await expireSnapshots(location, { olderThanMs: DAY, horizonsMs: [3 * DAY] });
    expect(again.files).toEqual([]);
  });

  it('without the horizon, the file only a snapshot inside it reached goes too', async () => {
    const location = join(tempDir('packice-expire-'), 'table');
    const io = fileIOFor(location);
    const rt = await retentionTable(io, location, localOutside(location), (p) => p);
    const result = await expireSnapshots(location, { olderThanMs: DAY });
    for (const p of rt.files.e) expect(await exists(io, p)).toBe(false);
    for (const p of [...rt.files.a, ...rt.files.b, ...rt.files.c, rt.files.sharedPuffin]) expect(await exists(io, p), p).toBe(true);
    expect(result.files.filter((f) => f.kind === 'data').length).toBe(rt.files.e.length + rt.files.f.length);
  });

  it('a rerun after a crash between commit and delete finishes the job', async () => {
    const location = join(tempDir('packice-expire-'), 'table');
    const io = fileIOFor(location);
    const rt = await retentionTable(io, location, localOutside(location), (p) => p);
    // The crash: deletes fail after the commit, so the first run dies with its record written.
    const failing: FileIO = Object.assign(Object.create(io) as FileIO, {
      deleteMany: async (paths: readonly string[]) => {
        if (paths.some((p) => p.includes('/data/'))) throw new ValidationError('simulated crash');
        return io.deleteMany(paths);
      },
    });
    const t = await loadTable(location, { io: failing });
    await expect(expireSnapshots(t, { olderThanMs: DAY, horizonsMs: [3 * DAY] })).rejects.toThrow('simulated crash');
    for (const p of rt.files.f) expect(await exists(io, p)).toBe(true);

    const rerun = await expireSnapshots(location, { olderThanMs: DAY, horizonsMs: [3 * DAY] });
    expect(rerun.resumedRecords).toBe(1);
    await checkExpiry(rt, rerun);
  });

  it('retries when another writer commits first, re-deciding on the new metadata, and keeps that writer\'s files', async () => {
    const location = join(tempDir('packice-expire-'), 'table');
    const io = fileIOFor(location);
    const rt = await retentionTable(io, location, localOutside(location), (p) => p);
    let appended: string[] = [];
    let raced = false;
    // The first metadata version the expiry tries to create is taken by an append just before.
    const racing: FileIO = Object.assign(Object.create(io) as FileIO, {
      createIfAbsent: async (path: string, data: Uint8Array) => {
        if (!raced && path.endsWith('.metadata.json')) {
          raced = true;
          const t = await loadTable(location, { io });
          const files = await writeDataFiles(io, t.metadata, [{ id: 99n, category: 'a', amount: 1n }]);
          appended = files.map((f) => f.filePath);
          await commitChanges(t, { addedDataFiles: files });
        }
        return io.createIfAbsent(path, data);
      },
    });
    const result = await expireSnapshots(await loadTable(location, { io: racing }), { olderThanMs: DAY, horizonsMs: [3 * DAY] });
    expect(result.commitAttempts).toBe(2);
    await checkExpiry(rt, result);
    for (const p of appended) expect(await exists(io, p), p).toBe(true);
    const t = await loadTable(location, { io });
    expect(t.metadata.snapshots.some((s) => s.parentSnapshotId === rt.ids.s10)).toBe(true);
  });

  it('refuses when gc.enabled=false, and honours per-ref overrides', async () => {
    const location = join(tempDir('packice-expire-'), 'table');
    const io = fileIOFor(location);
    const rt = await retentionTable(io, location, localOutside(location), (p) => p);
    let t = await loadTable(location, { io });
    t = (await commitTable(t, () => ({ updates: [{ action: 'set-properties', updates: { 'gc.enabled': 'false' } }], requirements: [] }))).table;
    await expect(expireSnapshots(t, { olderThanMs: DAY })).rejects.toThrow(/GC is disabled/);
    t = (await commitTable(t, () => ({
      updates: [
        { action: 'set-properties', updates: { 'gc.enabled': 'true' } },
        // The tag ages out after 2 days; main keeps 3 snapshots whatever --retain-last says.
        { action: 'set-snapshot-ref', refName: 'audit', type: 'tag', snapshotId: rt.ids.s2, maxRefAgeMs: 2 * DAY },
        { action: 'set-snapshot-ref', refName: 'main', type: 'branch', snapshotId: rt.ids.s10, minSnapshotsToKeep: 3 },
      ],
      requirements: [],
    }))).table;
    const result = await expireSnapshots(t, { olderThanMs: 0, retainLast: 1 });
    expect(result.removedRefs).toEqual(['audit']);
    const after = await loadTable(location, { io });
    const kept = new Set(after.metadata.snapshots.map((s) => s.snapshotId));
    expect([rt.ids.s10, rt.ids.s9, rt.ids.s8, rt.ids.dev].every((id) => kept.has(id))).toBe(true);
    expect(kept.has(rt.ids.s2)).toBe(false);
    // B was reachable only from the tag's snapshot.
    for (const p of rt.files.b) expect(await exists(io, p)).toBe(false);
    for (const p of [...rt.files.a, ...rt.files.c, rt.files.sharedPuffin]) expect(await exists(io, p), p).toBe(true);
  });
});

describe('expire on S3 (moto)', () => {
  it('keeps what retained snapshots reach, s3a:// references included, and touches nothing outside the location', async () => {
    const rt = await s3RetentionTable();
    const t = await loadTable(rt.location, { io: rt.io });
    const result = await expireSnapshots(t, { olderThanMs: DAY, horizonsMs: [3 * DAY] });
    await checkExpiry(rt, result);
  });
});
