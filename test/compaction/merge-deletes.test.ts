/**
 * Inputs with position deletes or a deletion vector merged with their deleted rows dropped from
 * the pages (lib/compaction/chunk-copy.ts, lib/parquet/row-group-merge.ts): the live rows, the
 * compaction map (deleted positions map nowhere), the proof, the metrics the decode path gives
 * (bounds recomputed where a deleted row held one), whole files deleted, v3 deletion vectors, S3;
 * and what still goes to the decoder: repeated or boolean columns, the property (equality deletes:
 * merge-equality-deletes.test.ts).
 */
import { execFileSync } from 'node:child_process';
import { truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { MERGE_DELETES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import { DECODE_REASONS_SHOWN, type DataFileJson, type GroupResult } from '../../lib/compaction/messages.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { InvalidFileError, ValidationError } from '../../lib/errors.js';
import { fileIOFor } from '../../lib/io/index.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { commitChanges, createNewTable, deleteByEquality, deleteRows } from '../../lib/table/operations.js';
import { toDataFile } from '../../lib/table/data-writer.js';
import { readFooter, splitOffsets } from '../../lib/parquet/footer.js';
import { metricsFromStatistics } from '../../lib/parquet/statistics-metrics.js';
import { metricsConfigFromProperties } from '../../lib/iceberg/metrics-config.js';
import { currentSchema, specById } from '../../lib/iceberg/table-metadata.js';
import type { StructType } from '../../lib/iceberg/types.js';
import { REPO_ROOT, tempDir } from '../support/fixtures.js';
import { PY_VENV } from '../support/pyiceberg.js';
import { checkMap, chunkCopyTable, expectDecodedMetrics, tableRows, withProperties } from '../support/chunk-copy-table.js';
import { DELETED, flatTable, MERGE } from '../support/flat-table.js';
import { planAll } from '../support/compaction.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { listTree } from '../support/table-files.js';

const io = new LocalFileIO();

const isMerge = (f: DataFileJson): boolean => f.filePath.includes('-merge-');


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
      expect(r.inputPaths).toEqual({ copied: 0, merged: group.inputs.length, decoded: 0 });
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
      expectDecodedMetrics(merged.outputs[0], decoded.outputs[0]);
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

  it('fails naming an input shorter than its manifest says, nothing left behind', async () => {
    let t = await flatTable(io, 3, 60);
    t = (await deleteRows(t, DELETED(60))).table;
    const plan = await planAll(io, t.metadata);
    const input = plan.groups[0].inputs[1].file;
    truncateSync(input.filePath, Number(input.fileSizeInBytes) - 10);
    const tree = listTree(t.location);
    const err = await rewriteGroup(io, t.metadata, plan, plan.groups[0]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidFileError);
    expect((err as InvalidFileError).path).toBe(input.filePath);
    expect((err as Error).message).toMatch(/truncated or shorter than expected/);
    expect(listTree(t.location)).toEqual(tree);
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

/** Adds a Parquet file written elsewhere to an unpartitioned table as it is, its metrics from its footer. */
async function addParquetFile(t: Table, path: string): Promise<Table> {
  const read = await readFooter(io.newInputFile(path));
  const schema = currentSchema(t.metadata);
  const metrics = metricsFromStatistics(read.footer, read.footerBytes, schema, metricsConfigFromProperties(t.metadata.properties, schema, []));
  const file = toDataFile(
    { path, fileSizeInBytes: read.fileLength, recordCount: read.footer.numRows, splitOffsets: splitOffsets(read.footer), metrics, rowGroupCount: read.footer.rowGroups.length },
    specById(t.metadata, t.metadata.defaultSpecId), {},
  );
  return commitChanges(t, { addedDataFiles: [file] });
}

describe('merge with deletes: what is still decoded', () => {
  it('a partition whose input with deletes would share a row group with one whose pages rows cannot be dropped from (DELTA encodings)', async () => {
    const schema: StructType = {
      type: 'struct',
      fields: [{ id: 1, name: 'id', required: true, type: { type: 'long' } }, { id: 2, name: 'v', required: false, type: { type: 'string' } }],
    };
    let t = await createNewTable(io, join(tempDir(), 'delta'), { formatVersion: 2, schema, properties: MERGE });
    // One writer's two files (one bucket of the merge): ids 0-39 DELTA-encoded, 40-79 with dictionaries.
    const dir = tempDir('packice-delta-');
    execFileSync(join(PY_VENV, 'bin', 'python'), [join(REPO_ROOT, 'interop', 'python', 'parquet_variants.py'), 'write', dir, 'delta', '2', '40']);
    for (const f of ['delta-0.parquet', 'delta-1.parquet']) t = await addParquetFile(t, join(dir, f));
    // Without deletes the two merge (pyarrow's schema is the output's but for the root's repetition).
    const clean = await planAll(io, t.metadata);
    const merged = await rewriteGroup(io, t.metadata, clean, clean.groups[0]);
    expect(merged.outputs.every(isMerge)).toBe(true);
    expect([merged.checksums.rowsOut, merged.checksums.hashOut]).toEqual([merged.checksums.rowsIn, merged.checksums.hashIn]);
    // Rows deleted from the second only: the first alone would merge (no rows to drop).
    t = (await deleteRows(t, (r) => Number(r.id) >= 40 && Number(r.id) % 10 === 3)).table;
    const before = await tableRows(t);
    expect(before).toHaveLength(76);
    const plan = await planAll(io, t.metadata);
    const r = await rewriteGroup(io, t.metadata, plan, plan.groups[0]);
    expect(r.outputs.some(isMerge)).toBe(false);
    await commitCompaction(t, plan, [r]);
    expect(await tableRows(await loadTable(t.location))).toEqual(before);
  });

  it('a list or boolean column, or the property off (equality deletes too)', async () => {
    // With why the inputs with deletes are decoded; the others go with them (one output per partition).
    const cases: [string, () => Promise<Table>, string][] = [
      ['equality deletes, the property off', async () => deleteByEquality(await flatTable(io, 2, 60, { properties: { [MERGE_DELETES_PROPERTY]: 'false' } }), [1], [{ id: 5n, category: 'a' }]), 'deletes apply to it'],
      ['a list and a boolean column', async () => (await deleteRows(await chunkCopyTable(io, 2, 60, { properties: MERGE }), (r) => Number(r.id) % 5 === 0)).table, 'it has a repeated column'],
      ['a list and a boolean column, one row deleted', async () => (await deleteRows(await chunkCopyTable(io, 2, 60, { properties: MERGE }), (r) => Number(r.id) === 7)).table, 'it has a repeated column'],
      ['the property off', async () => (await deleteRows(await flatTable(io, 2, 60, { properties: { [MERGE_DELETES_PROPERTY]: 'false' } }), (r) => Number(r.id) % 5 === 0)).table, 'deletes apply to it'],
    ];
    for (const [name, make, reason] of cases) {
      const t = await make();
      const before = await tableRows(t);
      const plan = await planAll(io, t.metadata);
      const results: GroupResult[] = [];
      for (const g of plan.groups) results.push(await rewriteGroup(io, t.metadata, plan, g));
      const deletesIn = plan.groups.find((g) => g.inputs.some((i) => i.deletes.length > 0))!;
      const r = results.find((x) => x.groupId === deletesIn.id)!;
      expect(r.outputs.some(isMerge), name).toBe(false);
      expect(r.inputPaths, name).toMatchObject({ copied: 0, merged: 0, decoded: deletesIn.inputs.length });
      const withDeletes = new Set(deletesIn.inputs.filter((i) => i.deletes.length > 0).map((i) => i.file.filePath));
      const shown = deletesIn.inputs.slice(0, DECODE_REASONS_SHOWN).map((i) => ({
        file: i.file.filePath,
        reason: withDeletes.has(i.file.filePath) ? reason : 'another input of its partition is decoded, and one output takes them all',
      }));
      expect(r.inputPaths?.decodedBecause, name).toEqual(shown);
      expect(shown.some((x) => x.reason === reason), name).toBe(true);
      if (withDeletes.size === 1) expect(shown.filter((x) => x.reason !== reason), name).toHaveLength(Math.min(DECODE_REASONS_SHOWN, deletesIn.inputs.length) - 1);
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
