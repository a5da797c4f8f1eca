/**
 * Must-show 1 of issue 7: a writer prepares deletes against snapshot S; then 0, 1 or 2
 * compactions commit; then the writer's commit and one more rewrite (start, commit) happen in
 * every order. For position deletes (v2), deletion vectors (v3) and equality deletes (v2, v3) the
 * live rows always equal an in-memory model of the table, and neither the writer's commit nor
 * the compaction commit opens a data file to rebase (a recording FileIO counts every open).
 */
import fc from 'fast-check';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import type { GroupResult, Plan } from '../../lib/compaction/messages.js';
import { commitPositionDeletes } from '../../lib/compaction/row-delta.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { currentSchema } from '../../lib/iceberg/table-metadata.js';
import type { Row } from '../../lib/iceberg/values.js';
import { commitStep, rewriteStep } from '../../lib/pipeline/steps.js';
import { appendRows, createNewTable, deleteByEquality, deleteRows } from '../../lib/table/operations.js';
import { readTask } from '../../lib/table/scan.js';
import { planAll } from '../support/compaction.js';
import { tempDir } from '../support/fixtures.js';
import { RecordingIO } from '../support/recording-io.js';
import { liveRows } from '../support/small-table.js';

const io = new LocalFileIO();
const SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'category', required: true, type: { type: 'string' as const } },
  ],
};
const category = (id: number): string => (id % 2 === 0 ? 'a' : 'b');
const row = (id: number): Row => ({ id: BigInt(id), category: category(id) });

/** The table's rows as a set of ids, changed as each operation says. */
class Model {
  readonly live = new Set<number>();
  private next = 0;
  append(n: number): number[] {
    const ids = Array.from({ length: n }, () => this.next++);
    for (const id of ids) this.live.add(id);
    return ids;
  }
  delete(ids: Iterable<number>): void {
    for (const id of ids) this.live.delete(id);
  }
  sorted(): number[] {
    return [...this.live].sort((a, b) => a - b);
  }
}

type Kind = 'position' | 'dv' | 'equality';
type Order = 'rewrite-commit-writer' | 'rewrite-writer-commit' | 'writer-rewrite-commit';
const ORDERS: readonly Order[] = ['rewrite-commit-writer', 'rewrite-writer-commit', 'writer-rewrite-commit'];
const KINDS: readonly { kind: Kind; v: 2 | 3 }[] = [
  { kind: 'position', v: 2 },
  { kind: 'dv', v: 3 },
  { kind: 'equality', v: 2 },
  { kind: 'equality', v: 3 },
];

/** Data files are `.parquet` but not `-deletes.parquet`; Puffin files hold deletion vectors. */
const isDataFile = (path: string): boolean => /\.parquet$/.test(path) && !/-deletes\.parquet$/.test(path);

async function rewriteAll(location: string): Promise<{ plan: Plan; results: GroupResult[] }> {
  const t = await loadTable(location);
  const plan = await planAll(t.io, t.metadata);
  const results = await Promise.all(plan.groups.map((g) => rewriteStep({ plan, groupId: g.id })));
  return { plan, results };
}

/** Positions of the rows with `ids` in the files of the table's current snapshot (the writer reads data to prepare). */
async function positionsOf(t: Table, ids: ReadonlySet<number>): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  for (const task of (await planFiles(t.io, t.metadata)).tasks) {
    for await (const rows of readTask(t.io, t.metadata, task, currentSchema(t.metadata), { positions: true })) {
      for (const r of rows) {
        if (!ids.has(Number(r.id))) continue;
        const list = out.get(task.dataFile.filePath) ?? [];
        list.push(Number(r._pos as bigint));
        out.set(task.dataFile.filePath, list);
      }
    }
  }
  return out;
}

interface Case {
  readonly kind: Kind;
  readonly v: 2 | 3;
  readonly order: Order;
  readonly compactions: 0 | 1 | 2;
  /** Ids the writer deletes, and ids another writer deletes before each compaction. */
  readonly writerIds: readonly number[];
  readonly otherIds: readonly (readonly number[])[];
}

