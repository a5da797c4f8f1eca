/**
 * A small table the way a streaming writer leaves it, for tests of the compaction flow's
 * handlers and bundles: two partitions (`category` a, b), four appends of 10 rows (8 data
 * files), then a delete of every fifth id (position deletes in v2, deletion vectors in v3).
 */
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { COPY_MIN_ROW_GROUP_BYTES_PROPERTY, MERGE_DELETES_PROPERTY, MERGE_MIN_ROW_GROUP_BYTES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import { DECODE_WORKERS_PROPERTY } from '../../lib/compaction/decode-pool.js';
import type { FileIO } from '../../lib/io/file-io.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import type { Row } from '../../lib/iceberg/values.js';
import { appendRows, createNewTable, deleteRows } from '../../lib/table/operations.js';
import { scanRows } from '../../lib/table/scan.js';

export const SMALL_TABLE_SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'category', required: true, type: { type: 'string' as const } },
    { id: 3, name: 'amount', required: false, type: { type: 'decimal' as const, precision: 10, scale: 2 } },
  ],
};

/** 40 rows written, ids 5, 10, … 40 deleted: 32 live rows. */
export async function smallTable(io: FileIO, location: string, formatVersion: 2 | 3): Promise<Table> {
  return fillSmallTable(await createNewTable(io, location, { formatVersion, ...SMALL_TABLE_SPEC }));
}

/**
 * Table properties under which every input is decoded (no column-chunk copy, no page merge) by
 * `workers` decode workers: the small table's row groups would otherwise be copied or merged,
 * and no worker would start.
 */
export function decodedByWorkers(workers: number): Record<string, string> {
  return {
    [DECODE_WORKERS_PROPERTY]: String(workers),
    [COPY_MIN_ROW_GROUP_BYTES_PROPERTY]: String(2 ** 40),
    [MERGE_MIN_ROW_GROUP_BYTES_PROPERTY]: String(2 ** 40),
    [MERGE_DELETES_PROPERTY]: 'false',
  };
}

/** The small table's schema and partitioning, for a table created elsewhere (a catalog's). */
export const SMALL_TABLE_SPEC = {
  schema: SMALL_TABLE_SCHEMA,
  partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' as const } }],
};

/** The small table's four appends and its delete, on an empty table of SMALL_TABLE_SPEC. */
export async function fillSmallTable(empty: Table): Promise<Table> {
  let t = empty;
  let id = 0;
  for (let c = 0; c < 4; c++) {
    const rows: Row[] = [];
    for (let i = 0; i < 10; i++) {
      id++;
      rows.push({ id: BigInt(id), category: id % 2 === 0 ? 'a' : 'b', amount: BigInt(id * 125) });
    }
    t = await appendRows(t, rows);
  }
  t = (await deleteRows(t, (r) => (r.id as bigint) % 5n === 0n)).table;
  return t;
}

/** The live rows of the table's current snapshot, ordered by id. */
export async function liveRows(io: FileIO, location: string, s3Endpoint?: string): Promise<Row[]> {
  const t = await loadTable(location, s3Endpoint ? { s3Endpoint, io } : { io });
  const rows: Row[] = [];
  for await (const r of scanRows(t.io, t.metadata)) rows.push(r);
  return rows.sort((a, b) => ((a.id as bigint) < (b.id as bigint) ? -1 : 1));
}

/** Live data files and delete files of the current snapshot. */
export async function fileCounts(io: FileIO, location: string): Promise<{ data: number; deletes: number }> {
  const t = await loadTable(location, { io });
  const plan = await planFiles(t.io, t.metadata);
  return { data: plan.tasks.length, deletes: plan.deleteFiles.length };
}
