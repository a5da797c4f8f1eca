/**
 * Inputs with position deletes or a deletion vector merged with their deleted rows dropped from
 * the pages (lib/compaction/chunk-copy.ts, lib/parquet/row-group-merge.ts): the live rows, the
 * compaction map (deleted positions map nowhere), the proof, the metrics the decode path gives
 * (bounds recomputed where a deleted row held one), whole files deleted, v3 deletion vectors, S3;
 * and what still goes to the decoder: equality deletes, repeated or boolean columns, the property.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { COPY_MIN_ROW_GROUP_BYTES_PROPERTY, MERGE_DELETES_PROPERTY, MERGE_MIN_ROW_GROUP_BYTES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import type { DataFileJson, GroupResult } from '../../lib/compaction/messages.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { InvalidFileError, ValidationError } from '../../lib/errors.js';
import type { TableMetadata } from '../../lib/iceberg/table-metadata.js';
import type { StructType } from '../../lib/iceberg/types.js';
import type { Row } from '../../lib/iceberg/values.js';
import type { FileIO } from '../../lib/io/file-io.js';
import { fileIOFor } from '../../lib/io/index.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { appendRows, createNewTable, deleteByEquality, deleteRows } from '../../lib/table/operations.js';
import { checkMap, chunkCopyTable, tableRows } from '../support/chunk-copy-table.js';
import { planAll } from '../support/compaction.js';
import { tempDir } from '../support/fixtures.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { listTree } from '../support/table-files.js';

const io = new LocalFileIO();
/** Every input merged: no row group reaches the copy floor, every one the merge floor. */
const MERGE = { [COPY_MIN_ROW_GROUP_BYTES_PROPERTY]: String(2 ** 40), [MERGE_MIN_ROW_GROUP_BYTES_PROPERTY]: '1' };

/** No repeated or boolean column: rows can be dropped page by page. */
const FLAT_SCHEMA: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'category', required: false, type: { type: 'string' } },
    { id: 3, name: 'qty', required: false, type: { type: 'int' } },
    { id: 4, name: 'amount', required: false, type: { type: 'decimal', precision: 10, scale: 2 } },
    { id: 5, name: 'ts', required: false, type: { type: 'timestamptz' } },
    { id: 6, name: 'score', required: false, type: { type: 'double' } },
    { id: 7, name: 'point', required: false, type: { type: 'struct', fields: [{ id: 8, name: 'x', required: false, type: { type: 'float' } }] } },
    { id: 9, name: 'note', required: false, type: { type: 'string' } },
  ],
};

function flatRow(id: number): Row {
  return {
    id: BigInt(id),
    category: id % 3 === 0 ? 'b' : 'a',
    qty: id % 13 === 0 ? null : id % 10,
    amount: BigInt((id % 2 === 0 ? -1 : 1) * (id * 1234 + 5)),
    ts: 1_700_000_000_000_000n + BigInt(id) * 3_600_000_001n,
    score: id % 17 === 4 ? Number.NaN : id % 11 === 6 ? null : id * 1.5,
    point: id % 7 === 0 ? null : { x: id % 5 === 0 ? null : id / 4 },
    note: id % 9 === 0 ? null : `note ${'x'.repeat(id % 30)} ${id}`,
  };
}

async function flatTable(
  fs: FileIO, appends: number, rows: number, options: { formatVersion?: 2 | 3; location?: string; properties?: Record<string, string> } = {},
): Promise<Table> {
  let t = await createNewTable(fs, options.location ?? join(tempDir(), 'merge-deletes'), {
    formatVersion: options.formatVersion ?? 2,
    schema: FLAT_SCHEMA,
    partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
    properties: { ...MERGE, ...options.properties },
  });
  for (let a = 0; a < appends; a++) t = await appendRows(t, Array.from({ length: rows }, (_, i) => flatRow(1 + a * rows + i)));
  return t;
}

