/**
 * Interop both ways: tables packice writes are read by Java Iceberg 1.12 (and PyIceberg 0.12
 * where it can) with exactly the rows our scan returns; tables Java writes are read by us with
 * exactly the rows Java returns.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Table } from '../../lib/catalog/table.js';
import { loadTable } from '../../lib/catalog/table.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { stringifyJson } from '../../lib/iceberg/json.js';
import { rowToJson } from '../../lib/iceberg/row-json.js';
import { currentSchema, schemaById, snapshotById } from '../../lib/iceberg/table-metadata.js';
import type { Row } from '../../lib/iceberg/values.js';
import {
  appendRows, createNewTable, deleteByEquality, deleteRows, updateSchema, updateSpec,
} from '../../lib/table/operations.js';
import { scanRows } from '../../lib/table/scan.js';
import { parseJsonLines, sortRows, type CanonicalRow } from '../support/canonical-rows.js';
import { tempDir } from '../support/fixtures.js';
import { ensureJavaHarness, javaRead, javaWrite, JAVA_SCENARIOS } from '../support/java.js';
import { pyRead } from '../support/pyiceberg.js';

const io = new LocalFileIO();

/** Our scan, printed the way `packice scan` prints it, parsed back. */
async function ourRows(location: string, snapshotId?: bigint): Promise<CanonicalRow[]> {
  const t = await loadTable(location);
  const s = snapshotId === undefined ? undefined : snapshotById(t.metadata, snapshotId);
  const schema = s?.schemaId !== undefined && snapshotId !== undefined ? schemaById(t.metadata, s.schemaId) : currentSchema(t.metadata);
  const lines: string[] = [];
  for await (const r of scanRows(t.io, t.metadata, { snapshotId, projection: schema })) lines.push(stringifyJson(rowToJson(r, schema)));
  return sortRows(parseJsonLines(lines.join('\n'), location));
}

const SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'category', required: false, type: { type: 'string' as const } },
    { id: 3, name: 'amount', required: false, type: { type: 'decimal' as const, precision: 10, scale: 2 } },
    { id: 4, name: 'ts', required: false, type: { type: 'timestamptz' as const } },
    { id: 5, name: 'day', required: false, type: { type: 'date' as const } },
    { id: 6, name: 'score', required: false, type: { type: 'double' as const } },
    { id: 7, name: 'count', required: false, type: { type: 'int' as const } },
    { id: 8, name: 'flag', required: false, type: { type: 'boolean' as const } },
  ],
};

function row(id: number, category: string): Row {
  return {
    id: id === 13 ? 9007199254740993n : BigInt(id),
    category,
    amount: BigInt((id % 2 === 0 ? -1 : 1) * (id * 1234 + 5)),
    ts: 1_700_000_000_000_000n + BigInt(id) * 3_600_000_001n,
    day: id === 5 ? -200 : 19_700 + id,
    score: id === 4 ? Number.NaN : id === 6 ? null : id * 1.5,
    count: id * 7,
    flag: id % 3 === 0 ? null : id % 2 === 0,
  };
}

interface Built {
  readonly table: Table;
  readonly expectIds: readonly (number | string)[];
}

/** Appends across partitions, position deletes or DVs, a schema change, a spec change, more deletes. */
async function buildTable(formatVersion: 2 | 3, withEqualityDeletes: boolean): Promise<Built> {
  const location = join(tempDir(), `ours-v${formatVersion}${withEqualityDeletes ? '-eq' : ''}`);
  let t = await createNewTable(io, location, {
    formatVersion,
    schema: SCHEMA,
    partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
  });
  t = await appendRows(t, [1, 2, 3, 4].map((i) => row(i, 'a')).concat([5, 6, 7].map((i) => row(i, 'b'))));
  t = await appendRows(t, [8, 9].map((i) => row(i, 'c')));
  t = (await deleteRows(t, (r) => r.id === 2n || r.id === 6n)).table;
  // A second delete on a file that already has one: a second position file in v2, a merged DV in v3.
  t = (await deleteRows(t, (r) => r.id === 3n)).table;
  if (withEqualityDeletes) t = await deleteByEquality(t, [1], [{ id: 8n, category: 'c' }]);
  t = await updateSchema(t, [
    ...SCHEMA.fields.filter((f) => f.name !== 'count'),
    { id: 9, name: 'note', required: false, type: { type: 'string' } },
  ]);
  t = await updateSpec(t, [
    { sourceId: 2, name: 'category', transform: { kind: 'identity' } },
    { sourceId: 4, name: 'ts_day', transform: { kind: 'day' } },
  ]);
  const { count: _c10, ...r10 } = row(10, 'a');
  const { count: _c11, ...r11 } = row(11, 'd');
  const { count: _c13, ...r13 } = row(13, 'd');
  t = await appendRows(t, [{ ...r10, note: 'x' }, { ...r11, note: null }, { ...r13, note: 'ünïcode "q"' }]);
  t = (await deleteRows(t, (r) => r.id === 11n || r.id === 1n)).table;
  const expectIds = [4, 5, 7, ...(withEqualityDeletes ? [] : [8]), 9, 10, '9007199254740993'];
  return { table: t, expectIds };
}

function ids(rows: readonly CanonicalRow[]): (number | string)[] {
  return rows.map((r) => r.id as number | string);
}

describe('interop: tables packice writes', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  for (const [v, eq] of [[2, false], [2, true], [3, false]] as const) {
    it(`v${v}${eq ? ' with equality deletes' : ''}: Java${eq ? '' : ' and PyIceberg'} read exactly our rows`, async () => {
      const { table, expectIds } = await buildTable(v, eq);
      const ours = await ourRows(table.location);
      expect(ids(ours).sort()).toEqual([...expectIds].sort());
      expect(sortRows(await javaRead(table.location))).toEqual(ours);
      if (!eq) expect(sortRows(await pyRead(table.metadataLocation))).toEqual(ours);
      // The first snapshot too, read with the schema it was written with.
      const first = table.metadata.snapshots[0].snapshotId;
      expect(sortRows(await javaRead(table.location, first))).toEqual(await ourRows(table.location, first));
    });
  }
});

describe('interop: tables Java writes', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  for (const scenario of JAVA_SCENARIOS) {
    it(`${scenario}: our scan returns the rows Java returns`, async () => {
      const location = join(tempDir(), scenario);
      await javaWrite(scenario, location);
      const java = sortRows(await javaRead(location));
      expect(java.length).toBeGreaterThan(0);
      expect(await ourRows(location)).toEqual(java);
      const t = await loadTable(location);
      for (const s of t.metadata.snapshots) {
        expect(await ourRows(location, s.snapshotId)).toEqual(sortRows(await javaRead(location, s.snapshotId)));
      }
    });
  }
});
