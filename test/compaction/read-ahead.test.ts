/**
 * rewriteGroup reading its inputs ahead (lib/io/read-ahead.ts) on a real S3 server (moto): the
 * same rows and the same proof as without, each input fetched once, the fetches ahead bounded,
 * a few-MB input fetched whole in one GET when it fits the read-ahead budget (its tail, then its
 * row group, when it does not), and a missing or broken input failing the rewrite by name with
 * nothing left unhandled; scanRows reads ahead the same way.
 */
import { randomBytes } from 'node:crypto';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Table } from '../../lib/catalog/table.js';
import type { GroupResult, Plan } from '../../lib/compaction/messages.js';
import { READ_AHEAD_BYTES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { InvalidFileError, NotFoundError } from '../../lib/errors.js';
import { dataFileFromJson } from '../../lib/iceberg/data-file-json.js';
import { currentSchema } from '../../lib/iceberg/table-metadata.js';
import type { Row } from '../../lib/iceberg/values.js';
import { fileIOFor, parseS3Location } from '../../lib/io/index.js';
import { S3FileIO } from '../../lib/io/s3.js';
import { S3RequestCounter } from '../../lib/io/s3-requests.js';
import { readRows } from '../../lib/table/data-reader.js';
import { appendRows, createNewTable, deleteRows } from '../../lib/table/operations.js';
import { scanRows } from '../../lib/table/scan.js';
import { DECODE_ONLY, planAll } from '../support/compaction.js';
import { CountingIO } from '../support/counting-io.js';
import { testS3Client } from '../support/moto.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { failOnUnhandledRejections } from '../support/unhandled.js';
import { smallTable } from '../support/small-table.js';

/** The decoder's read-ahead is what these tests watch: no input merged. */

const SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'name', required: false, type: { type: 'string' as const } },
  ],
};

/** An unpartitioned table of `files` appends of 25 rows: one group of `files` inputs. */
async function manyFiles(location: string, files: number): Promise<Table> {
  let t = await createNewTable(fileIOFor(location, { s3Endpoint: testS3Endpoint() }), location, { formatVersion: 2, schema: SCHEMA, properties: DECODE_ONLY });
  for (let f = 0; f < files; f++) {
    t = await appendRows(t, Array.from({ length: 25 }, (_, i) => ({ id: BigInt(f * 25 + i), name: `n${f}-${i}` })));
  }
  return t;
}

async function outputRows(t: Table, result: GroupResult): Promise<Row[]> {
  const rows: Row[] = [];
  for (const o of result.outputs) {
    for await (const b of readRows(t.io, dataFileFromJson(o, t.metadata), currentSchema(t.metadata))) rows.push(...b.rows);
  }
  return rows.sort((a, b) => ((a.id as bigint) < (b.id as bigint) ? -1 : 1));
}

function inputPaths(plan: Plan, group = 0): string[] {
  return plan.groups[group].inputs.map((i) => i.file.filePath);
}

