/**
 * `packice relocate` checks every file the history names before writing: a table whose history
 * names a manifest list that is gone (a writer expired without cleaning up) writes nothing and
 * names the file. `--current-only` copies what the current snapshot and the refs reach, and Java
 * and PyIceberg read the copy.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LocalFileIO } from '../../lib/io/local.js';
import { LosslessNumber } from 'lossless-json';
import type { JsonObject } from '../../lib/iceberg/json.js';
import { parseTableMetadata } from '../../lib/iceberg/table-metadata.js';
import { currentOnly } from '../../lib/table/relocate.js';
import { commitTable, type Table } from '../../lib/catalog/table.js';
import { runMain } from '../support/cli.js';
import { type CanonicalRow, parseJsonLines, sortRows } from '../support/canonical-rows.js';
import { tempDir } from '../support/fixtures.js';
import { ensureJavaHarness, javaRead } from '../support/java.js';
import { pyRead } from '../support/pyiceberg.js';
import { smallTable } from '../support/small-table.js';

const filesUnder = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String) : []);

/** The small table (32 live rows) with the first snapshot's manifest list deleted. */
async function brokenHistory(): Promise<{ t: Table; gone: string }> {
  const t = await smallTable(new LocalFileIO(), join(tempDir(), 'src'), 2);
  const gone = t.metadata.snapshots[0].manifestList!;
  rmSync(gone);
  return { t, gone };
}

beforeAll(() => ensureJavaHarness(), 20 * 60_000);

describe('relocate', () => {
  it('writes nothing and names the file when the history names a manifest list that is gone', async () => {
    const { t, gone } = await brokenHistory();
    const target = join(tempDir(), 'dst');
    const r = await runMain(['relocate', t.location, target]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`relocate: the manifest list of snapshot ${t.metadata.snapshots[0].snapshotId} ${gone} is missing; nothing was written`);
    expect(r.stderr).toContain('--current-only');
    expect(filesUnder(target)).toEqual([]);
  });

  it('with --current-only copies the current snapshot, and Java and PyIceberg read the copy', async () => {
    const { t } = await brokenHistory();
    const expected = sortRows(parseJsonLines((await runMain(['scan', t.location])).stdout, 'scan of the source'));
    expect(expected).toHaveLength(32);
    const target = join(tempDir(), 'dst');
    const r = await runMain(['relocate', '--current-only', '--json', t.location, target]);
    expect(r.exitCode ?? 0, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const result = JSON.parse(r.stdout) as { metadataLocation: string; filesCopied: number };
    // 8 data files and 2 position delete files are live; one manifest list, one metadata file.
    expect(result.filesCopied).toBe(8);
    const lists = filesUnder(join(target, 'metadata')).filter((f) => f.startsWith('snap-'));
    expect(lists).toHaveLength(1);

    const copy = parseTableMetadata(readFileSync(result.metadataLocation, 'utf8'), result.metadataLocation);
    const current = t.metadata.currentSnapshotId!;
    expect(copy.location).toBe(target);
    expect(copy.snapshots.map((s) => s.snapshotId)).toEqual([current]);
    expect(copy.snapshotLog.map((e) => e.snapshotId)).toEqual([current]);
    expect(copy.metadataLog).toEqual([]);
    expect(copy.refs.main?.snapshotId).toBe(current);

    expect(sortRows(await javaRead(target))).toEqual(expected);
    expect(sortRows(await pyRead(result.metadataLocation))).toEqual(expected);
    expect(sortRows(parseJsonLines((await runMain(['scan', target])).stdout, 'scan of the copy'))).toEqual(expected);
  }, 300_000);

  it('with --current-only keeps what a tag names, and skips files that only removed entries name', async () => {
    const { t } = await brokenHistory();
    const tagged = t.metadata.snapshots[2].snapshotId;
    await commitTable(t, () => ({ updates: [{ action: 'set-snapshot-ref', refName: 'before-compaction', snapshotId: tagged, type: 'tag' }], requirements: [] }));
    // Compact: the replace snapshot's manifests hold DELETED entries for the files it replaced.
    // A writer that expired without cleaning up leaves such entries naming files that are gone.
    const c = await runMain(['compact', t.location, '--min-input-files', '1', '--parallelism', '0', '--json']);
    expect(c.exitCode ?? 0, c.stderr).toBe(0);
    const kept = `${await filesOf(t.location)}${await filesOf(t.location, tagged)}`;
    const removed = filesUnder(join(t.location, 'data'))
      .map((f) => join(t.location, 'data', f))
      .filter((f) => f.endsWith('.parquet') && !kept.includes(f));
    expect(removed.length).toBeGreaterThan(0);
    for (const f of removed) rmSync(f);

    const target = join(tempDir(), 'dst');
    const r = await runMain(['relocate', '--current-only', '--json', t.location, target]);
    expect(r.exitCode ?? 0, r.stderr).toBe(0);
    const copy = JSON.parse(r.stdout) as { metadataLocation: string };
    const m = parseTableMetadata(readFileSync(copy.metadataLocation, 'utf8'), copy.metadataLocation);
    expect(m.snapshots.map((s) => s.snapshotId).sort()).toEqual([tagged, m.currentSnapshotId!].sort());
    expect(m.refs['before-compaction']).toMatchObject({ snapshotId: tagged, type: 'tag' });

    const scan = async (location: string, snapshot?: bigint): Promise<CanonicalRow[]> =>
      sortRows(parseJsonLines((await runMain(['scan', location, ...(snapshot !== undefined ? ['--snapshot', String(snapshot)] : [])])).stdout, location));
    const expected = await scan(t.location);
    expect(expected).toHaveLength(32);
    expect(sortRows(await javaRead(target))).toEqual(expected);
    expect(sortRows(await pyRead(copy.metadataLocation))).toEqual(expected);
    const then = await scan(t.location, tagged);
    expect(then).toHaveLength(30);
    expect(sortRows(await javaRead(target, tagged))).toEqual(then);
  }, 300_000);
});

describe('currentOnly', () => {
  it('keeps the statistics and partition statistics of the kept snapshots only', async () => {
    const t = await smallTable(new LocalFileIO(), join(tempDir(), 'src'), 2);
    const m = t.metadata;
    const stat = (id: bigint, name: string): JsonObject => ({ 'snapshot-id': new LosslessNumber(String(id)), 'statistics-path': join(m.location, 'metadata', name) });
    const [first] = m.snapshots;
    const current = m.currentSnapshotId!;
    const trimmed = currentOnly({ ...m, statistics: [stat(first.snapshotId, 'a.stats'), stat(current, 'b.stats')], partitionStatistics: [stat(first.snapshotId, 'c.stats')] });
    expect(trimmed.statistics?.map((st) => st['statistics-path'])).toEqual([join(m.location, 'metadata', 'b.stats')]);
    expect(trimmed.partitionStatistics).toEqual([]);
    expect(trimmed.snapshots.map((sn) => sn.snapshotId)).toEqual([current]);
  });
});

/** What `packice files --deletes --json` prints for the snapshot (the paths it reads). */
async function filesOf(location: string, snapshot?: bigint): Promise<string> {
  const r = await runMain(['files', location, '--deletes', '--json', ...(snapshot !== undefined ? ['--snapshot', String(snapshot)] : [])]);
  expect(r.exitCode ?? 0, r.stderr).toBe(0);
  return r.stdout;
}
