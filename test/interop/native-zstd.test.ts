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
import { ensureJavaHarness, javaRead } from '../support/java.js';
import { pyRead, PY_VENV } from '../support/pyiceberg.js';

const io = new LocalFileIO();


const SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 's', required: false, type: { type: 'string' as const } },
    { id: 3, name: 'amount', required: false, type: { type: 'decimal' as const, precision: 18, scale: 2 } },
    { id: 4, name: 'ts', required: false, type: { type: 'timestamptz' as const } },
    { id: 5, name: 'tags', required: false, type: { type: 'list' as const, elementId: 6, elementRequired: false, element: { type: 'string' as const } } },
    {
      id: 7, name: 'attrs', required: false,
      type: { type: 'map' as const, keyId: 8, key: { type: 'string' as const }, valueId: 9, valueRequired: false, value: { type: 'int' as const } },
    },
    { id: 10, name: 'st', required: false, type: { type: 'struct' as const, fields: [{ id: 11, name: 'x', required: false, type: { type: 'double' as const } }] } },
  ],
};

function rows(from: number, n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return {
      id: BigInt(i),
      s: i % 11 === 0 ? null : `name-${(i * 7919) % 3001}`,
      amount: i % 13 === 0 ? null : BigInt((i * 7907) % 1_000_000),
      ts: 1_767_225_600_000_000n + BigInt(i) * 1_000_003n,
      tags: i % 5 === 0 ? null : Array.from({ length: i % 4 }, (_, j) => (j === 1 ? null : `t${(i + j) % 17}`)),
      attrs: i % 7 === 0 ? null : [[`k${i % 3}`, i % 9 === 0 ? null : i]],
      st: i % 6 === 0 ? null : { x: i % 10 === 0 ? null : i / 8 },
    };
  });
}

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
        schema: SCHEMA,
        properties: { 'write.parquet.compression-level': level, 'write.parquet.page-size-bytes': '4096' },
      });
      for (let b = 0; b < 4; b++) t = await appendRows(t, rows(b * 3000, 3000) as never);
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
