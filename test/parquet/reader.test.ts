import { copyFileSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { InvalidFileError, NotFoundError } from '../../lib/errors.js';
import { MetadataColumns } from '../../lib/iceberg/schema.js';
import type { StructType } from '../../lib/iceberg/types.js';
import type { Row } from '../../lib/iceberg/values.js';
import { openParquet, readRowGroups } from '../../lib/parquet/reader.js';
import { rowsFromBatch } from '../../lib/parquet/values.js';
import { ParquetWriter } from '../../lib/parquet/writer.js';
import { FIXTURES } from '../support/fixtures.js';
import { countingInput, io, readRows, tempPath } from './helpers.js';

const POS = join(FIXTURES, 'iceberg_v2_partitioned_position_deletes/data');
const EQ = join(FIXTURES, 'iceberg_v2_delete_equality_partitioned/data');
const DV = join(FIXTURES, 'iceberg_v3_deletion_vectors/data');

const EVENTS: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: false, type: { type: 'int' } },
    { id: 2, name: 'user', required: false, type: { type: 'string' } },
    { id: 3, name: 'action', required: false, type: { type: 'string' } },
    { id: 4, name: 'event_time', required: false, type: { type: 'timestamp' } },
  ],
};
const POSITION_DELETES: StructType = {
  type: 'struct',
  fields: [
    { id: MetadataColumns.FILE_PATH, name: 'file_path', required: true, type: { type: 'string' } },
    { id: MetadataColumns.POS, name: 'pos', required: true, type: { type: 'long' } },
    { id: MetadataColumns.ROW, name: 'row', required: false, type: EVENTS },
  ],
};
const EQ_TABLE: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'i', required: false, type: { type: 'int' } },
    { id: 2, name: 's', required: true, type: { type: 'string' } },
    { id: 3, name: 'd', required: true, type: { type: 'date' } },
  ],
};
const EQ_DELETES: StructType = { type: 'struct', fields: EQ_TABLE.fields.slice(1) };

/** Impala wrote 2020-01-01 09:00, 10:00 and 11:00 for view, click and download. */
const HOUR = 3_600_000_000n;
const NINE = 1_577_869_200_000_000n;
const DATA_FILES: Record<string, { file: string; user: string; time: bigint; ids: number[] }> = {
  view: { file: '874b32d9a15da206-f60e01cb00000004_1711435901_data.0.parq', user: 'Alex', time: NINE, ids: [6, 15, 17, 20, 11, 1, 19, 4] },
  click: { file: '874b32d9a15da206-f60e01cb00000003_1034098606_data.0.parq', user: 'Alan', time: NINE + HOUR, ids: [9, 18, 3, 12, 13, 10] },
  download: { file: '874b32d9a15da206-f60e01cb00000003_1489587766_data.0.parq', user: 'Lisa', time: NINE + 2n * HOUR, ids: [2, 5, 14, 8, 7, 16] },
};
const DELETE_FILES: Record<string, string> = {
  view: '00000-0-delete-boroknagyz_20220819183231_cfc565f5-52b9-4669-9f69-d29c50a84a5e-job_16597105613621_0032-00001.parquet',
  click: '00000-0-delete-boroknagyz_20220819183231_cfc565f5-52b9-4669-9f69-d29c50a84a5e-job_16597105613621_0032-00002.parquet',
  download: '00000-0-delete-boroknagyz_20220819183231_cfc565f5-52b9-4669-9f69-d29c50a84a5e-job_16597105613621_0032-00003.parquet',
};
const HDFS_DATA = 'hdfs://localhost:20500/test-warehouse/iceberg_test/hadoop_catalog/ice/iceberg_v2_partitioned_position_deletes/data';

