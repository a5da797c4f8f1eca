/**
 * The row-group-merge path of rewriteGroup (lib/compaction/chunk-copy.ts with
 * lib/parquet/row-group-merge.ts): inputs between the merge and the copy floors are merged at the
 * page level. Their rows, map, proof and metrics against the decode path's; the floors; the
 * proof's faults; S3.
 */
import { describe, expect, it } from 'vitest';
import { loadTable } from '../../lib/catalog/table.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import { ChunkCopy, COPY_MIN_ROW_GROUP_BYTES_PROPERTY, MERGE_MIN_ROW_GROUP_BYTES_PROPERTY, READ_AHEAD_BYTES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import type { DataFileJson, GroupResult } from '../../lib/compaction/messages.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { InvalidFileError, ValidationError } from '../../lib/errors.js';
import { fileIOFor } from '../../lib/io/index.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { currentSchema, type TableMetadata } from '../../lib/iceberg/table-metadata.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { OUTPUT_PART_BYTES, OUTPUT_PARTS_IN_FLIGHT } from '../../lib/parquet/chunk-copy.js';
import { readFooter } from '../../lib/parquet/footer.js';
import { appendRows } from '../../lib/table/operations.js';
import { checkMap, chunkCopyRow, chunkCopyTable, expectDecodedMetrics, tableRows, withProperties } from '../support/chunk-copy-table.js';
import { planAll } from '../support/compaction.js';
import { CountingIO } from '../support/counting-io.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { listTree } from '../support/table-files.js';

const io = new LocalFileIO();
/** Every input merged: no row group reaches the copy floor, every one the merge floor. */
const MERGE = { [COPY_MIN_ROW_GROUP_BYTES_PROPERTY]: String(2 ** 40), [MERGE_MIN_ROW_GROUP_BYTES_PROPERTY]: '1' };

const isMerge = (f: DataFileJson): boolean => f.filePath.includes('-merge-');


