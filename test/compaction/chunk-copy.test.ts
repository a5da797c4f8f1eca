/**
 * The column-chunk-copy path of rewriteGroup (lib/compaction/chunk-copy.ts): which inputs it
 * takes, the outputs it assembles (real files, read back by our reader), their metrics against
 * the decode path's, the map, the proof and its faults.
 */
import { describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import { COPY_MIN_ROW_GROUP_BYTES_PROPERTY, MERGE_MIN_ROW_GROUP_BYTES_PROPERTY, READ_AHEAD_BYTES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import type { DataFileJson, GroupResult, Plan } from '../../lib/compaction/messages.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { InvalidFileError, IoError, ValidationError } from '../../lib/errors.js';
import type { FileIO } from '../../lib/io/file-io.js';
import { ForwardingFileIO } from '../../lib/io/forwarding.js';
import { fileIOFor } from '../../lib/io/index.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { stringifyJson } from '../../lib/iceberg/json.js';
import { rowToJson } from '../../lib/iceberg/row-json.js';
import { currentSchema, type TableMetadata } from '../../lib/iceberg/table-metadata.js';
import { readFooter } from '../../lib/parquet/footer.js';
import { PROOF_REQUEST_BYTES, rereadBatches, rereadChunks, rereadHeldBytes, type ChunkSpan, type RereadGroup } from '../../lib/parquet/chunk-copy.js';
import type { InputFile } from '../../lib/io/file-io.js';
import { appendRows, deleteRows, updateSchema } from '../../lib/table/operations.js';
import { LAST_UPDATED_SEQUENCE_NUMBER_FIELD, ROW_ID_FIELD, scanRows } from '../../lib/table/scan.js';
import { planAll } from '../support/compaction.js';
import { checkMap as checkMapIn, CHUNK_COPY_SCHEMA, chunkCopyRow, chunkCopyTable, expectDecodedMetrics, tableRows } from '../support/chunk-copy-table.js';

const checkMap = (m: TableMetadata, plan: Plan, result: GroupResult): Promise<void> => checkMapIn(io, m, plan, result);
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
    const decoded = await rewriteGroup(io, withProperty(withProperty(t.metadata, COPY_MIN_ROW_GROUP_BYTES_PROPERTY, String(2 ** 40)), MERGE_MIN_ROW_GROUP_BYTES_PROPERTY, String(2 ** 40)), plan, group);
    expect(isCopy(copied.outputs[0])).toBe(true);
    expect(isCopy(decoded.outputs[0])).toBe(false);
    const [c, d] = [copied.outputs[0], decoded.outputs[0]];
    expectDecodedMetrics(c, d);
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

interface InFlight {
  now: number;
  bytes: number;
  max: number;
  maxBytes: number;
}

/**
 * Watches the copy's reads: the inputs' row-group reads (those after the first write began: the
 * footers come before) and the proof's re-read of the copied outputs (after each one's footer read),
 * how many of each were in flight at once. Output reads can be slowed so that they complete in the
 * reverse of the order they started, and one of them can fail.
 */
class CopyProbe extends ForwardingFileIO {
  readonly inputs: InFlight = { now: 0, bytes: 0, max: 0, maxBytes: 0 };
  readonly outputs: InFlight = { now: 0, bytes: 0, max: 0, maxBytes: 0 };
  /** Output row-group reads, `path@start`, as they started and as they completed. */
  readonly started: string[] = [];
  readonly completed: string[] = [];
  private writing = false;
  private readonly footers = new Set<string>();

  constructor(inner: FileIO, private readonly options: { readonly reverse?: boolean; readonly failOutputRead?: number } = {}) {
    super(inner);
  }

  override write(path: string, data: Uint8Array | AsyncIterable<Uint8Array>): Promise<void> {
    this.writing = true;
    return super.write(path, data);
  }

  override async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    const output = isCopyPath(path);
    if (output && !this.footers.has(path)) {
      this.footers.add(path);
      return this.inner.readRange(path, start, end);
    }
    if (!output && !this.writing) return this.inner.readRange(path, start, end);
    const c = output ? this.outputs : this.inputs;
    const k = output ? this.started.push(`${path}@${start}`) - 1 : -1;
    c.now++;
    c.bytes += end - start;
    c.max = Math.max(c.max, c.now);
    c.maxBytes = Math.max(c.maxBytes, c.bytes);
    try {
      if (output && this.options.reverse) await new Promise((r) => setTimeout(r, Math.max(0, 60 - 4 * k)));
      if (k >= 0 && k === this.options.failOutputRead) throw new Error('socket hang up');
      const bytes = await this.inner.readRange(path, start, end);
      if (output) this.completed.push(`${path}@${start}`);
      return bytes;
    } finally {
      c.now--;
      c.bytes -= end - start;
    }
  }
}

const isCopyPath = (p: string): boolean => p.includes('-copy-');
/** The proof re-reads each row group with a request of its own, as it does row groups of 8 MiB and more. */
const ONE_PER_REQUEST = { copyReads: { requestBytes: 0 } };

/** Compressed bytes of every row group of the group's inputs. */
async function rowGroupBytes(inputs: readonly { readonly file: DataFileJson }[]): Promise<number[]> {
  const out: number[] = [];
  for (const i of inputs) {
    for (const rg of (await readFooter(io.newInputFile(i.file.filePath))).footer.rowGroups) out.push(rg.columns.reduce((n, c) => n + Number(c.totalCompressedSize), 0));
  }
  return out;
}

describe('chunk copy: several row groups in flight', () => {
  it('reads row groups ahead of the upload and re-reads them for the proof several at once; the proof does not depend on the order', async () => {
    const t = await chunkCopyTable(io, 20, 30);
    const plan = await planAll(io, t.metadata);
    const group = plan.groups.find((g) => g.inputs.length === 20)!;
    const plain = await rewriteGroup(io, t.metadata, plan, group);
    const probe = new CopyProbe(io, { reverse: true });
    const r = await rewriteGroup(probe, t.metadata, plan, group, ONE_PER_REQUEST);
    expect(r.outputs.map((o) => Number(o.recordCount))).toEqual(plain.outputs.map((o) => Number(o.recordCount)));
    expect(await rowGroups(r.outputs[0])).toBe(20);
    // Same rows, same proof as a run whose reads came in order.
    expect(r.checksums).toEqual(plain.checksums);
    expect(r.checksums.hashOut).toBe(r.checksums.hashIn);
    // The default window: 16 reads at once (these row groups are far under its 64 MiB).
    expect(probe.outputs.max).toBe(16);
    expect(probe.inputs.max).toBeGreaterThan(1);
    expect(probe.inputs.max).toBeLessThanOrEqual(16);
    // Every row group re-read once, and hashed in another order than it was asked for.
    expect([...probe.completed].sort()).toEqual([...probe.started].sort());
    expect(probe.started).toHaveLength(20);
    expect(probe.completed).not.toEqual(probe.started);
  });

  it('keeps the bytes in flight within the table property', async () => {
    const t = await chunkCopyTable(io, 12, 30);
    const plan = await planAll(io, t.metadata);
    const group = plan.groups.find((g) => g.inputs.length === 12)!;
    const sizes = await rowGroupBytes(group.inputs);
    // Room for three of the largest row groups.
    const bound = 3 * Math.max(...sizes);
    const probe = new CopyProbe(io, { reverse: true });
    const r = await rewriteGroup(probe, withProperty(t.metadata, READ_AHEAD_BYTES_PROPERTY, String(bound)), plan, group, ONE_PER_REQUEST);
    expect(r.checksums.hashOut).toBe(r.checksums.hashIn);
    // The first row group is read from byte 0, with the 4 bytes of the leading magic.
    for (const c of [probe.inputs, probe.outputs]) {
      expect(c.max).toBeGreaterThanOrEqual(3);
      expect(c.maxBytes).toBeLessThanOrEqual(bound + 4);
    }
    // A bound under one row group: one at a time, still the same proof.
    const one = new CopyProbe(io);
    const r1 = await rewriteGroup(one, withProperty(t.metadata, READ_AHEAD_BYTES_PROPERTY, '0'), plan, group, ONE_PER_REQUEST);
    expect(r1.checksums).toEqual(r.checksums);
    expect(one.outputs.max).toBe(1);
    expect(one.inputs.max).toBe(1);
  });

  it('a failed ranged GET of the proof fails the group naming the file, and leaves nothing behind', async () => {
    const t = await chunkCopyTable(io, 10, 30);
    const plan = await planAll(io, t.metadata);
    const group = plan.groups.find((g) => g.inputs.length === 10)!;
    const tree = listTree(t.location);
    const probe = new CopyProbe(io, { reverse: true, failOutputRead: 3 });
    const err = await rewriteGroup(probe, t.metadata, plan, group, ONE_PER_REQUEST).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IoError);
    const failed = probe.started[3].split('@')[0];
    expect((err as IoError).path).toBe(failed);
    expect((err as Error).message).toMatch(new RegExp(`^${failed.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: re-reading row group \\d+ for the proof failed: socket hang up$`));
    // Reads still in flight finish into nothing; the outputs are gone, nothing was committed.
    await new Promise((r) => setTimeout(r, 100));
    expect(listTree(t.location)).toEqual(tree);
    expect((await loadTable(t.location)).metadata.currentSnapshotId).toBe(t.metadata.currentSnapshotId);
  });

  it('re-reads consecutive row groups of an output in one request up to 16 MiB, with the same proof; a failed one names them all', async () => {
    const t = await chunkCopyTable(io, 20, 30);
    const plan = await planAll(io, t.metadata);
    const group = plan.groups.find((g) => g.inputs.length === 20)!;
    const apart = await rewriteGroup(io, t.metadata, plan, group, ONE_PER_REQUEST);
    const probe = new CopyProbe(io);
    const r = await rewriteGroup(probe, t.metadata, plan, group);
    expect(r.outputs).toHaveLength(1);
    expect(await rowGroups(r.outputs[0])).toBe(20);
    // After the footer's, one GET for all 20 row groups (far under 16 MiB), from the first one's start.
    expect(probe.started).toHaveLength(1);
    expect(r.checksums).toEqual(apart.checksums);
    expect(r.checksums.hashOut).toBe(r.checksums.hashIn);
    // A row group over the request's bytes is read alone: one request each.
    const sizes = await rowGroupBytes(group.inputs);
    const pairs = new CopyProbe(io);
    const r2 = await rewriteGroup(pairs, t.metadata, plan, group, { copyReads: { requestBytes: 2 * Math.min(...sizes) + 64 } });
    expect(r2.checksums).toEqual(r.checksums);
    expect(pairs.started.length).toBeGreaterThan(1);
    expect(pairs.started.length).toBeLessThan(20);

    const tree = listTree(t.location);
    const broken = new CopyProbe(io, { failOutputRead: 0 });
    const err = await rewriteGroup(broken, t.metadata, plan, group).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IoError);
    const failed = broken.started[0].split('@')[0];
    expect((err as IoError).path).toBe(failed);
    expect((err as Error).message).toMatch(new RegExp(`^${failed.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: re-reading row groups 0-19 for the proof failed: socket hang up$`));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(listTree(t.location)).toEqual(tree);
  });
});

