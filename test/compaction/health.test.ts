/**
 * The health report on a known table: small files in one partition, a delete in another, a lone
 * file in a third. Every figure is checked against the table's manifests.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Table } from '../../lib/catalog/table.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { planFiles, type FileScanTask } from '../../lib/iceberg/scan-planning.js';
import type { Row } from '../../lib/iceberg/values.js';
import { tableHealth } from '../../lib/compaction/health.js';
import { planCompaction } from '../../lib/compaction/planner.js';
import { tableInfo } from '../../lib/table/info.js';
import { appendRows, createNewTable, deleteByEquality, deleteRows } from '../../lib/table/operations.js';
import { tempDir } from '../support/fixtures.js';

const io = new LocalFileIO();
const MiB = 1024 * 1024;

const SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'category', required: false, type: { type: 'string' as const } },
  ],
};

let nextId = 0;
const rows = (category: string, n: number): Row[] => Array.from({ length: n }, () => ({ id: BigInt(nextId++), category }));
const size = (t: FileScanTask): number => Number(t.dataFile.fileSizeInBytes);
const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/** a: 5 files of 3 rows; b: one file of 10 rows with 3 deleted (a file-scoped position delete); c: one file of 3 rows. */
async function knownTable(): Promise<Table> {
  let t = await createNewTable(io, join(tempDir(), 't'), {
    schema: SCHEMA,
    partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
  });
  for (let i = 0; i < 5; i++) t = await appendRows(t, rows('a', 3));
  const firstB = nextId;
  t = await appendRows(t, rows('b', 10));
  t = await appendRows(t, rows('c', 3));
  return (await deleteRows(t, (r) => r.category === 'b' && Number(r.id) < firstB + 3)).table;
}

describe('table health', () => {
  it('reports exact figures for a known table', async () => {
    const t = await knownTable();
    const scan = await planFiles(t.io, t.metadata);
    const of = (c: string): FileScanTask[] => scan.tasks.filter((x) => x.dataFile.partition.category === c);
    const [a, [b], [c]] = [of('a'), of('b'), of('c')];
    const [del] = scan.deleteFiles;
    const delBytes = Number(del.fileSizeInBytes);
    const dataBytes = sum(scan.tasks.map(size));

    const h = await tableHealth(t.io, t.metadata, {}, { nowMs: 5 });
    expect(h.location).toBe(t.location);
    expect(h.formatVersion).toBe(2);
    expect(h.snapshotId).toBe(t.metadata.currentSnapshotId!.toString());
    expect(h.dataFiles).toBe(7);
    expect(h.dataBytes).toBe(dataBytes);
    expect(h.records).toBe(28);
    expect(h.averageFileBytes).toBe(Math.round(dataBytes / 7));
    expect(h.deleteFiles).toBe(1);
    expect(h.deleteBytes).toBe(delBytes);
    expect(h.deletedRecords).toBe(3);
    expect(h.deletedFraction).toBe(3 / 28);
    expect(h.histogram).toEqual([
      { label: '< 1 MiB', minBytes: 0, maxBytes: MiB, files: 7, bytes: dataBytes },
      { label: '1-8 MiB', minBytes: MiB, maxBytes: 8 * MiB, files: 0, bytes: 0 },
      { label: '8-32 MiB', minBytes: 8 * MiB, maxBytes: 32 * MiB, files: 0, bytes: 0 },
      { label: '32-128 MiB', minBytes: 32 * MiB, maxBytes: 128 * MiB, files: 0, bytes: 0 },
      { label: '128-512 MiB', minBytes: 128 * MiB, maxBytes: 512 * MiB, files: 0, bytes: 0 },
      { label: '>= 512 MiB', minBytes: 512 * MiB, maxBytes: null, files: 0, bytes: 0 },
    ]);
    const lastCommit = (x: FileScanTask): number => t.metadata.snapshots.find((s) => s.snapshotId === x.snapshotId)!.timestampMs;
    expect(h.partitions).toEqual([
      {
        specId: 0,
        partition: { category: 'a' },
        partitionPath: 'category=a',
        dataFiles: 5,
        dataBytes: sum(a.map(size)),
        records: 15,
        smallFiles: 5,
        largeFiles: 0,
        deleteFiles: 0,
        deleteBytes: 0,
        equalityDeleteFiles: 0,
        deletedRecords: 0,
        deletedFraction: 0,
        lastCommitMs: Math.max(...a.map(lastCommit)),
        reasons: ['too-small'],
        fix: { groups: 1, bytesToRead: sum(a.map(size)), bytesToWrite: sum(a.map(size)), filesBefore: 5, filesAfter: 1 },
      },
      {
        specId: 0,
        partition: { category: 'b' },
        partitionPath: 'category=b',
        dataFiles: 1,
        dataBytes: size(b),
        records: 10,
        smallFiles: 1,
        largeFiles: 0,
        deleteFiles: 1,
        deleteBytes: delBytes,
        equalityDeleteFiles: 0,
        deletedRecords: 3,
        deletedFraction: 0.3,
        lastCommitMs: lastCommit(b),
        reasons: ['too-small', 'deletes', 'delete-ratio'],
        fix: { groups: 1, bytesToRead: size(b) + delBytes, bytesToWrite: Math.round(size(b) * 0.7), filesBefore: 1, filesAfter: 1 },
      },
      {
        specId: 0,
        partition: { category: 'c' },
        partitionPath: 'category=c',
        dataFiles: 1,
        dataBytes: size(c),
        records: 3,
        smallFiles: 1,
        largeFiles: 0,
        deleteFiles: 0,
        deleteBytes: 0,
        equalityDeleteFiles: 0,
        deletedRecords: 0,
        deletedFraction: 0,
        lastCommitMs: lastCommit(c),
        reasons: [],
        fix: null,
      },
    ]);
    expect(h.partitionsNeedingCompaction).toBe(2);
    expect(h.groups).toBe(2);
    const plan = await planCompaction(t.io, t.metadata, { table: { location: t.location } }, { nowMs: 5 });
    expect(h.summary).toEqual(plan.summary);
    expect(h.summary).toEqual({
      dataFilesBefore: 7,
      dataFilesAfter: 7 - 6 + 2,
      deleteFilesBefore: 1,
      deleteFilesAfter: 0,
      bytesBefore: dataBytes + delBytes,
      bytesAfter: dataBytes + delBytes - sum(a.map(size)) - size(b) + sum(a.map(size)) + Math.round(size(b) * 0.7) - delBytes,
      rewriteRatio: (sum(a.map(size)) + size(b)) / dataBytes,
    });
    expect(h.skipped).toEqual([]);
  });

  it('follows the policy: thresholds, and the filter selects the partitions listed', async () => {
    const t = await knownTable();
    const h = await tableHealth(t.io, t.metadata, { where: "category in ('b', 'c')", deleteFileThreshold: 2, deleteRatioThreshold: 0.5 });
    expect(h.partitions.map((p) => [p.partitionPath, p.fix])).toEqual([
      ['category=b', null],
      ['category=c', null],
    ]);
    expect(h.groups).toBe(0);
    expect(h.partitionsNeedingCompaction).toBe(0);
    expect(h.dataFiles).toBe(7);
    expect(h.policy.where).toBe("category in ('b', 'c')");
  });
});