describe('row-group merge: a group of small inputs without deletes', () => {
  for (const [name, properties] of [
    ['pages coalesced', {}],
    ['pages kept (page size 64 bytes), dictionaries re-indexed', { 'write.parquet.page-size-bytes': '64' }],
    ['dictionaries too large to merge: PLAIN', { 'write.parquet.dict-size-bytes': '16' }],
  ] as const) {
    it(`${name}: one output per partition, several row groups in one, the same rows, map and proof`, async () => {
      const t = await chunkCopyTable(io, 5, 60, { properties: { ...MERGE, ...properties } });
      const before = await tableRows(t);
      const plan = await planAll(io, t.metadata);
      const results: GroupResult[] = [];
      for (const group of plan.groups) {
        const r = await rewriteGroup(io, t.metadata, plan, group);
        expect(r.outputs).toHaveLength(1);
        expect(isMerge(r.outputs[0])).toBe(true);
        expect((await readFooter(io.newInputFile(r.outputs[0].filePath))).footer.rowGroups).toHaveLength(1);
        expect(Number(r.outputs[0].recordCount)).toBe(group.inputs.reduce((n, i) => n + Number(i.file.recordCount), 0));
        expect(r.checksums.rowsOut).toBe(r.checksums.rowsIn);
        expect(r.checksums.hashOut).toBe(r.checksums.hashIn);
        await checkMap(io, t.metadata, plan, r);
        results.push(r);
      }
      await commitCompaction(t, plan, results);
      expect(await tableRows(await loadTable(t.location))).toEqual(before);
    });
  }

  it('gives the metrics the decode path gives: value and null counts, bounds, no NaN counts', async () => {
    const t = await chunkCopyTable(io, 3, 60, { properties: MERGE });
    const plan = await planAll(io, t.metadata);
    const group = plan.groups[0];
    const merged = await rewriteGroup(io, t.metadata, plan, group);
    const decoded = await rewriteGroup(io, withProperties(t.metadata, { [MERGE_MIN_ROW_GROUP_BYTES_PROPERTY]: String(2 ** 40) }), plan, group);
    expect(isMerge(merged.outputs[0])).toBe(true);
    expect(isMerge(decoded.outputs[0])).toBe(false);
    expectDecodedMetrics(merged.outputs[0], decoded.outputs[0]);
    expect(merged.outputs[0].nanValueCounts ?? {}).toEqual({});
  });

  it('honours both floors: over the copy floor copied, under the merge floor decoded with the rest of its partition, else merged', async () => {
    let t = await chunkCopyTable(io, 2, 40);
    t = await appendRows(t, Array.from({ length: 3 }, (_, i) => chunkCopyRow(500 + i * 3, 'a')));
    t = await appendRows(t, Array.from({ length: 1500 }, (_, i) => chunkCopyRow(1000 + i * 3, 'a')));
    const before = await tableRows(t);
    const plan = await planAll(io, t.metadata);
    const group = plan.groups.find((g) => g.inputs.length === 4)!;
    const sizes = new Map<number, number>();
    for (const input of group.inputs) {
      const { footer } = await readFooter(io.newInputFile(input.file.filePath));
      sizes.set(Number(input.file.recordCount), Math.min(...footer.rowGroups.map((rg) => rg.columns.reduce((n, c) => n + c.totalCompressedSize, 0))));
    }
    // Floors between the 3-row file and the appends' (27 rows in this partition), and between those and the 1,500-row one.
    const [tiny, mid, big] = [...sizes.keys()].sort((a, b) => a - b);
    expect([tiny, big]).toEqual([3, 1500]);
    const mergeFloor = Math.ceil((sizes.get(tiny)! + sizes.get(mid)!) / 2);
    const copyFloor = Math.ceil((sizes.get(mid)! + sizes.get(big)!) / 2);
    const kinds = async (metadata: TableMetadata): Promise<{ result: GroupResult; rows: Record<string, number> }> => {
      const result = await rewriteGroup(io, metadata, plan, group);
      const rows = { decode: 0, merge: 0, copy: 0 };
      for (const o of result.outputs) rows[isMerge(o) ? 'merge' : o.filePath.includes('-copy-') ? 'copy' : 'decode'] += Number(o.recordCount);
      expect(result.checksums.hashOut).toBe(result.checksums.hashIn);
      return { result, rows };
    };
    // The 3-row file is decoded, and so the rest of its partition but the copy: one output, not two.
    const m = withProperties(t.metadata, { [MERGE_MIN_ROW_GROUP_BYTES_PROPERTY]: String(mergeFloor), [COPY_MIN_ROW_GROUP_BYTES_PROPERTY]: String(copyFloor) });
    expect((await kinds(m)).rows).toEqual({ decode: 3 + 2 * mid, merge: 0, copy: 1500 });
    // With the merge floor under it, the partition is merged.
    const all = withProperties(m, { [MERGE_MIN_ROW_GROUP_BYTES_PROPERTY]: '0' });
    const { result: r, rows } = await kinds(all);
    expect(rows).toEqual({ decode: 0, merge: 3 + 2 * mid, copy: 1500 });
    const results = [r];
    for (const g of plan.groups) if (g.id !== group.id) results.push(await rewriteGroup(io, all, plan, g));
    await commitCompaction(t, plan, results);
    expect(await tableRows(await loadTable(t.location))).toEqual(before);
  });
});

describe('row-group merge: how many inputs', () => {
  it('decodes a partition with more small inputs than the cap (their footers would be held until the merge writes)', async () => {
    const t = await chunkCopyTable(io, 5, 40, { properties: MERGE });
    const plan = await planAll(io, t.metadata);
    const group = plan.groups.find((g) => g.inputs.length === 5)!;
    const paths = new Set(group.inputs.map((i) => i.file.filePath));
    const tasks = (await planFiles(io, t.metadata)).tasks.filter((task) => paths.has(task.dataFile.filePath));
    for (const [cap, merged] of [[5, 5], [4, 0]] as const) {
      const copy = await ChunkCopy.plan(io, t.metadata, plan, group, tasks, { specId: t.metadata.defaultSpecId, writeSchema: currentSchema(t.metadata), maxMergeInputs: cap });
      expect([copy.mergedInputs, copy.decode.length]).toEqual([merged, 5 - merged]);
    }
  });
});

