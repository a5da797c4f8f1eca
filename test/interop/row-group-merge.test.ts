/**
 * Files written by the row-group merge (lib/parquet/row-group-merge.ts) are ordinary Parquet to
 * other engines: Java Iceberg 1.12 (parquet-mr) and PyIceberg 0.12 (pyarrow) read exactly the rows
 * we read after a compaction merged every input, with pages coalesced, with pages kept and
 * dictionaries re-indexed, and with dictionaries too large to merge written PLAIN; nested
 * columns (list, map, struct) included.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { COPY_MIN_ROW_GROUP_BYTES_PROPERTY, MERGE_MIN_ROW_GROUP_BYTES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { appendRows, createNewTable, deleteRows } from '../../lib/table/operations.js';
import { sortRows, type CanonicalRow } from '../support/canonical-rows.js';
import { planAll } from '../support/compaction.js';
import { tempDir } from '../support/fixtures.js';
import { DELETED, flatTable } from '../support/flat-table.js';
import { NESTED_SCHEMA, nestedRows } from '../support/nested-table.js';
import { ensureJavaHarness, javaRead } from '../support/java.js';
import { ourRows } from '../support/our-rows.js';
import { pyRead } from '../support/pyiceberg.js';

const io = new LocalFileIO();

/** Compacts every partition (all outputs merged unless `decoded`) and commits; the table's live rows as we read them, before and after. */
async function compactMerged(t: Table, decoded = false): Promise<{ before: CanonicalRow[]; after: Table; ours: CanonicalRow[] }> {
  const before = await ourRows(t.location);
  const plan = await planAll(io, t.metadata);
  const results = [];
  for (const g of plan.groups) results.push(await rewriteGroup(io, t.metadata, plan, g));
  expect(results.flatMap((r) => r.outputs).every((o) => o.filePath.includes('-merge-'))).toBe(!decoded);
  await commitCompaction(t, plan, results);
  const after = await loadTable(t.location);
  return { before, after, ours: await ourRows(after.location) };
}

describe('interop: row-group-merged Parquet', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  for (const [name, properties] of [
    ['pages coalesced', {}],
    ['pages kept, dictionaries re-indexed', { 'write.parquet.page-size-bytes': '4096' }],
    ['dictionaries too large to merge: PLAIN', { 'write.parquet.dict-size-bytes': '64' }],
  ] as const) {
    it(`${name}: Java and PyIceberg read exactly our rows after a compaction that merged every input`, async () => {
      const location = join(tempDir(), 'merge');
      let t = await createNewTable(io, location, {
        schema: NESTED_SCHEMA,
        properties: { [COPY_MIN_ROW_GROUP_BYTES_PROPERTY]: String(2 ** 40), [MERGE_MIN_ROW_GROUP_BYTES_PROPERTY]: '1', ...properties },
      });
      for (let b = 0; b < 4; b++) t = await appendRows(t, nestedRows(b * 3000, 3000, 301) as never);
      const { before, after, ours } = await compactMerged(t);
      expect(ours).toEqual(before);
      expect(sortRows(await javaRead(after.location))).toEqual(ours);
      expect(sortRows(await pyRead(after.metadataLocation))).toEqual(ours);
    });
  }

  for (const formatVersion of [2, 3] as const) {
    it(`v${formatVersion}: Java and PyIceberg read exactly our rows after a compaction that dropped deleted rows from the pages`, async () => {
      const rows = 2000;
      let t = await flatTable(io, 3, rows, { formatVersion, properties: { 'write.parquet.page-size-bytes': '8192' } });
      // v3: rows carry their lineage once compacted (decoded); then files with deletion vectors merge.
      if (formatVersion === 3) t = (await compactMerged(t, true)).after;
      t = (await deleteRows(t, DELETED(rows))).table;
      const { before, after, ours } = await compactMerged(t);
      expect(ours).toEqual(before);
      expect(sortRows(await javaRead(after.location))).toEqual(ours);
      expect(sortRows(await pyRead(after.metadataLocation))).toEqual(ours);
    });
  }
});
