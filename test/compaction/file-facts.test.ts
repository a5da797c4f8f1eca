/**
 * The per-file and per-partition facts the planner and the health report share, on real tables
 * written with lib/table/operations.ts.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Table } from '../../lib/catalog/table.js';
import { FactsAccumulator, fileFacts, partitionsOf } from '../../lib/compaction/file-facts.js';
import { deleteFileKey } from '../../lib/iceberg/delete-file.js';
import type { DeleteFileRef } from '../../lib/iceberg/delete-index.js';
import { resolvePolicy } from '../../lib/compaction/policy.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import type { Row } from '../../lib/iceberg/values.js';
import { appendRows, createNewTable, deleteByEquality, deleteRows } from '../../lib/table/operations.js';
import { tempDir } from '../support/fixtures.js';
import { SMALL_TABLE_SCHEMA } from '../support/small-table.js';

const io = new LocalFileIO();

let nextId = 0;
const rows = (category: string, n: number): Row[] => Array.from({ length: n }, () => ({ id: BigInt(nextId++), category }));

async function newTable(formatVersion: 2 | 3 = 2): Promise<Table> {
  return createNewTable(io, join(tempDir(), 't'), {
    schema: SMALL_TABLE_SCHEMA,
    formatVersion,
    partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
  });
}

describe('file facts', () => {
  it('apportion a partition-scoped position delete by record count and give each file its reasons', async () => {
    let t = await newTable();
    const a1 = nextId;
    t = await appendRows(t, rows('a', 10));
    const a2 = nextId;
    t = await appendRows(t, rows('a', 30));
    t = await appendRows(t, rows('b', 5));
    // One delete file for partition a: 2 rows of the first file, 6 of the second.
    const doomed = new Set([a1, a1 + 1, ...[0, 1, 2, 3, 4, 5].map((i) => a2 + i)].map(BigInt));
    t = (await deleteRows(t, (r) => doomed.has(r.id as bigint))).table;
    const scan = await planFiles(t.io, t.metadata);
    const [del] = scan.deleteFiles;

    const facts = fileFacts(t.metadata, scan, resolvePolicy(t.metadata, { minFileSizeBytes: 0, targetFileSizeBytes: 1 << 20 }).policy);
    expect(facts.map((f) => f.task.dataFile.filePath)).toEqual(scan.tasks.map((x) => x.dataFile.filePath).sort());
    const byRecords = (n: number) => facts.find((f) => f.task.dataFile.recordCount === BigInt(n))!;
    expect(byRecords(10).deletedRecords).toBe(2);
    expect(byRecords(30).deletedRecords).toBe(6);
    expect(byRecords(5).deletedRecords).toBe(0);
    // Nothing is too small under this policy; a file a delete reaches is a candidate for it.
    expect(facts.map((f) => [f.partitionPath, f.task.dataFile.recordCount, f.reasons]).sort()).toEqual([
      ['category=a', 10n, ['deletes']],
      ['category=a', 30n, ['deletes']],
      ['category=b', 5n, []],
    ]);
    expect(byRecords(10).deletes.map((d) => d.file.filePath)).toEqual([del.filePath]);
    expect(facts.every((f) => f.unrewritable === undefined && f.equalityDeletes === 0)).toBe(true);
  });

  it('in minor mode leave equality deletes out of the deletes a rewrite applies, but count them', async () => {
    let t = await newTable();
    const first = nextId;
    t = await appendRows(t, rows('a', 4));
    t = await deleteByEquality(t, [1, 2], [{ id: BigInt(first), category: 'a' }]);
    const scan = await planFiles(t.io, t.metadata);
    const major = fileFacts(t.metadata, scan, resolvePolicy(t.metadata).policy);
    const minor = fileFacts(t.metadata, scan, resolvePolicy(t.metadata, { mode: 'minor' }).policy);
    expect(major[0].deletes).toHaveLength(1);
    expect(minor[0].deletes).toHaveLength(0);
    expect([major[0].equalityDeletes, minor[0].equalityDeletes]).toEqual([1, 1]);
    // How many rows an equality delete matches is unknown from metadata.
    expect(major[0].deletedRecords).toBe(0);
  });

  it('name a delete file a rewrite would apply but cannot read, and only one it would apply', async () => {
    let t = await newTable();
    const first = nextId;
    t = await appendRows(t, rows('a', 4));
    t = await deleteByEquality(t, [1, 2], [{ id: BigInt(first), category: 'a' }]);
    const scan = await planFiles(t.io, t.metadata);
    // The same delete as if another engine had written it in ORC.
    const orc = (d: DeleteFileRef): DeleteFileRef => ({ ...d, file: { ...d.file, fileFormat: 'ORC' } });
    const asOrc = { ...scan, tasks: scan.tasks.map((x) => ({ ...x, deletes: { ...x.deletes, equalityDeletes: x.deletes.equalityDeletes.map(orc) } })) };
    const [del] = asOrc.tasks[0].deletes.equalityDeletes;
    const major = fileFacts(t.metadata, asOrc, resolvePolicy(t.metadata).policy);
    expect(major[0].unrewritable).toBe(`its delete file ${del.file.filePath} is ORC, which cannot be read (only PARQUET and PUFFIN)`);
    // Minor compaction leaves equality deletes in place: nothing to read.
    const minor = fileFacts(t.metadata, asOrc, resolvePolicy(t.metadata, { mode: 'minor' }).policy);
    expect(minor[0].unrewritable).toBeUndefined();
  });
});

describe('partition facts', () => {
  it('group files by partition in the order of their first file, select by the filter, and know the last commit', async () => {
    let t = await newTable();
    t = await appendRows(t, rows('b', 2));
    t = await appendRows(t, rows('a', 2));
    const aFirst = t.metadata.snapshots.at(-1)!.timestampMs;
    t = await appendRows(t, rows('b', 2));
    const bLast = t.metadata.snapshots.at(-1)!.timestampMs;
    t = await appendRows(t, rows('a', 2));
    const aLast = t.metadata.snapshots.at(-1)!.timestampMs;
    expect(aLast).toBeGreaterThanOrEqual(aFirst);
    const scan = await planFiles(t.io, t.metadata);
    const facts = fileFacts(t.metadata, scan, resolvePolicy(t.metadata).policy);

    const all = partitionsOf(t.metadata, facts);
    const firstPathOf = (p: (typeof all)[number]): string => p.files[0].task.dataFile.filePath;
    expect(all.map((p) => p.partitionPath)).toEqual(
      [...all].sort((x, y) => (firstPathOf(x) < firstPathOf(y) ? -1 : 1)).map((p) => p.partitionPath),
    );
    expect(all.map((p) => [p.partitionPath, p.partition, p.files.length, p.specId]).sort()).toEqual([
      ['category=a', { category: 'a' }, 2, 0],
      ['category=b', { category: 'b' }, 2, 0],
    ]);
    const of = (c: string) => all.find((p) => p.partition.category === c)!;
    expect(of('a').lastCommitMs).toBe(aLast);
    expect(of('b').lastCommitMs).toBe(bLast);
    expect(of('a').key).toBe(of('a').files[0].key);

    const { filter } = resolvePolicy(t.metadata, { where: "category = 'b'" });
    expect(partitionsOf(t.metadata, facts, filter).map((p) => p.partitionPath)).toEqual(['category=b']);
  });

  it('an accumulator of candidates keeps only files that may be rewritten, and counts the rest', async () => {
    let t = await newTable();
    t = await appendRows(t, rows('a', 10));
    t = await appendRows(t, rows('a', 20));
    t = await appendRows(t, rows('b', 5));
    t = await appendRows(t, rows('c', 7));
    const doomed = (await planFiles(t.io, t.metadata)).tasks.find((x) => x.dataFile.recordCount === 5n)!;
    t = (await deleteRows(t, (r) => r.category === 'b' && (r.id as bigint) % 2n === 0n)).table;
    const scan = await planFiles(t.io, t.metadata);
    const sizes = scan.tasks.map((x) => Number(x.dataFile.fileSizeInBytes));
    // Every file is within [min, max]: only the one with a delete is a candidate.
    const { policy, filter } = resolvePolicy(t.metadata, { minFileSizeBytes: 0, targetFileSizeBytes: 1, maxFileSizeBytes: Math.max(...sizes), where: "category != 'c'" });
    const accumulator = new FactsAccumulator(t.metadata, policy, filter, { keep: 'candidates' });
    for (const x of scan.tasks) accumulator.add(x);
    const kept = accumulator.finish();
    expect(kept.facts.map((f) => f.task.dataFile.filePath)).toEqual([doomed.dataFile.filePath]);
    expect(kept.partitions.map((p) => [p.partitionPath, p.files.length])).toEqual([['category=b', 1]]);
    expect([kept.dataFiles, kept.dataBytes]).toEqual([4, sizes.reduce((a, b) => a + b, 0)]);
    expect([...kept.neededDeletes]).toEqual(scan.deleteFiles.map((d) => deleteFileKey(d)));
    // keep 'all' keeps what fileFacts gives, with the same facts for the candidate.
    const all = new FactsAccumulator(t.metadata, policy, filter, { keep: 'all' });
    for (const x of scan.tasks) all.add(x);
    const everything = all.finish();
    expect(everything.facts).toEqual(fileFacts(t.metadata, scan, policy));
    expect(everything.partitions.map((p) => p.partitionPath).sort()).toEqual(['category=a', 'category=b']);
    expect(everything.facts.find((f) => f.task === doomed || f.task.dataFile.filePath === doomed.dataFile.filePath)).toEqual(kept.facts[0]);
  });
});
