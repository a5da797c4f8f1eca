import { GetObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AlreadyExistsError,
  CommitConflictError,
  InvalidFileError,
  NotFoundError,
  UnsupportedError,
} from '../../lib/errors.js';
import type { FileInfo } from '../../lib/io/file-io.js';
import { fileIOFor, LazyS3FileIO } from '../../lib/io/index.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { S3FileIO, parseS3Location } from '../../lib/io/s3.js';
import { S3RequestCounter } from '../../lib/io/s3-requests.js';
import { testS3Client } from '../support/moto.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';

const MIB = 1024 * 1024;
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array): string => new TextDecoder().decode(b);

async function collect(it: AsyncIterable<FileInfo>): Promise<FileInfo[]> {
  const out: FileInfo[] = [];
  for await (const f of it) out.push(f);
  return out;
}

async function rawKeys(client: S3Client, bucket: string): Promise<string[]> {
  const out = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (out.Contents ?? []).map((o) => o.Key ?? '');
}

let io: S3FileIO;
let client: S3Client;
let bucket: string;

beforeAll(async () => {
  io = new S3FileIO({ endpoint: testS3Endpoint(), partSize: 5 * MIB });
  client = testS3Client(testS3Endpoint());
  bucket = await freshBucket();
});
afterAll(() => {
  client.destroy();
  io.client.destroy();
});

describe('parseS3Location', () => {
  it('splits bucket and key for all three schemes', () => {
    expect(parseS3Location('s3://b/k/x.parquet')).toEqual({ scheme: 's3', bucket: 'b', key: 'k/x.parquet' });
    expect(parseS3Location('S3A://b/k')).toEqual({ scheme: 's3a', bucket: 'b', key: 'k' });
    expect(parseS3Location('s3n://b')).toEqual({ scheme: 's3n', bucket: 'b', key: '' });
    expect(parseS3Location('s3://b/')).toEqual({ scheme: 's3', bucket: 'b', key: '' });
  });

  it('rejects anything else, naming it', () => {
    expect(() => parseS3Location('gs://b/k')).toThrow(UnsupportedError);
    expect(() => parseS3Location('s3:///k')).toThrow(/^s3:\/\/\/k: not an S3 location/);
  });
});

describe('fileIOFor', () => {
  it('picks local or S3 by scheme and shares one S3 client per endpoint', () => {
    expect(fileIOFor('/t')).toBeInstanceOf(LocalFileIO);
    expect(fileIOFor('file:/t')).toBe(fileIOFor('/x'));
    const a = fileIOFor('s3://b/t', { s3Endpoint: testS3Endpoint() });
    expect(a).toBeInstanceOf(LazyS3FileIO);
    expect(fileIOFor('s3a://other/t', { s3Endpoint: testS3Endpoint() })).toBe(a);
    expect(fileIOFor('s3://b/t', { s3Endpoint: 'http://127.0.0.1:1' })).not.toBe(a);
    expect(() => fileIOFor('hdfs://nn/t')).toThrow(/^hdfs:\/\/nn\/t: no FileIO for this location/);
  });
});

