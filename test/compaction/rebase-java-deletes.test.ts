/**
 * Java Iceberg 1.12 is the concurrent writer (issue 7, must-show 4): while our rewrite runs (after
 * plan and rewrite, before commit) Java commits a RowDelta that deletes rows of the group's inputs
 * by position (deletion vectors on v3; position delete files on v2, per partition and per data
 * file). Our commit rebases Java's deletes through the compaction maps, reading Java's delete files
 * and no data file; Java then reads exactly the model's rows, and deletes again on the rewritten
 * files, merging its vector with the one our commit wrote. On the local file system: the Java
 * harness opens tables through HadoopTables on a local path only.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import type { GroupResult, Plan } from '../../lib/compaction/messages.js';
import { deleteFileKey, isDeletionVector, referencedDataFile } from '../../lib/iceberg/delete-file.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { normalizePath } from '../../lib/io/path.js';
import { planStep, rewriteStep } from '../../lib/pipeline/steps.js';
import { tempDir } from '../support/fixtures.js';
import { ensureJavaHarness, javaDelete, javaRead } from '../support/java.js';
import { RecordingIO } from '../support/recording-io.js';
import { liveRows, smallTable } from '../support/small-table.js';

const io = new LocalFileIO();
/** The small table's live ids: 1..40 without every fifth; even ids in category a, odd in b. */
const LIVE = Array.from({ length: 40 }, (_, i) => i + 1).filter((i) => i % 5 !== 0);
/** In four data files: 3 and 8 in the first append's b and a files, 14 (a) in the second, 27 (b) in the third. */
const JAVA_DELETES = [3, 8, 14, 27];
/** Deleted by Java after the compaction, from the rewritten files of both partitions. */
const JAVA_DELETES_AFTER = [2, 9];

async function ourIds(location: string): Promise<number[]> {
  return (await liveRows(io, location)).map((r) => Number(r.id));
}

async function javaIds(location: string): Promise<number[]> {
  return (await javaRead(location)).map((r) => Number(r.id)).sort((a, b) => a - b);
}

async function scanOf(t: Table): Promise<{ data: string[]; deletes: Map<string, string> }> {
  const scan = await planFiles(t.io, t.metadata);
  return {
    data: scan.tasks.map((task) => normalizePath(task.dataFile.filePath)),
    deletes: new Map(scan.deleteFiles.map((d) => [deleteFileKey(d), normalizePath(d.filePath)])),
  };
}

async function rewriteAll(location: string): Promise<{ plan: Plan; results: GroupResult[] }> {
  const plan = await planStep({ table: { location }, policy: { minInputFiles: 2 } });
  expect(plan.groups.length).toBe(2);
  const results = await Promise.all(plan.groups.map((g) => rewriteStep({ plan, groupId: g.id })));
  return { plan, results };
}

const CASES = [
  { formatVersion: 3, granularity: undefined, what: 'deletion vectors', javaFiles: 4 },
  { formatVersion: 2, granularity: 'partition', what: 'position delete files, one per partition', javaFiles: 2 },
  { formatVersion: 2, granularity: 'file', what: 'position delete files, one per data file', javaFiles: 4 },
] as const;

describe('Java Iceberg 1.12 deletes rows while our rewrite runs; our commit rebases them', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  for (const c of CASES) {
    it(`v${c.formatVersion}: ${c.what}`, async () => {
      const t0 = await smallTable(io, join(tempDir(), 't'), c.formatVersion);
      const location = t0.location;
      const before = await scanOf(t0);
      const { plan, results } = await rewriteAll(location);

      // Java commits its deletes against the inputs the rewrite is replacing.
      const java = await javaDelete(location, 'id', JAVA_DELETES, c.granularity ? { granularity: c.granularity } : {});
      expect([java.deleted, java.deleteFiles]).toEqual([JAVA_DELETES.length, c.javaFiles]);
      // v3: Java merged each hit file's vector (the table's ids 5, 10, … deletes) into its new one and replaced it.
      expect(java.removedDeleteFiles).toBe(c.formatVersion === 3 ? c.javaFiles : 0);
      const withJava = await scanOf(await loadTable(location));
      const javaFiles = [...withJava.deletes].filter(([k]) => !before.deletes.has(k)).map(([, path]) => path);
      expect(javaFiles.length).toBe(c.javaFiles);
      expect(await javaIds(location)).toEqual(LIVE.filter((i) => !JAVA_DELETES.includes(i)));

      const recording = new RecordingIO(io);
      const commit = await commitCompaction(await loadTable(location, { io: recording }), plan, results);
      expect(commit.abortedGroups).toEqual([]);
      expect(commit.committedGroups.length).toBe(2);
      expect(commit.deletesRebased).toBe(c.javaFiles);
      // Java's delete files were read to translate them; no data file was opened.
      for (const path of javaFiles) expect(recording.reads.map(normalizePath)).toContain(path);
      const after = await scanOf(await loadTable(location));
      const dataFiles = new Set([...before.data, ...after.data]);
      for (const path of recording.reads) expect(dataFiles.has(normalizePath(path))).toBe(false);

      const model = LIVE.filter((i) => !JAVA_DELETES.includes(i));
      expect(await ourIds(location)).toEqual(model);
      expect(await javaIds(location)).toEqual(model);
      const t = await loadTable(location);
      expect(t.metadata.snapshots.at(-1)!.summary.operation).toBe('replace');
      const scan = await planFiles(t.io, t.metadata);
      expect(scan.tasks.length).toBe(2);
      // No live delete names a replaced input; v3 keeps one vector per data file.
      for (const d of scan.deleteFiles) {
        const target = referencedDataFile(d);
        if (target !== undefined) expect(before.data).not.toContain(normalizePath(target));
        if (c.formatVersion === 3) expect(isDeletionVector(d)).toBe(true);
      }

      // Java deletes again on the rewritten files: on v3 it loads the vector our commit wrote and replaces it.
      const again = await javaDelete(location, 'id', JAVA_DELETES_AFTER, c.granularity ? { granularity: c.granularity } : {});
      expect(again.deleted).toBe(JAVA_DELETES_AFTER.length);
      if (c.formatVersion === 3) expect(again.removedDeleteFiles).toBe(2);
      const last = model.filter((i) => !JAVA_DELETES_AFTER.includes(i));
      expect(await javaIds(location)).toEqual(last);
      expect(await ourIds(location)).toEqual(last);
    });
  }
});
