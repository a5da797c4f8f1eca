/**
 * The compaction commit takes each GroupResult as the truth about what its rewrite did: it drops
 * the deletes a result reports obsolete and no other delete scoped to that group's inputs, aborts
 * a group whose result names a delete it cannot have applied, and writes no version when there
 * is nothing to commit. Real v3 tables (deletion vectors) on the local file system.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTable } from '../../lib/catalog/table.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import type { GroupResult, Plan } from '../../lib/compaction/messages.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { planAll } from '../support/compaction.js';
import { tempDir } from '../support/fixtures.js';
import { fileCounts, liveRows, smallTable } from '../support/small-table.js';

const io = new LocalFileIO();

/** The v3 small table (two partitions, 4 files each, a DV on each file), one group per partition, rewritten. */
async function rewritten(): Promise<{ location: string; plan: Plan; results: GroupResult[] }> {
  const location = join(tempDir(), 't');
  const t = await smallTable(io, location, 3);
  const plan = await planAll(io, t.metadata);
  const results = await Promise.all(plan.groups.map((g) => rewriteGroup(io, t.metadata, plan, g)));
  return { location, plan, results };
}

describe('compaction commit', () => {
  it('drops the deletion vectors each rewrite reports, with the inputs', async () => {
    const { location, plan, results } = await rewritten();
    const before = await liveRows(io, location);
    const dvs = results.reduce((n, r) => n + r.obsoleteDeletes.length, 0);
    expect(dvs).toBe(8);
    const commit = await commitCompaction(await loadTable(location, { io }), plan, results);
    expect(commit.committedGroups).toEqual(['g0', 'g1']);
    expect(commit.filesRemoved).toBe(8 + dvs);
    expect(commit.filesAdded).toBe(2);
    expect(await fileCounts(io, location)).toEqual({ data: 2, deletes: 0 });
    expect(await liveRows(io, location)).toEqual(before);
  });

  it('leaves a delete scoped to a rewritten input in place when the result does not report it', async () => {
    const { location, plan, results } = await rewritten();
    const before = await liveRows(io, location);
    const [g0, g1] = results;
    const commit = await commitCompaction(await loadTable(location, { io }), plan, [{ ...g0, obsoleteDeletes: [] }, g1]);
    expect(commit.committedGroups).toEqual(['g0', 'g1']);
    const t = await loadTable(location, { io });
    const left = (await planFiles(t.io, t.metadata)).deleteFiles.map((d) => d.filePath).sort();
    expect(left).toEqual(g0.obsoleteDeletes.map((d) => d.filePath).sort());
    // Their data files are gone, so no row is deleted twice or brought back.
    expect(await liveRows(io, location)).toEqual(before);
  });

  it('aborts a group whose result reports a delete not scoped to its inputs; the others commit', async () => {
    const { location, plan, results } = await rewritten();
    const [g0, g1] = results;
    const stray = g1.obsoleteDeletes[0];
    const commit = await commitCompaction(await loadTable(location, { io }), plan, [{ ...g0, obsoleteDeletes: [...g0.obsoleteDeletes, stray] }, g1]);
    expect(commit.committedGroups).toEqual(['g1']);
    expect(commit.abortedGroups).toEqual([
      { groupId: 'g0', reason: `the rewrite reports delete file ${stray.filePath} obsolete, but it is not scoped to one of the group's inputs` },
    ]);
    expect(await fileCounts(io, location)).toEqual({ data: 5, deletes: 4 });
  });

  it('writes no version when everything is already committed', async () => {
    const { location, plan, results } = await rewritten();
    const first = await commitCompaction(await loadTable(location, { io }), plan, results);
    const committed = await loadTable(location, { io });
    const again = await commitCompaction(committed, plan, results);
    expect(again).toEqual({ ...first, attempts: 1, filesRemoved: 0, filesAdded: 0, committedSnapshotIds: [] });
    expect((await loadTable(location, { io })).metadataLocation).toBe(committed.metadataLocation);
  });
});
