/**
 * The compaction planner on real tables written with lib/table/operations.ts: each selection
 * rule, the group splits, minor mode's sequence intervals, exact estimates, deterministic ids,
 * and that planning reads metadata only.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Table } from '../../lib/catalog/table.js';
import { loadTable } from '../../lib/catalog/table.js';
import { ValidationError } from '../../lib/errors.js';
import { LocalFileIO } from '../../lib/io/local.js';
import type { DataFile } from '../../lib/iceberg/manifest.js';
import { planFiles, type FileScanTask } from '../../lib/iceberg/scan-planning.js';
import type { Row } from '../../lib/iceberg/values.js';
import type { CompactionPolicy, Plan } from '../../lib/compaction/messages.js';
import { planCompaction, planFromScan } from '../../lib/compaction/planner.js';
import { POLICY_DEFAULTS, resolvePolicy } from '../../lib/compaction/policy.js';
import { writeDataFiles } from '../../lib/table/data-writer.js';
import {
  appendRows, commitChanges, createNewTable, deleteByEquality, deleteRows, updateSpec,
} from '../../lib/table/operations.js';
import { tempDir } from '../support/fixtures.js';
import { RecordingIO } from '../support/recording-io.js';
import { editAvroFile, readAvroFile } from '../support/table-files.js';

const io = new LocalFileIO();

const SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'category', required: false, type: { type: 'string' as const } },
    { id: 3, name: 'hour', required: false, type: { type: 'int' as const } },
    { id: 4, name: 'payload', required: false, type: { type: 'string' as const } },
  ],
};

async function newTable(options: { partitioned?: boolean; formatVersion?: 2 | 3; properties?: Record<string, string> } = {}): Promise<Table> {
  return createNewTable(io, join(tempDir(), 't'), {
    schema: SCHEMA,
    formatVersion: options.formatVersion ?? 2,
    ...(options.properties ? { properties: options.properties } : {}),
    partitionFields: options.partitioned === false ? [] : [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
  });
}

let nextId = 0;
/** n rows of a category; payloads vary so files do not compress to nothing. */
function rows(category: string, n: number, hour = 1): Row[] {
  return Array.from({ length: n }, () => {
    const id = nextId++;
    return { id: BigInt(id), category, hour, payload: `p-${id}-${(id * 7919) % 10007}-${(id * 104729) % 1299709}` };
  });
}

/** Appends `count` single-file commits of `n` rows each to a category. */
async function appendFiles(t: Table, category: string, count: number, n = 3): Promise<Table> {
  for (let i = 0; i < count; i++) t = await appendRows(t, rows(category, n));
  return t;
}

async function tasksOf(t: Table): Promise<FileScanTask[]> {
  return [...(await planFiles(t.io, t.metadata)).tasks].sort((a, b) => (a.dataFile.filePath < b.dataFile.filePath ? -1 : 1));
}

const size = (t: FileScanTask): number => Number(t.dataFile.fileSizeInBytes);
const paths = (p: Plan, i = 0): string[] => p.groups[i].inputs.map((x) => x.file.filePath).sort();
const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

async function plan(t: Table, policy: CompactionPolicy = {}, nowMs = 0): Promise<Plan> {
  return planCompaction(t.io, t.metadata, { table: { location: t.location }, policy }, { nowMs });
}

