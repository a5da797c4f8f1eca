/**
 * Must-show 2 of issue 7, through the real bin on copies of real tables (test/fixtures/iceberg):
 * `step plan` → `step rewrite` → `delete --where …` → `step commit` commits the rewrite with the
 * writer's delete rebased (the commit result counts it), and `delete --snapshot <before the
 * compaction> --where …` afterwards removes exactly the matching rows, rebased through the maps.
 * The table then holds the model's rows, as packice and Java Iceberg 1.12 read them.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DeleteCommandResult } from '../../lib/cli/delete-command.js';
import type { CompactionCommitResult, GroupResult, Plan } from '../../lib/compaction/messages.js';
import { parseJsonLines, sortRows, type CanonicalRow } from '../support/canonical-rows.js';
import { FIXTURES, REPO_ROOT, tempDir } from '../support/fixtures.js';
import { ensureJavaHarness, javaRead } from '../support/java.js';

const run = promisify(execFile);

/** `packice <args>` as a user runs it: bin/packice.js in a child process. */
async function packice(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [join(REPO_ROOT, 'bin', 'packice.js'), ...args], { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

async function scan(location: string, key: string): Promise<CanonicalRow[]> {
  return sortRows(parseJsonLines(await packice('scan', location), location), key);
}

interface Scenario {
  readonly fixture: string;
  readonly key: string;
  /** Deleted between the rewrite and its commit. */
  readonly concurrent: { readonly where: string; readonly keys: readonly number[]; readonly rebasedFiles: number };
  /** Deleted afterwards, as found in the snapshot before the compaction. */
  readonly late: { readonly where: string; readonly keys: readonly number[] };
}

const SCENARIOS: readonly Scenario[] = [
  {
    // v2, identity(action), three data files with Hive position deletes; live: the even ids.
    fixture: 'iceberg_v2_partitioned_position_deletes',
    key: 'id',
    // 12 is a click, 16 a download: one position delete file per partition, both rebased.
    concurrent: { where: 'id in (12, 16)', keys: [12, 16], rebasedFiles: 2 },
    late: { where: "id = 18 or (user = 'Lisa' and id < 5) or id = 12", keys: [18, 2] },
  },
  {
    // v3, unpartitioned, five one-row files, two deletion vectors; live: i = 1, 3, 5.
    fixture: 'iceberg_v3_deletion_vectors',
    key: 'i',
    concurrent: { where: 'i = 3', keys: [3], rebasedFiles: 1 },
    // Lands on the rewritten file, which has the rebased vector already: the two merge.
    late: { where: 'i >= 5', keys: [5] },
  },
];

describe('packice step and delete on copies of real tables', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  for (const s of SCENARIOS) {
    it(`${s.fixture}: a delete between rewrite and commit is rebased by the commit; a delete as of before the compaction by the writer`, async () => {
      const dir = tempDir();
      const table = join(dir, 'table');
      await packice('relocate', join(FIXTURES, s.fixture), table);
      const model = await scan(table, s.key);
      const info = JSON.parse(await packice('info', table, '--json')) as { currentSnapshotId: string; formatVersion: number };

      // Plan and rewrite, as the state machine's first two states.
      const planJson = await packice('step', 'plan', table, '--min-input-files', '1', '--delete-file-threshold', '1');
      const plan = JSON.parse(planJson) as Plan;
      expect(plan.startingSnapshotId).toBe(info.currentSnapshotId);
      expect(plan.groups.length).toBeGreaterThan(0);
      writeFileSync(join(dir, 'plan.json'), planJson);
      const resultsJsonl = await packice('step', 'rewrite', join(dir, 'plan.json'));
      const results = parseJsonLines(resultsJsonl, 'step rewrite') as unknown as GroupResult[];
      expect(results.map((r) => r.groupId).sort()).toEqual(plan.groups.map((g) => g.id).sort());
      for (const r of results) expect(r.compactionMap).toBeDefined();
      writeFileSync(join(dir, 'results.jsonl'), resultsJsonl);

      // A writer deletes rows in files the rewrite is replacing.
      const concurrent = JSON.parse(await packice('delete', table, '--where', s.concurrent.where, '--json')) as DeleteCommandResult;
      expect(concurrent).toMatchObject({ committed: true, rowsDeleted: s.concurrent.keys.length, matched: s.concurrent.keys.length, maps: 0, rebased: 0 });
      expect(concurrent.filesWritten).toBe(s.concurrent.rebasedFiles);
      const afterConcurrent = model.filter((r) => !s.concurrent.keys.includes(r[s.key] as number));
      expect(await scan(table, s.key)).toEqual(afterConcurrent);

      // The commit meets the writer's delete and carries it onto the rewritten files.
      const commit = JSON.parse(await packice('step', 'commit', join(dir, 'plan.json'), join(dir, 'results.jsonl'))) as CompactionCommitResult;
      expect(commit.abortedGroups).toEqual([]);
      expect([...commit.committedGroups].sort()).toEqual(plan.groups.map((g) => g.id).sort());
      expect(commit.deletesRebased).toBe(s.concurrent.rebasedFiles);
      expect(await scan(table, s.key)).toEqual(afterConcurrent);

      // Rows found in the snapshot before the compaction, deleted after it: rebased through its maps.
      const late = JSON.parse(await packice('delete', table, '--snapshot', info.currentSnapshotId, '--where', s.late.where, '--json')) as DeleteCommandResult;
      expect(late).toMatchObject({ committed: true, preparedSnapshotId: info.currentSnapshotId, rowsDeleted: s.late.keys.length, dropped: 0 });
      expect(late.maps).toBe(plan.groups.length);
      // The concurrent delete's rows were live in that snapshot: they match again, already deleted.
      expect(late.rebased).toBe(late.matched);
      expect(late.alreadyDeleted).toBe(late.matched - s.late.keys.length);
      const final = afterConcurrent.filter((r) => !s.late.keys.includes(r[s.key] as number));
      expect(await scan(table, s.key)).toEqual(final);
      expect(sortRows(await javaRead(table), s.key)).toEqual(final);

      // The text form says the same.
      expect(await packice('delete', table, '--where', s.late.where)).toBe('no row matched: nothing to delete\n');
    }, 600_000);
  }
});
