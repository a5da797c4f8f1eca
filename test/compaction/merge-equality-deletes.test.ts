/**
 * Inputs with equality deletes (major mode) merged page by page (lib/compaction/chunk-copy.ts):
 * the rows the equality deletes match — probed from the merged row group's own key pages for one
 * long or int key (row-group-merge.ts probedDeletes), else on the key columns read alone as the
 * decoder probes them (lib/table/scan.ts deletedPositions) — are dropped like position deletes.
 * The live rows, the map, the proof, the metrics the decode path gives, keys with nulls and on
 * several columns, deletes that do not apply by sequence number, the delete files gone after the
 * commit, S3 (moto), and minor mode (equality deletes not applied, nothing dropped).
 */
import { describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { MERGE_DELETES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import type { DataFileJson, FileGroup, GroupResult, Plan } from '../../lib/compaction/messages.js';
import { join } from 'node:path';
import { planCompaction } from '../../lib/compaction/planner.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { partitionFolder, tableLocationProvider } from '../../lib/iceberg/locations.js';
import { FileContent, type DataFile } from '../../lib/iceberg/manifest.js';
import { currentSchema, specById } from '../../lib/iceberg/table-metadata.js';
import type { NestedField, StructType } from '../../lib/iceberg/types.js';
import { ParquetWriter } from '../../lib/parquet/writer.js';
import { toDataFile } from '../../lib/table/data-writer.js';
import { projectionOf } from '../../lib/table/delete-filter.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import type { Row } from '../../lib/iceberg/values.js';
import { parseS3Location } from '../../lib/io/index.js';
import { S3FileIO } from '../../lib/io/s3.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { S3RequestCounter } from '../../lib/io/s3-requests.js';
import { appendRows, commitChanges, createNewTable, deleteByEquality, deleteRows, updateSchema } from '../../lib/table/operations.js';
import { checkMap, expectDecodedMetrics, tableRows, withProperties } from '../support/chunk-copy-table.js';
import { planAll } from '../support/compaction.js';
import { CountingIO } from '../support/counting-io.js';
import { FLAT_SCHEMA, flatRow, flatTable, MERGE } from '../support/flat-table.js';
import { tempDir } from '../support/fixtures.js';
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

/** A group rewritten merged (every input) and decoded (merge-deletes off): the same rows out, each proved. */
async function mergedAndDecoded(t: Table, plan: Plan, g: FileGroup): Promise<{ merged: GroupResult; decoded: GroupResult }> {
  const merged = await rewriteGroup(t.io, t.metadata, plan, g);
  const decoded = await rewriteGroup(t.io, withProperties(t.metadata, { [MERGE_DELETES_PROPERTY]: 'false' }), plan, g);
  expect(merged.inputPaths).toEqual({ copied: 0, merged: g.inputs.length, decoded: 0 });
  expect(decoded.inputPaths?.decoded).toBe(g.inputs.length);
  expect(merged.checksums.rowsOut).toBe(decoded.checksums.rowsOut);
  expect(merged.checksums.hashOut).toBe(merged.checksums.hashIn);
  return { merged, decoded };
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

describe('equality deletes on a field inside a struct (a delete file laid out as Java writes it)', () => {
  it('deletes the rows whose nested key matches, before and after the merge, the decode path alike', async () => {
    let t = await createNewTable(io, join(tempDir(), 'nested-key'), { formatVersion: 2, schema: FLAT_SCHEMA, properties: MERGE });
    for (let a = 0; a < 2; a++) t = await appendRows(t, Array.from({ length: 40 }, (_, i) => flatRow(1 + a * 40 + i)));
    // point.x (id 8) is id / 4, null for some rows: keys of five rows, none null.
    const gone = [1, 2, 3, 6, 41];
    const deleteSchema: StructType = {
      type: 'struct',
      fields: [{ id: 7, name: 'point', required: false, type: { type: 'struct', fields: [{ id: 8, name: 'x', required: false, type: { type: 'float' } }] } }],
    };
    const spec = specById(t.metadata, t.metadata.defaultSpecId);
    const path = tableLocationProvider(t.metadata).newDataLocation('eq-nested-deletes.parquet', partitionFolder(spec, {}, currentSchema(t.metadata)));
    const w = ParquetWriter.open(io, path, deleteSchema, {});
    await w.writeRows(gone.map((id) => ({ point: { x: (flatRow(id).point as { x: number }).x } })));
    t = await commitChanges(t, { addedDeleteFiles: [toDataFile(await w.close(), spec, {}, FileContent.EqualityDeletes, { equalityIds: [8] })], operation: 'delete' });
    const before = await tableRows(t);
    expect(idsOf(before).sort((a, b) => a - b)).toEqual(Array.from({ length: 80 }, (_, i) => i + 1).filter((id) => !gone.includes(id)));
    const plan = await planAll(io, t.metadata);
    const results: GroupResult[] = [];
    for (const g of plan.groups) {
      results.push((await mergedAndDecoded(t, plan, g)).merged);
    }
    await commitCompaction(t, plan, results);
    expect(await tableRows(await loadTable(t.location))).toEqual(before);
  });

  it('tells keys apart by field id where a dropped field\'s name was reused inside the struct', async () => {
    const field = (id: number, name: string, type: NestedField['type']): NestedField => ({ id, name, required: false, type });
    const point = (...fields: NestedField[]): NestedField => field(7, 'point', { type: 'struct', fields });
    let t = await createNewTable(io, join(tempDir(), 'reused-name'), {
      formatVersion: 2, schema: { type: 'struct', fields: [field(1, 'id', { type: 'long' }), point(field(8, 'a', { type: 'int' }), field(9, 'b', { type: 'int' }))] }, properties: MERGE,
    });
    // a (8) dropped, b (9) renamed a: the data is written under the new schema, so it may be merged.
    t = await updateSchema(t, [field(1, 'id', { type: 'long' }), point(field(9, 'a', { type: 'int' }))]);
    for (let k = 0; k < 2; k++) t = await appendRows(t, Array.from({ length: 40 }, (_, i) => ({ id: BigInt(1 + k * 40 + i), point: { a: (k * 40 + i) % 10 } })));
    // A writer still on the old schema deletes a (8) = 5, which no row has any more; a current one 9 = 3.
    const spec = specById(t.metadata, t.metadata.defaultSpecId);
    for (const [id, name, value] of [[8, 'a', 5], [9, 'a', 3]] as const) {
      const path = tableLocationProvider(t.metadata).newDataLocation(`eq-${id}.parquet`, partitionFolder(spec, {}, currentSchema(t.metadata)));
      const w = ParquetWriter.open(io, path, { type: 'struct', fields: [point(field(id, name, { type: 'int' }))] }, {});
      await w.writeRows([{ point: { a: value } }]);
      t = await commitChanges(t, { addedDeleteFiles: [toDataFile(await w.close(), spec, {}, FileContent.EqualityDeletes, { equalityIds: [id] })], operation: 'delete' });
    }
    const before = await tableRows(t);
    expect(before).toHaveLength(72);
    const { plan, results } = await rewriteAll(t);
    expect(results.every((r) => r.outputs.every(isMerge))).toBe(true);
    await commitCompaction(t, plan, results);
    expect(await tableRows(await loadTable(t.location))).toEqual(before);
  });

  it('probes long and int keys from the merged pages (no read of the key column of its own): nested under null structs, null keys, dictionary-indexed or plain, many pages; a file left empty is not written', async () => {
    // Files over the 64 KiB footer read (uncompressed): a key column read apart would be a read of its own.
    const rows = 6000;
    const field = (id: number, name: string, type: NestedField['type'], required = false): NestedField => ({ id, name, required, type });
    const schema: StructType = {
      type: 'struct',
      fields: [
        field(1, 'id', { type: 'long' }, true),
        field(2, 'part', { type: 'string' }, true),
        field(3, 's', { type: 'struct', fields: [field(4, 'k', { type: 'long' }), field(5, 'n', { type: 'int' })] }),
        field(6, 'big', { type: 'long' }),
      ],
    };
    const row = (id: number, part: string): Row => ({
      id: BigInt(id),
      part,
      // A null struct every ninth row, a null k every fifth; n from a few values (a dictionary); big past 32 bits, negative too.
      s: id % 9 === 0 ? null : { k: id % 5 === 0 ? null : BigInt(id * 1000), n: id % 13 === 0 ? null : (id % 4) - 2 },
      big: BigInt(id % 2 === 0 ? 1 : -1) * (2n ** 40n + BigInt(id)),
    });
    const deleted = (id: number): boolean => {
      const r = row(id, '');
      const s = r.s as { k: bigint | null; n: number | null } | null;
      if (id > 2 * rows) return true;
      return s === null || s.k === null || [3000n, 7000n, 8000n].includes(s.k) || s.n === -1 || id === 11 || id === 12;
    };
    // Writer defaults (dictionaries), and small pages without dictionaries (plain values over many pages).
    for (const [name, props] of [['dictionary', {}], ['plain', { 'write.parquet.page-size-bytes': '1024', 'write.parquet.dict-size-bytes': '8' }]] as const) {
      const counted = new CountingIO(new LocalFileIO());
      let t = await createNewTable(counted, join(tempDir(), `page-keys-${name}`), {
        formatVersion: 2, schema, partitionFields: [{ sourceId: 2, name: 'part', transform: { kind: 'identity' } }],
        properties: { ...MERGE, 'write.parquet.compression-codec': 'uncompressed', ...props },
      });
      for (let a = 0; a < 3; a++) t = await appendRows(t, Array.from({ length: rows }, (_, i) => row(1 + a * rows + i, a === 2 ? 'gone' : 'kept')));
      // A delete file of the key's own columns (nested ones in their struct), as Java writes them.
      const spec = specById(t.metadata, t.metadata.defaultSpecId);
      const eq = async (ids: number[], fields: NestedField[], rows: Row[], part: string): Promise<void> => {
        const path = tableLocationProvider(t.metadata).newDataLocation(`eq-${ids.join('-')}-${part}.parquet`, partitionFolder(spec, { part }, currentSchema(t.metadata)));
        const w = ParquetWriter.open(io, path, { type: 'struct', fields }, {});
        await w.writeRows(rows);
        t = await commitChanges(t, { addedDeleteFiles: [toDataFile(await w.close(), spec, { part }, FileContent.EqualityDeletes, { equalityIds: ids })], operation: 'delete' });
      };
      const inS = (f: NestedField): NestedField[] => [field(3, 's', { type: 'struct', fields: [f] })];
      // s.k: some keys and a null one (matches a null k and a null struct alike); s.n = -1; big: two values, one of each sign.
      await eq([4], inS(field(4, 'k', { type: 'long' })), [...[3, 7, 8, 100].map((id) => ({ s: { k: BigInt(id * 1000) } })), { s: { k: null } }], 'kept');
      await eq([5], inS(field(5, 'n', { type: 'int' })), [{ s: { n: -1 } }], 'kept');
      await eq([6], [field(6, 'big', { type: 'long' })], [{ big: 2n ** 40n + 11n }, { big: -(2n ** 40n + 11n) }, { big: 2n ** 40n + 12n }], 'kept');
      // Every row of the 'gone' partition, by id.
      await eq([1], [field(1, 'id', { type: 'long' }, true)], Array.from({ length: rows }, (_, i) => ({ id: BigInt(2 * rows + 1 + i) })), 'gone');
      const before = await tableRows(t);
      const plan = await planAll(io, t.metadata);
      const results: GroupResult[] = [];
      for (const g of plan.groups) {
        // Each input read once, whole, as it is merged (merge-stream.ts); never its key column apart.
        counted.ranges.length = 0;
        await rewriteGroup(counted, t.metadata, plan, g);
        for (const input of g.inputs) expect(counted.readsOf(input.file.filePath)).toEqual([[0, Number(input.file.fileSizeInBytes)]]);
        const { merged, decoded } = await mergedAndDecoded(t, plan, g);
        const gone = g.partition.part === 'gone';
        expect(merged.outputs).toHaveLength(gone ? 0 : 1);
        if (!gone) expectDecodedMetrics(merged.outputs[0], decoded.outputs[0]);
        results.push(merged);
      }
      expect(results.length).toBe(2);
      await commitCompaction(t, plan, results);
      const after = await loadTable(t.location);
      expect(await tableRows(after)).toEqual(before);
      // Each key as the model finds it: s.k listed or null (a null struct too), s.n = -1, big of either sign; 'gone' all.
      expect(idsOf(before).sort((a, b) => a - b)).toEqual(Array.from({ length: 3 * rows }, (_, i) => i + 1).filter((id) => !deleted(id)));
      // The merged file of the emptied partition is not left behind.
      const files = (await planFiles(io, after.metadata)).tasks.map((task) => task.dataFile.filePath);
      expect(files).toHaveLength(1);
      const merges: string[] = [];
      for await (const f of io.list(t.location)) if (f.path.includes('-merge-')) merges.push(f.path);
      expect(merges).toEqual(expect.arrayContaining(files));
      expect(merges.filter((f) => f.includes('part=gone'))).toEqual([]);
    }
  });

  it('refuses a key inside a list, naming the delete file', () => {
    const schema = { type: 'struct' as const, schemaId: 0, identifierFieldIds: [], fields: [{ id: 1, name: 'xs', required: false, type: { type: 'list' as const, elementId: 2, elementRequired: false, element: { type: 'long' as const } } }] };
    const file = { filePath: '/t/eq.parquet' } as DataFile;
    expect(() => projectionOf([2], [schema], file)).toThrow(/eq\.parquet names field id 2, which lies inside a list/);
  });
});

describe('merge with equality deletes on S3 (moto)', () => {
  it('merges, proves and commits; a small input is fetched once (read whole, it serves the key column and the merge)', async () => {
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
      // Each small file is read once, whole, as it is merged: that read serves the key columns' reader and the merge.
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