describe('planner: size rules', () => {
  it('groups small files, leaves a lone small file and a file at target, with exact estimates and summary', async () => {
    let t = await newTable();
    t = await appendRows(t, rows('a', 4000)); // the big file
    t = await appendFiles(t, 'a', 6);
    t = await appendFiles(t, 'b', 1);
    const tasks = await tasksOf(t);
    const big = tasks.reduce((a, b) => (size(b) > size(a) ? b : a));
    const target = size(big); // min 75%, max 180%: the big file sits at target
    const small = tasks.filter((x) => x !== big && x.dataFile.partition.category === 'a');
    expect(small).toHaveLength(6);
    for (const s of small) expect(size(s)).toBeLessThan(target * 0.75);

    const p = await plan(t, { targetFileSizeBytes: target });
    expect(p.groups).toHaveLength(1);
    const g = p.groups[0];
    expect(g.partition).toEqual({ category: 'a' });
    expect(g.partitionPath).toBe('category=a');
    expect(g.specId).toBe(0);
    expect(g.reasons).toEqual(['too-small']);
    expect(paths(p)).toEqual(small.map((s) => s.dataFile.filePath));
    expect(g.inputs.map((i) => i.deletes)).toEqual(small.map(() => []));
    // Inputs in commit order.
    expect(g.inputs.map((i) => Number(i.dataSequenceNumber))).toEqual([2, 3, 4, 5, 6, 7]);
    const smallBytes = sum(small.map(size));
    expect(g.estimate).toEqual({
      bytesToRead: smallBytes,
      bytesToWrite: smallBytes,
      filesIn: 6,
      filesOut: Math.ceil(smallBytes / target),
      liveRows: 18,
    });
    expect(g.outputSequenceNumber).toBeUndefined();
    const allBytes = sum(tasks.map(size));
    expect(p.summary).toEqual({
      dataFilesBefore: 8,
      dataFilesAfter: 8 - 6 + 1,
      deleteFilesBefore: 0,
      deleteFilesAfter: 0,
      bytesBefore: allBytes,
      bytesAfter: allBytes,
      rewriteRatio: smallBytes / allBytes,
    });
    expect(p.startingSnapshotId).toBe(t.metadata.currentSnapshotId!.toString());
    expect(p.startingSequenceNumber).toBe('8');
    expect(p.formatVersion).toBe(2);
    expect(p.skipped).toEqual([]);
    expect(p.createdAtMs).toBe(0);
  });

  it('keeps a group under min-input-files only with enough content, and splits a lone file above the max', async () => {
    let t = await newTable();
    t = await appendFiles(t, 'a', 3);
    t = await appendRows(t, rows('b', 4000));
    const tasks = await tasksOf(t);
    const a = tasks.filter((x) => x.dataFile.partition.category === 'a');
    const big = tasks.find((x) => x.dataFile.partition.category === 'b')!;
    // 3 files < min-input-files 5 and their sum below the target: nothing to do.
    expect((await plan(t, { targetFileSizeBytes: sum(a.map(size)) + 1, maxFileSizeBytes: size(big) + 1 })).groups).toHaveLength(0);
    // Same files whose sum exceeds the target: enough content.
    const target = sum(a.map(size)) - 1;
    const p = await plan(t, { targetFileSizeBytes: target, maxFileSizeBytes: size(big) - 1 });
    expect(p.groups.map((g) => g.partitionPath).sort()).toEqual(['category=a', 'category=b']);
    const bigGroup = p.groups.find((g) => g.partitionPath === 'category=b')!;
    expect(bigGroup.reasons).toEqual(['too-large']);
    expect(bigGroup.estimate.filesOut).toBe(Math.ceil(size(big) / target));
  });

  it('plans nothing for a table without snapshots', async () => {
    const p = await plan(await newTable());
    expect(p.startingSnapshotId).toBeNull();
    expect(p.startingSequenceNumber).toBe('0');
    expect(p.groups).toEqual([]);
    expect(p.summary).toEqual({
      dataFilesBefore: 0, dataFilesAfter: 0, deleteFilesBefore: 0, deleteFilesAfter: 0, bytesBefore: 0, bytesAfter: 0, rewriteRatio: 0,
    });
  });

  it('honours write.target-file-size-bytes and Java defaults for min and max', async () => {
    const t = await newTable({ properties: { 'write.target-file-size-bytes': '1000' } });
    const { policy: p, filter } = resolvePolicy(t.metadata);
    expect(filter).toBeUndefined();
    expect(p).toEqual({
      targetFileSizeBytes: 1000,
      minFileSizeBytes: 750,
      maxFileSizeBytes: 1800,
      ...POLICY_DEFAULTS,
    });
    expect(resolvePolicy(t.metadata, { targetFileSizeBytes: 3 }).policy.maxFileSizeBytes).toBe(5);
    expect(resolvePolicy((await newTable()).metadata).policy.targetFileSizeBytes).toBe(512 * 1024 * 1024);
    expect(() => resolvePolicy(t.metadata, { minFileSizeBytes: 1000 })).toThrow(
      "'target-file-size-bytes' (1000) must be > 'min-file-size-bytes' (1000), all new files will be smaller than the min threshold",
    );
    expect(() => resolvePolicy(t.metadata, { maxFileSizeBytes: 999 })).toThrow(/must be < 'max-file-size-bytes' \(999\)/);
    expect(() => resolvePolicy(t.metadata, { deleteRatioThreshold: 1.5 })).toThrow("'delete-ratio-threshold' is set to 1.5 but must be <= 1");
    expect(() => resolvePolicy(t.metadata, { minInputFiles: 0 })).toThrow(ValidationError);
    expect(() => resolvePolicy(t.metadata, { where: 'nope = 1' })).toThrow('unknown partition field or column "nope"; partition fields: category; columns: id, category, hour, payload');
  });
});

