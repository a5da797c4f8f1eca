/**
 * Parquet files whose ZSTD pages packice compressed natively (lib/parquet/page-compressor.ts,
 * at the table's write.parquet.compression-level) are ordinary ZSTD Parquet to other engines:
 * Java Iceberg 1.12 (parquet-mr) and PyIceberg 0.12 (pyarrow) read exactly the rows we read,
 * from appended files and from a compaction's outputs; pyarrow finds only ZSTD chunks, each with
 * its page indexes (test/parquet/page-compressor.test.ts checks where their locations point).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTable } from '../../lib/catalog/table.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { zstdCodec } from '../../lib/parquet/compression-codec.js';
import { appendRows, createNewTable, deleteRows } from '../../lib/table/operations.js';
import { sortRows } from '../support/canonical-rows.js';
import { ourRows } from '../support/our-rows.js';
import { planAll } from '../support/compaction.js';
import { tempDir } from '../support/fixtures.js';
import { NESTED_SCHEMA, nestedRows } from '../support/nested-table.js';
import { ensureJavaHarness, javaRead } from '../support/java.js';
import { pyRead, PY_VENV } from '../support/pyiceberg.js';

const io = new LocalFileIO();



/** pyarrow's view of a data file: its codecs, whether every chunk has both page indexes, its rows. */
function pyarrowCheck(path: string): { codecs: string[]; indexes: boolean; rows: number } {
  const script = `
import json, sys, pyarrow.parquet as pq
f = pq.ParquetFile(sys.argv[1])
m = f.metadata
cols = [m.row_group(g).column(c) for g in range(m.num_row_groups) for c in range(m.num_columns)]
t = pq.read_table(sys.argv[1], filters=[('id', '>=', 0)])
print(json.dumps({'codecs': sorted({c.compression for c in cols}), 'indexes': all(c.has_offset_index and c.has_column_index for c in cols), 'rows': t.num_rows}))
`;
  return JSON.parse(execFileSync(join(PY_VENV, 'bin', 'python'), ['-c', script, path]).toString()) as { codecs: string[]; indexes: boolean; rows: number };
}

describe('interop: natively ZSTD-compressed Parquet', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  for (const level of ['1', '19']) {
    it(`level ${level}: Java and PyIceberg read exactly our rows, before and after a compaction`, async () => {
      expect(zstdCodec()).toBeDefined();
      const location = join(tempDir(), `zstd-${level}`);
      let t = await createNewTable(io, location, {
        schema: NESTED_SCHEMA,
        properties: { 'write.parquet.compression-level': level, 'write.parquet.page-size-bytes': '4096' },
      });
      for (let b = 0; b < 4; b++) t = await appendRows(t, nestedRows(b * 3000, 3000) as never);
      t = (await deleteRows(t, (r) => (r.id as bigint) % 101n === 0n)).table;
      const before = await ourRows(t.location);
      expect(sortRows(await javaRead(t.location))).toEqual(before);
      expect(sortRows(await pyRead(t.metadataLocation))).toEqual(before);

      const plan = await planAll(io, t.metadata);
      const results = [];
      for (const g of plan.groups) results.push(await rewriteGroup(io, t.metadata, plan, g));
      await commitCompaction(t, plan, results);
      const after = await loadTable(t.location);
      const ours = await ourRows(after.location);
      expect(ours).toEqual(before);
      expect(sortRows(await javaRead(after.location))).toEqual(ours);
      expect(sortRows(await pyRead(after.metadataLocation))).toEqual(ours);
      for (const o of results.flatMap((r) => r.outputs)) {
        expect(pyarrowCheck(o.filePath)).toEqual({ codecs: ['ZSTD'], indexes: true, rows: Number(o.recordCount) });
      }
    });
  }
});
