/**
 * Inputs with equality deletes (major mode) merged page by page (lib/compaction/chunk-copy.ts,
 * lib/table/scan.ts deletedPositions): the rows the equality deletes match, probed on the key
 * columns alone as the decoder probes them, are dropped from the pages like position deletes.
 * The live rows, the map, the proof, the metrics the decode path gives, keys with nulls and on
 * several columns, deletes that do not apply by sequence number, the delete files gone after the
 * commit, S3 (moto), and minor mode (equality deletes not applied, nothing dropped).
 */
import { describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { MERGE_DELETES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import type { DataFileJson, GroupResult } from '../../lib/compaction/messages.js';
import { planCompaction } from '../../lib/compaction/planner.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { FileContent } from '../../lib/iceberg/manifest.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import type { Row } from '../../lib/iceberg/values.js';
import { parseS3Location } from '../../lib/io/index.js';
import { S3FileIO } from '../../lib/io/s3.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { S3RequestCounter } from '../../lib/io/s3-requests.js';
import { appendRows, deleteByEquality, deleteRows } from '../../lib/table/operations.js';
import { checkMap, expectDecodedMetrics, tableRows, withProperties } from '../support/chunk-copy-table.js';
import { planAll } from '../support/compaction.js';
import { flatRow, flatTable } from '../support/flat-table.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';

const io = new LocalFileIO();
/** The ids of tableRows' rows (JSON text). */
const idsOf = (rows: readonly string[]): number[] => rows.map((r) => Number((JSON.parse(r) as { id: number }).id));
const isMerge = (f: DataFileJson): boolean => f.filePath.includes('-merge-');

/** Ids the equality deletes on `id` name: spread over every file, each file's bounds among them. */
const KEYS_BY_ID = (rows: number, appends: number): number[] =>
  Array.from({ length: rows * appends }, (_, i) => i + 1).filter((id) => id % 11 === 3 || (id - 1) % rows === 0 || id % rows === 0);

/** Equality delete rows on `id` (with the partition source column, which places each file). */
const idKeys = (ids: readonly number[]): Row[] => ids.map((id) => ({ id: BigInt(id), category: flatRow(id).category }));

async function rewriteAll(t: Table): Promise<{ plan: Awaited<ReturnType<typeof planAll>>; results: GroupResult[] }> {
  const plan = await planAll(t.io, t.metadata);
  const results: GroupResult[] = [];
  for (const g of plan.groups) results.push(await rewriteGroup(t.io, t.metadata, plan, g));
  return { plan, results };
}

async function deleteFilesOf(t: Table): Promise<number> {
  const plan = await planFiles(t.io, t.metadata);
  return new Set(plan.tasks.flatMap((task) => [...task.deletes.positionDeletes, ...task.deletes.equalityDeletes].map((d) => d.file.filePath))).size;
}

describe('merge with equality deletes: matched rows dropped from the pages', () => {
  it('drops the rows equality deletes on one column match, with position deletes beside them: rows, map, proof, commit', async () => {
    const rows = 90;
    let t = await flatTable(io, 3, rows);
    t = await deleteByEquality(t, [1], idKeys(KEYS_BY_ID(rows, 3)));
    t = (await deleteRows(t, (r) => Number(r.id) % 17 === 5)).table;
    const before = await tableRows(t);
    const gone = new Set(KEYS_BY_ID(rows, 3));
    const deleted = (r: Row): boolean => gone.has(Number(r.id)) || Number(r.id) % 17 === 5;
    expect(before).toHaveLength(3 * rows - Array.from({ length: 3 * rows }, (_, i) => flatRow(i + 1)).filter(deleted).length);
    const { plan, results } = await rewriteAll(t);
    for (const r of results) {
      const group = plan.groups.find((g) => g.id === r.groupId)!;
      expect(group.inputs.every((i) => i.deletes.some((d) => d.file.content === FileContent.EqualityDeletes))).toBe(true);
      expect(r.outputs.every(isMerge)).toBe(true);
      expect(r.inputPaths).toEqual({ copied: 0, merged: group.inputs.length, decoded: 0 });
      expect([r.checksums.rowsOut, r.checksums.hashOut]).toEqual([r.checksums.rowsIn, r.checksums.hashIn]);
      await checkMap(io, t.metadata, plan, r, deleted);
    }
    expect(results.reduce((n, r) => n + Number(r.checksums.rowsOut), 0)).toBe(before.length);
    await commitCompaction(t, plan, results);
    const after = await loadTable(t.location);
    expect(await tableRows(after)).toEqual(before);
    // The rewrite applied every delete: none is left for readers.
    expect(await deleteFilesOf(after)).toBe(0);
  });

  it('gives the rows and metrics the decode path gives, keys on two columns with nulls among them', async () => {
    const rows = 80;
    let t = await flatTable(io, 2, rows);
    // qty is null where id % 13 === 0: keys (null, id) match exactly those rows, (qty, id) the others.
    const ids = Array.from({ length: 2 * rows }, (_, i) => i + 1).filter((id) => id % 13 === 0 || id % 9 === 2);
    t = await deleteByEquality(t, [3, 1], ids.map((id) => ({ id: BigInt(id), qty: flatRow(id).qty, category: flatRow(id).category })));
    // A key that matches no row: qty wrong for its id.
    t = await deleteByEquality(t, [3, 1], [{ id: 2n, qty: 7, category: flatRow(2).category }]);
    const before = await tableRows(t);
    expect(idsOf(before).filter((id) => ids.includes(id))).toEqual([]);
    expect(before).toHaveLength(2 * rows - ids.length);
    const plan = await planAll(io, t.metadata);
    const results: GroupResult[] = [];
    for (const group of plan.groups) {
      const merged = await rewriteGroup(io, t.metadata, plan, group);
      const decoded = await rewriteGroup(io, withProperties(t.metadata, { [MERGE_DELETES_PROPERTY]: 'false' }), plan, group);
      expect(merged.outputs.every(isMerge)).toBe(true);
      expect(decoded.outputs.some(isMerge)).toBe(false);
      expect(merged.checksums.rowsOut).toBe(decoded.checksums.rowsOut);
      expectDecodedMetrics(merged.outputs[0], decoded.outputs[0]);
      results.push(merged);
    }
    await commitCompaction(t, plan, results);
    expect(await tableRows(await loadTable(t.location))).toEqual(before);
  });

  it('keeps rows appended after an equality delete (its sequence number does not reach them)', async () => {
    const rows = 60;
    let t = await flatTable(io, 2, rows);
    const ids = [1, 5, 30, 61, 99, 120];
    t = await deleteByEquality(t, [1], idKeys(ids));
    // The same ids again, committed later: live.
    t = await appendRows(t, ids.map(flatRow));
    const before = await tableRows(t);
    expect(idsOf(before).filter((id) => ids.includes(id))).toHaveLength(ids.length);
    expect(before).toHaveLength(2 * rows);
    const { plan, results } = await rewriteAll(t);
    expect(results.every((r) => r.outputs.every(isMerge))).toBe(true);
    expect(results.every((r) => r.checksums.hashOut === r.checksums.hashIn)).toBe(true);
    await commitCompaction(t, plan, results);
    const after = await tableRows(await loadTable(t.location));
    expect(after).toEqual(before);
    expect(idsOf(after).filter((id) => ids.includes(id))).toHaveLength(ids.length);
  });

  it('in minor mode applies no equality delete: nothing is dropped and the deletes stay', async () => {
    const rows = 60;
    let t = await flatTable(io, 2, rows);
    t = await deleteByEquality(t, [1], idKeys([3, 4, 70]));
    const before = await tableRows(t);
    // The planner gives minor groups their output sequence number (under the equality delete's).
    const plan = await planCompaction(io, t.metadata, { table: { location: t.location }, policy: { mode: 'minor', minInputFiles: 2 } });
    expect(plan.groups.length).toBeGreaterThan(0);
    const results: GroupResult[] = [];
    for (const g of plan.groups) results.push(await rewriteGroup(io, t.metadata, plan, g));
    expect(results.every((r) => r.outputs.every(isMerge))).toBe(true);
    expect(results.reduce((n, r) => n + Number(r.checksums.rowsOut), 0)).toBe(results.reduce((n, r) => n + Number(r.checksums.rowsIn), 0));
    expect(before).toHaveLength(2 * rows - 3);
    await commitCompaction(t, plan, results);
    const after = await loadTable(t.location);
    expect(await tableRows(after)).toEqual(before);
    expect(await deleteFilesOf(after)).toBe(2);
  });
});

describe('merge with equality deletes on S3 (moto)', () => {
  it('merges, proves and commits; a small input is fetched once (its footer read serves the key column and the merge)', async () => {
    const location = `s3://${await freshBucket()}/warehouse/merge-equality`;
    const s3 = new S3FileIO({ endpoint: testS3Endpoint() });
    const rows = 2000;
    let t = await flatTable(s3, 3, rows, { location });
    t = await deleteByEquality(t, [1], idKeys(KEYS_BY_ID(rows, 3)));
    const before = await tableRows(t);
    const plan = await planAll(s3, t.metadata);
    const results: GroupResult[] = [];
    const counter = new S3RequestCounter(s3.client, { log: true });
    for (const g of plan.groups) {
      counter.reset();
      const r = await rewriteGroup(s3, t.metadata, plan, g);
      const inputs = new Set(g.inputs.map((i) => parseS3Location(i.file.filePath).key));
      const gets = counter.requests().filter((q) => q.command === 'GetObjectCommand' && inputs.has(q.key));
      // The footer read is all of these small files: it serves the key columns' reader and the merge.
      expect(g.inputs.every((i) => Number(i.file.fileSizeInBytes) < 64 * 1024)).toBe(true);
      expect(gets).toHaveLength(g.inputs.length);
      expect(r.outputs.every(isMerge)).toBe(true);
      results.push(r);
    }
    await commitCompaction(t, plan, results);
    const after = await loadTable(location, { s3Endpoint: testS3Endpoint() });
    expect(await tableRows(after)).toEqual(before);
    expect(await deleteFilesOf(after)).toBe(0);
  });
});
