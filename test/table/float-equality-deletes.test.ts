/**
 * Equality deletes on float and double columns, which the spec forbids but other engines write:
 * applied as Java 1.12 applies them (StructLikeSet: Float/Double.compare, so -0.0 is not 0.0 and
 * every NaN is every other; null matches null) by the scan and by compaction on the decode path and
 * on the merge path (keys read as the decoder reads them: chunk-copy.ts deletedPositions). And
 * deleteByEquality refuses to write them unless told the table stands for another engine's.
 * test/interop/float-equality-deletes.test.ts has Java read the same tables.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { MERGE_DELETES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import type { GroupResult } from '../../lib/compaction/messages.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { InvalidArgumentError } from '../../lib/errors.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { currentSchema } from '../../lib/iceberg/table-metadata.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { deleteByEquality } from '../../lib/table/operations.js';
import { readBatches } from '../../lib/table/data-reader.js';
import { scanRows } from '../../lib/table/scan.js';
import { withProperties } from '../support/chunk-copy-table.js';
import { planAll } from '../support/compaction.js';
import { tempDir } from '../support/fixtures.js';
import { FLOAT_KEY_ROWS, floatKeyRow, floatKeyTable, javaLiveIds, NAN_BITS } from '../support/float-key-table.js';

const io = new LocalFileIO();

async function liveIds(t: Table): Promise<number[]> {
  const ids: number[] = [];
  for await (const r of scanRows(t.io, t.metadata)) ids.push(Number(r.id));
  return ids.sort((a, b) => a - b);
}

async function deleteFiles(t: Table): Promise<number> {
  const plan = await planFiles(t.io, t.metadata);
  return plan.tasks.reduce((n, task) => n + task.deletes.equalityDeletes.length + task.deletes.positionDeletes.length, 0);
}

/** Rewrites every group (merged, or decoded with merge-deletes off) and commits. */
async function compact(t: Table, path: 'merged' | 'decoded'): Promise<Table> {
  const m = path === 'decoded' ? withProperties(t.metadata, { [MERGE_DELETES_PROPERTY]: 'false' }) : t.metadata;
  const plan = await planAll(io, m);
  const results: GroupResult[] = [];
  for (const g of plan.groups) {
    const r = await rewriteGroup(io, m, plan, g);
    expect(r.inputPaths?.[path], `the ${path} path took every input`).toBe(g.inputs.length);
    results.push(r);
  }
  await commitCompaction(t, plan, results);
  return loadTable(t.location);
}

describe('equality deletes on float and double columns, as Java applies them', () => {
  it('the model: -0.0 and NaN rows outlive keys 0.0 and a NaN only as Java compares them', () => {
    const live = javaLiveIds().map(floatKeyRow);
    // Rows of -0.0 outlive a 0.0 key; no NaN or null outlives a NaN or null key.
    expect(live.some((r) => Object.is(r.d, -0))).toBe(true);
    expect(live.some((r) => Object.is(r.f, -0))).toBe(true);
    expect(live.every((r) => r.d !== null && r.f !== null && !Number.isNaN(r.d) && !Number.isNaN(r.f))).toBe(true);
    expect(live.some((r) => r.d === 0 && !Object.is(r.d, -0))).toBe(false);
    // (id, e) keys: 8's -0.0 is not 0.0, 32's is -0.0, 11's NaN matches a NaN of other bits.
    const ids = live.map((r) => Number(r.id));
    expect([ids.includes(8), ids.includes(32), ids.includes(11)]).toEqual([true, false, false]);
  });

  it('the scan keeps the rows Java keeps (the files hold NaNs of two bit patterns)', async () => {
    const t = await floatKeyTable(io, join(tempDir(), 'float-keys-scan'));
    // Else the NaN patterns were lost on the way in and nothing here tells them apart.
    const bits = { d: new Set<string>(), f: new Set<string>() };
    for (const task of (await planFiles(io, t.metadata)).tasks) {
      for await (const { batch } of readBatches(io, task.dataFile, currentSchema(t.metadata))) {
        const d = batch.getChild('d')!.data[0].values as Float64Array;
        const f = batch.getChild('f')!.data[0].values as Float32Array;
        for (const x of new BigUint64Array(d.buffer, d.byteOffset, d.length)) bits.d.add(x.toString(16));
        for (const x of new Uint32Array(f.buffer, f.byteOffset, f.length)) bits.f.add(x.toString(16));
      }
    }
    for (const b of NAN_BITS.double) expect(bits.d).toContain(b.toString(16));
    for (const b of NAN_BITS.float) expect(bits.f).toContain(b.toString(16));
    expect(await liveIds(t)).toEqual(javaLiveIds());
  });

  for (const path of ['decoded', 'merged'] as const) {
    it(`compaction on the ${path} path keeps them, and applies every delete`, async () => {
      const t = await floatKeyTable(io, join(tempDir(), `float-keys-${path}`));
      expect(await deleteFiles(t)).toBeGreaterThan(0);
      const after = await compact(t, path);
      expect(await liveIds(after)).toEqual(javaLiveIds());
      expect(await deleteFiles(after)).toBe(0);
      // The values themselves: a -0.0 that came out as 0.0 would pass the ids (Object.is tells them apart).
      let seen = 0;
      for await (const r of scanRows(after.io, after.metadata)) {
        const want = floatKeyRow(Number(r.id));
        for (const c of ['d', 'f', 'e'] as const) expect(Object.is(r[c], want[c]), `row ${r.id} ${c}: ${String(r[c])}`).toBe(true);
        seen++;
      }
      expect(seen).toBe(javaLiveIds().length);
    });
  }

  it('deleteByEquality refuses a float or double column, naming it and the rule', async () => {
    const t = await floatKeyTable(io, join(tempDir(), 'float-keys-refused'));
    for (const [ids, name, type] of [[[2], 'd', 'double'], [[1, 3], 'f', 'float']] as const) {
      const write = deleteByEquality(t, ids, [{ id: 1n, d: 1.5, f: 1.5 }]);
      await expect(write).rejects.toThrow(InvalidArgumentError);
      await expect(write).rejects.toThrow(new RegExp(`\\(${name}\\) is a ${type}: .*exclude float and double`));
    }
    expect((await loadTable(t.location)).metadata.currentSnapshotId).toBe(t.metadata.currentSnapshotId);
    // Keys on other columns are written as before.
    const next = await deleteByEquality(t, [1], [{ id: BigInt(FLOAT_KEY_ROWS) }]);
    expect(await liveIds(next)).toEqual(javaLiveIds().filter((id) => id !== FLOAT_KEY_ROWS));
  });
});
