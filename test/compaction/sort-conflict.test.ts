/**
 * Issue 7, "Genuine conflicts", for real: a sort rewrite (`--sort-order`) reorders rows and writes
 * no compaction map, so a position delete (v2) or deletion vector (v3) a writer commits on one of
 * its inputs between rewrite and commit cannot be rebased. `packice step commit`, run through the
 * bin, aborts that group only, says why, and the other partition's group commits; the writer's
 * delete is kept. An equality delete committed meanwhile needs no rebase (it applies by sequence
 * number to the outputs) and both sort groups commit.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTable } from '../../lib/catalog/table.js';
import { compactSummary, formatRunReport, type CompactGroupSummary } from '../../lib/cli/format.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import type { CompactionCommitResult, GroupResult, Plan } from '../../lib/compaction/messages.js';
import { stringifyJson } from '../../lib/iceberg/json.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { planStep, rewriteStep } from '../../lib/pipeline/steps.js';
import { deleteByEquality, deleteRows } from '../../lib/table/operations.js';
import { runBin } from '../support/cli.js';
import { tempDir } from '../support/fixtures.js';
import { liveRows, smallTable } from '../support/small-table.js';

const io = new LocalFileIO();
/** The small table's live ids: 1..40 without every fifth. */
const LIVE = Array.from({ length: 40 }, (_, i) => i + 1).filter((i) => i % 5 !== 0);

async function ids(location: string): Promise<number[]> {
  return (await liveRows(io, location)).map((r) => Number(r.id));
}

/** Plans and rewrites both partitions with the sort strategy, as `--sort-order 'id DESC'` does. */
async function sortRewrite(formatVersion: 2 | 3): Promise<{ location: string; plan: Plan; results: GroupResult[] }> {
  const t = await smallTable(io, join(tempDir(), 't'), formatVersion);
  const plan = await planStep({ table: { location: t.location }, policy: { minInputFiles: 2, sortOrder: 'id DESC' } });
  expect(plan.policy.strategy).toBe('sort');
  expect(plan.groups.length).toBe(2);
  const results = await Promise.all(plan.groups.map((g) => rewriteStep({ plan, groupId: g.id })));
  // A sort rewrite reorders rows: there is no map from old positions to new ones.
  for (const r of results) expect(r.compactionMap).toBeUndefined();
  return { location: t.location, plan, results };
}

const SUMMARY = { filesIn: 8, filesOut: 2, bytesRead: 0, bytesWritten: 0, rowsIn: 32, rowsOut: 32, writeAmplification: 0, durationMs: 0 };

describe('a sort rewrite meets a concurrent delete', () => {
  for (const v of [2, 3] as const) {
    const kind = v === 2 ? 'position delete' : 'deletion vector';
    it(`v${v}: a ${kind} on an input aborts the sort group (packice step commit says why); the other partition commits`, async () => {
      const { location, plan, results } = await sortRewrite(v);
      const dir = tempDir();
      writeFileSync(join(dir, 'plan.json'), stringifyJson(plan, 2));
      writeFileSync(join(dir, 'results.jsonl'), results.map((r) => `${JSON.stringify(r)}\n`).join(''));

      // The writer deletes id 2 and 4 (category a) by position after the rewrite started.
      const writer = await deleteRows(await loadTable(location), (r) => r.id === 2n || r.id === 4n);
      expect(writer.deleted).toBe(2);
      const writerDeletes = (await planFiles(writer.table.io, writer.table.metadata)).deleteFiles.length;

      const r = await runBin(['step', 'commit', join(dir, 'plan.json'), join(dir, 'results.jsonl')]);
      expect(r.stderr).toBe('');
      // Exit code 3: a group aborted.
      expect(r.status).toBe(3);
      const commit = JSON.parse(r.stdout) as CompactionCommitResult;
      const groupA = plan.groups.find((g) => g.partition.category === 'a')!;
      const groupB = plan.groups.find((g) => g.partition.category === 'b')!;
      expect(commit.committedGroups).toEqual([groupB.id]);
      expect(commit.abortedGroups.map((a) => a.groupId)).toEqual([groupA.id]);
      expect(commit.deletesRebased).toBe(0);
      const reason = commit.abortedGroups[0].reason;
      expect(reason).toContain(`a ${kind} for input `);
      expect(reason).toContain('was committed concurrently');
      expect(reason).toContain('a sort rewrite reorders rows and writes no compaction map, so the delete cannot be rebased onto its outputs');
      expect(reason).toContain("this group's rewrite is discarded and the delete kept; compact again to rewrite these files");

      // The same reason in the summary `packice compact` prints, and per group in `compact --json`.
      const report = { plan, results, commit, summary: SUMMARY };
      expect(formatRunReport(report, false)).toContain(`  aborted   ${groupA.id}: ${reason}`);
      const { groups } = compactSummary(report, false) as { groups: CompactGroupSummary[] };
      expect(groups.map((g) => [g.id, g.status, g.reason])).toEqual(
        expect.arrayContaining([
          [groupA.id, 'aborted', reason],
          [groupB.id, 'committed', undefined],
        ]),
      );

      // The writer's delete is kept, no deleted row comes back; partition b is one sorted file now.
      expect(await ids(location)).toEqual(LIVE.filter((i) => i !== 2 && i !== 4));
      const t = await loadTable(location);
      expect(t.metadata.snapshots.at(-1)!.summary.operation).toBe('replace');
      const scan = await planFiles(t.io, t.metadata);
      const byCategory = (c: string): number => scan.tasks.filter((task) => task.dataFile.partition.category === c).length;
      expect(byCategory('a')).toBe(4);
      expect(byCategory('b')).toBe(1);
      // Partition b's deletes went with its inputs; partition a's, the writer's among them, stay.
      expect(scan.deleteFiles.length).toBeLessThan(writerDeletes);
      expect(scan.deleteFiles.length).toBeGreaterThan(0);
    });

    it(`v${v}: an equality delete committed meanwhile needs no rebase: both sort groups commit and the rows stay deleted`, async () => {
      const { location, plan, results } = await sortRewrite(v);
      await deleteByEquality(await loadTable(location), [1], [
        { id: 2n, category: 'a' },
        { id: 7n, category: 'b' },
      ]);
      const commit = await commitCompaction(await loadTable(location), plan, results);
      expect(commit.abortedGroups).toEqual([]);
      expect([...commit.committedGroups].sort()).toEqual(plan.groups.map((g) => g.id).sort());
      expect(commit.deletesRebased).toBe(0);

      expect(await ids(location)).toEqual(LIVE.filter((i) => i !== 2 && i !== 7));
      const t = await loadTable(location);
      const scan = await planFiles(t.io, t.metadata);
      expect(scan.tasks.length).toBe(2);
      for (const task of scan.tasks) {
        // The outputs keep the plan's sequence number; the equality delete, newer, still applies to them.
        expect(task.dataSequenceNumber).toBe(BigInt(plan.startingSequenceNumber));
        expect(task.deletes.equalityDeletes.length).toBe(1);
        expect(task.deletes.equalityDeletes[0].dataSequenceNumber).toBeGreaterThan(task.dataSequenceNumber);
      }
    });
  }
});