/**
 * Deletes every seventh row, each file's first and last rows (its id bounds), every row with the
 * largest qty in the first append (a bound of a dictionary column) and some rows whose qty is null.
 */
const DELETED = (rows: number) => (r: Row): boolean => {
  const id = Number(r.id);
  const pos = (id - 1) % rows;
  return id % 7 === 0 || pos === 0 || pos === rows - 1 || (id <= rows && r.qty === 9) || id % 26 === 13;
};

const isMerge = (f: DataFileJson): boolean => f.filePath.includes('-merge-');

function withProperties(m: TableMetadata, properties: Record<string, string>): TableMetadata {
  return { ...m, properties: { ...m.properties, ...properties } };
}

describe('merge with deletes: position deletes dropped from the pages', () => {
  it('writes the live rows, one merged output per partition, with the map and proof', async () => {
    const rows = 120;
    let t = await flatTable(io, 4, rows);
    t = (await deleteRows(t, DELETED(rows))).table;
    const before = await tableRows(t);
    const plan = await planAll(io, t.metadata);
    const results: GroupResult[] = [];
    for (const group of plan.groups) {
      expect(group.inputs.every((i) => i.deletes.length > 0)).toBe(true);
      const r = await rewriteGroup(io, t.metadata, plan, group);
      expect(r.outputs).toHaveLength(1);
      expect(isMerge(r.outputs[0])).toBe(true);
      expect(r.checksums.rowsOut).toBe(r.checksums.rowsIn);
      expect(r.checksums.hashOut).toBe(r.checksums.hashIn);
      await checkMap(io, t.metadata, plan, r, DELETED(rows));
      results.push(r);
    }
    expect(results.reduce((n, r) => n + Number(r.checksums.rowsOut), 0)).toBe(before.length);
    await commitCompaction(t, plan, results);
    const after = await loadTable(t.location);
    expect(await tableRows(after)).toEqual(before);
  });

  it('gives the metrics the decode path gives: value and null counts, bounds recomputed where a deleted row held one', async () => {
    const rows = 120;
    let t = await flatTable(io, 3, rows);
    t = (await deleteRows(t, DELETED(rows))).table;
    const plan = await planAll(io, t.metadata);
    for (const group of plan.groups) {
      const merged = await rewriteGroup(io, t.metadata, plan, group);
      const decoded = await rewriteGroup(io, withProperties(t.metadata, { [MERGE_DELETES_PROPERTY]: 'false' }), plan, group);
      expect(isMerge(merged.outputs[0])).toBe(true);
      expect(isMerge(decoded.outputs[0])).toBe(false);
      const [m, d] = [merged.outputs[0], decoded.outputs[0]];
      expect(m.recordCount).toBe(d.recordCount);
      expect(m.valueCounts).toEqual(d.valueCounts);
      expect(m.nullValueCounts).toEqual(d.nullValueCounts);
      expect(m.lowerBounds).toEqual(d.lowerBounds);
      expect(m.upperBounds).toEqual(d.upperBounds);
    }
  });

  it('leaves out a file whose rows are all deleted', async () => {
    let t = await flatTable(io, 3, 60);
    t = (await deleteRows(t, (r) => Number(r.id) > 60 && Number(r.id) <= 120)).table;
    const before = await tableRows(t);
    const plan = await planAll(io, t.metadata);
    const results: GroupResult[] = [];
    for (const group of plan.groups) {
      const r = await rewriteGroup(io, t.metadata, plan, group);
      expect(r.outputs.every(isMerge)).toBe(true);
      expect(r.checksums.hashOut).toBe(r.checksums.hashIn);
      await checkMap(io, t.metadata, plan, r, (row) => Number(row.id) > 60 && Number(row.id) <= 120);
      results.push(r);
    }
    await commitCompaction(t, plan, results);
    expect(await tableRows(await loadTable(t.location))).toEqual(before);
  });

  it('merges v3 files with deletion vectors once their rows carry their lineage', async () => {
    let t = await flatTable(io, 3, 80, { formatVersion: 3 });
    // The first compaction writes the lineage columns (the appends' rows inherit theirs).
    let plan = await planAll(io, t.metadata);
    let results: GroupResult[] = [];
    for (const g of plan.groups) results.push(await rewriteGroup(io, t.metadata, plan, g));
    await commitCompaction(t, plan, results);
    t = await loadTable(t.location);
    t = (await deleteRows(t, DELETED(80))).table;
    const before = await tableRows(t);
    plan = await planAll(io, t.metadata);
    expect(plan.groups.every((g) => g.inputs.every((i) => i.deletes.some((d) => d.file.fileFormat.toUpperCase() === 'PUFFIN')))).toBe(true);
    results = [];
    for (const g of plan.groups) {
      const r = await rewriteGroup(io, t.metadata, plan, g);
      expect(r.outputs.every(isMerge)).toBe(true);
      expect(r.checksums.hashOut).toBe(r.checksums.hashIn);
      results.push(r);
    }
    await commitCompaction(t, plan, results);
    expect(await tableRows(await loadTable(t.location))).toEqual(before);
  });

  it('fails the rewrite on a damaged byte, nothing left behind', async () => {
    let t = await flatTable(io, 3, 60);
    t = (await deleteRows(t, DELETED(60))).table;
    const plan = await planAll(io, t.metadata);
    const tree = listTree(t.location);
    const err = await rewriteGroup(io, t.metadata, plan, plan.groups[0], { faults: { corruptCopiedChunk: 'alter-byte' } }).catch((e: unknown) => e);
    expect(err instanceof ValidationError || err instanceof InvalidFileError).toBe(true);
    expect(listTree(t.location)).toEqual(tree);
  });
});