describe('the proof\'s re-read requests', () => {
  const MIB = 2 ** 20;
  /** A file whose row groups have one chunk each, of `sizes` bytes, back to back after the magic; reads recorded. */
  function rowGroupsOf(sizes: readonly number[]): { groups: RereadGroup[]; reads: [number, number][] } {
    const reads: [number, number][] = [];
    const total = 4 + sizes.reduce((a, b) => a + b, 0);
    const input: InputFile = {
      path: 'mem://out.parquet',
      length: () => Promise.resolve(total),
      read: (start, end) => {
        reads.push([start, end]);
        const bytes = new Uint8Array(end - start);
        if (start === 0) bytes.set(new TextEncoder().encode('PAR1'));
        return Promise.resolve(bytes);
      },
    };
    let at = 4;
    const groups = sizes.map((size, index): RereadGroup => {
      const span: ChunkSpan = { chunk: [], meta: [], start: at, end: (at += size) };
      return { input, index, spans: [span] };
    });
    return { groups, reads };
  }

  it('joins consecutive row groups up to 16 MiB into one GET of them all, and reads a larger row group alone in 16 MiB ranges', async () => {
    const { groups, reads } = rowGroupsOf([6 * MIB, 6 * MIB, 3 * MIB, 40 * MIB, 5 * MIB]);
    const batches = rereadBatches(groups);
    expect(batches.map((b) => b.groups.map((g) => g.index))).toEqual([[0, 1, 2], [3], [4]]);
    for (const b of batches) {
      const chunks = await rereadChunks(b);
      expect(chunks.map((c) => c[0].length)).toEqual(b.groups.map((g) => g.spans[0].end - g.spans[0].start));
    }
    // 15 MiB in one request (it was two of 8 MiB); 40 MiB in three; 5 MiB in one.
    const lengths = reads.map(([from, to]) => to - from);
    expect(lengths).toEqual([15 * MIB + 4, 16 * MIB + 4, 16 * MIB + 4, 8 * MIB - 8, 5 * MIB]);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(PROOF_REQUEST_BYTES + 4);
    // The one read in ranges is held twice while they are joined: the window counts it so.
    expect(batches.map(rereadHeldBytes)).toEqual([15 * MIB, 80 * MIB, 5 * MIB]);
  });

  it('asked for smaller requests, never splits a row group under 8 MiB', async () => {
    const { groups, reads } = rowGroupsOf([6 * MIB, 6 * MIB, 12 * MIB]);
    const batches = rereadBatches(groups, 0);
    expect(batches.map((b) => b.groups.length)).toEqual([1, 1, 1]);
    for (const b of batches) await rereadChunks(b);
    expect(reads.map(([from, to]) => to - from)).toEqual([6 * MIB + 4, 6 * MIB, 8 * MIB, 4 * MIB]);
  });

  it('a first batch of exactly 16 MiB is one request with the leading magic', async () => {
    const { groups, reads } = rowGroupsOf([10 * MIB, 6 * MIB]);
    const [batch] = rereadBatches(groups);
    expect(batch.groups).toHaveLength(2);
    await rereadChunks(batch);
    expect(reads).toEqual([[0, 16 * MIB + 4]]);
  });
});