async function run(c: Case): Promise<void> {
  const model = new Model();
  const location = join(tempDir(), 't');
  let t = await createNewTable(io, location, {
    formatVersion: c.v,
    schema: SCHEMA,
    partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
  });
  for (let i = 0; i < 3; i++) t = await appendRows(t, model.append(8).map(row));

  // The writer prepares its deletes in snapshot S.
  const s = t.metadata.currentSnapshotId!;
  const writerIds = new Set(c.writerIds.filter((id) => model.live.has(id)));
  const prepared = c.kind === 'equality' ? undefined : await positionsOf(t, writerIds);

  // Compactions commit after S; before each, another writer appends and deletes.
  for (let k = 0; k < c.compactions; k++) {
    t = await appendRows(await loadTable(location), model.append(4).map(row));
    const other = new Set(c.otherIds[k]);
    t = (await deleteRows(t, (r) => other.has(Number(r.id)))).table;
    model.delete(other);
    const { plan, results } = await rewriteAll(location);
    const commit = await commitStep({ plan, results });
    expect(commit.abortedGroups).toEqual([]);
  }

  const writerCommit = async (): Promise<void> => {
    if (c.kind === 'equality') {
      // Equality deletes need no rebase: they apply by sequence number.
      if (writerIds.size > 0) await deleteByEquality(await loadTable(location), [1], [...writerIds].map(row));
    } else {
      const recording = new RecordingIO(io);
      const r = await commitPositionDeletes(await loadTable(location, { io: recording }), { snapshotId: s, positions: prepared! });
      expect(recording.reads.filter(isDataFile)).toEqual([]);
      expect(r.rowsDeleted).toBe([...writerIds].filter((id) => model.live.has(id)).length);
      if (r.maps > 0) expect(r.rebased + r.dropped).toBe([...prepared!.values()].reduce((n, l) => n + l.length, 0));
    }
    model.delete(writerIds);
    expect((await liveRows(io, location)).map((r) => Number(r.id))).toEqual(model.sorted());
  };
  let rewrite: { plan: Plan; results: GroupResult[] } | undefined;
  const rewriteStart = async (): Promise<void> => {
    rewrite = await rewriteAll(location);
  };
  const rewriteCommit = async (): Promise<void> => {
    const recording = new RecordingIO(io);
    const commit = await commitCompaction(await loadTable(location, { io: recording }), rewrite!.plan, rewrite!.results);
    expect(commit.abortedGroups).toEqual([]);
    expect(recording.reads.filter(isDataFile)).toEqual([]);
    expect((await liveRows(io, location)).map((r) => Number(r.id))).toEqual(model.sorted());
  };
  const steps = {
    'rewrite-commit-writer': [rewriteStart, rewriteCommit, writerCommit],
    'rewrite-writer-commit': [rewriteStart, writerCommit, rewriteCommit],
    'writer-rewrite-commit': [writerCommit, rewriteStart, rewriteCommit],
  }[c.order];
  for (const step of steps) await step();
  expect((await liveRows(io, location)).map((r) => Number(r.id))).toEqual(model.sorted());
}

// The deleted ids are drawn by fast-check from a fixed seed, so every run checks the same cases.
const ids = (max: number, n: number): fc.Arbitrary<number[]> => fc.uniqueArray(fc.integer({ min: 0, max }), { minLength: 1, maxLength: n });
const [draws] = fc.sample(fc.array(fc.tuple(ids(23, 6), ids(31, 3), ids(31, 3)), { minLength: 36, maxLength: 36 }), { seed: 7, numRuns: 1 });

describe('a writer, compactions and a rewrite in every order keep the model\'s rows', () => {
  let n = 0;
  for (const { kind, v } of KINDS) {
    for (const compactions of [0, 1, 2] as const) {
      for (const order of ORDERS) {
        const [writerIds, other1, other2] = draws[n++];
        it(`${kind} v${v}, ${compactions} compaction(s) after the writer's snapshot, ${order}`, async () => {
          await run({ kind, v, order, compactions, writerIds, otherIds: [other1, other2] });
        }, 120_000);
      }
    }
  }
});
