import { existsSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Table } from '../../lib/catalog/table.js';
import { readCompactionMap } from '../../lib/compaction/compaction-map.js';
import { remapPosition } from '../../lib/compaction/remap.js';
import { dataFileFromJson } from '../../lib/iceberg/data-file-json.js';
import type { DataFileJson, FileGroup, GroupResult, Plan } from '../../lib/compaction/messages.js';
import { rewriteGroup, scanTaskOf } from '../../lib/compaction/rewriter.js';
import { ValidationError } from '../../lib/errors.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { stringifyJson } from '../../lib/iceberg/json.js';
import { FileContent } from '../../lib/iceberg/manifest.js';
import { partitionKey } from '../../lib/iceberg/partition.js';
import { rowToJson } from '../../lib/iceberg/row-json.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import type { SortOrder } from '../../lib/iceberg/sort-order.js';
import { currentSchema, specById, type TableMetadata } from '../../lib/iceberg/table-metadata.js';
import type { NestedField, StructType } from '../../lib/iceberg/types.js';
import type { Row } from '../../lib/iceberg/values.js';
import { openParquet } from '../../lib/parquet/reader.js';
import { FIELD_ID_KEY } from '../../lib/parquet/schema.js';
import { ParquetWriter, RollingParquetWriter } from '../../lib/parquet/writer.js';
import { readRows } from '../../lib/table/data-reader.js';
import { partitionFolder } from '../../lib/iceberg/locations.js';
import { partitionOf } from '../../lib/table/data-writer.js';
import {
  appendRows, commitChanges, createNewTable, deleteByEquality, deleteRows, updateSchema, updateSpec,
} from '../../lib/table/operations.js';
import { LAST_UPDATED_SEQUENCE_NUMBER_FIELD, readTask, ROW_ID_FIELD, scanRows } from '../../lib/table/scan.js';
import { DECODE_ONLY, planAll } from '../support/compaction.js';
import { tempDir } from '../support/fixtures.js';
import { listTree } from '../support/table-files.js';

const io = new LocalFileIO();

const SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'category', required: false, type: { type: 'string' as const } },
    { id: 3, name: 'amount', required: false, type: { type: 'decimal' as const, precision: 10, scale: 2 } },
    { id: 4, name: 'ts', required: false, type: { type: 'timestamptz' as const } },
    { id: 5, name: 'qty', required: false, type: { type: 'int' as const } },
    { id: 6, name: 'count', required: false, type: { type: 'int' as const } },
    { id: 7, name: 'score', required: false, type: { type: 'double' as const } },
  ],
};

function row(id: number, category: string | null): Row {
  return {
    id: BigInt(id),
    category,
    amount: BigInt((id % 2 === 0 ? -1 : 1) * (id * 1234 + 5)),
    ts: 1_700_000_000_000_000n + BigInt(id) * 3_600_000_001n,
    qty: id * 3,
    count: id * 7,
    score: id === 4 ? Number.NaN : id === 6 ? null : id * 1.5,
  };
}

const IDENTITY = { kind: 'identity' } as const;

/**
 * Everything a group can meet: two specs (identity(category), then also day(ts)), a dropped,
 * a promoted (int → long) and an added column, and deletes of every kind the version allows.
 */
/** These tests are the decode path's: no input is merged (test/compaction/row-group-merge.test.ts has the merge). */