describe('chunk copy on S3 (moto): several row groups in flight', () => {
  async function keys(s3: FileIO, location: string): Promise<string[]> {
    const out: string[] = [];
    for await (const f of s3.list(location)) out.push(f.path);
    return out.sort();
  }

  it('proves a group whose re-read completes out of order, and a failed ranged GET fails it naming the file, nothing left', async () => {
    const location = `s3://${await freshBucket()}/warehouse/window`;
    const s3 = fileIOFor(location, { s3Endpoint: testS3Endpoint() });
    const t = await chunkCopyTable(s3, 8, 40, { location });
    const before = await tableRows(t);
    const plan = await planAll(s3, t.metadata);
    const group = plan.groups.find((g) => g.inputs.length === 8)!;
    const files = await keys(s3, location);

    const broken = new CopyProbe(s3, { reverse: true, failOutputRead: 5 });
    const err = await rewriteGroup(broken, t.metadata, plan, group, ONE_PER_REQUEST).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IoError);
    expect((err as Error).message).toContain(`${broken.started[5].split('@')[0]}: re-reading row group`);
    await new Promise((r) => setTimeout(r, 100));
    expect(await keys(s3, location)).toEqual(files);

    const probe = new CopyProbe(s3, { reverse: true });
    const r = await rewriteGroup(probe, t.metadata, plan, group, ONE_PER_REQUEST);
    expect(r.checksums.hashOut).toBe(r.checksums.hashIn);
    expect(probe.outputs.max).toBe(8);
    expect(probe.completed).not.toEqual(probe.started);
    const results = [r];
    for (const g of plan.groups) if (g.id !== group.id) results.push(await rewriteGroup(s3, t.metadata, plan, g));
    await commitCompaction(t, plan, results);
    expect(await tableRows(await loadTable(location, { s3Endpoint: testS3Endpoint() }))).toEqual(before);
  });
});