describe('S3FileIO against moto', () => {
  it('writes, reads, range-reads and stats', async () => {
    const path = `s3://${bucket}/basic/f.bin`;
    await io.write(path, bytes('0123456789'));
    expect(text(await io.read(path))).toBe('0123456789');
    expect(text(await io.readRange(path, 3, 7))).toBe('3456');
    expect(text(await io.readRange(path, 9, 10))).toBe('9');
    expect(await io.readRange(path, 5, 5)).toEqual(new Uint8Array(0));
    // A plain Uint8Array, not a Buffer: its slice() is a copy, which callers rely on to let a read go.
    const range = await io.readRange(path, 2, 8);
    expect(Buffer.isBuffer(range)).toBe(false);
    const part = range.slice(1, 3);
    part[0] = 0x41;
    expect(text(range)).toBe('234567');

    const info = await io.stat(path);
    const [listed] = await collect(io.list(`s3://${bucket}/basic`));
    expect(info).toEqual({ path, size: 10, lastModifiedMs: listed.lastModifiedMs });
    expect(await io.exists(path)).toBe(true);
    expect(await io.exists(`s3://${bucket}/basic/nope`)).toBe(false);

    const file = io.newInputFile(path);
    expect(await file.length()).toBe(10);
    expect(text(await file.read(8, 10))).toBe('89');
  });

  it('answers in the scheme it was asked with: s3a and s3n reach the same objects', async () => {
    await io.write(`s3a://${bucket}/schemes/x`, bytes('via s3a'));
    expect(text(await io.read(`s3://${bucket}/schemes/x`))).toBe('via s3a');
    expect(text(await io.read(`s3n://${bucket}/schemes/x`))).toBe('via s3a');
    expect((await collect(io.list(`s3a://${bucket}/schemes/`))).map((f) => f.path)).toEqual([
      `s3a://${bucket}/schemes/x`,
    ]);
  });

  it('writes and reads an empty object, from bytes and from an empty stream', async () => {
    await io.write(`s3://${bucket}/empty/a`, new Uint8Array(0));
    await io.write(`s3://${bucket}/empty/b`, (async function* () {})());
    expect((await io.read(`s3://${bucket}/empty/a`)).length).toBe(0);
    expect((await io.read(`s3://${bucket}/empty/b`)).length).toBe(0);
  });

  it('rejects a range past the end as a truncated file, naming it', async () => {
    const path = `s3://${bucket}/short/f.bin`;
    await io.write(path, bytes('abcde'));
    await expect(io.readRange(path, 3, 9)).rejects.toThrow(
      new InvalidFileError(
        'file is truncated or shorter than expected: asked for bytes [3, 9), got 2 byte(s)',
        { path },
      ).message,
    );
    const beyond = await io.readRange(path, 10, 12).catch((e: unknown) => e);
    expect(beyond).toBeInstanceOf(InvalidFileError);
    expect((beyond as InvalidFileError).path).toBe(path);
  });

  it('names the path in not-found errors, for missing keys and missing buckets', async () => {
    const missing = `s3://${bucket}/absent/x.json`;
    const err = await io.read(missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as Error).message).toBe(`${missing}: cannot read: no such object`);
    await expect(io.stat(missing)).rejects.toThrow(`${missing}: cannot stat: no such object`);
    await expect(io.readRange(missing, 0, 4)).rejects.toThrow(NotFoundError);
    const noBucket = 's3://packice-no-such-bucket/x';
    await expect(io.read(noBucket)).rejects.toThrow(`${noBucket}: cannot read: the bucket packice-no-such-bucket does not exist`);
    await expect(collect(io.list(noBucket))).rejects.toThrow(NotFoundError);
  });

  it('streams a write of more than 5 MiB as a multipart upload', async () => {
    const path = `s3://${bucket}/multipart/big.bin`;
    const chunk = 256 * 1024;
    const count = 26; // 6.5 MiB: two parts of 5 MiB and 1.5 MiB
    async function* chunks(): AsyncIterable<Uint8Array> {
      for (let i = 0; i < count; i++) yield new Uint8Array(chunk).fill(i);
    }
    await io.write(path, chunks());
    const { data, etag } = await io.readWithETag(path);
    expect(data.length).toBe(count * chunk);
    expect(etag).toMatch(/^"[0-9a-f]{32}-2"$/); // a multipart ETag names its part count
    for (let i = 0; i < count; i++) {
      expect([data[i * chunk], data[(i + 1) * chunk - 1]]).toEqual([i, i]);
    }
    expect(text(await io.readRange(path, 5 * MIB - 1, 5 * MIB + 1))).toBe(
      String.fromCharCode(19, 20), // the bytes either side of the part boundary
    );
  });

  it('aborts the multipart upload when the stream fails, leaving no object and no parts', async () => {
    const path = `s3://${bucket}/aborted/big.bin`;
    async function* broken(): AsyncIterable<Uint8Array> {
      for (let i = 0; i < 24; i++) yield new Uint8Array(256 * 1024);
      throw new Error('producer died');
    }
    await expect(io.write(path, broken())).rejects.toThrow(/producer died/);
    expect(await io.exists(path)).toBe(false);
    const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: 'aborted/' }));
    expect(uploads.Uploads ?? []).toEqual([]);
  });

  it('creates if absent exactly once; moto answers the second with 412', async () => {
    const path = `s3://${bucket}/cia/v1.metadata.json`;
    await io.createIfAbsent(path, bytes('first'));
    const err = await io.createIfAbsent(path, bytes('second')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AlreadyExistsError);
    expect((err as Error).message).toBe(`${path}: already exists`);
    expect((err as Error).cause).toMatchObject({ name: 'PreconditionFailed', $metadata: { httpStatusCode: 412 } });
    expect(text(await io.read(path))).toBe('first');
  });

  it('lets exactly one of 8 racing creates win', async () => {
    const path = `s3://${bucket}/race/target`;
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => io.createIfAbsent(path, bytes(`writer ${i}`))),
    );
    const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof AlreadyExistsError)).toHaveLength(7);
    expect(text(await io.read(path))).toBe(`writer ${winners[0]}`);
  });

  it('replaces only if the ETag still matches', async () => {
    const path = `s3://${bucket}/cas/pointer`;
    await io.write(path, bytes('one'));
    const { etag } = await io.readWithETag(path);
    const next = await io.replaceIfMatch(path, bytes('two'), etag);
    expect(next).not.toBe(etag);
    expect(next).toBe((await io.readWithETag(path)).etag);
    const err = await io.replaceIfMatch(path, bytes('three'), etag).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommitConflictError);
    expect((err as CommitConflictError).path).toBe(path);
    expect(text(await io.read(path))).toBe('two');
  });

  it('lists past the 1000-key page, only inside the folder, and batch-deletes past 1000 paths', async () => {
    // moto spends ~10 ms per PutObject, so this stays just over one page.
    const n = 1001;
    const paths = Array.from({ length: n }, (_, i) => `s3://${bucket}/many/t/${String(i).padStart(4, '0')}`);
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < paths.length) await io.write(paths[next++], bytes('x'));
      }),
    );
    await io.write(`s3://${bucket}/many/t_backup/keep`, bytes('k'));
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'many/t/folder/', Body: new Uint8Array(0) }));

    const listed = await collect(io.list(`s3://${bucket}/many/t`));
    expect(listed.map((f) => f.path)).toEqual(paths);
    expect(listed.every((f) => f.size === 1)).toBe(true);

    // 2500 paths make three DeleteObjects batches; missing keys are not an error.
    const missing = Array.from({ length: 1499 }, (_, i) => `s3://${bucket}/many/t/missing-${i}`);
    await io.deleteMany([...missing.slice(0, 700), ...paths, ...missing.slice(700)]);
    expect((await rawKeys(client, bucket)).filter((k) => k.startsWith('many/'))).toEqual([
      'many/t/folder/',
      'many/t_backup/keep',
    ]);
  });
});

