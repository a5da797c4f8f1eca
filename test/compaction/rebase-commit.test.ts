/**
 * A writer deletes rows by position between a rewrite and its commit, on the local file system:
 * the commit rebases the position delete (v2) or deletion vector (v3) through the group's
 * compaction map onto the outputs in the same replace snapshot, reading delete files and
 * metadata only (a recording FileIO proves no data file is opened), and the table keeps
 * exactly the model's rows, as packice and Java Iceberg 1.12 read them. A result without a map (a sort rewrite's) aborts instead.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { normalizePath } from '../../lib/io/path.js';
import { isDeletionVector, referencedDataFile } from '../../lib/iceberg/delete-file.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { formatRunReport } from '../../lib/cli/format.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import type { GroupResult, Plan } from '../../lib/compaction/messages.js';
import { planStep, rewriteStep } from '../../lib/pipeline/steps.js';
import { deleteRows } from '../../lib/table/operations.js';
import { tempDir } from '../support/fixtures.js';
import { ensureJavaHarness, javaRead } from '../support/java.js';
import { RecordingIO } from '../support/recording-io.js';
import { liveRows, smallTable } from '../support/small-table.js';

const io = new LocalFileIO();
/** The small table's live ids: 1..40 without every fifth. */
const LIVE = Array.from({ length: 40 }, (_, i) => i + 1).filter((i) => i % 5 !== 0);
const WRITER = [3, 8, 14, 27];

async function table(formatVersion: 2 | 3): Promise<Table> {
  return smallTable(io, join(tempDir(), 't'), formatVersion);
}

async function ids(location: string): Promise<number[]> {
  return (await liveRows(io, location)).map((r) => Number(r.id));
}

async function dataFilePaths(t: Table): Promise<string[]> {
  return (await planFiles(t.io, t.metadata)).tasks.map((task) => normalizePath(task.dataFile.filePath));
}

async function rewriteAll(location: string): Promise<{ plan: Plan; results: GroupResult[] }> {
  const plan = await planStep({ table: { location }, policy: { minInputFiles: 2 } });
  expect(plan.groups.length).toBe(2);
  const results = await Promise.all(plan.groups.map((g) => rewriteStep({ plan, groupId: g.id })));
  return { plan, results };
}