describe('planner: deletes', () => {
  it('a position delete over the threshold rewrites even a lone file; estimates apportion a partition-scoped delete', async () => {
    let t = await newTable();
    const start1 = nextId;
    t = await appendRows(t, rows('a', 10));
    const start2 = nextId;
    t = await appendRows(t, rows('a', 30));
    const [f1, f2] = (await tasksOf(t)).sort((x, y) => Number(x.dataFile.recordCount - y.dataFile.recordCount));
    // 2 rows of the 10-row file and 6 of the 30-row file, in one delete file for the partition.
    const doomed = new Set([start1, start1 + 1, ...[0, 1, 2, 3, 4, 5].map((i) => start2 + i)].map(BigInt));
    const r = await deleteRows(t, (row) => doomed.has(row.id as bigint));
    expect(r.deleted).toBe(8);
    t = r.table;
    const scan = await planFiles(t.io, t.metadata);
    expect(scan.deleteFiles).toHaveLength(1);
    const del = scan.deleteFiles[0];
    expect(del.recordCount).toBe(8n);

    const p = await plan(t, { minInputFiles: 5 });
    expect(p.groups).toHaveLength(1);
    const g = p.groups[0];
    expect(g.reasons).toEqual(['too-small', 'deletes']);
    expect(g.inputs.map((i) => i.file.filePath)).toEqual([f1.dataFile.filePath, f2.dataFile.filePath]);
    expect(g.inputs.map((i) => i.deletes.map((d) => [d.file.filePath, d.dataSequenceNumber]))).toEqual([
      [[del.filePath, '3']],
      [[del.filePath, '3']],
    ]);
    // 8 deleted rows apportioned 10:30 → 2 and 6: exactly the rows deleted.
    expect(g.estimate).toEqual({
      bytesToRead: size(f1) + size(f2) + Number(del.fileSizeInBytes),
      bytesToWrite: Math.round((size(f1) * 8) / 10 + (size(f2) * 24) / 30),
      filesIn: 2,
      filesOut: 1,
      liveRows: 32,
    });
    // The plan carries what a rewrite needs: no column metrics or split offsets, but a position
    // delete's file_path bounds (field 2147483546), which may name its data file.
    const statKeys = (f: object): string[] => Object.keys(f).filter((k) => /Sizes|Counts|Bounds|splitOffsets/.test(k));
    for (const i of g.inputs) {
      expect(statKeys(i.file)).toEqual([]);
      expect(Object.keys(i.deletes[0].file.lowerBounds ?? {})).toEqual(['2147483546']);
      expect(Object.keys(i.deletes[0].file.upperBounds ?? {})).toEqual(['2147483546']);
    }
    // The scan behind it read the data files without metrics, the delete file with them.
    const lean = await planFiles(t.io, t.metadata, undefined, { columnStats: false });
    expect(lean.tasks.every((x) => x.dataFile.columnSizes === null && x.dataFile.lowerBounds === null)).toBe(true);
    expect(lean.deleteFiles[0].lowerBounds).toEqual(del.lowerBounds);
    expect(p.summary.deleteFilesBefore).toBe(1);
    expect(p.summary.deleteFilesAfter).toBe(0);
    expect(p.summary.bytesAfter).toBe(p.summary.bytesBefore - size(f1) - size(f2) + g.estimate.bytesToWrite - Number(del.fileSizeInBytes));

    // Threshold off (Java's default) and ratio 8/40 per file below 0.3: both files stay, 2 < 5 inputs.
    expect((await plan(t, { deleteFileThreshold: 2147483647 })).groups).toHaveLength(0);
    // Ratio 0.2 reached by both (2/10, 6/30).
    const byRatio = await plan(t, { deleteFileThreshold: 2147483647, deleteRatioThreshold: 0.2 });
    expect(byRatio.groups.map((x) => x.reasons)).toEqual([['too-small', 'delete-ratio']]);
  });

  it('a deletion vector counts its cardinality exactly: the ratio rule rewrites one lone file', async () => {
    let t = await newTable({ formatVersion: 3 });
    const first = nextId;
    t = await appendRows(t, rows('a', 10));
    t = await appendRows(t, rows('b', 10));
    const a = (await tasksOf(t)).find((x) => x.dataFile.partition.category === 'a')!;
    t = (await deleteRows(t, (r) => r.category === 'a' && Number(r.id) < first + 3)).table;
    t = (await deleteRows(t, (r) => r.category === 'b' && Number(r.id) % 10 === 0)).table;
    const scan = await planFiles(t.io, t.metadata);
    expect(scan.deleteFiles.map((d) => [d.fileFormat, d.recordCount])).toEqual(
      expect.arrayContaining([['PUFFIN', 3n], ['PUFFIN', 1n]]),
    );
    const p = await plan(t, { deleteFileThreshold: 2147483647 });
    expect(p.groups).toHaveLength(1);
    const g = p.groups[0];
    expect(g.partitionPath).toBe('category=a');
    expect(g.reasons).toEqual(['too-small', 'delete-ratio']);
    const dv = g.inputs[0].deletes[0].file;
    expect(dv.fileFormat).toBe('PUFFIN');
    expect(g.estimate.liveRows).toBe(7);
    expect(g.estimate.bytesToRead).toBe(size(a) + Number(dv.contentSizeInBytes));
    expect(g.estimate.bytesToWrite).toBe(Math.round(size(a) * 0.7));
    // The DV of b stays: its file is not rewritten.
    expect(p.summary.deleteFilesAfter).toBe(1);
    // With the default threshold (1) both DVs trigger a rewrite.
    expect((await plan(t)).groups.map((x) => x.partitionPath).sort()).toEqual(['category=a', 'category=b']);
  });
});