async function putObject(path: string, body: Uint8Array | undefined): Promise<void> {
  const { bucket, key } = parseS3Location(path);
  const client = testS3Client(testS3Endpoint());
  try {
    await client.send(body === undefined ? new DeleteObjectCommand({ Bucket: bucket, Key: key }) : new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  } finally {
    client.destroy();
  }
}

describe('rewriteGroup reads its inputs ahead on S3 (moto)', () => {
  let bucket: string;
  failOnUnhandledRejections();

  beforeAll(async () => {
    bucket = await freshBucket();
  });

  it('writes the same rows with the same proof as without, each input fetched once', async () => {
    const t = await smallTable(fileIOFor(`s3://${bucket}/small`, { s3Endpoint: testS3Endpoint() }), `s3://${bucket}/small`, 2);
    const plan = await planAll(t.io, t.metadata);
    expect(plan.groups.length).toBe(2);
    for (const [g, group] of plan.groups.entries()) {
      const inputs = new Set(inputPaths(plan, g));
      const off = await rewriteGroup(t.io, t.metadata, plan, group, { readAhead: false });
      const counting = new CountingIO(t.io, (p) => inputs.has(p));
      const on = await rewriteGroup(counting, t.metadata, plan, group);
      expect(on.checksums).toEqual(off.checksums);
      expect(on.bytesRead).toBe(off.bytesRead);
      expect(await outputRows(t, on)).toEqual(await outputRows(t, off));
      // Small inputs: one fetch each, the whole file, and every read of them served from it.
      for (const input of group.inputs) expect(counting.readsOf(input.file.filePath)).toEqual([[0, Number(input.file.fileSizeInBytes)]]);
    }
  });

  it('keeps the fetches ahead within their file and byte bounds', async () => {
    const t = await manyFiles(`s3://${bucket}/bounded`, 12);
    const plan = await planAll(t.io, t.metadata);
    const inputs = plan.groups[0].inputs;
    expect(inputs.length).toBe(12);
    const largest = Math.max(...inputs.map((i) => Number(i.file.fileSizeInBytes)));
    const paths = new Set(inputPaths(plan));

    const byCount = new CountingIO(t.io, (p) => paths.has(p));
    const a = await rewriteGroup(byCount, t.metadata, plan, plan.groups[0], { readAhead: { files: 3 } });
    expect(Number(a.checksums.rowsOut)).toBe(300);
    expect(byCount.ranges.length).toBe(12);
    expect(byCount.maxInFlight).toBeGreaterThan(1);
    expect(byCount.maxInFlight).toBeLessThanOrEqual(3);

    // Room for two of the largest input at a time.
    const budget = 2 * largest + 1;
    const byBytes = new CountingIO(t.io, (p) => paths.has(p));
    const b = await rewriteGroup(byBytes, t.metadata, plan, plan.groups[0], { readAhead: { bytes: budget } });
    expect(b.checksums).toEqual(a.checksums);
    expect(byBytes.ranges.length).toBe(12);
    expect(byBytes.maxInFlightBytes).toBeLessThanOrEqual(budget);
    expect(byBytes.maxInFlight).toBeLessThanOrEqual(2);
  });

  it('fails naming a missing input while later inputs are in flight, and leaves nothing behind', async () => {
    const t = await manyFiles(`s3://${bucket}/missing`, 10);
    const plan = await planAll(t.io, t.metadata);
    const paths = inputPaths(plan);
    await putObject(paths[4], undefined);
    const counting = new CountingIO(t.io, (p) => paths.includes(p));
    const err = await rewriteGroup(counting, t.metadata, plan, plan.groups[0]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).path).toBe(paths[4]);
    expect((err as Error).message).toContain(paths[4]);
    await counting.settled();
    await new Promise((r) => setTimeout(r, 20));
    // The files after it were fetched ahead and then abandoned.
    expect(counting.ranges.map((r) => r.path)).toEqual(paths);
    const left = [];
    for await (const f of t.io.list(`${t.location}/data/`)) left.push(f.path);
    expect(left.sort()).toEqual(paths.filter((_, i) => i !== 4).sort());
  });

  it('fetches a few-MB input with deletes whole in one GET when it fits the budget, by ranges when it does not; same outputs and proof', async () => {
    const location = `s3://${bucket}/whole`;
    const s3 = new S3FileIO({ endpoint: testS3Endpoint() });
    let t = await createNewTable(s3, location, { formatVersion: 2, schema: SCHEMA, properties: DECODE_ONLY });
    // Two files of ~1.5 MB (past the 1 MiB that was read whole before): base64 of random bytes hardly compresses.
    for (let f = 0; f < 2; f++) {
      t = await appendRows(t, Array.from({ length: 30_000 }, (_, i) => ({ id: BigInt(f * 30_000 + i), name: randomBytes(36).toString('base64') })));
    }
    // A position delete on each: both are decoded.
    t = (await deleteRows(t, (r) => (r.id as bigint) % 1000n === 7n)).table;
    const plan = await planAll(t.io, t.metadata);
    const group = plan.groups[0];
    const sizes = new Map(group.inputs.map((i) => [parseS3Location(i.file.filePath).key, Number(i.file.fileSizeInBytes)]));
    expect(sizes.size).toBe(2);
    const largest = Math.max(...sizes.values());
    const smallest = Math.min(...sizes.values());
    expect(smallest).toBeGreaterThan(1024 * 1024);

    const rewrite = async (budget: number | undefined, decodeWorkers = 0): Promise<{ result: GroupResult; gets: Map<string, number[]> }> => {
      const m = budget === undefined ? t.metadata : { ...t.metadata, properties: { ...t.metadata.properties, [READ_AHEAD_BYTES_PROPERTY]: String(budget) } };
      const counter = new S3RequestCounter(s3.client, { log: true });
      const result = await rewriteGroup(s3, m, plan, group, { decodeWorkers });
      const gets = new Map<string, number[]>();
      for (const r of counter.requests()) {
        if (r.command === 'GetObjectCommand' && sizes.has(r.key)) gets.set(r.key, [...(gets.get(r.key) ?? []), r.bytes]);
      }
      counter.reset();
      return { result, gets };
    };
    // Fits (the default 64 MiB, or just both files): one GET each, the whole file.
    const fits = await rewrite(undefined);
    const both = await rewrite(2 * largest);
    // Decode workers get each input whole from the read-ahead: no second fetch either.
    const pooled = await rewrite(undefined, 2);
    for (const { result, gets } of [fits, both, pooled]) {
      for (const [key, size] of sizes) expect(gets.get(key)).toEqual([size]);
      expect(result.checksums.hashOut).toBe(result.checksums.hashIn);
    }
    // Does not fit: the 64 KiB tail read ahead, then the rest by ranged reads, no byte twice past the tail.
    const tight = await rewrite(smallest - 1);
    for (const [key, size] of sizes) {
      const got = tight.gets.get(key)!;
      expect(got.length).toBeGreaterThan(1);
      expect(got[0]).toBe(64 * 1024);
      expect(got.reduce((n, b) => n + b, 0)).toBeLessThan(size + 64 * 1024);
    }
    const off = await rewriteGroup(s3, t.metadata, plan, group, { readAhead: false, decodeWorkers: 0 });
    for (const r of [both.result, pooled.result, tight.result, off]) {
      expect(r.checksums).toEqual(fits.result.checksums);
      expect(await outputRows(t, r)).toEqual(await outputRows(t, fits.result));
    }
  });

  it('scanRows reads each small data file in one fetch ahead of its reader', async () => {
    const t = await manyFiles(`s3://${bucket}/scan`, 6);
    const plan = await planAll(t.io, t.metadata);
    const paths = new Set(inputPaths(plan));
    const counting = new CountingIO(t.io, (p) => paths.has(p));
    const ids: number[] = [];
    for await (const r of scanRows(counting, t.metadata)) ids.push(Number(r.id));
    expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: 150 }, (_, i) => i));
    for (const input of plan.groups[0].inputs) expect(counting.readsOf(input.file.filePath)).toEqual([[0, Number(input.file.fileSizeInBytes)]]);
  });

  it('fails naming a broken input, and a missing one read ahead but never reached raises nothing', async () => {
    const t = await manyFiles(`s3://${bucket}/broken`, 10);
    const plan = await planAll(t.io, t.metadata);
    const paths = inputPaths(plan);
    const size = Number(plan.groups[0].inputs[2].file.fileSizeInBytes);
    await putObject(paths[2], new Uint8Array(size).fill(7));
    await putObject(paths[6], undefined);
    const counting = new CountingIO(t.io, (p) => paths.includes(p));
    const err = await rewriteGroup(counting, t.metadata, plan, plan.groups[0]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidFileError);
    expect((err as InvalidFileError).path).toBe(paths[2]);
    await counting.settled();
    await new Promise((r) => setTimeout(r, 20));
    expect(counting.ranges.map((r) => r.path)).toContain(paths[6]);
  });
});
