/**
 * What `packice compact` says it did: committed snapshots, attempts and aborted groups (a race
 * loser never reports the winner's snapshot), totals only for groups that ran, and a `--json`
 * that is the outcome, not the plan's per-file statistics.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildDemoTable } from '../../lib/table/demo-table.js';
import { formatRunReport } from '../../lib/cli/format.js';
import { loadTable } from '../../lib/catalog/table.js';
import { LocalFileIO } from '../../lib/io/local.js';
import type { Row } from '../../lib/iceberg/values.js';
import { runCompaction, type RunReport } from '../../lib/pipeline/local-runner.js';
import { commitStep, planStep, rewriteStep } from '../../lib/pipeline/steps.js';
import { appendRows, createNewTable } from '../../lib/table/operations.js';
import { runMain } from '../support/cli.js';
import { tempDir } from '../support/fixtures.js';

const io = new LocalFileIO();

/** Three partitions of two one-row files each. */
async function threePartitions(): Promise<string> {
  let t = await createNewTable(io, join(tempDir(), 't'), {
    schema: {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: { type: 'long' } },
        { id: 2, name: 'p', required: true, type: { type: 'string' } },
      ],
    },
    partitionFields: [{ sourceId: 2, name: 'p', transform: { kind: 'identity' } }],
  });
  let id = 0;
  for (let round = 0; round < 2; round++) {
    const rows: Row[] = ['a', 'b', 'c'].map((p) => ({ id: BigInt(id++), p }));
    t = await appendRows(t, rows);
  }
  return t.location;
}

const POLICY = { minInputFiles: 2 };

describe('compact report', () => {
  it('--commit-every 1 lists three committed snapshots, and the attempts apart from them', async () => {
    const location = await threePartitions();
    const r = await runMain(['compact', location, '--min-input-files', '2', '--commit-every', '1', '--parallelism', '0']);
    expect(r.stderr).toBe('');
    const t = await loadTable(location);
    const ours = t.metadata.snapshots.slice(-3).map((s) => s.snapshotId.toString());
    expect(r.stdout).toContain('compacted 3 of 3 groups');
    expect(r.stdout).toContain(`  commit    3 snapshots (${ours.join(', ')}) in 3 attempts\n`);
    expect(r.stdout).toContain('(checksums match)');
  });

  it("the race loser says it committed nothing and names the aborted groups, not the winner's snapshot", async () => {
    const location = await threePartitions();
    const request = { table: { location }, policy: POLICY };
    const plan = await planStep(request);
    const results = [];
    for (const g of plan.groups) results.push(await rewriteStep({ plan, groupId: g.id }));
    // The winner compacts the same files first.
    const winner = await runCompaction(request, { parallelism: 0 });
    expect(winner.commit?.committedSnapshotIds).toHaveLength(1);
    const commit = await commitStep({ plan, results });
    const loser: RunReport = { plan, results, commit, summary: { filesIn: 0, filesOut: 0, bytesRead: 0, bytesWritten: 0, rowsIn: 0, rowsOut: 0, writeAmplification: 0, durationMs: 5 } };
    const text = formatRunReport(loser, false);
    expect(commit.committedSnapshotIds).toEqual([]);
    expect(text).toContain('compacted 0 of 3 groups');
    expect(text).toContain(`  commit    nothing committed (${commit.attempts} attempt${commit.attempts === 1 ? '' : 's'}); the table is at snapshot ${winner.commit!.committedSnapshotIds[0]}`);
    expect(text.match(/^ {2}aborted {3}/gm)).toHaveLength(3);
    expect(text).not.toContain('checksums match');
  });

  it('--json on a streaming table of 8 groups is the outcome, under 10 KB; --verbose gives the whole report', async () => {
    const location = join(tempDir(), 'demo');
    // Two hours of the demo's stream: 4 actions x 2 hours = 8 partitions.
    await buildDemoTable(location, { commits: 60, rowsPerCommit: 20 });
    const dry = await runMain(['compact', location, '--json', '--dry-run']);
    const verbose = await runMain(['compact', location, '--json', '--dry-run', '--verbose']);
    expect((JSON.parse(verbose.stdout) as RunReport).plan.groups[0].inputs.length).toBeGreaterThan(0);
    const r = await runMain(['compact', location, '--json', '--parallelism', '1']);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as {
      groups: { status: string; files: number; inputPaths?: { copied: number; merged: number; decoded: number } }[];
      commit: { committedSnapshotIds: string[] };
    };
    expect(out.groups).toHaveLength(8);
    expect(out.groups.every((g) => g.status === 'committed')).toBe(true);
    // Each group says how its inputs went: copied, merged page by page, or decoded.
    for (const g of out.groups) expect(g.inputPaths && g.inputPaths.copied + g.inputPaths.merged + g.inputPaths.decoded).toBe(g.files);
    expect(out.commit.committedSnapshotIds).toHaveLength(1);
    expect(Buffer.byteLength(r.stdout)).toBeLessThan(10 * 1024);
    expect(Buffer.byteLength(dry.stdout)).toBeLessThan(10 * 1024);
    expect(Buffer.byteLength(verbose.stdout)).toBeGreaterThan(10 * Buffer.byteLength(dry.stdout));
  });
});