describe('planner: scope', () => {
  it('--where selects partitions by their values', async () => {
    let t = await newTable();
    t = await appendFiles(t, 'a', 5);
    t = await appendFiles(t, 'b', 5);
    t = await appendFiles(t, 'c', 5);
    const parts = async (where: string): Promise<string[]> => (await plan(t, { where })).groups.map((g) => g.partitionPath).sort();
    expect(await parts("category = 'a'")).toEqual(['category=a']);
    expect(await parts("category in ('a', 'c')")).toEqual(['category=a', 'category=c']);
    expect(await parts("not (category = 'a') and category != 'c'")).toEqual(['category=b']);
    expect(await parts("category >= 'b' or category = 'zz'")).toEqual(['category=b', 'category=c']);
    await expect(plan(t, { where: "action = 'click'" })).rejects.toThrow('unknown partition field or column "action"; partition fields: category; columns: id, category, hour, payload');
  });

  it('--where is parsed once, by resolvePolicy, before any manifest is read; the planner uses the parsed filter', async () => {
    let t = await newTable();
    t = await appendFiles(t, 'a', 5);
    t = await appendFiles(t, 'b', 5);
    const resolved = resolvePolicy(t.metadata, { where: "category = 'a'" });
    expect(resolved.policy.where).toBe("category = 'a'");
    const tasks = await tasksOf(t);
    expect(new Set(tasks.map((x) => `${String(x.dataFile.partition.category)}:${resolved.filter!.mayMatch(x.dataFile)}`))).toEqual(new Set(['a:true', 'b:false']));
    // A bad filter fails without opening a file.
    const recording = new RecordingIO(io);
    await expect(planCompaction(recording, t.metadata, { table: { location: t.location }, policy: { where: 'nope = 1' } })).rejects.toThrow(ValidationError);
    expect(recording.reads).toEqual([]);
    // The planner filters with the filter it is handed, not by parsing the text again.
    const scan = await planFiles(t.io, t.metadata);
    const isB = (f: DataFile): boolean => f.partition.category === 'b';
    const onlyB = { ...resolved, filter: { ...resolved.filter!, mayMatch: isB, partitionMayMatch: isB } };
    const p = planFromScan(t.metadata, scan, { table: { location: t.location } }, onlyB, 0);
    expect(p.groups.map((g) => g.partitionPath)).toEqual(['category=b']);
    expect(p.policy.where).toBe("category = 'a'");
  });

  it('a quiet window holds back partitions committed to within N minutes (snapshot time of the files)', async () => {
    let t = await newTable();
    const T0 = Date.UTC(2100, 0, 1);
    const commitAt = async (category: string, ms: number): Promise<void> => {
      const files = await writeDataFiles(t.io, t.metadata, rows(category, 3));
      t = await commitChanges(t, { addedDataFiles: files, nowMs: ms });
    };
    for (let i = 0; i < 5; i++) await commitAt('old', T0 + i * 1000);
    for (let i = 0; i < 5; i++) await commitAt('new', T0 + 60 * 60_000 + i * 1000);
    const newest = T0 + 60 * 60_000 + 4000;
    const parts = async (nowMs: number, quietMinutes: number): Promise<string[]> =>
      (await plan(t, { quietMinutes }, nowMs)).groups.map((g) => g.partitionPath).sort();
    expect(await parts(newest + 9 * 60_000, 10)).toEqual(['category=old']);
    expect(await parts(newest + 10 * 60_000, 10)).toEqual(['category=new', 'category=old']);
    expect(await parts(newest + 60_000, 0)).toEqual(['category=new', 'category=old']);
    expect(await parts(newest + 60_000, 120)).toEqual([]);
  });

  it('leaves data files in another format alone and reports them', async () => {
    let t = await newTable();
    t = await appendFiles(t, 'a', 6);
    const victim = (await tasksOf(t))[2].dataFile.filePath;
    const metadataDir = join(t.location, 'metadata');
    const manifests = readdirSync(metadataDir).filter((f) => f.endsWith('.avro') && !f.startsWith('snap-'));
    for (const m of manifests) {
      const path = join(metadataDir, m);
      const file = await readAvroFile(path);
      if (!file.records.some((r) => (r.data_file as Record<string, unknown>).file_path === victim)) continue;
      await editAvroFile(path, (records) => {
        for (const r of records) {
          const df = r.data_file as Record<string, unknown>;
          if (df.file_path === victim) df.file_format = 'AVRO';
        }
      });
      const length = BigInt(statSync(path).size);
      for (const f of readdirSync(metadataDir).filter((x) => x.startsWith('snap-'))) {
        await editAvroFile(join(metadataDir, f), (records) => {
          for (const r of records) if (r.manifest_path === path) r.manifest_length = length;
        });
      }
    }
    t = await loadTable(t.location);
    const p = await plan(t);
    expect(p.skipped).toEqual([{ path: victim, reason: 'file format AVRO cannot be rewritten (only PARQUET)' }]);
    expect(p.groups).toHaveLength(1);
    expect(p.groups[0].inputs).toHaveLength(5);
    expect(paths(p)).not.toContain(victim);
  });
});