async function buildTable(formatVersion: 2 | 3): Promise<Table> {
  const location = join(tempDir(), `rewrite-v${formatVersion}`);
  let t = await createNewTable(io, location, {
    formatVersion,
    schema: SCHEMA,
    partitionFields: [{ sourceId: 2, name: 'category', transform: IDENTITY }],
    properties: DECODE_ONLY,
  });
  const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);
  t = await appendRows(t, [1, 2, 3, 4].map((i) => row(i, 'a')).concat([5, 6, 7].map((i) => row(i, 'b'))));
  t = await appendRows(t, [8, 9].map((i) => row(i, 'c')).concat(range(20, 29).map((i) => row(i, 'a'))));
  // v2: a position delete file per partition, each naming one data file (file-scoped).
  t = (await deleteRows(t, (r) => r.id === 2n || r.id === 6n)).table;
  // v2: partition a gets a file naming two data files (partition-scoped); v3: a merged DV.
  t = (await deleteRows(t, (r) => r.id === 21n || r.id === 3n)).table;
  if (formatVersion === 2) t = await deleteByEquality(t, [1], [{ id: 8n, category: 'c' }]);
  t = await updateSchema(t, [
    ...SCHEMA.fields
      .filter((f) => f.name !== 'count')
      .map((f): NestedField => (f.name === 'qty' ? { ...f, type: { type: 'long' } } : f)),
    { id: 8, name: 'note', required: false, type: { type: 'string' }, ...(formatVersion === 3 ? { initialDefault: 'std' } : {}) },
  ]);
  t = await updateSpec(t, [
    { sourceId: 2, name: 'category', transform: IDENTITY },
    { sourceId: 4, name: 'ts_day', transform: { kind: 'day' } },
  ]);
  const later = (id: number, category: string, note: string | null): Row => {
    const { count: _c, ...r } = row(id, category);
    return { ...r, qty: BigInt(id * 3), note };
  };
  t = await appendRows(t, [later(10, 'a', 'x'), later(11, 'd', null), later(13, 'd', 'ünïcode')]);
  t = (await deleteRows(t, (r) => r.id === 11n || r.id === 1n)).table;
  return t;
}

/** Live ids after buildTable (v2 also loses id 8 to its equality delete). */
const LIVE_V2 = [4, 5, 7, 9, 10, 13, 20, 22, 23, 24, 25, 26, 27, 28, 29];
const LIVE_V3 = [...LIVE_V2, 8].sort((a, b) => a - b);

function lineageSchema(m: TableMetadata): StructType {
  const s = currentSchema(m);
  return m.formatVersion >= 3 ? { type: 'struct', fields: [...s.fields, ROW_ID_FIELD, LAST_UPDATED_SEQUENCE_NUMBER_FIELD] } : s;
}

function text(r: Row, schema: StructType): string {
  return stringifyJson(rowToJson(r, schema));
}

async function tableRows(t: Table, lineage = false): Promise<string[]> {
  const schema = lineage ? lineageSchema(t.metadata) : currentSchema(t.metadata);
  const out: string[] = [];
  for await (const r of scanRows(t.io, t.metadata, { rowLineage: lineage })) out.push(text(r, schema));
  return out.sort();
}

async function readOutput(f: DataFileJson, schema: StructType): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const b of readRows(io, { filePath: f.filePath, fileFormat: 'PARQUET' }, schema)) rows.push(...b.rows);
  return rows;
}

/** Commits a group's result the way the lead's commit would, minimally. */
async function commitResults(t: Table, plan: Plan, results: readonly GroupResult[], sequenceNumber?: bigint): Promise<Table> {
  const m = t.metadata;
  const inputs = plan.groups.filter((g) => results.some((r) => r.groupId === g.id)).flatMap((g) => g.inputs.map((i) => i.file.filePath));
  return commitChanges(t, {
    addedDataFiles: results.flatMap((r) => r.outputs.map((o) => dataFileFromJson(o, m))),
    removedFiles: [
      ...inputs,
      ...results.flatMap((r) => r.obsoleteDeletes.map((d) => (d.fileFormat === 'PUFFIN' ? dataFileFromJson(d, m) : d.filePath))),
    ],
    dataSequenceNumber: sequenceNumber ?? BigInt(plan.startingSequenceNumber),
    operation: 'replace',
  });
}

