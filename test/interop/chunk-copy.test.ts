/**
 * Files the rewriter assembles from copied column chunks (lib/compaction/chunk-copy.ts) are
 * ordinary Parquet data files to other engines: after a compaction that copies some inputs and
 * decodes others, Java Iceberg 1.12 and PyIceberg 0.12 (pyarrow's Parquet reader) read exactly
 * the rows we read, and the rows the table held before.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTable } from '../../lib/catalog/table.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { deleteRows } from '../../lib/table/operations.js';
import { sortRows } from '../support/canonical-rows.js';
import { ourRows } from '../support/our-rows.js';
import { chunkCopyTable } from '../support/chunk-copy-table.js';
import { planAll } from '../support/compaction.js';
import { ensureJavaHarness, javaRead } from '../support/java.js';
import { pyRead } from '../support/pyiceberg.js';

const io = new LocalFileIO();


describe('interop: chunk-copied outputs', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  it('Java and PyIceberg read exactly our rows after a compaction that copies and decodes', async () => {
    const t0 = await chunkCopyTable(io, 5, 50);
    // One file of partition a gets a delete: it is decoded, the rest copied.
    const t = (await deleteRows(t0, (r) => r.id === 5n || r.id === 7n)).table;
    const before = await ourRows(t.location);
    const plan = await planAll(io, t.metadata);
    const results = [];
    for (const g of plan.groups) results.push(await rewriteGroup(io, t.metadata, plan, g));
    const outputs = results.flatMap((r) => r.outputs);
    expect(outputs.some((o) => o.filePath.includes('-copy-'))).toBe(true);
    expect(outputs.some((o) => !o.filePath.includes('-copy-'))).toBe(true);
    await commitCompaction(t, plan, results);
    const after = await loadTable(t.location);
    const ours = await ourRows(after.location);
    expect(ours).toEqual(before);
    expect(sortRows(await javaRead(after.location))).toEqual(ours);
    expect(sortRows(await pyRead(after.metadataLocation))).toEqual(ours);
  });
});