describe('planner: partition spec changes', () => {
  it('groups files of an older spec together with reason spec-change, even at target size', async () => {
    let t = await newTable();
    t = await appendRows(t, rows('a', 4000)); // at target
    t = await appendFiles(t, 'a', 2);
    t = await appendRows(t, rows('b', 4000)); // a lone old file at target
    const oldTasks = await tasksOf(t);
    const target = Math.max(...oldTasks.map(size));
    t = await updateSpec(t, [
      { sourceId: 2, name: 'category', transform: { kind: 'identity' } },
      { sourceId: 3, name: 'hour', transform: { kind: 'identity' } },
    ]);
    t = await appendFiles(t, 'a', 2);
    const p = await plan(t, { targetFileSizeBytes: target, minInputFiles: 2 });
    const bySpec = new Map(p.groups.map((g) => [`${g.specId}:${g.partitionPath}`, g]));
    expect([...bySpec.keys()].sort()).toEqual(['0:category=a', '1:category=a/hour=1']);
    const old = bySpec.get('0:category=a')!;
    expect(old.reasons).toEqual(['too-small', 'spec-change']);
    expect(paths(p, p.groups.indexOf(old))).toEqual(oldTasks.filter((x) => x.dataFile.partition.category === 'a').map((x) => x.dataFile.filePath));
    expect(bySpec.get('1:category=a/hour=1')!.reasons).toEqual(['too-small']);
    expect(bySpec.get('1:category=a/hour=1')!.partition).toEqual({ category: 'a', hour: 1 });
  });

  it('minor mode leaves older-spec files alone while partition-scoped equality deletes exist', async () => {
    let t = await newTable();
    t = await appendFiles(t, 'a', 2);
    const old = (await tasksOf(t)).map((x) => x.dataFile.filePath);
    t = await updateSpec(t, [
      { sourceId: 2, name: 'category', transform: { kind: 'identity' } },
      { sourceId: 3, name: 'hour', transform: { kind: 'identity' } },
    ]);
    // Without equality deletes minor mode may move them.
    const before = await plan(t, { mode: 'minor', minInputFiles: 2 });
    expect(before.groups.map((g) => g.reasons)).toEqual([['too-small', 'spec-change']]);
    t = await deleteByEquality(t, [1], [{ id: 999_999n, category: 'a', hour: 1 }]);
    const minor = await plan(t, { mode: 'minor', minInputFiles: 2 });
    expect(minor.groups).toEqual([]);
    expect(minor.skipped).toEqual(
      old.map((path) => ({
        path,
        reason: 'minor compaction cannot move a file to another partition spec while partition-scoped equality deletes exist',
      })),
    );
    // Major compaction applies the deletes, so it may move the files.
    expect((await plan(t, { minInputFiles: 2 })).groups.map((g) => g.specId)).toEqual([0]);
  });
});

