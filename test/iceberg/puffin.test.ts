import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { InvalidFileError, UnsupportedError } from '../../lib/errors.js';
import { readPuffinBlob, readPuffinFooter, PuffinWriter, type BlobMetadata } from '../../lib/iceberg/puffin.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { FIXTURES, tempDir } from '../support/fixtures.js';

const io = new LocalFileIO();
const DV_PUFFIN = join(
  FIXTURES,
  'iceberg_v3_deletion_vectors/data/00000-9-08e88179-85b6-4635-8b34-94b49abc87d9-00001-deletes.puffin',
);
const DATA = 'hdfs://localhost:20500/test-warehouse/iceberg_v3_deletion_vectors/data';

/** Writes `bytes` to a fresh temp file and returns its path. */
function tempFile(bytes: Uint8Array, name = 'x.puffin'): string {
  const path = join(tempDir('packice-puffin-'), name);
  writeFileSync(path, bytes);
  return path;
}

/** A small valid Puffin file with one blob, built by hand. */
function handMade(footerJson: string, flags = [0, 0, 0, 0], blob = Uint8Array.of(1, 2, 3)): Uint8Array {
  const payload = new TextEncoder().encode(footerJson);
  const out = new Uint8Array(4 + blob.length + 4 + payload.length + 12);
  const magic = [0x50, 0x46, 0x41, 0x31];
  out.set(magic, 0);
  out.set(blob, 4);
  let at = 4 + blob.length;
  out.set(magic, at);
  out.set(payload, at + 4);
  at += 4 + payload.length;
  new DataView(out.buffer).setInt32(at, payload.length, true);
  out.set(flags, at + 4);
  out.set(magic, at + 8);
  return out;
}

const ONE_BLOB = (extra = '') =>
  `{"blobs":[{"type":"t","fields":[1],"snapshot-id":5,"sequence-number":6,"offset":4,"length":3${extra}}]}`;

describe('readPuffinFooter on the Spark/Iceberg 1.10.1 deletion-vector file', () => {
  it('reads both blob metadata records exactly', async () => {
    const footer = await readPuffinFooter(io, DV_PUFFIN);
    expect(footer.fileLength).toBe(824);
    expect(footer.footerSize).toBe(824 - 88);
    expect(footer.properties).toEqual({
      'created-by': 'Apache Iceberg 1.10.1 (commit ccb8bc435062171e64bc8b7e5f56e6aed9c5b934)',
    });
    const expected: BlobMetadata[] = [
      {
        type: 'deletion-vector-v1',
        fields: [2147483645],
        snapshotId: -1n,
        sequenceNumber: -1n,
        offset: 4,
        length: 42,
        properties: {
          'referenced-data-file': `${DATA}/00003-3-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet`,
          cardinality: '1',
        },
      },
      {
        type: 'deletion-vector-v1',
        fields: [2147483645],
        snapshotId: -1n,
        sequenceNumber: -1n,
        offset: 46,
        length: 42,
        properties: {
          'referenced-data-file': `${DATA}/00001-1-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet`,
          cardinality: '1',
        },
      },
    ];
    expect(footer.blobs).toEqual(expected);
  });

  it('accepts a known file length and reads the blobs byte for byte', async () => {
    const footer = await readPuffinFooter(io, DV_PUFFIN, 824);
    const raw = readFileSync(DV_PUFFIN);
    for (const blob of footer.blobs) {
      const bytes = await readPuffinBlob(io, DV_PUFFIN, blob);
      expect(Buffer.from(bytes).equals(raw.subarray(blob.offset, blob.offset + blob.length))).toBe(true);
    }
  });
});