describe('row-group merge: the proof catches damaged bytes', () => {
  for (const [name, properties] of [['coalesced', {}], ['pages kept', { 'write.parquet.page-size-bytes': '64' }]] as const) {
    it(`an altered byte fails the rewrite (${name}), nothing left behind`, async () => {
      const t = await chunkCopyTable(io, 3, 30, { properties: { ...MERGE, ...properties } });
      const plan = await planAll(io, t.metadata);
      const tree = listTree(t.location);
      const err = await rewriteGroup(io, t.metadata, plan, plan.groups[0], { faults: { corruptCopiedChunk: 'alter-byte' } }).catch((e: unknown) => e);
      expect(err instanceof ValidationError || err instanceof InvalidFileError).toBe(true);
      expect(listTree(t.location)).toEqual(tree);
    });
  }
});

describe('row-group merge: outputs', () => {
  it('copied and merged outputs are written in OUTPUT_PART_BYTES multipart parts, OUTPUT_PARTS_IN_FLIGHT at once', async () => {
    const kinds = new Set<string>();
    // Merged (the floors of MERGE), then copied (a copy floor of one byte).
    for (const properties of [MERGE, { [COPY_MIN_ROW_GROUP_BYTES_PROPERTY]: '1' }]) {
      const counted = new CountingIO(new LocalFileIO());
      const t = await chunkCopyTable(counted, 3, 40, { properties });
      const plan = await planAll(counted, t.metadata);
      counted.writes.length = 0;
      const results: GroupResult[] = [];
      for (const g of plan.groups) results.push(await rewriteGroup(counted, t.metadata, plan, g));
      const outputs = new Set(results.flatMap((r) => r.outputs.map((o) => o.filePath)));
      for (const o of outputs) kinds.add(/-(copy|merge)-/.exec(o)?.[1] ?? 'decoded');
      const written = counted.writes.filter((w) => outputs.has(w.path));
      expect(written.map((w) => w.path).sort()).toEqual([...outputs].sort());
      expect(written.every((w) => w.options?.partBytes === OUTPUT_PART_BYTES && w.options.partsInFlight === OUTPUT_PARTS_IN_FLIGHT)).toBe(true);
    }
    expect([...kinds].sort()).toEqual(['copy', 'merge']);
  });
});

describe('row-group merge on S3 (moto)', () => {
  it('merges, proves and commits a group read and written through S3', async () => {
    const location = `s3://${await freshBucket()}/warehouse/merge`;
    const s3 = fileIOFor(location, { s3Endpoint: testS3Endpoint() });
    const t = await chunkCopyTable(s3, 3, 40, { location, properties: MERGE });
    const before = await tableRows(t);
    const plan = await planAll(s3, t.metadata);
    const results: GroupResult[] = [];
    for (const g of plan.groups) results.push(await rewriteGroup(s3, t.metadata, plan, g));
    expect(results.every((r) => r.outputs.length === 1 && isMerge(r.outputs[0]))).toBe(true);
    await commitCompaction(t, plan, results);
    expect(await tableRows(await loadTable(location, { s3Endpoint: testS3Endpoint() }))).toEqual(before);
  });

  it('fetches each small input once: read whole as it is merged (merge-stream.ts)', async () => {
    const location = `s3://${await freshBucket()}/warehouse/merge-once`;
    const s3 = fileIOFor(location, { s3Endpoint: testS3Endpoint() });
    const t = await chunkCopyTable(s3, 4, 40, { location, properties: MERGE });
    const plan = await planAll(s3, t.metadata);
    const group = plan.groups[0];
    const inputs = new Set(group.inputs.map((i) => i.file.filePath));
    const counting = new CountingIO(s3, (p) => inputs.has(p));
    const r = await rewriteGroup(counting, t.metadata, plan, group);
    expect(r.outputs.every(isMerge)).toBe(true);
    for (const path of inputs) expect(counting.readsOf(path)).toHaveLength(1);
    // With no budget to keep them, each is read again when merged.
    const again = new CountingIO(s3, (p) => inputs.has(p));
    await rewriteGroup(again, withProperties(t.metadata, { [READ_AHEAD_BYTES_PROPERTY]: '1' }), plan, group);
    for (const path of inputs) expect(again.readsOf(path)).toHaveLength(2);
  });
});
