/**
 * The column store of kept files gives back the tasks it was given, on a real table's scan
 * (lib/table/operations.ts); a file with a field its columns do not hold is kept whole.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CandidateStore, type StoredPartition } from '../../lib/compaction/candidate-store.js';
import { NO_DELETES } from '../../lib/iceberg/delete-index.js';
import { partitionKey } from '../../lib/iceberg/partition.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { LocalFileIO } from '../../lib/io/local.js';
import type { Row } from '../../lib/iceberg/values.js';
import { appendRows, createNewTable, deleteRows } from '../../lib/table/operations.js';
import { tempDir } from '../support/fixtures.js';
import { SMALL_TABLE_SCHEMA } from '../support/small-table.js';

const io = new LocalFileIO();
let nextId = 0;
const rows = (category: string, n: number): Row[] => Array.from({ length: n }, () => ({ id: BigInt(nextId++), category }));

describe('candidate store', () => {
  it('gives back each task of a v3 scan, with its deletes, from its columns; odd files whole', async () => {
    let t = await createNewTable(io, join(tempDir(), 't'), {
      schema: SMALL_TABLE_SCHEMA,
      formatVersion: 3,
      partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
    });
    t = await appendRows(t, rows('a', 10));
    t = await appendRows(t, rows('a', 20));
    t = await appendRows(t, rows('b', 5));
    t = (await deleteRows(t, (r) => r.category === 'a' && (r.id as bigint) % 3n === 0n)).table;
    const scan = await planFiles(io, t.metadata, undefined, { columnStats: false });
    expect(scan.tasks.some((x) => x.dataFile.firstRowId !== null)).toBe(true);
    const partitions: StoredPartition[] = [];
    const store = new CandidateStore(partitions, false);
    const indexOf = new Map<string, number>();
    const added = scan.tasks.map((task) => {
      const key = partitionKey(task.dataFile.specId, task.dataFile.partition);
      let p = indexOf.get(key);
      if (p === undefined) {
        indexOf.set(key, (p = partitions.length));
        partitions.push({ specId: task.dataFile.specId, spec: task.spec, row: task.dataFile.partition, key });
      }
      const hasDeletes = task.deletes !== NO_DELETES;
      return store.add(task, p, p === 0, hasDeletes);
    });
    expect(store.length).toBe(scan.tasks.length);
    added.forEach((i, n) => {
      const task = scan.tasks[n];
      // Made again, not the same objects: equal, deletes included.
      expect(store.task(i, NO_DELETES)).not.toBe(task);
      expect(store.task(i, NO_DELETES)).toEqual({ ...task, partitionKey: partitions[store.partitionIndexes[i]].key });
      expect(store.dataFile(i)).toEqual(task.dataFile);
      expect(store.deletesOf(i)).toBe(task.deletes === NO_DELETES ? undefined : task.deletes);
      expect(store.selected(i)).toBe(store.partitionIndexes[i] === 0);
    });
    expect(scan.tasks.filter((x) => x.deletes !== NO_DELETES).length).toBeGreaterThan(0);

    // Key metadata and a size beyond 2^53 have no column: such a file is kept as it came.
    const first = scan.tasks[0];
    const odd = [
      { ...first, dataFile: { ...first.dataFile, keyMetadata: new Uint8Array([1, 2]) } },
      { ...first, dataFile: { ...first.dataFile, fileSizeInBytes: 2n ** 60n + 1n } },
      { ...first, dataFile: { ...first.dataFile, lowerBounds: new Map([[1, new Uint8Array([0])]]) } },
    ];
    for (const task of odd) {
      const i = store.add(task, 0, true, false);
      expect(store.task(i, NO_DELETES)).toBe(task);
      expect(store.dataFile(i)).toBe(task.dataFile);
    }
  });
});
