import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidFileError, NotFoundError } from '../../lib/errors.js';
import type { StructType } from '../../lib/iceberg/types.js';
import type { Row } from '../../lib/iceberg/values.js';
import { S3FileIO } from '../../lib/io/s3.js';
import { S3RequestCounter } from '../../lib/io/s3-requests.js';
import { copyTemplate, openCopySource, rowGroupDigests, writeCopiedFile } from '../../lib/parquet/chunk-copy.js';
import { readFooter } from '../../lib/parquet/footer.js';
import { openParquet, readRowGroups } from '../../lib/parquet/reader.js';
import { rowsFromBatch } from '../../lib/parquet/values.js';
import { ParquetWriter } from '../../lib/parquet/writer.js';
import { testS3Client } from '../support/moto.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { countingInput } from './helpers.js';

const schema: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'n', required: true, type: { type: 'long' } },
    { id: 2, name: 's', required: false, type: { type: 'string' } },
  ],
};
const rowsOf = (from: number, n: number): Row[] =>
  Array.from({ length: n }, (_, k) => ({ n: BigInt(from + k), s: `v-${(Math.imul(from + k, 2654435761) >>> 0).toString(36)}` }));

describe('Parquet on S3 (moto)', () => {
  let io: S3FileIO;
  let bucket: string;
  beforeAll(async () => {
    io = new S3FileIO({ endpoint: testS3Endpoint(), partSize: 5 * 1024 * 1024 });
    bucket = await freshBucket();
  });

  it('streams a multi-part upload and reads row groups back by range', async () => {
    const path = `s3://${bucket}/t/data/big.parquet`;
    const w = ParquetWriter.open(io, path, schema, { rowGroupRows: 100_000, dictionary: false, compression: 'uncompressed' });
    for (let from = 0; from < 400_000; from += 50_000) await w.writeRows(rowsOf(from, 50_000));
    const written = await w.close();
    expect(written.fileSizeInBytes).toBeGreaterThan(5 * 1024 * 1024);
    expect((await io.stat(path)).size).toBe(written.fileSizeInBytes);

    // Count the range reads: one for the footer and one per row group read.
    const base = io.newInputFile(path);
    const reads: Array<[number, number]> = [];
    const file = await openParquet(countingInput(base, reads));
    expect(file.rowGroups.map((g) => g.numRows)).toEqual([100_000, 100_000, 100_000, 100_000]);
    const rows: Row[] = [];
    for await (const b of readRowGroups(file, { rowGroups: [2] })) rows.push(...rowsFromBatch(b, schema));
    expect(rows).toEqual(rowsOf(200_000, 100_000));
    const g = file.rowGroups[2];
    expect(reads.slice(-1)).toEqual([[g.startOffset, g.startOffset + g.compressedSize]]);
    expect(reads.length).toBe(2); // footer tail, row group 2: the leading magic is not fetched on its own
  });

  it('names the S3 location of a file that is not Parquet, and keeps NotFoundError for a missing one', async () => {
    const key = 't/data/not.parquet';
    await testS3Client(testS3Endpoint()).send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'hello, this is not a parquet file' }));
    const path = `s3://${bucket}/${key}`;
    const err = await openParquet(io, path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidFileError);
    expect((err as Error).message).toContain(path);
    await expect(openParquet(io, `s3://${bucket}/t/data/absent.parquet`)).rejects.toThrow(NotFoundError);
  });

  it('reads a large file\'s footer with one GET; a large file of another format is still an InvalidFileError naming it', async () => {
    const counter = new S3RequestCounter(io.client);
    const path = `s3://${bucket}/t/data/footer-one-get.parquet`;
    const w = ParquetWriter.open(io, path, schema, { compression: 'uncompressed' });
    await w.writeRows(rowsOf(0, 20_000));
    const { fileSizeInBytes } = await w.close();
    expect(fileSizeInBytes).toBeGreaterThan(256 * 1024);
    counter.reset();
    const read = await readFooter(io.newInputFile(path, fileSizeInBytes));
    expect(read.footer.numRows).toBe(20_000);
    expect(counter.counts().byCommand).toEqual({ GetObjectCommand: 1 });

    const text = `s3://${bucket}/t/data/big.csv`;
    await io.write(text, new TextEncoder().encode('id,name\n'.repeat(40_000)));
    counter.reset();
    const err = await readFooter(io.newInputFile(text, 320_000)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidFileError);
    expect((err as Error).message).toBe(`${text}: not a Parquet file: the last 4 bytes are not the magic "PAR1" (cut short or another format)`);
    expect(counter.counts().get).toBe(1);
  });

  it('a row group over 8 MiB is copied in ranges of at most 8 MiB and re-read by the proof in ranges of at most 16 MiB, the bytes intact', async () => {
    const path = `s3://${bucket}/t/data/one-large-group.parquet`;
    const w = ParquetWriter.open(io, path, schema, { rowGroupRows: 600_000, dictionary: false, compression: 'uncompressed' });
    for (let from = 0; from < 600_000; from += 50_000) await w.writeRows(rowsOf(from, 50_000));
    const written = await w.close();
    const counter = new S3RequestCounter(io.client, { log: true });
    const source = await openCopySource(io, path, written.fileSizeInBytes);
    expect(source.rowGroups[0].bytes).toBeGreaterThan(8 * 1024 * 1024);
    const copy = `s3://${bucket}/t/data/one-large-group-copy.parquet`;
    const out = await writeCopiedFile(io, copy, copyTemplate(schema), [{ source, rowGroup: 0 }]);
    const digests = [];
    for await (const d of rowGroupDigests(io, [{ path: copy, length: out.fileSizeInBytes }])) digests.push(d);
    // The proof's digest of the copy re-read is the source's as read.
    expect(digests.map((d) => [d.rows, d.digest])).toEqual(out.rowGroups.map((g) => [g.rows, g.digest]));
    const gets = counter.requests().filter((r) => r.command === 'GetObjectCommand' && r.bytes > 64 * 1024);
    const read = gets.filter((r) => r.key.endsWith('one-large-group.parquet'));
    const reread = gets.filter((r) => r.key.endsWith('one-large-group-copy.parquet'));
    const bytes = source.rowGroups[0].bytes;
    expect(read.length).toBeGreaterThanOrEqual(2);
    expect(read.every((r) => r.bytes <= 8 * 1024 * 1024)).toBe(true);
    expect(reread.length).toBe(Math.ceil((bytes + 4) / (16 * 1024 * 1024 + 4)));
    expect(reread.every((r) => r.bytes <= 16 * 1024 * 1024 + 4)).toBe(true);
    const rows: Row[] = [];
    for await (const b of readRowGroups(await openParquet(io.newInputFile(copy)))) rows.push(...rowsFromBatch(b, schema));
    expect(rows.length).toBe(600_000);
    expect(rows[0]).toEqual(rowsOf(0, 1)[0]);
    expect(rows[599_999]).toEqual(rowsOf(599_999, 1)[0]);
  });

  it('the column-chunk copy checks the leading magic with its first row-group read, no GET of its own', async () => {
    const counter = new S3RequestCounter(io.client);
    const good = `s3://${bucket}/t/data/head-good.parquet`;
    const w = ParquetWriter.open(io, good, schema, { compression: 'uncompressed', rowGroupRows: 10_000 });
    await w.writeRows(rowsOf(0, 20_000));
    await w.close();
    const bytes = await io.read(good);
    bytes.set([0x58, 0x58, 0x58, 0x58], 0);
    const bad = `s3://${bucket}/t/data/head-bad.parquet`;
    await io.write(bad, bytes);
    const template = copyTemplate(schema);

    counter.reset();
    const source = await openCopySource(io, good, bytes.length);
    const out = await writeCopiedFile(io, `s3://${bucket}/t/data/copied.parquet`, template, [{ source, rowGroup: 0 }, { source, rowGroup: 1 }]);
    expect(out.recordCount).toBe(20_000);
    // Footer tail, one read per row group (the first from byte 0), one PutObject.
    expect(counter.counts().byCommand).toEqual({ GetObjectCommand: 3, PutObjectCommand: 1 });

    counter.reset();
    const broken = await openCopySource(io, bad, bytes.length); // the footer alone looks fine
    expect(counter.counts().get).toBe(1);
    const err = await writeCopiedFile(io, `s3://${bucket}/t/data/never.parquet`, template, [{ source: broken, rowGroup: 0 }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidFileError);
    expect((err as Error).message).toBe(`${bad}: not a Parquet file: the first 4 bytes are not the magic "PAR1"`);
    expect(await io.exists(`s3://${bucket}/t/data/never.parquet`)).toBe(false);
  });
});
