/**
 * Issue 8, must-show 2: on the demo table (a streaming table: many small commits, late deletes),
 * compaction, then expiry and orphan removal leave exactly what the current table needs — its
 * live data files, the current snapshot's manifest list, manifests and compaction maps, the
 * current metadata file with the short log the table's properties keep, and the version hint —
 * and not one file more. Java reads the same rows before and after.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { metadataFolder, VERSION_HINT_FILE } from '../../lib/catalog/object-store-catalog.js';
import { loadTable } from '../../lib/catalog/table.js';
import { runDemo } from '../../lib/cli/demo.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { intProperty } from '../../lib/iceberg/table-metadata.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { expireSnapshots } from '../../lib/maintenance/expire-snapshots.js';
import { DEMO_MARKER_FILE, deleteOrphanFiles } from '../../lib/maintenance/orphan-files.js';
import { compactionMapsOf } from '../../lib/maintenance/reachable-files.js';
import { sortRows } from '../support/canonical-rows.js';
import { tempDir } from '../support/fixtures.js';
import { javaRead } from '../support/java.js';

const io = new LocalFileIO();

interface Storage {
  readonly files: Map<string, number>;
  readonly bytes: number;
}

async function storage(location: string): Promise<Storage> {
  const files = new Map<string, number>();
  let bytes = 0;
  for await (const f of io.list(location)) {
    files.set(f.path, f.size);
    bytes += f.size;
  }
  return { files, bytes };
}

/** The files the current table needs, derived from its metadata alone. */
async function neededByCurrentTable(location: string): Promise<{ all: Set<string>; liveData: Set<string> }> {
  const table = await loadTable(location, { io });
  const m = table.metadata;
  const plan = await planFiles(io, m);
  const snapshot = plan.snapshot!;
  const liveData = new Set(plan.tasks.map((t) => t.dataFile.filePath));
  const all = new Set<string>([
    table.metadataLocation,
    join(metadataFolder(location), VERSION_HINT_FILE),
    join(location, DEMO_MARKER_FILE),
    ...(snapshot.manifestList !== undefined ? [snapshot.manifestList] : []),
    ...plan.manifests.map((f) => f.manifestPath),
    ...liveData,
    ...plan.deleteFiles.map((f) => f.filePath),
    ...compactionMapsOf(snapshot),
    ...m.metadataLog.map((e) => e.metadataFile),
  ]);
  return { all, liveData };
}

describe('demo table storage after compaction, expiry and orphan removal', () => {
  it('comes down to the files the current table needs; Java reads the same rows', async () => {
    const location = join(tempDir('packice-demo-storage-'), 'demo');
    const out: string[] = [];
    await runDemo(location, { json: true, out: (s) => out.push(s), commits: 40, rowsPerCommit: 60 });
    const compacted = await storage(location);
    const rowsBefore = sortRows(await javaRead(location), 'event_id');

    const expired = await expireSnapshots(location, { olderThanMs: 0, retainLast: 1 });
    expect(expired.expiredSnapshots.length).toBeGreaterThan(40);
    const orphans = await deleteOrphanFiles(location, { olderThanMs: 0, force: true });
    const after = await storage(location);

    const needed = await neededByCurrentTable(location);
    // Every file left is one the current table needs, and every file it needs is there.
    expect(new Set(after.files.keys())).toEqual(needed.all);
    // The metadata log is as short as the table's properties say, and no older metadata file stays.
    const m = (await loadTable(location, { io })).metadata;
    const metadataFiles = [...after.files.keys()].filter((p) => p.endsWith('.metadata.json'));
    expect(metadataFiles.length).toBeLessThanOrEqual(intProperty(m, 'write.metadata.previous-versions-max', 100) + 1);
    // Data on disk is exactly the live data, and no delete file is left.
    const dataOnDisk = [...after.files.keys()].filter((p) => p.startsWith(join(location, 'data')));
    expect(new Set(dataOnDisk)).toEqual(needed.liveData);
    expect((await planFiles(io, m)).deleteFiles).toHaveLength(0);
    expect(after.files.size).toBeLessThan(compacted.files.size / 4);
    expect(after.bytes).toBeLessThan(compacted.bytes);
    expect(orphans.deleted).toBe(0);

    expect(sortRows(await javaRead(location), 'event_id')).toEqual(rowsBefore);
  });
});
