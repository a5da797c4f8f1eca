/**
 * Files written without field ids (Hive/Impala imports, plain pyarrow) resolve their columns
 * through `schema.name-mapping.default`, as Java does.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTable } from '../../lib/catalog/table.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { FileContent } from '../../lib/iceberg/manifest.js';
import { rowToJson } from '../../lib/iceberg/row-json.js';
import { currentSchema } from '../../lib/iceberg/table-metadata.js';
import { commitChanges, createNewTable } from '../../lib/table/operations.js';
import { scanRows } from '../../lib/table/scan.js';
import { sortRows, type CanonicalRow } from '../support/canonical-rows.js';
import { tempDir } from '../support/fixtures.js';
import { ensureJavaHarness, javaRead } from '../support/java.js';
import { PY_VENV } from '../support/pyiceberg.js';

const io = new LocalFileIO();

/** A Parquet file with columns `id` (int64) and `nm` (string) and no field ids, written by pyarrow. */
function writeWithoutIds(path: string): void {
  execFileSync(join(PY_VENV, 'bin', 'python'), [
    '-c',
    `import pyarrow as pa, pyarrow.parquet as pq, sys
pq.write_table(pa.table({'id': pa.array([1, 2, 3], pa.int64()), 'nm': ['a', None, 'c']}), sys.argv[1])`,
    path,
  ]);
}

describe('name mapping', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  it('resolves columns of a file without field ids, renamed columns included', async () => {
    const location = join(tempDir(), 'mapped');
    const file = join(location, 'data', 'imported.parquet');
    let t = await createNewTable(io, location, {
      schema: {
        type: 'struct',
        fields: [
          { id: 1, name: 'id', required: false, type: { type: 'long' } },
          { id: 2, name: 'name', required: false, type: { type: 'string' } },
          { id: 3, name: 'added', required: false, type: { type: 'int' } },
        ],
      },
      // The file calls field 2 `nm`; field 3 is in no file.
      properties: {
        'schema.name-mapping.default': JSON.stringify([
          { 'field-id': 1, names: ['id'] },
          { 'field-id': 2, names: ['name', 'nm'] },
          { 'field-id': 3, names: ['added'] },
        ]),
      },
    });
    mkdirSync(join(location, 'data'), { recursive: true });
    writeWithoutIds(file);
    t = await commitChanges(t, {
      addedDataFiles: [
        {
          content: FileContent.Data, filePath: file, fileFormat: 'PARQUET', specId: 0, partition: {},
          recordCount: 3n, fileSizeInBytes: BigInt(statSync(file).size),
        },
      ],
    });
    t = await loadTable(location);
    const schema = currentSchema(t.metadata);
    const ours: CanonicalRow[] = [];
    for await (const r of scanRows(t.io, t.metadata)) ours.push(rowToJson(r, schema) as CanonicalRow);
    expect(sortRows(ours)).toEqual([
      { id: 1, name: 'a', added: null },
      { id: 2, name: null, added: null },
      { id: 3, name: 'c', added: null },
    ]);
    expect(sortRows(await javaRead(location))).toEqual(sortRows(ours));
  });
});