/** Checks the map against where each live row really went, by id; deleted positions map to nothing. */
async function checkMap(m: TableMetadata, plan: Plan, group: FileGroup, result: GroupResult): Promise<number> {
  expect(result.compactionMap).toBeDefined();
  const map = await readCompactionMap(io, result.compactionMap!);
  expect(map.groupId).toBe(group.id);
  // Every input is listed, also one none of whose rows survived.
  expect(map.sources).toEqual(group.inputs.map((i) => i.file.filePath));
  const schema = currentSchema(m);
  const idAt = new Map<string, bigint>();
  for (const o of result.outputs) {
    for await (const b of readRows(io, { filePath: o.filePath, fileFormat: 'PARQUET' }, schema)) {
      b.rows.forEach((r, i) => idAt.set(`${o.filePath}#${b.firstPos + i}`, r.id as bigint));
    }
  }
  let live = 0;
  for (const input of group.inputs) {
    const task = scanTaskOf(m, input, plan.policy.mode);
    const idOf = new Map<number, bigint>();
    for await (const rows of readTask(io, m, task, schema, { positions: true })) {
      for (const r of rows) idOf.set(Number(r._pos as bigint), r.id as bigint);
    }
    for (let p = 0; p <= Number(input.file.recordCount); p++) {
      const to = remapPosition(map, input.file.filePath, p);
      if (idOf.has(p)) {
        expect(to).toBeDefined();
        expect(idAt.get(`${to!.targetFile}#${to!.pos}`)).toBe(idOf.get(p));
        live++;
      } else {
        expect(to).toBeUndefined();
      }
    }
  }
  expect(live).toBe(idAt.size);
  return live;
}

const NAME = /^g\d+-\d{5}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.parquet$/;

/** Outputs are in the default spec, in the folder of their partition, and every row belongs there. */
async function checkOutputs(t: Table, group: FileGroup, result: GroupResult): Promise<void> {
  const m = t.metadata;
  const spec = specById(m, m.defaultSpecId);
  const schema = currentSchema(m);
  for (const o of result.outputs) {
    const f = dataFileFromJson(o, m);
    expect(f.specId).toBe(m.defaultSpecId);
    expect(f.sortOrderId).toBe(0);
    expect(f.content).toBe(FileContent.Data);
    expect(o.firstRowId).toBeUndefined();
    const folder = partitionFolder(spec, f.partition, schema);
    expect(o.filePath.startsWith(`${t.location}/data/${folder}/`)).toBe(true);
    expect(o.filePath.slice(`${t.location}/data/${folder}/`.length)).toMatch(NAME);
    expect(o.filePath.startsWith(`${t.location}/data/${folder}/${group.id}-`)).toBe(true);
    const rows = await readOutput(o, schema);
    expect(rows.length).toBe(Number(f.recordCount));
    for (const r of rows) expect(partitionKey(spec.specId, partitionOf(spec, schema, r))).toBe(partitionKey(spec.specId, f.partition));
    // Metrics come from the values written.
    const ids = rows.map((r) => r.id as bigint).sort((a, b) => (a < b ? -1 : 1));
    expect(f.valueCounts?.get(1)).toBe(BigInt(rows.length));
    expect(f.nullValueCounts?.get(1)).toBe(0n);
    expect(Buffer.from(f.lowerBounds!.get(1)!).readBigInt64LE()).toBe(ids[0]);
    expect(Buffer.from(f.upperBounds!.get(1)!).readBigInt64LE()).toBe(ids[ids.length - 1]);
    expect(statSync(o.filePath).size).toBe(Number(f.fileSizeInBytes));
  }
}

/** Data bytes plus delete bytes, each delete file counted once per group (it is read once), each DV once per input. */
function expectedBytesRead(group: FileGroup, mode: 'major' | 'minor'): number {
  let n = 0;
  const seen = new Set<string>();
  for (const i of group.inputs) {
    n += Number(i.file.fileSizeInBytes);
    const dv = i.deletes.find((d) => d.file.fileFormat === 'PUFFIN');
    for (const d of i.deletes) {
      if (d.file.content === FileContent.EqualityDeletes && mode === 'minor') continue;
      if (dv && d.file.fileFormat !== 'PUFFIN' && d.file.content === FileContent.PositionDeletes) continue;
      if (d.file.fileFormat !== 'PUFFIN') {
        if (seen.has(d.file.filePath)) continue;
        seen.add(d.file.filePath);
      }
      n += Number(d.file.fileFormat === 'PUFFIN' ? d.file.contentSizeInBytes : d.file.fileSizeInBytes);
    }
  }
  return n;
}