describe('PuffinWriter', () => {
  it('round-trips blobs, longs above 2^53 and properties', async () => {
    const path = join(tempDir('packice-puffin-'), 'stats.puffin');
    const writer = new PuffinWriter(io, path, { createdBy: 'packice test', properties: { k: 'v' } });
    const a = writer.add({
      type: 'apache-datasketches-theta-v1',
      fields: [1, 2],
      snapshotId: 9007199254740993n,
      sequenceNumber: 7,
      data: Uint8Array.of(9, 8, 7, 6, 5),
      properties: { ndv: '42' },
    });
    const b = writer.add({ type: 'custom', fields: [], data: new Uint8Array(0) });
    const c = writer.add({ type: 'custom', fields: [3], data: Uint8Array.of(1) });
    expect([a.offset, a.length, b.offset, b.length, c.offset, c.length]).toEqual([4, 5, 9, 0, 9, 1]);
    const result = await writer.finish();
    const bytes = readFileSync(path);
    expect(result.fileSize).toBe(bytes.length);
    expect(result.blobs).toEqual([a, b, c]);

    // layout: PFA1, blobs, PFA1, JSON, LE size, zero flags, PFA1
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('PFA1');
    expect(bytes.subarray(4, 10)).toEqual(Buffer.from([9, 8, 7, 6, 5, 1]));
    expect(bytes.subarray(10, 14).toString('latin1')).toBe('PFA1');
    const payloadSize = bytes.readInt32LE(bytes.length - 12);
    expect(result.footerSize).toBe(4 + payloadSize + 12);
    expect(bytes.length).toBe(10 + result.footerSize);
    expect([...bytes.subarray(bytes.length - 8, bytes.length - 4)]).toEqual([0, 0, 0, 0]);
    expect(bytes.subarray(bytes.length - 4).toString('latin1')).toBe('PFA1');
    const json = bytes.subarray(14, 14 + payloadSize).toString('utf8');
    expect(json).toContain('"snapshot-id":9007199254740993');
    expect(json).toBe(
      '{"blobs":[{"type":"apache-datasketches-theta-v1","fields":[1,2],"snapshot-id":9007199254740993,' +
        '"sequence-number":7,"offset":4,"length":5,"properties":{"ndv":"42"}},' +
        '{"type":"custom","fields":[],"snapshot-id":-1,"sequence-number":-1,"offset":9,"length":0},' +
        '{"type":"custom","fields":[3],"snapshot-id":-1,"sequence-number":-1,"offset":9,"length":1}],' +
        '"properties":{"k":"v","created-by":"packice test"}}',
    );

    const footer = await readPuffinFooter(io, path);
    expect(footer.blobs).toEqual([a, b, c]);
    expect(footer.properties).toEqual({ k: 'v', 'created-by': 'packice test' });
    expect(Array.from(await readPuffinBlob(io, path, footer.blobs[0]))).toEqual([9, 8, 7, 6, 5]);
    expect(Array.from(await readPuffinBlob(io, path, footer.blobs[1]))).toEqual([]);
    await expect(writer.finish()).rejects.toThrow('already finished');
  });

  it('writes a file with no blobs', async () => {
    const path = join(tempDir('packice-puffin-'), 'empty.puffin');
    const result = await new PuffinWriter(io, path).finish();
    expect(result.blobs).toEqual([]);
    const footer = await readPuffinFooter(io, path);
    expect(footer.blobs).toEqual([]);
    expect(footer.properties).toEqual({ 'created-by': 'packice' });
    expect(footer.fileLength).toBe(result.fileSize);
  });

  it('reads a footer longer than the first tail read', async () => {
    const path = join(tempDir('packice-puffin-'), 'big-footer.puffin');
    const writer = new PuffinWriter(io, path);
    const long = 'x'.repeat(1000);
    for (let i = 0; i < 40; i++) writer.add({ type: 't', fields: [i], data: Uint8Array.of(i), properties: { long } });
    const result = await writer.finish();
    expect(result.footerSize).toBeGreaterThan(16 * 1024);
    const footer = await readPuffinFooter(io, path);
    expect(footer.blobs.map((b) => b.fields[0])).toEqual([...Array(40).keys()]);
    expect(Array.from(await readPuffinBlob(io, path, footer.blobs[39]))).toEqual([39]);
  });
});