describe('the compaction commit rebases concurrent position deletes', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  for (const v of [2, 3] as const) {
    it(`v${v}: a ${v === 2 ? 'position delete' : 'deletion vector'} committed between rewrite and commit is rebased, reading no data file`, async () => {
      const t0 = await table(v);
      const location = t0.location;
      const { plan, results } = await rewriteAll(location);
      const inputs = await dataFilePaths(t0);

      // The writer deletes rows in four files of both partitions; its v3 vectors carry the ids deleted before (every fifth) too.
      const writer = await deleteRows(await loadTable(location), (r) => WRITER.includes(Number(r.id)));
      expect(writer.deleted).toBe(4);

      const recording = new RecordingIO(io);
      const commit = await commitCompaction(await loadTable(location, { io: recording }), plan, results);
      expect(commit.abortedGroups).toEqual([]);
      expect([...commit.committedGroups].sort()).toEqual(plan.groups.map((g) => g.id).sort());
      // v2: one position delete file per partition; v3: one vector per data file hit.
      expect(commit.deletesRebased).toBe(v === 2 ? 2 : 4);
      const summary = { filesIn: 8, filesOut: 2, bytesRead: 0, bytesWritten: 0, rowsIn: 32, rowsOut: 32, writeAmplification: 0, durationMs: 0 };
      expect(formatRunReport({ plan, results, commit, summary }, false)).toContain(
        `rebased   ${v === 2 ? 2 : 4} concurrent delete file(s) onto the rewritten files`,
      );

      const t = await loadTable(location);
      const outputs = await dataFilePaths(t);
      const dataFiles = new Set([...inputs, ...outputs]);
      expect(recording.reads.length).toBeGreaterThan(0);
      for (const path of recording.reads) expect(dataFiles.has(normalizePath(path))).toBe(false);
      // The writer's delete files were read (to translate them).
      expect(recording.reads.some((p) => (v === 2 ? /-deletes\.parquet$/ : /\.puffin$/).test(p))).toBe(true);

      const model = LIVE.filter((i) => !WRITER.includes(i));
      expect(await ids(location)).toEqual(model);
      expect((await javaRead(location)).map((r) => Number(r.id)).sort((a, b) => a - b)).toEqual(model);
      const snapshot = t.metadata.snapshots.at(-1)!;
      expect(snapshot.summary.operation).toBe('replace');
      const scan = await planFiles(t.io, t.metadata);
      expect(scan.tasks.length).toBe(2);
      for (const task of scan.tasks) {
        expect(task.dataSequenceNumber).toBe(BigInt(plan.startingSequenceNumber));
        const rebased = v === 3 ? task.deletes.deletionVector : task.deletes.positionDeletes[0];
        expect(rebased).toBeDefined();
        // The rebased deletes apply to the outputs: a higher data sequence number, this snapshot's.
        expect(rebased!.dataSequenceNumber).toBe(snapshot.sequenceNumber);
        expect(rebased!.dataSequenceNumber).toBeGreaterThan(task.dataSequenceNumber);
      }
      // No live delete still names a replaced input.
      for (const d of scan.deleteFiles) {
        const target = referencedDataFile(d);
        if (target !== undefined) expect(inputs).not.toContain(normalizePath(target));
        if (v === 3) expect(isDeletionVector(d)).toBe(true);
      }
    });
  }

  it('v3: a writer committing during the commit makes it retry; the retry rebases both writers\' vectors', async () => {
    const t0 = await table(3);
    const location = t0.location;
    const { plan, results } = await rewriteAll(location);
    await deleteRows(await loadTable(location), (r) => r.id === 3n);
    // The commit's first metadata swap meets a second writer's deletion vector, committed just before it.
    let interleaved = false;
    const racing = new RecordingIO(io);
    racing.createIfAbsent = async (path: string, data: Uint8Array): Promise<void> => {
      if (!interleaved && /\.metadata\.json$/.test(path)) {
        interleaved = true;
        await deleteRows(await loadTable(location), (r) => r.id === 8n);
      }
      return io.createIfAbsent(path, data);
    };
    const commit = await commitCompaction(await loadTable(location, { io: racing }), plan, results);
    expect(interleaved).toBe(true);
    expect(commit.attempts).toBe(2);
    expect(commit.abortedGroups).toEqual([]);
    expect(commit.committedGroups.length).toBe(2);
    // Both vectors (id 3's file, id 8's file) are rebased by the retry; the first attempt's work is discarded.
    expect(commit.deletesRebased).toBe(2);
    expect(await ids(location)).toEqual(LIVE.filter((i) => i !== 3 && i !== 8));
  });

  it('a result without a compaction map (a sort rewrite) aborts its group with the reason; the delete stays', async () => {
    const t0 = await table(3);
    const { plan, results } = await rewriteAll(t0.location);
    await deleteRows(await loadTable(t0.location), (r) => r.id === 2n); // category a
    const noMaps = results.map((r) => ({ ...r, compactionMap: undefined }));
    const commit = await commitCompaction(await loadTable(t0.location), plan, noMaps);
    const groupA = plan.groups.find((g) => g.partition.category === 'a')!;
    expect(commit.abortedGroups.map((a) => a.groupId)).toEqual([groupA.id]);
    expect(commit.abortedGroups[0].reason).toMatch(/deletion vector .* no compaction map/);
    expect(commit.deletesRebased).toBe(0);
    expect(await ids(t0.location)).toEqual(LIVE.filter((i) => i !== 2));
  });
});
