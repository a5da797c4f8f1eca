/**
 * Small inputs merged with one GET each (lib/compaction/merge-stream.ts): an input that cannot be
 * copied is read whole as it is merged, its footer parsed from those bytes, where the plan's footer
 * read and the merge's row-group read were two. Counted per input; the outputs against the
 * two-read merge's (no read-ahead budget: nothing read whole, nothing kept), byte for byte; an
 * input whose footer refuses the merge, read after its partition's first outputs were written;
 * a group of two partitions (the second's inputs merged after the first's, from the bytes kept).
 */
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadTable } from '../../lib/catalog/table.js';
import { COPY_MIN_ROW_GROUP_BYTES_PROPERTY, READ_AHEAD_BYTES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import { DECODE_REASONS_SHOWN, type DataFileJson, type FileGroup, type GroupResult, type Plan } from '../../lib/compaction/messages.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { NotFoundError } from '../../lib/errors.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import type { TableMetadata } from '../../lib/iceberg/table-metadata.js';
import type { Row } from '../../lib/iceberg/values.js';
import type { FileIO } from '../../lib/io/file-io.js';
import { parseS3Location } from '../../lib/io/index.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { S3FileIO } from '../../lib/io/s3.js';
import { S3RequestCounter } from '../../lib/io/s3-requests.js';
import { writeDataFiles } from '../../lib/table/data-writer.js';
import { commitChanges, deleteByEquality, deleteRows } from '../../lib/table/operations.js';
import { checkMap, tableRows, withProperties } from '../support/chunk-copy-table.js';
import { planAll } from '../support/compaction.js';
import { CountingIO } from '../support/counting-io.js';
import { DELETED, flatRow, flatTable } from '../support/flat-table.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { listTree } from '../support/table-files.js';

const io = new LocalFileIO();
const isMerge = (f: DataFileJson): boolean => f.filePath.includes('-merge-');
/** No read-ahead budget: the plan footer-reads every input and the merge reads its row groups again (the two-read merge). */
const TWO_READS = { [READ_AHEAD_BYTES_PROPERTY]: '1' };

/** Range reads per input of `group` while it is rewritten, and the result. */
async function counted(fs: FileIO, metadata: TableMetadata, plan: Plan, group: FileGroup, options: Parameters<typeof rewriteGroup>[4] = {}): Promise<{ r: GroupResult; reads: Map<string, Array<[number, number]>>; counting: CountingIO }> {
  const inputs = new Set(group.inputs.map((i) => i.file.filePath));
  const counting = new CountingIO(fs, (p) => inputs.has(p));
  const r = await rewriteGroup(counting, metadata, plan, group, options);
  return { r, reads: new Map([...inputs].map((p) => [p, counting.readsOf(p)])), counting };
}

/** The outputs' bytes, in order. */
async function outputBytes(results: readonly GroupResult[]): Promise<Buffer[]> {
  return Promise.all(results.flatMap((r) => r.outputs).map(async (o) => Buffer.from(await io.read(o.filePath))));
}

describe('merge with one GET per small input', () => {
  type Flat = Awaited<ReturnType<typeof flatTable>>;
  /** Rows of both partitions whose keys equality deletes name. */
  const KEYED = [7, 8, 150, 301, 453, 599, 9001, 17_998];
  const ROWS = 6000;
  const keyed = (r: Row): boolean => KEYED.includes(Number(r.id));
  for (const [name, remove, deleted] of [
    ['position deletes', async (t: Flat) => (await deleteRows(t, DELETED(ROWS))).table, DELETED(ROWS)],
    ['equality deletes on a long key, probed from the pages', (t: Flat) => deleteByEquality(t, [1], KEYED.map((id) => ({ id: BigInt(id), category: flatRow(id).category }))), keyed],
    ['equality deletes on a string key, its column read from the bytes held', (t: Flat) => deleteByEquality(t, [9], KEYED.map((id) => ({ note: flatRow(id).note, category: flatRow(id).category }))), keyed],
  ] as const) {
    it(`${name}: one read of all of each input, the two-read merge's outputs byte for byte`, async () => {
      // Uncompressed: inputs past the plan's 64 KiB footer read, which would otherwise hold all of them.
      const t = await remove(await flatTable(io, 3, ROWS, { properties: { 'write.parquet.compression-codec': 'uncompressed' } }));
      const before = await tableRows(t);
      const plan = await planAll(io, t.metadata);
      const once: GroupResult[] = [];
      const twice: GroupResult[] = [];
      for (const group of plan.groups) {
        expect(group.inputs.every((i) => i.deletes.length > 0 && Number(i.file.fileSizeInBytes) > 64 * 1024)).toBe(true);
        const one = await counted(io, t.metadata, plan, group);
        expect(one.r.inputPaths).toEqual({ copied: 0, merged: group.inputs.length, decoded: 0 });
        for (const input of group.inputs) expect(one.reads.get(input.file.filePath), input.file.filePath).toEqual([[0, Number(input.file.fileSizeInBytes)]]);
        expect([one.r.checksums.rowsOut, one.r.checksums.hashOut]).toEqual([one.r.checksums.rowsIn, one.r.checksums.hashIn]);
        await checkMap(io, t.metadata, plan, one.r, deleted);
        once.push(one.r);
        const two = await counted(io, withProperties(t.metadata, TWO_READS), plan, group);
        // The footer read, the row group (and on a string key, its column before).
        for (const input of group.inputs) expect(two.reads.get(input.file.filePath)!.length).toBeGreaterThanOrEqual(2);
        expect(two.r.checksums).toEqual(one.r.checksums);
        twice.push(two.r);
      }
      const a = await outputBytes(once);
      const b = await outputBytes(twice);
      expect(a.length).toBe(b.length);
      a.forEach((bytes, k) => expect(bytes.equals(b[k]), `output ${k}`).toBe(true));
      await commitCompaction(t, plan, once);
      expect(await tableRows(await loadTable(t.location))).toEqual(before);
    });
  }

  it('an input whose footer refuses the merge, read after its partition\'s first outputs: the partition decoded whole, those outputs deleted, the reasons the two-read merge gives', async () => {
    // Two files a partition, and a third below: the group's reasons all shown (DECODE_REASONS_SHOWN).
    let t = await flatTable(io, 2, 150);
    t = (await deleteRows(t, DELETED(150))).table;
    // One more file of partition a, SNAPPY with dictionaries: the merge does not recompress it (mergeProblem).
    const rows: Row[] = [];
    for (let id = 10_000; rows.length < 100; id++) if (flatRow(id).category === 'a') rows.push(flatRow(id));
    const [snappy] = await writeDataFiles(io, withProperties(t.metadata, { 'write.parquet.compression-codec': 'snappy' }), rows);
    t = await commitChanges(t, { addedDataFiles: [snappy] });
    const before = await tableRows(t);
    // Every source row group an output of its own (target 1 byte): outputs are written before the last input is read.
    const plan = await planAll(io, t.metadata, { targetFileSizeBytes: 1 });
    const planned = plan.groups.find((g) => g.inputs.some((i) => i.file.filePath === snappy.filePath))!;
    const last = planned.inputs.find((i) => i.file.filePath === snappy.filePath)!;
    const group: FileGroup = { ...planned, inputs: [...planned.inputs.filter((i) => i !== last), last] };
    const ordered: Plan = { ...plan, groups: plan.groups.map((g) => (g === planned ? group : g)) };
    // One read in flight: the inputs before it are merged (and written) before it is read.
    const one = await counted(io, t.metadata, ordered, group, { copyReads: { reads: 1 } });
    const { r } = one;
    expect(r.outputs.some(isMerge)).toBe(false);
    expect(r.inputPaths).toMatchObject({ copied: 0, merged: 0, decoded: group.inputs.length });
    expect(group.inputs.length).toBe(DECODE_REASONS_SHOWN);
    const reasons = r.inputPaths?.decodedBecause ?? [];
    expect(reasons.find((x) => x.file === snappy.filePath)?.reason).toMatch(/codec 1, which this merge does not recompress/);
    expect(reasons.filter((x) => x.file !== snappy.filePath).every((x) => x.reason === 'another input of its partition is decoded, and one output takes them all')).toBe(true);
    // Merged outputs were started, and none is left.
    const started = one.counting.writes.map((w) => w.path).filter((p) => p.includes('-merge-'));
    expect(started.length).toBeGreaterThan(0);
    for (const p of started) expect(await io.exists(p), p).toBe(false);
    expect([r.checksums.rowsOut, r.checksums.hashOut]).toEqual([r.checksums.rowsIn, r.checksums.hashIn]);
    // The SNAPPY file came after the deletes: none of its rows is deleted.
    await checkMap(io, t.metadata, ordered, r, (row) => Number(row.id) < 10_000 && DELETED(150)(row));
    // The reasons and counts the two-read merge gives.
    const two = await rewriteGroup(io, withProperties(t.metadata, TWO_READS), ordered, group);
    expect(r.inputPaths).toEqual(two.inputPaths);
    const results = [r, ...(await Promise.all(ordered.groups.filter((g) => g !== group).map((g) => rewriteGroup(io, t.metadata, ordered, g))))];
    await commitCompaction(t, ordered, results);
    expect(await tableRows(await loadTable(t.location))).toEqual(before);
  });

  it('a missing input read whole fails the group naming it, with the outputs started before deleted', async () => {
    let t = await flatTable(io, 4, 150);
    t = (await deleteRows(t, DELETED(150))).table;
    const plan = await planAll(io, t.metadata, { targetFileSizeBytes: 1 });
    const group = plan.groups[0];
    const missing = group.inputs[3].file.filePath;
    rmSync(missing);
    // Range reads keep files open: let go of the one removed.
    await io.close();
    const data = `${t.location}/data`;
    const before = listTree(data);
    const counting = new CountingIO(io);
    const err = await rewriteGroup(counting, t.metadata, plan, group, { copyReads: { reads: 1 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).path).toBe(missing);
    expect(counting.writes.filter((w) => w.path.includes('-merge-')).length).toBeGreaterThan(0);
    expect(listTree(data)).toEqual(before);
  });

  it('a partition of two codecs (two buckets): the second\'s input, read among the first\'s, merged after them from its bytes kept; the two-read merge\'s outputs', async () => {
    let t = await flatTable(io, 3, 150);
    const rows: Row[] = [];
    for (let id = 10_000; rows.length < 100; id++) if (flatRow(id).category === 'a') rows.push(flatRow(id));
    const [gzip] = await writeDataFiles(io, withProperties(t.metadata, { 'write.parquet.compression-codec': 'gzip' }), rows);
    t = await commitChanges(t, { addedDataFiles: [gzip] });
    t = (await deleteRows(t, (r) => Number(r.id) % 7 === 3)).table;
    const plan = await planAll(io, t.metadata);
    const planned = plan.groups.find((g) => g.inputs.some((i) => i.file.filePath === gzip.filePath))!;
    const other = planned.inputs.find((i) => i.file.filePath === gzip.filePath)!;
    const rest = planned.inputs.filter((i) => i !== other);
    // Read second: after the first bucket's first input, before its others.
    const group: FileGroup = { ...planned, inputs: [rest[0], other, ...rest.slice(1)] };
    const ordered: Plan = { ...plan, groups: plan.groups.map((g) => (g === planned ? group : g)) };
    const one = await counted(io, t.metadata, ordered, group);
    expect(one.r.inputPaths).toEqual({ copied: 0, merged: group.inputs.length, decoded: 0 });
    expect(one.r.outputs).toHaveLength(2);
    for (const input of group.inputs) expect(one.reads.get(input.file.filePath)).toHaveLength(1);
    await checkMap(io, t.metadata, ordered, one.r, (r) => Number(r.id) % 7 === 3);
    const two = await rewriteGroup(io, withProperties(t.metadata, TWO_READS), ordered, group);
    const [a, b] = [await outputBytes([one.r]), await outputBytes([two])];
    a.forEach((bytes, k) => expect(bytes.equals(b[k]), `output ${k}`).toBe(true));
    expect(one.r.checksums).toEqual(two.checksums);
  });

  it('inputs the plan footer-read (over the copy floor, row groups under it) merged among those read whole, in group order; the two-read merge\'s outputs', async () => {
    // Files over the copy floor of row groups under it: merged, footer-read by the plan (no deletes).
    const properties = { [COPY_MIN_ROW_GROUP_BYTES_PROPERTY]: '40000', 'write.parquet.row-group-size-bytes': '20000', 'write.parquet.compression-codec': 'uncompressed' };
    let t = await flatTable(io, 4, 4500, { properties });
    // Deletes in the first two appends' files alone: those are read whole. One delete file per data file: a
    // partition's one file would name its files' paths as bounds, and the plan gives it to every file whose
    // (random) name falls between them.
    const gone = (r: Row): boolean => Number(r.id) <= 9000 && Number(r.id) % 11 === 4;
    for (const task of (await planFiles(io, t.metadata)).tasks) t = (await deleteRows(t, gone, { files: (f) => f.filePath === task.dataFile.filePath })).table;
    const plan = await planAll(io, t.metadata);
    // Both partitions hold both kinds of input.
    const mixed = plan.groups.filter((g) => g.inputs.some((i) => i.deletes.length > 0) && g.inputs.some((i) => i.deletes.length === 0));
    expect(mixed).toHaveLength(2);
    for (const group of mixed) {
      const withDeletes = group.inputs.filter((i) => i.deletes.length > 0);
      const plain = group.inputs.filter((i) => i.deletes.length === 0);
      expect(withDeletes.length).toBeGreaterThan(0);
      // Past the 64 KiB footer read: their row groups are read through the stream's window.
      expect(plain.every((i) => Number(i.file.fileSizeInBytes) > 64 * 1024)).toBe(true);
      // In group order, those read whole between the others.
      const ordered: FileGroup = { ...group, inputs: [plain[0], ...withDeletes, ...plain.slice(1)] };
      const both: Plan = { ...plan, groups: [ordered] };
      const one = await counted(io, t.metadata, both, ordered);
      expect(one.r.inputPaths).toEqual({ copied: 0, merged: ordered.inputs.length, decoded: 0 });
      for (const i of withDeletes) expect(one.reads.get(i.file.filePath)).toEqual([[0, Number(i.file.fileSizeInBytes)]]);
      // The others: the plan's footer read, then their row groups.
      for (const i of plain) expect(one.reads.get(i.file.filePath)!.length).toBeGreaterThan(1);
      await checkMap(io, t.metadata, both, one.r, gone);
      const two = await rewriteGroup(io, withProperties(t.metadata, TWO_READS), both, ordered);
      const [a, b] = [await outputBytes([one.r]), await outputBytes([two])];
      expect(a.length).toBe(b.length);
      a.forEach((bytes, k) => expect(bytes.equals(b[k]), `output ${k}`).toBe(true));
      expect(one.r.checksums).toEqual(two.checksums);
    }
  });

  it('a group of two partitions: the first merged as read, the second after it from the bytes kept (else read again), the same outputs', async () => {
    let t = await flatTable(io, 3, 150);
    t = (await deleteRows(t, DELETED(150))).table;
    const plan = await planAll(io, t.metadata);
    expect(plan.groups).toHaveLength(2);
    const group: FileGroup = { ...plan.groups[0], id: 'both', inputs: plan.groups.flatMap((g) => g.inputs) };
    const both: Plan = { ...plan, groups: [group] };
    const one = await counted(io, t.metadata, both, group);
    expect(one.r.inputPaths).toEqual({ copied: 0, merged: group.inputs.length, decoded: 0 });
    expect(one.r.outputs).toHaveLength(2);
    for (const input of group.inputs) expect(one.reads.get(input.file.filePath)).toHaveLength(1);
    await checkMap(io, t.metadata, both, one.r, DELETED(150));
    // A budget of the largest input: each read whole, none of the second partition's kept.
    const largest = Math.max(...group.inputs.map((i) => Number(i.file.fileSizeInBytes)));
    const tight = await counted(io, withProperties(t.metadata, { [READ_AHEAD_BYTES_PROPERTY]: String(largest) }), both, group);
    const second = new Set(plan.groups[1].inputs.map((i) => i.file.filePath));
    const firstOf = plan.groups[0].inputs.map((i) => i.file.filePath);
    for (const p of firstOf) expect(tight.reads.get(p)).toHaveLength(1);
    // Whole inputs are read within the budget: one at a time here.
    expect(tight.counting.maxInFlightBytes).toBeLessThanOrEqual(largest);
    expect([...second].some((p) => tight.reads.get(p)!.length === 2)).toBe(true);
    const two = await rewriteGroup(io, withProperties(t.metadata, TWO_READS), both, group);
    const [a, b, c] = [await outputBytes([one.r]), await outputBytes([tight.r]), await outputBytes([two])];
    expect(a.length).toBe(2);
    a.forEach((bytes, k) => {
      expect(bytes.equals(b[k]), `output ${k}, tight budget`).toBe(true);
      expect(bytes.equals(c[k]), `output ${k}, two reads`).toBe(true);
    });
    expect(one.r.checksums).toEqual(two.checksums);
  });

  it('on S3 (moto): one GET of each input past the 64 KiB footer read, all of it; two with no budget', async () => {
    const location = `s3://${await freshBucket()}/warehouse/one-get`;
    const s3 = new S3FileIO({ endpoint: testS3Endpoint() });
    const rows = 6000;
    let t = await flatTable(s3, 2, rows, { location, properties: { 'write.parquet.compression-codec': 'uncompressed' } });
    t = (await deleteRows(t, DELETED(rows))).table;
    const before = await tableRows(t);
    const plan = await planAll(s3, t.metadata);
    const counter = new S3RequestCounter(s3.client, { log: true });
    const gets = (g: FileGroup): Map<string, number[]> => {
      const sizes = new Map(g.inputs.map((i) => [parseS3Location(i.file.filePath).key, Number(i.file.fileSizeInBytes)]));
      const out = new Map([...sizes.keys()].map((k): [string, number[]] => [k, []]));
      for (const q of counter.requests()) if (q.command === 'GetObjectCommand' && sizes.has(q.key)) out.get(q.key)!.push(q.bytes);
      return out;
    };
    const results: GroupResult[] = [];
    for (const g of plan.groups) {
      expect(g.inputs.every((i) => Number(i.file.fileSizeInBytes) > 64 * 1024)).toBe(true);
      counter.reset();
      const r = await rewriteGroup(s3, t.metadata, plan, g);
      expect(r.outputs.every(isMerge)).toBe(true);
      for (const i of g.inputs) expect(gets(g).get(parseS3Location(i.file.filePath).key)).toEqual([Number(i.file.fileSizeInBytes)]);
      results.push(r);
      counter.reset();
      await rewriteGroup(s3, withProperties(t.metadata, TWO_READS), plan, g);
      for (const got of gets(g).values()) expect(got).toHaveLength(2);
    }
    counter.reset();
    await commitCompaction(t, plan, results);
    expect(await tableRows(await loadTable(location, { s3Endpoint: testS3Endpoint() }))).toEqual(before);
  });
});