describe('reading the fixture tables (exact rows)', () => {
  for (const [action, { file, user, time, ids }] of Object.entries(DATA_FILES)) {
    it(`Impala data file, action=${action}`, async () => {
      const rows = await readRows(join(POS, `action=${action}`, file), EVENTS);
      expect(rows).toEqual(ids.map((id) => ({ id, user, action, event_time: time })));
    });

    it(`Hive position-delete file with the row column, action=${action}`, async () => {
      const rows = await readRows(join(POS, `action=${action}`, DELETE_FILES[action]), POSITION_DELETES);
      // The deletes remove the odd ids: their positions in the data file, ascending.
      const expected: Row[] = ids.flatMap((id, pos) =>
        id % 2 === 1
          ? [{ file_path: `${HDFS_DATA}/action=${action}/${file}`, pos: BigInt(pos), row: { id, user, action, event_time: time } }]
          : [],
      );
      expect(rows).toEqual(expected);
    });
  }

  const DAY_24 = 19715; // 2023-12-24
  const flink: Array<[string, StructType, Row[]]> = [
    ['d=2023-12-24/00000-0-0c3800d3-c638-4591-b40c-158dcd5ebe25-00001.parquet', EQ_TABLE, [
      { i: 1, s: 'str1', d: DAY_24 }, { i: 2, s: 'str2', d: DAY_24 }, { i: 3, s: 'str3', d: DAY_24 }]],
    ['d=2023-12-24/00000-0-0c3800d3-c638-4591-b40c-158dcd5ebe25-00002.parquet', EQ_DELETES, [
      { s: 'str1', d: DAY_24 }, { s: 'str2', d: DAY_24 }, { s: 'str3', d: DAY_24 }]],
    ['d=2023-12-24/00000-0-c6e2da66-fe58-44b5-81bd-575da62c7a91-00001.parquet', EQ_TABLE, [
      { i: 333333, s: 'str3', d: DAY_24 }, { i: 4, s: 'str4', d: DAY_24 }]],
    ['d=2023-12-24/00000-0-c6e2da66-fe58-44b5-81bd-575da62c7a91-00002.parquet', EQ_DELETES, [
      { s: 'str3', d: DAY_24 }, { s: 'str4', d: DAY_24 }]],
    ['d=2023-12-25/00000-0-759289e0-d713-41a1-bdaf-f9feab643720-00001.parquet', EQ_TABLE, [
      { i: 1, s: 'str1', d: DAY_24 + 1 }, { i: 2, s: 'str2', d: DAY_24 + 1 }]],
    ['d=2023-12-25/00000-0-759289e0-d713-41a1-bdaf-f9feab643720-00002.parquet', EQ_DELETES, [
      { s: 'str1', d: DAY_24 + 1 }, { s: 'str2', d: DAY_24 + 1 }]],
    ['d=2023-12-25/00000-0-e1567ae8-d9c3-4071-b671-8bbbe79d36d1-00001.parquet', EQ_TABLE, [{ i: 222, s: 'str2', d: DAY_24 + 1 }]],
    ['d=2023-12-25/00000-0-e1567ae8-d9c3-4071-b671-8bbbe79d36d1-00002.parquet', EQ_DELETES, [{ s: 'str2', d: DAY_24 + 1 }]],
  ];
  for (const [file, schema, expected] of flink) {
    it(`Flink ${schema === EQ_DELETES ? 'equality-delete' : 'data'} file ${file}`, async () => {
      expect(await readRows(join(EQ, file), schema)).toEqual(expected);
    });
  }

  it('an equality-delete file read with the table schema has no i column: it reads as null', async () => {
    const rows = await readRows(join(EQ, flink[1][0]), EQ_TABLE);
    expect(rows[0]).toEqual({ i: null, s: 'str1', d: DAY_24 });
  });

  it('Spark v3 data files hold i = 1 … 5', async () => {
    const schema: StructType = { type: 'struct', fields: [{ id: 1, name: 'i', required: false, type: { type: 'int' } }] };
    for (let k = 0; k < 5; k++) {
      const path = join(DV, `0000${k}-${k}-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet`);
      expect(await readRows(path, schema)).toEqual([{ i: k + 1 }]);
    }
  });

  it('reports the footer, field ids and row groups of a foreign file', async () => {
    const file = await openParquet(io, join(POS, 'action=view', DELETE_FILES.view));
    file.close();
    expect(file.numRows).toBe(5);
    expect(file.footer.createdBy).toMatch(/^parquet-mr version 1\.12\.2/);
    expect(file.rowGroups).toEqual([
      expect.objectContaining({ index: 0, numRows: 5, firstRowIndex: 0, startOffset: 4 }),
    ]);
    expect(Object.fromEntries(file.fieldIds.byPath)).toEqual({
      file_path: MetadataColumns.FILE_PATH,
      pos: MetadataColumns.POS,
      row: MetadataColumns.ROW,
      'row.id': 1,
      'row.user': 2,
      'row.action': 3,
      'row.event_time': 4,
    });
  });
});

