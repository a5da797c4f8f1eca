/**
 * A table whose row groups the rewriter may copy (lib/compaction/chunk-copy.ts): v2,
 * partitioned by identity(category), every column kind metrics treat apart (decimal,
 * timestamptz, date, double with NaN, boolean, a struct, a list, strings longer than the
 * truncate(16) bounds), one file per partition per append, and the row-group floor at 1 byte.
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Table } from '../../lib/catalog/table.js';
import { readCompactionMap } from '../../lib/compaction/compaction-map.js';
import type { DataFileJson, GroupResult, Plan } from '../../lib/compaction/messages.js';
import { remapPosition } from '../../lib/compaction/remap.js';
import { stringifyJson } from '../../lib/iceberg/json.js';
import { rowToJson } from '../../lib/iceberg/row-json.js';
import { currentSchema, type TableMetadata } from '../../lib/iceberg/table-metadata.js';
import { readRows } from '../../lib/table/data-reader.js';
import { scanRows } from '../../lib/table/scan.js';
import { COPY_MIN_ROW_GROUP_BYTES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import type { FileIO } from '../../lib/io/file-io.js';
import type { Row } from '../../lib/iceberg/values.js';
import { appendRows, createNewTable } from '../../lib/table/operations.js';
import { tempDir } from './fixtures.js';

export const CHUNK_COPY_SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'category', required: false, type: { type: 'string' as const } },
    { id: 3, name: 'amount', required: false, type: { type: 'decimal' as const, precision: 10, scale: 2 } },
    { id: 4, name: 'ts', required: false, type: { type: 'timestamptz' as const } },
    { id: 5, name: 'day', required: false, type: { type: 'date' as const } },
    { id: 6, name: 'score', required: false, type: { type: 'double' as const } },
    { id: 7, name: 'flag', required: false, type: { type: 'boolean' as const } },
    {
      id: 8, name: 'point', required: false,
      type: { type: 'struct' as const, fields: [{ id: 9, name: 'x', required: false, type: { type: 'float' as const } }] },
    },
    { id: 10, name: 'tags', required: false, type: { type: 'list' as const, elementId: 11, element: { type: 'string' as const }, elementRequired: false } },
    { id: 12, name: 'note', required: false, type: { type: 'string' as const } },
  ],
};

export function chunkCopyRow(id: number, category: string): Row {
  return {
    id: BigInt(id),
    category,
    amount: BigInt((id % 2 === 0 ? -1 : 1) * (id * 1234 + 5)),
    ts: 1_700_000_000_000_000n + BigInt(id) * 3_600_000_001n,
    day: 19_700 + (id % 50),
    score: id % 17 === 4 ? Number.NaN : id % 11 === 6 ? null : id * 1.5,
    flag: id % 3 === 0 ? null : id % 2 === 0,
    point: id % 7 === 0 ? null : { x: id % 5 === 0 ? null : id / 4 },
    tags: id % 4 === 0 ? null : [`t${id % 3}`, `long tag value number ${id} beyond sixteen`],
    note: id % 9 === 0 ? null : `note ${'x'.repeat(id % 30)} ${id}`,
  };
}

/** A table (v2 unless asked) partitioned by category, one file per partition per append, copying every row group (floor 1 byte). */
export async function chunkCopyTable(
  io: FileIO,
  appends: number,
  rowsPerAppend: number,
  options: { readonly formatVersion?: 2 | 3; readonly location?: string; readonly properties?: Readonly<Record<string, string>> } = {},
): Promise<Table> {
  let t = await createNewTable(io, options.location ?? join(tempDir(), 'chunk-copy'), {
    formatVersion: options.formatVersion ?? 2,
    schema: CHUNK_COPY_SCHEMA,
    partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
    properties: { [COPY_MIN_ROW_GROUP_BYTES_PROPERTY]: '1', ...options.properties },
  });
  let id = 1;
  for (let a = 0; a < appends; a++) {
    const rows: Row[] = [];
    for (let i = 0; i < rowsPerAppend; i++, id++) rows.push(chunkCopyRow(id, id % 3 === 0 ? 'b' : 'a'));
    t = await appendRows(t, rows);
  }
  return t;
}


/** The table's live rows as sorted JSON lines. */
export async function tableRows(t: Table): Promise<string[]> {
  const schema = currentSchema(t.metadata);
  const out: string[] = [];
  for await (const r of scanRows(t.io, t.metadata)) out.push(stringifyJson(rowToJson(r, schema)));
  return out.sort();
}

/** Every row of every input is where the map says, by id; a `deleted` row has no place in it. */
export async function checkMap(io: FileIO, m: TableMetadata, plan: Plan, result: GroupResult, deleted: (r: Row) => boolean = () => false): Promise<void> {
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
        if (deleted(r)) expect(to).toBeUndefined();
        else expect(idAt.get(`${to!.targetFile}#${to!.pos}`)).toBe(r.id);
      });
    }
  }
}

export function withProperties(m: TableMetadata, properties: Readonly<Record<string, string>>): TableMetadata {
  return { ...m, properties: { ...m.properties, ...properties } };
}

/** An output written undecoded (copied or merged) has the metrics the decode path gives the same rows. */
export function expectDecodedMetrics(undecoded: DataFileJson, decoded: DataFileJson): void {
  expect(undecoded.recordCount).toBe(decoded.recordCount);
  expect(undecoded.valueCounts).toEqual(decoded.valueCounts);
  expect(undecoded.nullValueCounts).toEqual(decoded.nullValueCounts);
  expect(undecoded.lowerBounds).toEqual(decoded.lowerBounds);
  expect(undecoded.upperBounds).toEqual(decoded.upperBounds);
}