describe('multipart part size and request counts', () => {
  async function* stream(mib: number): AsyncIterable<Uint8Array> {
    for (let i = 0; i < mib * 4; i++) yield new Uint8Array(256 * 1024).fill(i & 0xff);
  }

  it('a write may ask for its own part size (partBytes): 12 MiB in 6 MiB parts is 2 parts; under 5 MiB is refused', async () => {
    const s3 = new S3FileIO({ endpoint: testS3Endpoint() });
    const logged = new S3RequestCounter(s3.client, { log: true });
    const path = `s3://${bucket}/parts/asked.bin`;
    await s3.write(path, stream(12), { partBytes: 6 * MIB });
    expect(logged.requests().filter((r) => r.command === 'UploadPartCommand').map((r) => r.bytes)).toEqual([6 * MIB, 6 * MIB]);
    expect((await s3.read(path)).length).toBe(12 * MIB);
    await expect(s3.write(path, stream(1), { partBytes: 4 * MIB })).rejects.toThrow(/at least 5 MiB, got partBytes 4194304 writing s3:\/\/.*asked\.bin/);
    await s3.deleteMany([path]);
  });

  it('uploads in 32 MiB parts by default: a 33 MiB stream is 2 parts, billed as 4 PUTs', async () => {
    const s3 = new S3FileIO({ endpoint: testS3Endpoint() });
    const counter = new S3RequestCounter(s3.client);
    const logged = new S3RequestCounter(s3.client, { log: true });
    try {
      const path = `s3://${bucket}/parts/default.bin`;
      await s3.write(path, stream(33));
      expect(counter.counts()).toEqual({
        get: 0, put: 4, free: 0,
        byCommand: { CreateMultipartUploadCommand: 1, UploadPartCommand: 2, CompleteMultipartUploadCommand: 1 },
      });
      expect((await s3.readWithETag(path)).etag).toMatch(/-2"$/);
      counter.reset();
      await s3.readRange(path, 0, 10);
      await s3.stat(path);
      await s3.deleteMany([path]);
      expect(counter.counts()).toEqual({ get: 2, put: 0, free: 1, byCommand: { GetObjectCommand: 1, HeadObjectCommand: 1, DeleteObjectsCommand: 1 } });
      // The log keeps bytes per request: each part's, and a range GET's.
      const logs = logged.requests();
      expect(logs.filter((r) => r.command === 'UploadPartCommand').map((r) => r.bytes).sort((a, b) => a - b)).toEqual([MIB, 32 * MIB]);
      expect(logs.filter((r) => r.command !== 'UploadPartCommand').map((r) => [r.command, r.bytes])).toEqual([
        ['CreateMultipartUploadCommand', 0], ['CompleteMultipartUploadCommand', 0], ['GetObjectCommand', 33 * MIB],
        ['GetObjectCommand', 10], ['HeadObjectCommand', 0], ['DeleteObjectsCommand', 0],
      ]);
    } finally {
      s3.client.destroy();
    }
  });

  it('uploads a write\'s partsInFlight parts at once, unless the FileIO was given a queueSize', async () => {
    /** The most UploadParts in flight during a 4-part write (each held 50 ms on its way). */
    const mostAtOnce = async (s3: S3FileIO, partsInFlight: number): Promise<number> => {
      let now = 0;
      let most = 0;
      s3.client.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName !== 'UploadPartCommand') return next(args);
          most = Math.max(most, ++now);
          try {
            await new Promise((r) => setTimeout(r, 50));
            return await next(args);
          } finally {
            now--;
          }
        },
        { step: 'initialize', name: 'testPartsInFlight' },
      );
      const path = `s3://${bucket}/parts/in-flight.bin`;
      await s3.write(path, stream(20), { partBytes: 5 * MIB, partsInFlight });
      await s3.deleteMany([path]);
      return most;
    };
    const chosenHere = new S3FileIO({ endpoint: testS3Endpoint() });
    const chosenByIO = new S3FileIO({ endpoint: testS3Endpoint(), queueSize: 3 });
    try {
      expect(await mostAtOnce(chosenHere, 1)).toBe(1);
      expect(await mostAtOnce(chosenByIO, 1)).toBe(3);
    } finally {
      chosenHere.client.destroy();
      chosenByIO.client.destroy();
    }
  });

  it('takes the part size from PACKICE_S3_PART_SIZE_MIB, and refuses one that is not a number', async () => {
    const saved = process.env.PACKICE_S3_PART_SIZE_MIB;
    process.env.PACKICE_S3_PART_SIZE_MIB = '8';
    const s3 = new S3FileIO({ endpoint: testS3Endpoint() });
    try {
      const counter = new S3RequestCounter(s3.client);
      await s3.write(`s3://${bucket}/parts/eight.bin`, stream(33));
      expect(counter.counts().byCommand.UploadPartCommand).toBe(5);
      // A part size chosen so wins over a write's own (a copied or merged output's 64 MiB).
      counter.reset();
      await s3.write(`s3://${bucket}/parts/eight.bin`, stream(33), { partBytes: 64 * MIB });
      expect(counter.counts().byCommand.UploadPartCommand).toBe(5);
      process.env.PACKICE_S3_PART_SIZE_MIB = 'big';
      expect(() => new S3FileIO({ endpoint: testS3Endpoint() })).toThrow(/PACKICE_S3_PART_SIZE_MIB must be a number of MiB/);
      process.env.PACKICE_S3_PART_SIZE_MIB = '4';
      expect(() => new S3FileIO({ endpoint: testS3Endpoint() })).toThrow(UnsupportedError);
    } finally {
      if (saved === undefined) delete process.env.PACKICE_S3_PART_SIZE_MIB;
      else process.env.PACKICE_S3_PART_SIZE_MIB = saved;
      s3.client.destroy();
    }
  });
});