describe('row groups and columns', () => {
  const schema: StructType = {
    type: 'struct',
    fields: [
      { id: 1, name: 'n', required: true, type: { type: 'long' } },
      { id: 2, name: 's', required: false, type: { type: 'string' } },
    ],
  };

  it('reads transient batches into one reused buffer: the same rows, each valid until the next is asked for', async () => {
    const path = tempPath('transient.parquet');
    const w = ParquetWriter.open(io, path, schema, { rowGroupRows: 100 });
    const written = Array.from({ length: 250 }, (_, k) => ({ n: BigInt(k), s: k % 3 ? `r${k}` : null }));
    await w.writeRows(written);
    await w.close();
    const file = await openParquet(io, path);
    try {
      const rows: Row[] = [];
      const seen: arrow.RecordBatch[] = [];
      for await (const b of readRowGroups(file, { batchSize: 40, window: { bytes: 1 << 20 }, transient: true })) {
        rows.push(...rowsFromBatch(b, schema));
        seen.push(b);
      }
      expect(rows).toEqual(written);
      // The buffer is the read's own, reused from batch to batch (grown once at most, doubling).
      expect(seen.length).toBeGreaterThan(4);
      expect(new Set(seen.map((b) => (b.data.children[0].values as BigInt64Array).buffer)).size).toBeLessThanOrEqual(2);
    } finally {
      file.close();
    }
  });

  it('reads chosen row groups and columns in small batches, with first-row positions', async () => {
    const path = tempPath('groups.parquet');
    const w = ParquetWriter.open(io, path, schema, { rowGroupRows: 100 });
    await w.writeRows(Array.from({ length: 350 }, (_, k) => ({ n: BigInt(k), s: `r${k}` })));
    await w.close();

    const file = await openParquet(io, path);
    try {
      expect(file.rowGroups.map((g) => [g.numRows, g.firstRowIndex])).toEqual([[100, 0], [100, 100], [100, 200], [50, 300]]);
      const sizes: number[] = [];
      const rows: Row[] = [];
      for await (const b of readRowGroups(file, { rowGroups: [1, 3], columns: ['n'], batchSize: 30 })) {
        sizes.push(b.numRows);
        expect(b.schema.fields.map((f) => f.name)).toEqual(['n']);
        rows.push(...rowsFromBatch(b, schema));
      }
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(150);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(30);
      expect(rows.map((r) => r.n)).toEqual([
        ...Array.from({ length: 100 }, (_, k) => BigInt(100 + k)),
        ...Array.from({ length: 50 }, (_, k) => BigInt(300 + k)),
      ]);
      expect(rows[0].s).toBeNull(); // not read
      await expect(async () => {
        for await (const _ of readRowGroups(file, { rowGroups: [4] })) void _;
      }).rejects.toThrow(/no row group 4 \(the file has 4\)/);
      await expect(async () => {
        for await (const _ of readRowGroups(file, { columns: ['nope'] })) void _;
      }).rejects.toThrow(/no column "nope"/);
    } finally {
      file.close();
    }
  });

  it('reads each byte of a file once: row groups reaching into the footer read take the rest of it from there', async () => {
    const path = tempPath('once.parquet');
    const w = ParquetWriter.open(io, path, schema, { rowGroupRows: 4000, dictionary: false, compression: 'uncompressed' });
    await w.writeRows(Array.from({ length: 10_000 }, (_, k) => ({ n: BigInt(k), s: `row number ${k}` })));
    await w.close();
    const base = io.newInputFile(path);
    const length = await base.length();
    expect(length).toBeGreaterThan(128 * 1024); // larger than the tail read that finds the footer
    const reads: Array<[number, number]> = [];
    const file = await openParquet(countingInput(base, reads));
    let n = 0;
    for await (const b of readRowGroups(file)) n += b.numRows;
    file.close();
    expect(n).toBe(10_000);
    // The file once but its leading magic (no request of its own): the row groups' column chunks, the tail read with the footer.
    expect(reads.reduce((t, [s, e]) => t + e - s, 0)).toBe(length - 4);
    const sorted = [...reads].sort((a, b) => a[0] - b[0]);
    sorted.slice(1).forEach(([s], k) => expect(s).toBeGreaterThanOrEqual(sorted[k][1]));
    // One row group straddles the tail: only its part before the tail is fetched.
    const straddling = file.rowGroups.find((g) => g.startOffset < reads[0][0] && g.startOffset + g.compressedSize > reads[0][0]);
    expect(straddling).toBeDefined();
    expect(reads).toContainEqual([straddling!.startOffset, reads[0][0]]);
  });
});