describe('planner: group limits', () => {
  it('splits a partition by max-group-bytes (first-fit decreasing) and caps the number of groups', async () => {
    let t = await newTable();
    t = await appendFiles(t, 'a', 6, 5);
    const tasks = await tasksOf(t);
    const biggest = Math.max(...tasks.map(size));
    const smallest = Math.min(...tasks.map(size));
    const cap = 3 * biggest;
    expect(4 * smallest).toBeGreaterThan(cap); // so each group holds exactly three
    const p = await plan(t, { maxGroupBytes: cap, minInputFiles: 3 });
    expect(p.groups).toHaveLength(2);
    for (const g of p.groups) {
      expect(g.inputs).toHaveLength(3);
      expect(sum(g.inputs.map((i) => Number(i.file.fileSizeInBytes)))).toBeLessThanOrEqual(cap);
    }
    expect([...paths(p, 0), ...paths(p, 1)].sort()).toEqual(tasks.map((x) => x.dataFile.filePath));
    // First-fit decreasing: the three largest files share the first bin.
    const bySize = [...tasks].sort((x, y) => size(y) - size(x) || (x.dataFile.filePath < y.dataFile.filePath ? -1 : 1));
    const firstBin = bySize.slice(0, 3).map((x) => x.dataFile.filePath).sort();
    expect(p.groups.some((g) => JSON.stringify(g.inputs.map((i) => i.file.filePath).sort()) === JSON.stringify(firstBin))).toBe(true);
    // Each too-small group of three alone would be dropped by min-input-files 5.
    expect((await plan(t, { maxGroupBytes: cap })).groups).toHaveLength(0);
    const capped = await plan(t, { maxGroupBytes: cap, minInputFiles: 3, maxGroups: 1 });
    expect(capped.groups).toHaveLength(1);
    expect(capped.summary.dataFilesAfter).toBe(6 - 3 + 1);
  });

  it('orders groups by files removed per byte read, deletes counted', async () => {
    let t = await newTable();
    t = await appendFiles(t, 'a', 5);
    t = await appendFiles(t, 'b', 8);
    const p = await plan(t);
    expect(p.groups.map((g) => g.partitionPath)).toEqual(['category=b', 'category=a']);
  });
});

