/**
 * Orphan removal after expiry, on disk and on moto S3: only old, unreferenced files inside the
 * table location go. Files every retained snapshot and logged metadata file reach stay, so do
 * in-flight files younger than the delay, `s3a://` references listed as `s3://`, the demo's
 * marker, hidden names, and anything outside the location. A listed file that the metadata names
 * in another bucket stops the run unless told to ignore or delete it.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTable } from '../../lib/catalog/table.js';
import { fileIOFor } from '../../lib/io/index.js';
import type { FileIO } from '../../lib/io/file-io.js';
import { writeDataFiles } from '../../lib/table/data-writer.js';
import { commitChanges, createNewTable } from '../../lib/table/operations.js';
import { expireSnapshots } from '../../lib/maintenance/expire-snapshots.js';
import { DEMO_MARKER_FILE, deleteOrphanFiles } from '../../lib/maintenance/orphan-files.js';
import { sortRows } from '../support/canonical-rows.js';
import { tempDir } from '../support/fixtures.js';
import { javaRead } from '../support/java.js';
import { localOutside, retentionTable, s3RetentionTable, type RetentionTable, type SnapshotName } from '../support/retention-table.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { SMALL_TABLE_SCHEMA } from '../support/small-table.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const RETAINED: readonly SnapshotName[] = ['s10', 's9', 's8', 's2', 'dev'];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const bytes = new TextEncoder().encode('not referenced by anything');

async function listAll(io: FileIO, location: string): Promise<Set<string>> {
  const out = new Set<string>();
  for await (const f of io.list(location)) out.add(f.path);
  return out;
}

const plain = (p: string): string => p.replace(/^s3a:/, 's3:').replace(/^file:\/\//, '');

/** Expires, plants stale and in-flight files around a cut point, and removes orphans older than 1h before it. */
async function expireThenRemoveOrphans(rt: RetentionTable, withMarker: boolean): Promise<void> {
  const { io, location } = rt;
  await expireSnapshots(await loadTable(location, { io }), { olderThanMs: DAY, horizonsMs: [3 * DAY] });
  const stale = [`${location}/data/stale-orphan.parquet`, `${location}/metadata/stale-manifest.avro`, `${location}/data/category=a/x.parquet`];
  for (const p of stale) await io.write(p, bytes);
  const hidden = `${location}/data/.writer-tmp/part-0.parquet`;
  await io.write(hidden, bytes);
  if (withMarker) await io.write(`${location}/${DEMO_MARKER_FILE}`, new TextEncoder().encode('{"packice":"demo"}'));
  // Object stores stamp whole seconds; the cut lies clearly between the two groups.
  await sleep(1200);
  const cut = Date.now();
  await sleep(1200);
  const inFlight = `${location}/data/category=b/in-flight.parquet`;
  await io.write(inFlight, bytes);

  const before = await listAll(io, location);
  const dry = await deleteOrphanFiles(location.startsWith('s3') ? await loadTable(location, { io }) : location, {
    olderThanMs: HOUR,
    nowMs: cut + HOUR,
    dryRun: true,
  });
  expect(dry.files.map((f) => f.path).sort()).toEqual([...stale].sort());
  expect(await listAll(io, location)).toEqual(before);

  const result = await deleteOrphanFiles(await loadTable(location, { io }), { olderThanMs: HOUR, nowMs: cut + HOUR });
  expect(result.deleted).toBe(stale.length);
  expect(result.tooNew).toBe(1);
  expect(result.hidden).toBe(1);
  const after = await listAll(io, location);
  expect([...before].filter((p) => !after.has(p)).sort()).toEqual([...stale].sort());
  for (const p of [...rt.files.a, ...rt.files.b, ...rt.files.c, ...rt.files.e, ...rt.files.g, rt.files.sharedPuffin, inFlight, hidden]) {
    expect(after.has(plain(p)), p).toBe(true);
  }
  for (const p of rt.files.outside) expect(await io.exists(p), p).toBe(true);
}

describe('orphans on disk', () => {
  it('deletes only old unreferenced files; Java reads every retained snapshot the same', async () => {
    const location = join(tempDir('packice-orphans-'), 'table');
    const io = fileIOFor(location);
    const rt = await retentionTable(io, location, localOutside(location), (p) => `file://${p}`);
    const before = new Map<SnapshotName, unknown>();
    for (const name of RETAINED) before.set(name, sortRows(await javaRead(location, rt.ids[name])));
    await expireThenRemoveOrphans(rt, true);
    for (const name of RETAINED) expect(sortRows(await javaRead(location, rt.ids[name])), name).toEqual(before.get(name));
  });

  it('refuses a delay under one hour without force', async () => {
    const location = join(tempDir('packice-orphans-'), 'table');
    const io = fileIOFor(location);
    await createNewTable(io, location, { formatVersion: 2, schema: SMALL_TABLE_SCHEMA });
    await expect(deleteOrphanFiles(location, { olderThanMs: 30 * 60_000 })).rejects.toThrow(/under 1h.*--force/);
    const forced = await deleteOrphanFiles(location, { olderThanMs: 0, force: true });
    expect(forced.deleted).toBe(0);
  });
});

describe('orphans on S3 (moto)', () => {
  it('deletes only old unreferenced files; s3a:// references listed as s3:// stay', async () => {
    await expireThenRemoveOrphans(await s3RetentionTable(), false);
  });

  it('a file the metadata names in another bucket stops the run, unless told to ignore or delete it', async () => {
    const s3Endpoint = testS3Endpoint();
    const bucket = await freshBucket();
    const other = await freshBucket();
    const location = `s3://${bucket}/warehouse/events`;
    const io = fileIOFor(location, { s3Endpoint });
    let t = await createNewTable(io, location, { formatVersion: 2, schema: SMALL_TABLE_SCHEMA });
    const [file] = await writeDataFiles(io, t.metadata, [{ id: 1n, category: 'a', amount: 100n }]);
    const foreign = `s3://${other}/warehouse/events/data/moved.parquet`;
    await io.write(foreign, await io.read(file.filePath));
    t = await commitChanges(t, { addedDataFiles: [file, { ...file, filePath: foreign }] });
    const lookalike = `${location}/data/moved.parquet`;
    await io.write(lookalike, bytes);
    const opts = { olderThanMs: HOUR, nowMs: Date.now() + 2 * HOUR };

    await expect(deleteOrphanFiles(t, opts)).rejects.toThrow(/Unable to determine whether certain files are orphan/);
    expect(await io.exists(lookalike)).toBe(true);
    const ignored = await deleteOrphanFiles(t, { ...opts, prefixMismatch: 'ignore' });
    expect(ignored.deleted).toBe(0);
    expect(await io.exists(lookalike)).toBe(true);
    const deleted = await deleteOrphanFiles(t, { ...opts, prefixMismatch: 'delete' });
    expect(deleted.files.map((f) => f.path)).toEqual([lookalike]);
    expect(await io.exists(lookalike)).toBe(false);
    expect(await io.exists(foreign)).toBe(true);
    expect(await io.exists(file.filePath)).toBe(true);
  });
});