describe('bad Puffin files name the file and the rule', () => {
  const rejects = async (bytes: Uint8Array, type: new (...a: never[]) => Error, message: RegExp) => {
    const path = tempFile(bytes);
    const err = await readPuffinFooter(io, path).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(type);
    expect((err as Error).message).toContain(path);
    expect((err as Error).message).toMatch(message);
  };

  it('accepts the hand-made baseline', async () => {
    const footer = await readPuffinFooter(io, tempFile(handMade(ONE_BLOB())));
    expect(footer.blobs[0]).toEqual({
      type: 't', fields: [1], snapshotId: 5n, sequenceNumber: 6n, offset: 4, length: 3, properties: {},
    });
  });

  it('bad trailing, footer or header magic → InvalidFileError', async () => {
    const good = handMade(ONE_BLOB());
    const tail = good.slice();
    tail[tail.length - 1] = 0x32;
    await rejects(tail, InvalidFileError, /expected magic 50 46 41 31 \("PFA1"\) at offset \d+, found 50 46 41 32/);
    const footerStart = good.slice();
    footerStart[7] = 0;
    await rejects(footerStart, InvalidFileError, /expected magic .* at offset 7, found 00 46 41 31/);
    const header = good.slice();
    header[0] = 0x51;
    await rejects(header, InvalidFileError, /at offset 0, found 51 46 41 31/);
  });

  it('a footer size that does not fit the file → InvalidFileError', async () => {
    const bytes = handMade(ONE_BLOB());
    new DataView(bytes.buffer).setInt32(bytes.length - 12, 5000, true);
    await rejects(bytes, InvalidFileError, /Invalid Puffin footer payload size 5000 .*Footer structure/);
    new DataView(bytes.buffer).setInt32(bytes.length - 12, -3, true);
    await rejects(bytes, InvalidFileError, /payload size -3/);
  });

  it('a file too short to hold a footer → InvalidFileError', async () => {
    await rejects(Uint8Array.of(0x50, 0x46, 0x41, 0x31), InvalidFileError, /length 4 is less than the minimal Puffin file length 20/);
  });

  it('a compressed footer or an unknown flag → UnsupportedError', async () => {
    await rejects(handMade(ONE_BLOB(), [1, 0, 0, 0]), UnsupportedError, /LZ4-compressed/);
    await rejects(handMade(ONE_BLOB(), [0, 0, 2, 0]), UnsupportedError, /unknown flag byte 2 bit 1/);
  });

  it('a footer that is not FileMetadata JSON → InvalidFileError', async () => {
    await rejects(handMade('{"blobs":'), InvalidFileError, /not UTF-8 JSON/);
    await rejects(handMade('{"blob":[]}'), InvalidFileError, /"blobs" is missing/);
    await rejects(handMade(ONE_BLOB().replace('"snapshot-id":5', '"snapshot-id":"5"')), InvalidFileError, /"snapshot-id" is not a long/);
    await rejects(handMade(ONE_BLOB().replace('"length":3', '"length":30')), InvalidFileError, /outside the blob area \[4, 7\)/);
    await rejects(handMade(ONE_BLOB(',"properties":{"a":1}')), InvalidFileError, /value for "a" is not a string/);
  });

  it('reading a blob with an unsupported codec → UnsupportedError naming the file', async () => {
    const path = tempFile(handMade(ONE_BLOB(',"compression-codec":"lz4"')));
    const [blob] = (await readPuffinFooter(io, path)).blobs;
    expect(blob.compressionCodec).toBe('lz4');
    await expect(readPuffinBlob(io, path, blob)).rejects.toThrow(UnsupportedError);
    await expect(readPuffinBlob(io, path, blob)).rejects.toThrow(path);
    const snappy = tempFile(handMade(ONE_BLOB(',"compression-codec":"snappy"')));
    await expect(readPuffinBlob(io, snappy, (await readPuffinFooter(io, snappy)).blobs[0])).rejects.toThrow(
      /Unsupported Puffin blob compression codec "snappy"/,
    );
  });

  it('zstd blobs decompress where node:zlib has zstd, and are UnsupportedError elsewhere', async () => {
    const z = zlib as unknown as { zstdCompressSync?: (b: Uint8Array) => Buffer };
    const plain = new TextEncoder().encode('hello puffin hello puffin');
    const blob = z.zstdCompressSync ? new Uint8Array(z.zstdCompressSync(plain)) : Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd);
    const path = tempFile(handMade(ONE_BLOB(',"compression-codec":"zstd"').replace('"length":3', `"length":${blob.length}`), undefined, blob));
    const [meta] = (await readPuffinFooter(io, path)).blobs;
    if (z.zstdCompressSync) {
      expect(new TextDecoder().decode(await readPuffinBlob(io, path, meta))).toBe('hello puffin hello puffin');
    } else {
      await expect(readPuffinBlob(io, path, meta)).rejects.toThrow(/"zstd" needs Node >= 22.15/);
      await expect(readPuffinBlob(io, path, meta)).rejects.toBeInstanceOf(UnsupportedError);
    }
  });
});
