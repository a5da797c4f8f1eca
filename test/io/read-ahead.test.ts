/**
 * ReadAheadFileIO over a real S3 server (moto): which reads it serves, how many fetches it keeps
 * in flight, and where a failed fetch's error goes.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '../../lib/errors.js';
import { ReadAheadFileIO, type ReadAheadRange } from '../../lib/io/read-ahead.js';
import { S3FileIO } from '../../lib/io/s3.js';
import { CountingIO } from '../support/counting-io.js';
import { testS3Client } from '../support/moto.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { failOnUnhandledRejections } from '../support/unhandled.js';

const SIZE = 10_000;

function bytesOf(k: number): Uint8Array {
  return Uint8Array.from({ length: SIZE }, (_, i) => (i * 31 + k * 7) & 0xff);
}

describe('ReadAheadFileIO on S3 (moto)', () => {
  let s3: S3FileIO;
  let paths: string[];
  failOnUnhandledRejections();

  beforeAll(async () => {
    s3 = new S3FileIO({ endpoint: testS3Endpoint() });
    const bucket = await freshBucket();
    const client = testS3Client(testS3Endpoint());
    paths = [];
    for (let k = 0; k < 12; k++) {
      const key = `ra/f${String(k).padStart(2, '0')}.bin`;
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytesOf(k) }));
      paths.push(`s3://${bucket}/${key}`);
    }
    client.destroy();
  });

  it('serves reads inside each range from one fetch, in list order, within the file and byte bounds', async () => {
    const inner = new CountingIO(s3);
    // Tails of 4,000 bytes: at most 3 fit in 12,000 bytes, though 5 files are allowed.
    const ranges: ReadAheadRange[] = paths.map((path) => ({ path, start: SIZE - 4000, end: SIZE }));
    const io = new ReadAheadFileIO(inner, ranges, { files: 5, bytes: 12_000 });
    for (const [k, path] of paths.entries()) {
      const file = io.newInputFile(path, SIZE);
      expect(await file.read(SIZE - 4000, SIZE)).toEqual(bytesOf(k).subarray(SIZE - 4000));
      expect(await file.read(SIZE - 8, SIZE)).toEqual(bytesOf(k).subarray(SIZE - 8));
      // Outside the range: passed through.
      expect(await file.read(0, 4)).toEqual(bytesOf(k).subarray(0, 4));
      expect(io.stats().heldBytes).toBeLessThanOrEqual(12_000);
    }
    await inner.settled();
    for (const path of paths) expect(inner.readsOf(path)).toEqual([[SIZE - 4000, SIZE], [0, 4]]);
    // The fetches ahead started in list order.
    expect(inner.ranges.filter((r) => r.start > 0).map((r) => r.path)).toEqual(paths);
    expect(inner.maxInFlightBytes).toBeLessThanOrEqual(12_000 + 4);
    const stats = io.stats();
    expect(stats).toMatchObject({ fetched: 12, hits: 24, maxHeld: 3 });
    expect(stats.maxHeldBytes).toBe(12_000);
    io.close();
    expect(io.stats()).toMatchObject({ held: 0, heldBytes: 0 });
  });

  it('serves ranges handed over already fetched without fetching them, and fetches the others', async () => {
    const inner = new CountingIO(s3);
    // Even files come with their tail in hand (a footer read someone made before); larger than the
    // byte budget, they are still held: they cost no request.
    const ranges: ReadAheadRange[] = paths.map((path, k) =>
      k % 2 === 0 ? { path, start: 2000, end: SIZE, bytes: bytesOf(k).slice(2000) } : { path, start: SIZE - 4000, end: SIZE });
    const io = new ReadAheadFileIO(inner, ranges, { files: 4, bytes: 6000 });
    for (const [k, path] of paths.entries()) {
      const file = io.newInputFile(path, SIZE);
      expect(await file.read(SIZE - 4000, SIZE)).toEqual(bytesOf(k).subarray(SIZE - 4000));
    }
    await inner.settled();
    paths.forEach((path, k) => expect(inner.readsOf(path)).toEqual(k % 2 === 0 ? [] : [[SIZE - 4000, SIZE]]));
    expect(io.stats()).toMatchObject({ fetched: 6, seeded: 6, hits: 12 });
    io.close();
  });

  it('fetches the rest of a range whose tail was handed over, joins them, and fetches no byte twice', async () => {
    const inner = new CountingIO(s3);
    const TAIL = 1500;
    const ranges: ReadAheadRange[] = paths.map((path, k) => ({ path, start: 0, end: SIZE, bytes: bytesOf(k).slice(SIZE - TAIL) }));
    // Room for two whole files: the rest waits for the budget, its tail held meanwhile.
    const io = new ReadAheadFileIO(inner, ranges, { files: 4, bytes: 2 * SIZE });
    for (const [k, path] of paths.entries()) {
      // A read across the join, then all of the file: both served from the one joined range.
      expect(await io.readRange(path, SIZE - TAIL - 10, SIZE - TAIL + 10)).toEqual(bytesOf(k).subarray(SIZE - TAIL - 10, SIZE - TAIL + 10));
      expect(await io.readRange(path, 0, SIZE)).toEqual(bytesOf(k));
    }
    await inner.settled();
    paths.forEach((path) => expect(inner.readsOf(path)).toEqual([[0, SIZE - TAIL]]));
    expect(io.stats()).toMatchObject({ fetched: paths.length, seeded: 0, hits: 2 * paths.length });
    expect(io.stats().maxHeldBytes).toBeLessThanOrEqual(2 * SIZE);
    io.close();
  });

  it('keeps at most `files` ranges fetched or in flight', async () => {
    const inner = new CountingIO(s3);
    const io = new ReadAheadFileIO(inner, paths.map((path) => ({ path, start: 0, end: SIZE })), { files: 4, bytes: 1 << 20 });
    expect(io.stats().held).toBe(4);
    expect(inner.inFlight).toBe(4);
    for (const [k, path] of paths.entries()) {
      expect(await io.readRange(path, 100, 200)).toEqual(bytesOf(k).subarray(100, 200));
      expect(io.stats().held).toBeLessThanOrEqual(4);
      expect(inner.inFlight).toBeLessThanOrEqual(4);
    }
    expect(inner.maxInFlight).toBeLessThanOrEqual(4);
    expect(inner.ranges.length).toBe(paths.length);
    io.close();
  });

  it('throws a failed fetch from the read that needs it, and leaves none unhandled when nobody reads it', async () => {
    const missing = paths[0].replace(/f00\.bin$/, 'missing.bin');
    const alsoMissing = paths[0].replace(/f00\.bin$/, 'also-missing.bin');
    const inner = new CountingIO(s3);
    const list = [paths[0], missing, paths[1], alsoMissing].map((path) => ({ path, start: 0, end: SIZE }));
    const io = new ReadAheadFileIO(inner, list, { files: 4, bytes: 1 << 20 });
    expect(await io.readRange(paths[0], 0, 10)).toEqual(bytesOf(0).subarray(0, 10));
    const err = await io.readRange(missing, 0, 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).path).toBe(missing);
    // `alsoMissing` failed ahead of the reader, who gives up here: its error must go nowhere.
    io.close();
    await inner.settled();
    await new Promise((r) => setTimeout(r, 20));
    expect(inner.ranges.map((r) => r.path)).toEqual(list.map((r) => r.path));
  });

  it('passes through reads of files not in its list, and every read once closed', async () => {
    const inner = new CountingIO(s3);
    const io = new ReadAheadFileIO(inner, [{ path: paths[0], start: 0, end: SIZE }], { files: 2 });
    expect(await io.readRange(paths[5], 0, 16)).toEqual(bytesOf(5).subarray(0, 16));
    expect(await io.read(paths[6])).toEqual(bytesOf(6));
    expect((await io.stat(paths[7])).size).toBe(SIZE);
    io.close();
    expect(await io.readRange(paths[0], 0, 16)).toEqual(bytesOf(0).subarray(0, 16));
    await inner.settled();
    expect(inner.ranges.map((r) => [r.path, r.start, r.end])).toEqual([
      [paths[0], 0, SIZE], [paths[5], 0, 16], [paths[0], 0, 16],
    ]);
  });
});