describe('integrity checks on the wire', () => {
  /** The headers each command is sent with, signed; no request leaves the process. */
  async function sentHeaders(endpoint: string | undefined, send: (io: S3FileIO) => Promise<unknown>): Promise<Map<string, Record<string, string>>> {
    // No endpoint means AWS: the environment's endpoint must not stand in for it.
    const names = ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL'] as const;
    const saved = names.map((n) => process.env[n]);
    for (const n of names) delete process.env[n];
    const s3 = new S3FileIO({ endpoint, partSize: 5 * MIB, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    names.forEach((n, i) => {
      if (saved[i] !== undefined) process.env[n] = saved[i];
    });
    const sent = new Map<string, Record<string, string>>();
    // Outermost in the deserialize step: after signing, before anything is sent; answers every command itself.
    s3.client.middlewareStack.add(
      (_next, context) => async (args) => {
        sent.set(context.commandName ?? '', { ...(args.request as { headers: Record<string, string> }).headers });
        const output = context.commandName === 'CreateMultipartUploadCommand' ? { UploadId: 'u' } : { ETag: '"e"' };
        return { output: { $metadata: {}, ...output }, response: {} } as never;
      },
      { step: 'deserialize', priority: 'high', name: 'capture' },
    );
    try {
      await send(s3);
    } finally {
      s3.client.destroy();
    }
    return sent;
  }
  const sha256Hex = /^[0-9a-f]{64}$/;
  async function* sixMiB(): AsyncIterable<Uint8Array> {
    yield new Uint8Array(6 * MIB).fill(1);
  }

  it('sends file bodies as UNSIGNED-PAYLOAD over TLS, with the SDK\'s CRC32 on AWS only; over plain http their SHA-256 is signed', async () => {
    const aws = await sentHeaders(undefined, async (s3) => {
      await s3.write('s3://b/k/small.bin', bytes('abc'));
      await s3.write('s3://b/k/big.bin', sixMiB());
    });
    for (const command of ['PutObjectCommand', 'UploadPartCommand']) {
      expect(aws.get(command)?.['x-amz-content-sha256'], `AWS ${command}`).toBe('UNSIGNED-PAYLOAD');
      // Kept on AWS: Object Lock buckets refuse PUTs without one.
      expect(aws.get(command)?.['x-amz-checksum-crc32'], `AWS ${command}`).toMatch(/^[A-Za-z0-9+/]{6}==$/);
    }
    for (const endpoint of ['https://s3.example.test']) {
      const sent = await sentHeaders(endpoint, async (s3) => {
        await s3.write('s3://b/k/small.bin', bytes('abc'));
        await s3.write('s3://b/k/big.bin', sixMiB());
      });
      for (const command of ['PutObjectCommand', 'UploadPartCommand']) {
        expect(sent.get(command)?.['x-amz-content-sha256'], `${endpoint ?? 'AWS'} ${command}`).toBe('UNSIGNED-PAYLOAD');
      }
      for (const headers of sent.values()) expect(Object.keys(headers).filter((h) => h.startsWith('x-amz-checksum'))).toEqual([]);
      // Other bodies (the multipart's completion) stay signed.
      expect(sent.get('CompleteMultipartUploadCommand')?.['x-amz-content-sha256']).toMatch(sha256Hex);
    }
    const sent = await sentHeaders('http://127.0.0.1:1', (s3) => s3.write('s3://b/k/small.bin', bytes('abc')));
    expect(sent.get('PutObjectCommand')?.['x-amz-content-sha256']).toMatch(sha256Hex);
    expect(Object.keys(sent.get('PutObjectCommand') ?? {}).filter((h) => h.startsWith('x-amz-checksum'))).toEqual([]);
  });

  it('does not ask S3 for checksums to validate on GETs', async () => {
    const sent = await sentHeaders(undefined, (s3) => s3.client.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' })));
    expect(sent.get('GetObjectCommand')?.['x-amz-checksum-mode']).toBeUndefined();
  });
});