describe('planner: minor mode', () => {
  it('never groups inputs across an equality delete; the output takes the largest input sequence number', async () => {
    let t = await newTable({ partitioned: false });
    const s1 = nextId;
    t = await appendRows(t, rows('a', 3)); // seq 1
    const s2 = nextId;
    t = await appendRows(t, rows('a', 3)); // seq 2
    t = await deleteByEquality(t, [1], [{ id: BigInt(s1) }, { id: BigInt(s2) }]); // seq 3
    t = await appendRows(t, rows('a', 3)); // seq 4
    t = await appendRows(t, rows('a', 3)); // seq 5
    const eq = (await planFiles(t.io, t.metadata)).deleteFiles[0];

    const minor = await plan(t, { mode: 'minor', minInputFiles: 2 });
    const bySeq = [...minor.groups].sort((a, b) => Number(a.outputSequenceNumber) - Number(b.outputSequenceNumber));
    expect(bySeq.map((g) => g.inputs.map((i) => i.dataSequenceNumber))).toEqual([['1', '2'], ['4', '5']]);
    expect(bySeq.map((g) => g.outputSequenceNumber)).toEqual(['2', '5']);
    // Minor mode does not read equality deletes: they are not inputs' deletes and trigger nothing.
    for (const g of minor.groups) {
      expect(g.reasons).toEqual(['too-small']);
      for (const i of g.inputs) expect(i.deletes).toEqual([]);
    }
    expect(minor.summary.deleteFilesAfter).toBe(1);

    const major = await plan(t, { minInputFiles: 2 });
    expect(major.groups).toHaveLength(1);
    const g = major.groups[0];
    expect(g.outputSequenceNumber).toBeUndefined();
    expect(g.inputs.map((i) => [i.dataSequenceNumber, i.deletes.map((d) => [d.file.filePath, d.dataSequenceNumber])])).toEqual([
      ['1', [[eq.filePath, '3']]],
      ['2', [[eq.filePath, '3']]],
      ['4', []],
      ['5', []],
    ]);
    expect(g.reasons).toEqual(['too-small', 'deletes']);
    // Equality deletes are not estimated: the live rows are the record counts (2 rows do go).
    expect(g.estimate.liveRows).toBe(12);
    expect(major.summary.deleteFilesAfter).toBe(0);
  });
});


describe('planner: metadata only, deterministic', () => {
  for (const v of [2, 3] as const) {
    it(`v${v}: opens no data or delete file, only the manifest list and manifests`, async () => {
      let t = await newTable({ formatVersion: v });
      t = await appendFiles(t, 'a', 5);
      t = (await deleteRows(t, (r) => Number(r.id) % 4 === 0)).table;
      if (v === 2) t = await deleteByEquality(t, [1, 2], [{ id: 1n, category: 'a' }]);
      const recording = new RecordingIO(io);
      const p = await planCompaction(recording, t.metadata, { table: { location: t.location } });
      expect(p.groups).toHaveLength(1);
      expect(p.groups[0].inputs.some((i) => i.deletes.length > 0)).toBe(true);
      expect(recording.reads.length).toBeGreaterThan(1);
      for (const path of recording.reads) {
        expect(path).toMatch(/\/metadata\/[^/]+\.avro$/);
        expect(path).not.toMatch(/\/data\/|\.parquet$|\.puffin$/);
      }
      expect(recording.reads.some((x) => /\/snap-[^/]+\.avro$/.test(x))).toBe(true);
      expect(recording.reads.some((x) => !/\/snap-[^/]+\.avro$/.test(x))).toBe(true);
    });
  }

  it('re-planning the same table gives the same groups and ids', async () => {
    let t = await newTable();
    t = await appendFiles(t, 'a', 5);
    t = await appendFiles(t, 'b', 6);
    t = (await deleteRows(t, (r) => Number(r.id) % 5 === 0)).table;
    const first = await plan(t, {}, 1234);
    const again = await plan(await loadTable(t.location), {}, 1234);
    expect(again).toEqual(first);
    expect(first.groups).toHaveLength(2);
    expect(first.groups[0].id).toMatch(/^[0-9a-f]{24}$/);
    expect(new Set(first.groups.map((g) => g.id)).size).toBe(2);
    // The id depends on the inputs: dropping one file changes it.
    const fewer = await plan(t, { where: "category = 'b'" }, 1234);
    expect(fewer.groups.map((g) => g.id)).toEqual(first.groups.filter((g) => g.partitionPath === 'category=b').map((g) => g.id));
    const plainJson = JSON.parse(JSON.stringify(first)) as Plan;
    expect(plainJson.groups.map((g) => g.id)).toEqual(first.groups.map((g) => g.id));
  });
});