describe('bad files', () => {
  const dataFile = join(POS, 'action=view', DATA_FILES.view.file);

  it('a file cut short is an InvalidFileError naming it', async () => {
    const path = tempPath('cut.parquet');
    copyFileSync(dataFile, path);
    truncateSync(path, readFileSync(dataFile).length - 1);
    const err = await openParquet(io, path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidFileError);
    expect((err as InvalidFileError).path).toBe(path);
    expect((err as Error).message).toBe(`${path}: not a Parquet file: the last 4 bytes are not the magic "PAR1" (cut short or another format)`);
  });

  it('a file cut in half (footer gone) is an InvalidFileError naming it', async () => {
    const path = tempPath('half.parquet');
    const bytes = readFileSync(dataFile);
    writeFileSync(path, bytes.subarray(0, bytes.length >> 1));
    await expect(openParquet(io, path)).rejects.toThrow(InvalidFileError);
    await expect(openParquet(io, path)).rejects.toThrow(path);
  });

  it('a footer length beyond the file is an InvalidFileError', async () => {
    const path = tempPath('len.parquet');
    const bytes = new Uint8Array(readFileSync(dataFile));
    new DataView(bytes.buffer).setUint32(bytes.length - 8, bytes.length * 2, true);
    writeFileSync(path, bytes);
    await expect(openParquet(io, path)).rejects.toThrow(/invalid Parquet footer: footer length \d+ does not fit in a \d+-byte file/);
  });

  it('a corrupt footer is an InvalidFileError, not a wasm panic', async () => {
    const path = tempPath('garbled.parquet');
    const bytes = new Uint8Array(readFileSync(dataFile));
    const len = new DataView(bytes.buffer).getUint32(bytes.length - 8, true);
    bytes.fill(0xff, bytes.length - 8 - len, bytes.length - 8);
    writeFileSync(path, bytes);
    const err = await openParquet(io, path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidFileError);
    expect((err as Error).message).toContain(`${path}: invalid Parquet footer`);
  });

  it('corrupt data pages fail the read with an InvalidFileError naming the file', async () => {
    const path = tempPath('pages.parquet');
    const bytes = new Uint8Array(readFileSync(dataFile));
    bytes.fill(0x55, 4, 200);
    writeFileSync(path, bytes);
    const file = await openParquet(io, path);
    try {
      const err = await (async () => {
        for await (const _ of readRowGroups(file)) void _;
      })().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidFileError);
      expect((err as Error).message).toContain(`${path}: cannot read row group 0: `);
    } finally {
      file.close();
    }
  });

  it('a file that is not Parquet is an InvalidFileError naming it', async () => {
    const avro = join(FIXTURES, 'iceberg_v3_deletion_vectors/metadata/5e791f63-c675-4124-8390-6bbce9e61755-m0.avro');
    const err = await openParquet(io, avro).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidFileError);
    expect((err as Error).message).toContain(avro);
    const tiny = tempPath('tiny.parquet');
    writeFileSync(tiny, 'PAR1');
    await expect(openParquet(io, tiny)).rejects.toThrow(`${tiny}: not a Parquet file: 4 bytes is shorter than the 12-byte minimum`);
  });

  it('magic at the end but not at the start is an InvalidFileError', async () => {
    const path = tempPath('nohead.parquet');
    const bytes = new Uint8Array(readFileSync(dataFile));
    bytes.set([0, 0, 0, 0], 0);
    writeFileSync(path, bytes);
    await expect(openParquet(io, path)).rejects.toThrow(/the first 4 bytes are not the magic "PAR1"/);
  });

  it('a missing file stays a NotFoundError', async () => {
    await expect(openParquet(io, tempPath('absent.parquet'))).rejects.toThrow(NotFoundError);
  });
});
