/**
 * A table whose inputs with position deletes can be merged page by page (lib/parquet/row-group-merge.ts):
 * v2 unless asked, partitioned by identity(category), no repeated or boolean column, every input
 * merged (copy floor out of reach, merge floor 1 byte); and the rows tests delete from it.
 */
import { join } from 'node:path';
import type { Table } from '../../lib/catalog/table.js';
import { COPY_MIN_ROW_GROUP_BYTES_PROPERTY, MERGE_MIN_ROW_GROUP_BYTES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import type { StructType } from '../../lib/iceberg/types.js';
import type { Row } from '../../lib/iceberg/values.js';
import type { FileIO } from '../../lib/io/file-io.js';
import { appendRows, createNewTable } from '../../lib/table/operations.js';
import { tempDir } from './fixtures.js';

/** Every input merged: no row group reaches the copy floor, every one the merge floor. */
export const MERGE = { [COPY_MIN_ROW_GROUP_BYTES_PROPERTY]: String(2 ** 40), [MERGE_MIN_ROW_GROUP_BYTES_PROPERTY]: '1' };

/** No repeated or boolean column: rows can be dropped page by page. */
export const FLAT_SCHEMA: StructType = {
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

export function flatRow(id: number): Row {
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

export async function flatTable(
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
export const DELETED = (rows: number) => (r: Row): boolean => {
  const id = Number(r.id);
  const pos = (id - 1) % rows;
  return id % 7 === 0 || pos === 0 || pos === rows - 1 || (id <= rows && r.qty === 9) || id % 26 === 13;
};