function groupOf(plan: Plan, specId: number, partition: Record<string, unknown>): FileGroup {
  const g = plan.groups.find((x) => x.specId === specId && JSON.stringify(x.partition) === JSON.stringify(partition));
  if (!g) throw new Error(`no group for spec ${specId} ${JSON.stringify(partition)}`);
  return g;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('rewriteGroup, v2: position and equality deletes, schema and spec change', () => {
  it('writes exactly the live rows, in the default spec, with a correct map and proof; the commit keeps every row', async () => {
    const t = await buildTable(2);
    const before = await tableRows(t);
    expect(before.map((r) => Number(JSON.parse(r).id)).sort((a, b) => a - b)).toEqual(LIVE_V2);
    const plan = await planAll(io, t.metadata);
    expect(plan.groups.length).toBe(5);

    const results: GroupResult[] = [];
    for (const g of plan.groups) {
      const r = await rewriteGroup(io, t.metadata, plan, g);
      results.push(r);
      expect(r.groupId).toBe(g.id);
      expect(r.checksums.rowsOut).toBe(r.checksums.rowsIn);
      expect(r.checksums.hashOut).toBe(r.checksums.hashIn);
      expect(r.checksums.hashIn).toMatch(/^[0-9a-f]{16}$/);
      await checkOutputs(t, g, r);
      expect(await checkMap(t.metadata, plan, g, r)).toBe(Number(r.checksums.rowsOut));
      expect(r.compactionMap!.startsWith(`${t.location}/metadata/compaction-maps/${plan.startingSnapshotId}-${g.id}-`)).toBe(true);
      expect(r.bytesRead).toBe(expectedBytesRead(g, 'major'));
      expect(r.bytesWritten).toBe(r.outputs.reduce((n, o) => n + Number(o.fileSizeInBytes), 0) + statSync(r.compactionMap!).size);
      expect(r.durationMs).toBeGreaterThanOrEqual(0);
    }

    // Old-spec partition a lands in several partitions of the new spec (days 14-16 Nov 2023).
    const a0 = results[plan.groups.indexOf(groupOf(plan, 0, { category: 'a' }))];
    expect(a0.outputs.map((o) => o.partition.ts_day).sort()).toEqual(['2023-11-15', '2023-11-16']);
    expect(a0.checksums.rowsIn).toBe('10'); // 4, 20, 22..29

    // Every output row, across groups, is a live row of the table and nothing else.
    const schema = currentSchema(t.metadata);
    const written: string[] = [];
    for (const r of results) for (const o of r.outputs) for (const x of await readOutput(o, schema)) written.push(text(x, schema));
    expect(written.sort()).toEqual(before);

    // Obsolete deletes: file-scoped position deletes of the inputs only.
    const scan = await planFiles(io, t.metadata);
    const posFiles = (category: string, specId: number): string[] =>
      scan.deleteFiles
        .filter((d) => d.content === FileContent.PositionDeletes && d.specId === specId && d.partition.category === category)
        .map((d) => d.filePath);
    const obsolete = (g: FileGroup): string[] => results[plan.groups.indexOf(g)].obsoleteDeletes.map((d) => d.filePath).sort();
    const aFiles = scan.deleteFiles.filter((d) => d.specId === 0 && d.partition.category === 'a');
    expect(aFiles.map((d) => d.recordCount).sort()).toEqual([1n, 1n, 2n]);
    expect(obsolete(groupOf(plan, 0, { category: 'a' }))).toEqual(aFiles.filter((d) => d.recordCount === 1n).map((d) => d.filePath).sort());
    expect(obsolete(groupOf(plan, 0, { category: 'b' }))).toEqual(posFiles('b', 0));
    expect(obsolete(groupOf(plan, 0, { category: 'c' }))).toEqual([]); // an equality delete: the commit decides
    expect(obsolete(groupOf(plan, 1, { category: 'd', ts_day: '2023-11-15' }))).toEqual(posFiles('d', 1));
    expect(obsolete(groupOf(plan, 1, { category: 'a', ts_day: '2023-11-15' }))).toEqual([]);

    const after = await commitResults(t, plan, results);
    expect(await tableRows(after)).toEqual(before);
    const files = await planFiles(io, after.metadata);
    expect(files.tasks.map((x) => x.dataFile.filePath).sort()).toEqual(results.flatMap((r) => r.outputs.map((o) => o.filePath)).sort());
  });

  it('minor mode leaves equality deletes unapplied and still applies position deletes', async () => {
    const t = await buildTable(2);
    const before = await tableRows(t);
    const plan = await planAll(io, t.metadata, { mode: 'minor' });
    const c = groupOf(plan, 0, { category: 'c' });
    const rc = await rewriteGroup(io, t.metadata, plan, c);
    const schema = currentSchema(t.metadata);
    const ids = async (r: GroupResult): Promise<bigint[]> =>
      (await Promise.all(r.outputs.map((o) => readOutput(o, schema)))).flat().map((x) => x.id as bigint).sort();
    expect(await ids(rc)).toEqual([8n, 9n]);
    expect(rc.checksums.rowsIn).toBe('2');
    // Its equality delete is scoped to spec 0, partition c: the outputs stay there so that it still matches.
    expect(rc.outputs.map((o) => [o.specId, o.partition])).toEqual([[0, { category: 'c' }]]);
    expect(rc.outputs[0].filePath.startsWith(`${t.location}/data/category=c/g`)).toBe(true);
    expect(rc.bytesRead).toBe(expectedBytesRead(c, 'minor'));
    expect(rc.bytesRead).toBeLessThan(expectedBytesRead(c, 'major'));
    const rb = await rewriteGroup(io, t.metadata, plan, groupOf(plan, 0, { category: 'b' }));
    expect(await ids(rb)).toEqual([5n, 7n]);
    expect(rb.outputs.every((o) => o.specId === 1)).toBe(true);

    // Committed at the inputs' own sequence number, the equality delete still removes id 8.
    const after = await commitResults(t, { ...plan, groups: [c] }, [rc], BigInt(c.inputs[0].dataSequenceNumber));
    expect(await tableRows(after)).toEqual(before);
  });
});

describe('rewriteGroup, v3: deletion vectors and row lineage', () => {
  it('keeps every row its _row_id and _last_updated_sequence_number, written as columns', async () => {
    const t = await buildTable(3);
    const before = await tableRows(t, true);
    expect(before.map((r) => Number(JSON.parse(r).id))).toEqual(expect.arrayContaining(LIVE_V3));
    expect(before.length).toBe(LIVE_V3.length);
    expect(before.every((r) => JSON.parse(r)._row_id !== null && JSON.parse(r)._last_updated_sequence_number !== null)).toBe(true);
    const plain = await tableRows(t);
    expect(plain.filter((r) => JSON.parse(r).note === 'std').length).toBe(14); // initial default of the added column

    const plan = await planAll(io, t.metadata);
    const results: GroupResult[] = [];
    const withLineage = lineageSchema(t.metadata);
    const written: string[] = [];
    for (const g of plan.groups) {
      const r = await rewriteGroup(io, t.metadata, plan, g);
      results.push(r);
      expect(r.checksums.hashOut).toBe(r.checksums.hashIn);
      await checkOutputs(t, g, r);
      await checkMap(t.metadata, plan, g, r);
      // Every DV of an input is obsolete; v3 has no position delete files.
      const dvs = g.inputs.flatMap((i) => i.deletes.filter((d) => d.file.fileFormat === 'PUFFIN').map((d) => d.file));
      expect(r.obsoleteDeletes).toEqual(dvs);
      for (const o of r.outputs) {
        // The lineage columns are real columns with their reserved field ids.
        const pq = await openParquet(io, o.filePath);
        expect(pq.arrowSchema.fields.map((f) => [f.name, f.metadata.get(FIELD_ID_KEY)]).slice(-2)).toEqual([
          ['_row_id', '2147483540'],
          ['_last_updated_sequence_number', '2147483539'],
        ]);
        // Read as a file that would inherit other values: the written ones win.
        const task = {
          dataFile: { ...dataFileFromJson(o, t.metadata), firstRowId: 1_000_000n },
          spec: specById(t.metadata, o.specId),
          dataSequenceNumber: 99n,
          snapshotId: null,
          deletes: { positionDeletes: [], equalityDeletes: [] },
        };
        for await (const rows of readTask(io, t.metadata, task, currentSchema(t.metadata), { rowLineage: true })) {
          for (const x of rows) written.push(text(x, withLineage));
        }
      }
    }
    expect(plan.groups.some((g) => g.inputs.some((i) => i.deletes.length > 0))).toBe(true);
    expect(written.sort()).toEqual(before);

    // Committed (outputs get no first_row_id of their own), the table reads the same lineage.
    const after = await commitResults(t, plan, results);
    expect(await tableRows(after, true)).toEqual(before);

    // A second compaction reads the lineage columns the first one wrote, and keeps them.
    const again = await planAll(io, after.metadata);
    const second: GroupResult[] = [];
    for (const g of again.groups) second.push(await rewriteGroup(io, after.metadata, again, g));
    expect(second.reduce((n, r) => n + Number(r.checksums.rowsOut), 0)).toBe(LIVE_V3.length);
    expect(await tableRows(await commitResults(after, again, second), true)).toEqual(before);
  });
});

async function smallTable(options: { files: number; rowsPerFile: number; sortOrder?: SortOrder; v?: 2 | 3 }): Promise<Table> {
  let t = await createNewTable(io, join(tempDir(), 'small'), {
    formatVersion: options.v ?? 2,
    schema: SCHEMA,
    properties: DECODE_ONLY,
    ...(options.sortOrder ? { sortOrder: options.sortOrder } : {}),
  });
  let id = 0;
  for (let f = 0; f < options.files; f++) {
    const rows: Row[] = [];
    for (let i = 0; i < options.rowsPerFile; i++) {
      // Ids shuffled across files; some null categories.
      const n = (id++ * 7919) % (options.files * options.rowsPerFile);
      rows.push(row(n, n % 5 === 0 ? null : `c${n % 3}`));
    }
    t = await appendRows(t, rows);
  }
  return t;
}

describe('rewriteGroup: faults leave nothing behind', () => {
  it('a dropped row fails the proof: ValidationError naming the group and both counts, no files left', async () => {
    const t = await smallTable({ files: 3, rowsPerFile: 5 });
    const plan = await planAll(io, t.metadata);
    const tree = listTree(t.location);
    const err = await rewriteGroup(io, t.metadata, plan, plan.groups[0], { faults: { dropRow: true } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(/group g0: the rewrite changed the live rows: inputs 15 rows \(hash [0-9a-f]{16}\), outputs 14 rows \(hash [0-9a-f]{16}\)/);
    expect(listTree(t.location)).toEqual(tree);
  });

  it('a failure after N output files deletes them all', async () => {
    const t = await smallTable({ files: 6, rowsPerFile: 5 });
    const plan = await planAll(io, t.metadata, { targetFileSizeBytes: 1 });
    const tree = listTree(t.location);
    await expect(rewriteGroup(io, t.metadata, plan, plan.groups[0], { faults: { failAfterOutputs: 3 } })).rejects.toThrow(
      /injected fault: failing after 3 output file/,
    );
    expect(listTree(t.location)).toEqual(tree);
    // Without the fault the same group rolls a file per input batch.
    const ok = await rewriteGroup(io, t.metadata, plan, plan.groups[0]);
    expect(ok.outputs.length).toBe(6);
    expect(existsSync(ok.compactionMap!)).toBe(true);
  });
});

describe('rewriteGroup: bounded memory', () => {
  it('streams a group of 50 files batch by batch: no write holds more than one input batch', async () => {
    const t0 = await smallTable({ files: 50, rowsPerFile: 40 });
    const t = (await deleteRows(t0, (r) => (r.id as bigint) % 7n === 0n)).table;
    const plan = await planAll(io, t.metadata, { targetFileSizeBytes: 16 * 1024 });
    expect(plan.groups.length).toBe(1);
    expect(plan.groups[0].inputs.length).toBe(50);
    const calls: number[] = [];
    const real = RollingParquetWriter.prototype.write;
    const watch = vi.spyOn(RollingParquetWriter.prototype, 'write').mockImplementation(function (this: RollingParquetWriter, batch) {
      calls.push(batch.numRows);
      return real.call(this, batch);
    });
    const r = await rewriteGroup(io, t.metadata, plan, plan.groups[0], { batchSize: 16 });
    watch.mockRestore();
    const live = 2000 - Math.ceil(2000 / 7);
    expect(r.checksums.rowsIn).toBe(String(live));
    expect(calls.reduce((a, b) => a + b, 0)).toBe(live);
    expect(Math.max(...calls)).toBeLessThanOrEqual(16);
    expect(calls.length).toBeGreaterThanOrEqual(Math.ceil(live / 16));
    // Small targets roll many files; the map follows every roll.
    expect(r.outputs.length).toBeGreaterThan(1);
    expect(await checkMap(t.metadata, plan, plan.groups[0], r)).toBe(live);
  });
});

describe('rewriteGroup: rolls inside one write', () => {
  it('maps rows of a batch split across several output files', async () => {
    const t0 = await smallTable({ files: 2, rowsPerFile: 700 });
    const t = (await deleteRows(t0, (r) => (r.id as bigint) % 5n === 1n)).table;
    // A 1-byte target rolls after every piece (256 rows) the rolling writer cuts a batch into.
    const plan = await planAll(io, t.metadata, { targetFileSizeBytes: 1 });
    const r = await rewriteGroup(io, t.metadata, plan, plan.groups[0], { batchSize: 1000 });
    expect(r.checksums.rowsOut).toBe('1120');
    expect(r.outputs.map((o) => Number(o.recordCount))).toEqual([256, 256, 48, 256, 256, 48]);
    expect(await checkMap(t.metadata, plan, plan.groups[0], r)).toBe(1120);
  });
});

describe('rewriteGroup: sort strategy', () => {
  const ORDER: SortOrder = {
    orderId: 1,
    fields: [
      { sourceId: 2, transform: IDENTITY, direction: 'asc', nullOrder: 'nulls-last' },
      { sourceId: 1, transform: IDENTITY, direction: 'desc', nullOrder: 'nulls-first' },
    ],
  };

  function expectedOrder(rows: Row[]): bigint[] {
    return [...rows]
      .sort((a, b) => {
        const x = a.category as string | null;
        const y = b.category as string | null;
        if (x !== y) {
          if (x === null) return 1;
          if (y === null) return -1;
          return x < y ? -1 : 1;
        }
        return (a.id as bigint) > (b.id as bigint) ? -1 : (a.id as bigint) < (b.id as bigint) ? 1 : 0;
      })
      .map((r) => r.id as bigint);
  }

  const sortDirs = (): string[] => readdirSync(tmpdir()).filter((d) => d.startsWith('packice-sort-'));

  for (const [name, options, spills] of [
    ['in memory', {}, 0],
    ['spilling sorted runs to disk and merging them', { sortRunBytes: 1500, batchSize: 8 }, 10],
  ] as const) {
    it(`writes the group in the table's sort order (${name}), with no map`, async () => {
      const t = await smallTable({ files: 6, rowsPerFile: 20, sortOrder: ORDER, v: 3 });
      const before = await tableRows(t, true);
      const plan = await planAll(io, t.metadata, { strategy: 'sort' });
      const dirs = sortDirs();
      const opened: string[] = [];
      const real = ParquetWriter.open.bind(ParquetWriter);
      vi.spyOn(ParquetWriter, 'open').mockImplementation((...args) => {
        opened.push(args[1]);
        return real(...args);
      });
      const r = await rewriteGroup(io, t.metadata, plan, plan.groups[0], options);
      const runs = opened.filter((p) => p.includes('packice-sort-'));
      if (spills === 0) expect(runs).toEqual([]);
      else expect(runs.length).toBeGreaterThanOrEqual(spills);
      expect(runs.every((p) => !existsSync(p))).toBe(true);
      expect(sortDirs()).toEqual(dirs);
      expect(r.compactionMap).toBeUndefined();
      expect(r.checksums.hashOut).toBe(r.checksums.hashIn);
      expect(r.outputs.length).toBe(1);
      expect(r.outputs[0].sortOrderId).toBe(1);
      const rows = await readOutput(r.outputs[0], lineageSchema(t.metadata));
      expect(rows.map((x) => x.id)).toEqual(expectedOrder(rows));
      expect(rows.length).toBe(120);
      const after = await commitResults(t, plan, [r]);
      expect(await tableRows(after, true)).toEqual(before);
    });
  }

  it('refuses a table without a sort order before writing anything', async () => {
    const t = await smallTable({ files: 2, rowsPerFile: 3 });
    const plan = await planAll(io, t.metadata, { strategy: 'sort' });
    const tree = listTree(t.location);
    await expect(rewriteGroup(io, t.metadata, plan, plan.groups[0])).rejects.toThrow(/group g0: cannot sort: the table has no sort order/);
    expect(listTree(t.location)).toEqual(tree);
  });
});