describe('info, health and plan', () => {
  it.each([2, 3] as const)('v%i: agree on data files, delete files, records and bytes', async (formatVersion) => {
    let t = await createNewTable(io, join(tempDir(), 't'), {
      schema: SCHEMA,
      formatVersion,
      partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
    });
    const first = nextId;
    for (let i = 0; i < 3; i++) t = await appendRows(t, [...rows('a', 4), ...rows('b', 4)]);
    // Position deletes (v2) or deletion vectors (v3) in both partitions, and an equality delete.
    t = (await deleteRows(t, (r) => Number(r.id) % 5 === 0)).table;
    t = await deleteByEquality(t, [1, 2], [{ id: BigInt(first + 1), category: 'a' }]);

    const info = await tableInfo(io, t.metadata);
    const h = await tableHealth(io, t.metadata);
    const p = await planCompaction(io, t.metadata, { table: { location: t.location } });
    const deleteFiles = info.positionDeleteFiles + info.deletionVectors + info.equalityDeleteFiles;
    expect(formatVersion === 3 ? info.deletionVectors : info.positionDeleteFiles).toBeGreaterThan(0);
    expect(info.equalityDeleteFiles).toBe(1);

    expect([h.dataFiles, p.summary.dataFilesBefore, sum(h.partitions.map((x) => x.dataFiles))]).toEqual([info.dataFiles, info.dataFiles, info.dataFiles]);
    expect(h.partitions).toHaveLength(info.partitions);
    expect([h.dataBytes, sum(h.partitions.map((x) => x.dataBytes))]).toEqual([Number(info.dataBytes), Number(info.dataBytes)]);
    expect(h.records).toBe(Number(info.records));
    expect([h.deleteFiles, p.summary.deleteFilesBefore]).toEqual([deleteFiles, deleteFiles]);
    expect(h.deleteBytes).toBe(Number(info.deleteBytes));
    expect(p.summary.bytesBefore).toBe(Number(info.dataBytes) + Number(info.deleteBytes));
    // A deletion vector costs its blob, not its Puffin file.
    const scan = await planFiles(io, t.metadata);
    const blobs = scan.deleteFiles.filter((d) => d.fileFormat === 'PUFFIN');
    expect(blobs.length > 0).toBe(formatVersion === 3);
    const expected = sum(scan.deleteFiles.map((d) => Number(d.fileFormat === 'PUFFIN' ? d.contentSizeInBytes! : d.fileSizeInBytes)));
    expect(Number(info.deleteBytes)).toBe(expected);
  });
});