describe('merge with deletes: what is still decoded', () => {
  it('equality deletes, a list or boolean column, or the property off', async () => {
    const cases: [string, () => Promise<Table>][] = [
      ['equality deletes', async () => deleteByEquality(await flatTable(io, 2, 60), [1], [{ id: 5n, category: 'a' }])],
      ['a list and a boolean column', async () => (await deleteRows(await chunkCopyTable(io, 2, 60, { properties: MERGE }), (r) => Number(r.id) % 5 === 0)).table],
      ['the property off', async () => (await deleteRows(await flatTable(io, 2, 60, { properties: { [MERGE_DELETES_PROPERTY]: 'false' } }), (r) => Number(r.id) % 5 === 0)).table],
    ];
    for (const [name, make] of cases) {
      const t = await make();
      const before = await tableRows(t);
      const plan = await planAll(io, t.metadata);
      const results: GroupResult[] = [];
      for (const g of plan.groups) results.push(await rewriteGroup(io, t.metadata, plan, g));
      const deletesIn = plan.groups.find((g) => g.inputs.some((i) => i.deletes.length > 0))!;
      expect(results.find((r) => r.groupId === deletesIn.id)!.outputs.some(isMerge), name).toBe(false);
      await commitCompaction(t, plan, results);
      expect(await tableRows(await loadTable(t.location)), name).toEqual(before);
    }
  });
});

describe('merge with deletes on S3 (moto)', () => {
  it('merges, proves and commits a group with position deletes read and written through S3', async () => {
    const location = `s3://${await freshBucket()}/warehouse/merge-deletes`;
    const s3 = fileIOFor(location, { s3Endpoint: testS3Endpoint() });
    let t = await flatTable(s3, 3, 60, { location });
    t = (await deleteRows(t, DELETED(60))).table;
    const before = await tableRows(t);
    const plan = await planAll(s3, t.metadata);
    const results: GroupResult[] = [];
    for (const g of plan.groups) results.push(await rewriteGroup(s3, t.metadata, plan, g));
    expect(results.every((r) => r.outputs.length === 1 && isMerge(r.outputs[0]))).toBe(true);
    await commitCompaction(t, plan, results);
    expect(await tableRows(await loadTable(location, { s3Endpoint: testS3Endpoint() }))).toEqual(before);
  });
});
