/**
 * rewriteGroup reading its inputs ahead (lib/io/read-ahead.ts) on a real S3 server (moto): the
 * same rows and the same proof as without, each input fetched once, the fetches ahead bounded,
 * and a missing or broken input failing the rewrite by name with nothing left unhandled; scanRows
 * reads ahead the same way.
 */
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Table } from '../../lib/catalog/table.js';
import type { GroupResult, Plan } from '../../lib/compaction/messages.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { InvalidFileError, NotFoundError } from '../../lib/errors.js';
import { dataFileFromJson } from '../../lib/iceberg/data-file-json.js';
import { currentSchema } from '../../lib/iceberg/table-metadata.js';
import type { Row } from '../../lib/iceberg/values.js';
import { fileIOFor, parseS3Location } from '../../lib/io/index.js';
import { readRows } from '../../lib/table/data-reader.js';
import { appendRows, createNewTable } from '../../lib/table/operations.js';
import { scanRows } from '../../lib/table/scan.js';
import { planAll } from '../support/compaction.js';
import { CountingIO } from '../support/counting-io.js';
import { testS3Client } from '../support/moto.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { failOnUnhandledRejections } from '../support/unhandled.js';
import { smallTable } from '../support/small-table.js';

const SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'name', required: false, type: { type: 'string' as const } },
  ],
};

/** An unpartitioned table of `files` appends of 25 rows: one group of `files` inputs. */
async function manyFiles(location: string, files: number): Promise<Table> {
  let t = await createNewTable(fileIOFor(location, { s3Endpoint: testS3Endpoint() }), location, { formatVersion: 2, schema: SCHEMA });
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
