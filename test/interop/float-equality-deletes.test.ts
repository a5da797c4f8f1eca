/**
 * Java Iceberg 1.12 reads a table with equality deletes on float and double columns (which other
 * engines write; test/support/float-key-table.ts) with exactly the live rows our scan gives, before
 * our compaction and after it (decode path and merge path): compaction is a no-op for its readers.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { MERGE_DELETES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import type { GroupResult } from '../../lib/compaction/messages.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { sortRows, type CanonicalRow } from '../support/canonical-rows.js';
import { planAll } from '../support/compaction.js';
import { tempDir } from '../support/fixtures.js';
import { floatKeyTable, javaLiveIds } from '../support/float-key-table.js';
import { ensureJavaHarness, javaRead } from '../support/java.js';
import { ourRows } from '../support/our-rows.js';

const io = new LocalFileIO();
const ids = (rows: readonly CanonicalRow[]): number[] => rows.map((r) => Number(r.id)).sort((a, b) => a - b);
/**
 * Rows with -0.0 printed as 0: our canonical printing (rowToJson, JSON) drops the sign where Java's
 * keeps it. The ids tell the rows apart (a row's values follow from its id: floatKeyRow).
 */
const unsigned = (rows: readonly CanonicalRow[]): CanonicalRow[] => JSON.parse(JSON.stringify(rows)) as CanonicalRow[];

async function compact(t: Table, properties: Record<string, string>): Promise<void> {
  const m = { ...t.metadata, properties: { ...t.metadata.properties, ...properties } };
  const plan = await planAll(io, m);
  const results: GroupResult[] = [];
  for (const g of plan.groups) results.push(await rewriteGroup(io, m, plan, g));
  await commitCompaction(t, plan, results);
}

describe('interop: equality deletes on float and double columns', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  for (const [path, properties] of [['merge', {}], ['decode', { [MERGE_DELETES_PROPERTY]: 'false' }]] as const) {
    it(`Java reads our rows before and after a compaction on the ${path} path`, async () => {
      const t = await floatKeyTable(io, join(tempDir(), `float-keys-java-${path}`));
      const before = await ourRows(t.location);
      const java = sortRows(await javaRead(t.location));
      expect(ids(java), 'Java applies the deletes as the model says').toEqual(javaLiveIds());
      expect(ids(before)).toEqual(javaLiveIds());
      expect(unsigned(java)).toEqual(unsigned(before));
      await compact(t, properties);
      const after = await loadTable(t.location);
      expect(after.metadata.currentSnapshotId).not.toBe(t.metadata.currentSnapshotId);
      const javaAfter = sortRows(await javaRead(after.location));
      expect(ids(javaAfter)).toEqual(javaLiveIds());
      expect(unsigned(javaAfter)).toEqual(unsigned(before));
      expect(await ourRows(after.location)).toEqual(before);
    });
  }
});
