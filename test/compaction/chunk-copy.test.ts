/**
 * The column-chunk-copy path of rewriteGroup (lib/compaction/chunk-copy.ts): which inputs it
 * takes, the outputs it assembles (real files, read back by our reader), their metrics against
 * the decode path's, the map, the proof and its faults.
 */
import { describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import { readCompactionMap } from '../../lib/compaction/compaction-map.js';
import { COPY_MIN_ROW_GROUP_BYTES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import type { DataFileJson, GroupResult, Plan } from '../../lib/compaction/messages.js';
import { remapPosition } from '../../lib/compaction/remap.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { InvalidFileError, ValidationError } from '../../lib/errors.js';
import { fileIOFor } from '../../lib/io/index.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { stringifyJson } from '../../lib/iceberg/json.js';
import { rowToJson } from '../../lib/iceberg/row-json.js';
import { currentSchema, type TableMetadata } from '../../lib/iceberg/table-metadata.js';
import { readFooter } from '../../lib/parquet/footer.js';
import { readRows } from '../../lib/table/data-reader.js';
import { appendRows, deleteRows, updateSchema } from '../../lib/table/operations.js';
import { LAST_UPDATED_SEQUENCE_NUMBER_FIELD, ROW_ID_FIELD, scanRows } from '../../lib/table/scan.js';
import { planAll } from '../support/compaction.js';
import { CHUNK_COPY_SCHEMA, chunkCopyRow, chunkCopyTable } from '../support/chunk-copy-table.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { CountingIO } from '../support/counting-io.js';
import { listTree } from '../support/table-files.js';

const io = new LocalFileIO();

function withProperty(m: TableMetadata, key: string, value: string): TableMetadata {
  return { ...m, properties: { ...m.properties, [key]: value } };
}

/** Rewrites the plan's other groups, commits them all with `done`, and returns the table's rows after. */
async function commitAll(t: Table, plan: Plan, done: GroupResult): Promise<string[]> {
  const results = [done];
  for (const g of plan.groups) if (g.id !== done.groupId) results.push(await rewriteGroup(io, t.metadata, plan, g));
  await commitCompaction(t, plan, results);
  return tableRows(await loadTable(t.location));
}

const isCopy = (f: DataFileJson): boolean => f.filePath.includes('-copy-');

async function tableRows(t: Table): Promise<string[]> {
  const schema = currentSchema(t.metadata);
  const out: string[] = [];
  for await (const r of scanRows(t.io, t.metadata)) out.push(stringifyJson(rowToJson(r, schema)));
  return out.sort();
}

/** Every row of every input (none has deletes here) is where the map says, by id. */
async function checkMap(m: TableMetadata, plan: Plan, result: GroupResult): Promise<void> {
  const map = await readCompactionMap(io, result.compactionMap!);
  const schema = currentSchema(m);
  const idAt = new Map<string, bigint>();
  for (const o of result.outputs) {
    for await (const b of readRows(io, { filePath: o.filePath, fileFormat: 'PARQUET' }, schema)) {
      b.rows.forEach((r, i) => idAt.set(`${o.filePath}#${b.firstPos + i}`, r.id as bigint));
    }
  }
  const group = plan.groups.find((g) => g.id === result.groupId)!;
  for (const input of group.inputs) {
    for await (const b of readRows(io, { filePath: input.file.filePath, fileFormat: 'PARQUET' }, schema)) {
      b.rows.forEach((r, i) => {
        const to = remapPosition(map, input.file.filePath, b.firstPos + i);
        expect(to).toBeDefined();
        expect(idAt.get(`${to!.targetFile}#${to!.pos}`)).toBe(r.id);
      });
    }
  }
}

async function rowGroups(f: DataFileJson): Promise<number> {
  return (await readFooter(io.newInputFile(f.filePath))).footer.rowGroups.length;
}

describe('chunk copy: a group of inputs without deletes', () => {
  it('copies every row group into one output per partition, with the same rows, map and proof', async () => {
    const t = await chunkCopyTable(io, 4, 40);
    const before = await tableRows(t);
    const plan = await planAll(io, t.metadata);
    const results: GroupResult[] = [];
    for (const group of plan.groups) {
      const r = await rewriteGroup(io, t.metadata, plan, group);
      expect(r.outputs).toHaveLength(1);
      expect(isCopy(r.outputs[0])).toBe(true);
      // One row group per input, kept as it was.
      expect(await rowGroups(r.outputs[0])).toBe(group.inputs.length);
      expect(Number(r.outputs[0].recordCount)).toBe(group.inputs.reduce((n, i) => n + Number(i.file.recordCount), 0));
      expect(r.checksums.rowsOut).toBe(r.checksums.rowsIn);
      expect(r.checksums.hashOut).toBe(r.checksums.hashIn);
      await checkMap(t.metadata, plan, r);
      results.push(r);
    }
    const done = await commitCompaction(t, plan, results);
    expect(done.committedGroups).toHaveLength(plan.groups.length);
    expect(await tableRows(await loadTable(t.location))).toEqual(before);
  });

  for (const [name, properties] of [
    ['default truncate(16)', {}],
    ['full, counts and none by column', {
      'write.metadata.metrics.default': 'full',
      'write.metadata.metrics.column.category': 'counts',
      'write.metadata.metrics.column.flag': 'none',
      'write.metadata.metrics.column.note': 'truncate(4)',
    }],
  ] as const) it(`gives the metrics the decode path gives (${name}): value, null counts and bounds, no NaN counts`, async () => {
    const t = await chunkCopyTable(io, 3, 60, { properties });
    const plan = await planAll(io, t.metadata);
    const group = plan.groups[0];
    const copied = await rewriteGroup(io, t.metadata, plan, group);
    const decoded = await rewriteGroup(io, withProperty(t.metadata, COPY_MIN_ROW_GROUP_BYTES_PROPERTY, String(2 ** 40)), plan, group);
    expect(isCopy(copied.outputs[0])).toBe(true);
    expect(isCopy(decoded.outputs[0])).toBe(false);
    const [c, d] = [copied.outputs[0], decoded.outputs[0]];
    expect(c.recordCount).toBe(d.recordCount);
    expect(c.valueCounts).toEqual(d.valueCounts);
    expect(c.nullValueCounts).toEqual(d.nullValueCounts);
    expect(c.lowerBounds).toEqual(d.lowerBounds);
    expect(c.upperBounds).toEqual(d.upperBounds);
    expect(Object.keys(c.columnSizes ?? {}).sort()).toEqual(Object.keys(d.columnSizes ?? {}).sort());
    expect(c.nanValueCounts ?? {}).toEqual({});
    expect(Object.keys(d.nanValueCounts ?? {}).length).toBeGreaterThan(0);
  });

  it('rolls outputs at the target size between row groups', async () => {
    const t = await chunkCopyTable(io, 6, 30);
    const plan = await planAll(io, t.metadata);
    const group = plan.groups[0];
    // A target below one row group: each output holds one.
    const small = { ...plan, policy: { ...plan.policy, targetFileSizeBytes: 1 } };
    const r = await rewriteGroup(io, t.metadata, small, group);
    expect(r.outputs.length).toBe(group.inputs.length);
    expect(r.outputs.every(isCopy)).toBe(true);
    await checkMap(t.metadata, small, r);
  });
});

describe('chunk copy: what goes the decode path', () => {
  it('a mixed group: inputs with deletes are decoded, the others copied', async () => {
    const t0 = await chunkCopyTable(io, 4, 30);
    // Ids 5 and 7: partition a of the first append only, so the delete file names one data file.
    const t = (await deleteRows(t0, (r) => r.id === 5n || r.id === 7n)).table;
    const before = await tableRows(t);
    const plan = await planAll(io, t.metadata);
    const group = plan.groups.find((g) => g.inputs.some((i) => i.deletes.length > 0) && g.inputs.some((i) => i.deletes.length === 0))!;
    expect(group).toBeDefined();
    const r = await rewriteGroup(io, t.metadata, plan, group);
    const copies = r.outputs.filter(isCopy);
    expect(copies).toHaveLength(1);
    expect(r.outputs.length).toBe(2);
    expect(await rowGroups(copies[0])).toBe(group.inputs.filter((i) => i.deletes.length === 0).length);
    expect(await commitAll(t, plan, r)).toEqual(before);
  });

  it('inputs written before a schema change are decoded; those written after are copied', async () => {
    let t = await chunkCopyTable(io, 2, 30);
    t = await updateSchema(t, [...CHUNK_COPY_SCHEMA.fields, { id: 13, name: 'extra', required: false, type: { type: 'int' } }]);
    t = await appendRows(t, [100, 101, 102, 104].map((i) => ({ ...chunkCopyRow(i, 'a'), extra: i })));
    t = await appendRows(t, [105, 106, 107].map((i) => ({ ...chunkCopyRow(i, 'a'), extra: null })));
    const before = await tableRows(t);
    const plan = await planAll(io, t.metadata);
    const group = plan.groups.find((g) => g.inputs.length === 4)!;
    const r = await rewriteGroup(io, t.metadata, plan, group);
    const copies = r.outputs.filter(isCopy);
    expect(copies).toHaveLength(1);
    expect(Number(copies[0].recordCount)).toBe(7);
    expect(r.outputs.filter((o) => !isCopy(o)).map((o) => Number(o.recordCount))).toEqual([group.inputs.reduce((n, i) => n + Number(i.file.recordCount), 0) - 7]);
    expect(await commitAll(t, plan, r)).toEqual(before);
  });

  it('honours the row-group floor: inputs with a smaller row group are decoded', async () => {
    let t = await chunkCopyTable(io, 1, 10);
    t = await appendRows(t, Array.from({ length: 400 }, (_, i) => chunkCopyRow(1000 + i * 3, 'a')));
    t = await appendRows(t, Array.from({ length: 5 }, (_, i) => chunkCopyRow(3000 + i * 3, 'a')));
    const plan = await planAll(io, t.metadata);
    const group = plan.groups.find((g) => g.inputs.length === 3)!;
    const sizes = group.inputs.map((i) => Number(i.file.fileSizeInBytes)).sort((a, b) => a - b);
    // Between the middle file and the largest: only the 400-row file is copied.
    const floor = String(sizes[1] + 1);
    const m = withProperty(t.metadata, COPY_MIN_ROW_GROUP_BYTES_PROPERTY, floor);
    const r = await rewriteGroup(io, m, plan, group);
    const copies = r.outputs.filter(isCopy);
    expect(copies.map((o) => Number(o.recordCount))).toEqual([400]);
    expect(r.outputs.filter((o) => !isCopy(o)).map((o) => Number(o.recordCount))).toEqual([group.inputs.reduce((n, i) => n + Number(i.file.recordCount), 0) - 400]);
    // The default floor (1 MiB) copies none of these small files.
    const { [COPY_MIN_ROW_GROUP_BYTES_PROPERTY]: _floor, ...rest } = t.metadata.properties;
    const byDefault = await rewriteGroup(io, { ...t.metadata, properties: rest }, plan, group);
    expect(byDefault.outputs.some(isCopy)).toBe(false);
  });

  it('the sort strategy never copies', async () => {
    const t = await chunkCopyTable(io, 2, 20);
    const plan = await planAll(io, t.metadata, { strategy: 'sort', sortOrder: 'id' });
    const r = await rewriteGroup(io, t.metadata, plan, plan.groups[0]);
    expect(r.outputs.some(isCopy)).toBe(false);
  });
});

describe('chunk copy: v3 row lineage', () => {
  async function lineageRows(t: Table): Promise<string[]> {
    const schema = { type: 'struct' as const, fields: [...currentSchema(t.metadata).fields, ROW_ID_FIELD, LAST_UPDATED_SEQUENCE_NUMBER_FIELD] };
    const out: string[] = [];
    for await (const r of scanRows(t.io, t.metadata, { rowLineage: true })) out.push(stringifyJson(rowToJson(r, schema)));
    return out.sort();
  }

  it('copies only files whose rows carry their lineage; row ids and sequence numbers survive', async () => {
    const t0 = await chunkCopyTable(io, 3, 20, { formatVersion: 3 });
    const before = await lineageRows(t0);
    // Files as appended inherit their lineage: decoded, which writes it.
    const plan = await planAll(io, t0.metadata);
    const first = await rewriteGroup(io, t0.metadata, plan, plan.groups[0]);
    expect(first.outputs.some(isCopy)).toBe(false);
    expect(await commitAll(t0, plan, first)).toEqual(await tableRows(t0));
    const t1 = await loadTable(t0.location);
    expect(await lineageRows(t1)).toEqual(before);
    // The outputs carry it: a second compaction copies them.
    const t2 = await appendRows(t1, [chunkCopyRow(500, 'a')]);
    const plan2 = await planAll(io, t2.metadata);
    const group = plan2.groups.find((g) => g.inputs.length === 2)!;
    const second = await rewriteGroup(io, t2.metadata, plan2, group);
    expect(second.outputs.filter(isCopy).map((o) => Number(o.recordCount))).toEqual([Number(first.outputs[0].recordCount)]);
    const beforeSecond = await lineageRows(t2);
    await commitAll(t2, plan2, second);
    expect(await lineageRows(await loadTable(t2.location))).toEqual(beforeSecond);
  });
});

describe('chunk copy on S3 (moto)', () => {
  it('copies, proves and commits a group read and written through S3', async () => {
    const location = `s3://${await freshBucket()}/warehouse/copy`;
    const s3 = fileIOFor(location, { s3Endpoint: testS3Endpoint() });
    const t = await chunkCopyTable(s3, 3, 40, { location });
    const before = await tableRows(t);
    const plan = await planAll(s3, t.metadata);
    const results: GroupResult[] = [];
    for (const g of plan.groups) results.push(await rewriteGroup(s3, t.metadata, plan, g));
    expect(results.every((r) => r.outputs.length === 1 && isCopy(r.outputs[0]))).toBe(true);
    await commitCompaction(t, plan, results);
    expect(await tableRows(await loadTable(location, { s3Endpoint: testS3Endpoint() }))).toEqual(before);
  });
});

describe('chunk copy on S3 (moto): each byte of an input fetched once', () => {
  it('an input left to the decoder after its footer was read gets the bytes of that read, not a second fetch', async () => {
    const location = `s3://${await freshBucket()}/warehouse/reuse`;
    const s3 = fileIOFor(location, { s3Endpoint: testS3Endpoint() });
    let t = await chunkCopyTable(s3, 1, 30, { location });
    // A file larger than the 64 KiB tail read, then a schema change: both old files are candidates
    // whose footers disagree with the output schema, so they go to the decoder.
    t = await appendRows(t, Array.from({ length: 4000 }, (_, i) => chunkCopyRow(1000 + i * 3, 'a')));
    t = await updateSchema(t, [...CHUNK_COPY_SCHEMA.fields, { id: 13, name: 'extra', required: false, type: { type: 'int' } }]);
    t = await appendRows(t, [100, 101, 102].map((i) => ({ ...chunkCopyRow(i, 'a'), extra: i })));
    const before = await tableRows(t);
    const plan = await planAll(s3, t.metadata);
    const group = plan.groups.find((g) => g.inputs.length === 3)!;
    const inputs = new Map(group.inputs.map((i) => [i.file.filePath, Number(i.file.fileSizeInBytes)]));
    const counting = new CountingIO(s3, (p) => inputs.has(p));
    const r = await rewriteGroup(counting, t.metadata, plan, group);
    expect(r.outputs.filter(isCopy).map((o) => Number(o.recordCount))).toEqual([3]);
    const decoded = group.inputs.filter((i) => Number(i.file.recordCount) !== 3).map((i) => i.file.filePath);
    expect(decoded.length).toBe(2);
    expect(Math.max(...decoded.map((p) => inputs.get(p)!))).toBeGreaterThan(64 * 1024);
    for (const path of decoded) {
      const size = inputs.get(path)!;
      const reads = counting.readsOf(path).sort((a, b) => a[0] - b[0]);
      // No byte twice: the plan's tail read, then (a file past 64 KiB) the rest before it, nothing else.
      reads.slice(1).forEach(([s], k) => expect(s).toBe(reads[k][1]));
      expect(reads.at(-1)![1]).toBe(size);
      expect(reads.length).toBe(size <= 64 * 1024 ? 1 : 2);
    }
    const results = [r];
    for (const g of plan.groups) if (g.id !== group.id) results.push(await rewriteGroup(s3, t.metadata, plan, g));
    await commitCompaction(t, plan, results);
    expect(await tableRows(await loadTable(location, { s3Endpoint: testS3Endpoint() }))).toEqual(before);
  });
});

describe('chunk copy: the proof catches damaged bytes', () => {
  it('an altered byte fails the proof: ValidationError, nothing left behind', async () => {
    const t = await chunkCopyTable(io, 3, 30);
    const plan = await planAll(io, t.metadata);
    const tree = listTree(t.location);
    const err = await rewriteGroup(io, t.metadata, plan, plan.groups[0], { faults: { corruptCopiedChunk: 'alter-byte' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(/the rewrite changed the live rows: inputs 60 rows \(hash [0-9a-f]{16}\), outputs 60 rows \(hash [0-9a-f]{16}\)/);
    expect(listTree(t.location)).toEqual(tree);
  });

  it('a dropped byte fails the rewrite, nothing left behind', async () => {
    const t = await chunkCopyTable(io, 3, 30);
    const plan = await planAll(io, t.metadata);
    const tree = listTree(t.location);
    const err = await rewriteGroup(io, t.metadata, plan, plan.groups[0], { faults: { corruptCopiedChunk: 'drop-byte' } }).catch((e: unknown) => e);
    expect(err instanceof ValidationError || err instanceof InvalidFileError).toBe(true);
    expect(listTree(t.location)).toEqual(tree);
  });
});
