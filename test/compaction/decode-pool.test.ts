import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Table } from '../../lib/catalog/table.js';
import { readCompactionMap } from '../../lib/compaction/compaction-map.js';
import {
  DecodePool, decodeHost, decodeWorkerCount, DECODE_WORKERS_PROPERTY, largestRowGroupBytes, MIN_POOL_DECODE_BYTES, workersInBudget,
} from '../../lib/compaction/decode-pool.js';
import { mergeWorkerCount } from '../../lib/compaction/merge-pool.js';
import type { GroupResult, Plan } from '../../lib/compaction/messages.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { InvalidArgumentError, InvalidFileError } from '../../lib/errors.js';
import { LocalFileIO } from '../../lib/io/local.js';
import type { TableMetadata } from '../../lib/iceberg/table-metadata.js';
import type { Row } from '../../lib/iceberg/values.js';
import { appendRows, createNewTable, deleteByEquality, deleteRows, updateSchema } from '../../lib/table/operations.js';
import { DECODE_ONLY, planAll } from '../support/compaction.js';
import { tempDir } from '../support/fixtures.js';
import { listTree } from '../support/table-files.js';
import { failOnUnhandledRejections } from '../support/unhandled.js';
import { savedEnv } from '../support/saved-env.js';
import { S3FileIO } from '../../lib/io/s3.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { smallTable } from '../support/small-table.js';

const io = new LocalFileIO();

const SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'name', required: false, type: { type: 'string' as const } },
    { id: 3, name: 'amount', required: false, type: { type: 'decimal' as const, precision: 12, scale: 2 } },
    { id: 4, name: 'score', required: false, type: { type: 'double' as const } },
    { id: 5, name: 'ts', required: false, type: { type: 'timestamptz' as const } },
  ],
};

function row(id: number): Row {
  return {
    id: BigInt(id),
    name: id % 7 === 0 ? null : `name-${id}-${'x'.repeat(id % 13)}`,
    amount: BigInt(id * 101 - 5000),
    score: id % 11 === 0 ? null : id / 3,
    ts: 1_700_000_000_000_000n + BigInt(id) * 1_000_003n,
  };
}

/** Ten files of 40-60 rows; deletes of every kind the format version has; a column added after the first files. */
async function buildTable(formatVersion: 2 | 3): Promise<Table> {
  let t = await createNewTable(io, join(tempDir(), `pool-v${formatVersion}`), { formatVersion, schema: SCHEMA, properties: DECODE_ONLY });
  let id = 0;
  for (let f = 0; f < 6; f++) t = await appendRows(t, Array.from({ length: 40 + f * 4 }, () => row(id++)));
  t = (await deleteRows(t, (r) => (r.id as bigint) % 9n === 0n)).table;
  if (formatVersion === 2) t = await deleteByEquality(t, [1], [{ id: 17n }, { id: 101n }]);
  t = await updateSchema(t, [...SCHEMA.fields, { id: 6, name: 'note', required: false, type: { type: 'string' } }]);
  for (let f = 0; f < 4; f++) t = await appendRows(t, Array.from({ length: 50 }, () => ({ ...row(id), note: `n${id++}` })));
  t = (await deleteRows(t, (r) => (r.id as bigint) % 13n === 1n)).table;
  return t;
}

/** What must not depend on where inputs were decoded: the proof, every output's bytes, the map's runs. */
async function fingerprint(result: GroupResult): Promise<unknown> {
  const outputs = result.outputs.map((o) => readFileSync(o.filePath).toString('base64'));
  const name = new Map(result.outputs.map((o, i) => [o.filePath, `out${i}`]));
  const map = await readCompactionMap(io, result.compactionMap!);
  const runs = JSON.stringify(map, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : typeof v === 'string' && name.has(v) ? name.get(v) : v));
  return { checksums: result.checksums, outputs, runs, sizes: result.outputs.map((o) => o.fileSizeInBytes), bytesRead: result.bytesRead };
}

async function rewriteBoth(t: Table, plan: Plan, workers: number, batchSize?: number): Promise<[unknown, unknown]> {
  const group = plan.groups[0];
  const options = batchSize ? { batchSize } : {};
  const here = await rewriteGroup(io, t.metadata, plan, group, { ...options, decodeWorkers: 0 });
  const pooled = await rewriteGroup(io, t.metadata, plan, group, { ...options, decodeWorkers: workers });
  return [await fingerprint(here), await fingerprint(pooled)];
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('rewriteGroup with decode workers', () => {
  failOnUnhandledRejections();

  it('v2 (position and equality deletes, a schema change): the same output bytes, map and proof as decoding on the rewriter thread', async () => {
    const t = await buildTable(2);
    const plan = await planAll(io, t.metadata);
    expect(plan.groups.length).toBe(1);
    expect(plan.groups[0].inputs.length).toBe(10);
    const start = vi.spyOn(DecodePool, 'start');
    const [here, pooled] = await rewriteBoth(t, plan, 3);
    expect(start).toHaveBeenCalledTimes(1);
    expect(start.mock.calls[0][0]).toBe(3);
    expect(pooled).toEqual(here);
    // Several batches per input (7 rows each): each input's batches still arrive in order.
    const [hereSmall, pooledSmall] = await rewriteBoth(t, plan, 2, 7);
    expect(pooledSmall).toEqual(hereSmall);
  });

  it('v3 (deletion vectors, row lineage): the same output bytes, map and proof', async () => {
    const t = await buildTable(3);
    const plan = await planAll(io, t.metadata);
    const [here, pooled] = await rewriteBoth(t, plan, 2, 16);
    expect(pooled).toEqual(here);
    expect((here as { checksums: GroupResult['checksums'] }).checksums.rowsIn).not.toBe('0');
  });

  it('reads through an S3 FileIO (moto): the same outputs as decoding on the rewriter thread', async () => {
    const s3 = new S3FileIO({ endpoint: testS3Endpoint() });
    const t = await smallTable(s3, `s3://${await freshBucket()}/db/pooled`, 3);
    const plan = await planAll(s3, t.metadata);
    for (const g of plan.groups) {
      const here = await rewriteGroup(s3, t.metadata, plan, g, { decodeWorkers: 0 });
      const pooled = await rewriteGroup(s3, t.metadata, plan, g, { decodeWorkers: 2 });
      expect(pooled.checksums).toEqual(here.checksums);
      const bytes = async (r: GroupResult): Promise<string[]> => Promise.all(r.outputs.map(async (o) => Buffer.from(await s3.read(o.filePath)).toString('base64')));
      expect(await bytes(pooled)).toEqual(await bytes(here));
    }
  });

  it('the table property sets the workers; 0 decodes on the rewriter thread', async () => {
    const t = await buildTable(2);
    const plan = await planAll(io, t.metadata);
    const start = vi.spyOn(DecodePool, 'start');
    const with2: TableMetadata = { ...t.metadata, properties: { ...t.metadata.properties, [DECODE_WORKERS_PROPERTY]: '2' } };
    await rewriteGroup(io, with2, plan, plan.groups[0]);
    expect(start.mock.calls.map((c) => c[0])).toEqual([2]);
    const with0: TableMetadata = { ...t.metadata, properties: { ...t.metadata.properties, [DECODE_WORKERS_PROPERTY]: '0' } };
    await rewriteGroup(io, with0, plan, plan.groups[0]);
    expect(start).toHaveBeenCalledTimes(1);
    const bad: TableMetadata = { ...t.metadata, properties: { ...t.metadata.properties, [DECODE_WORKERS_PROPERTY]: 'two' } };
    await expect(rewriteGroup(io, bad, plan, plan.groups[0])).rejects.toThrow(InvalidArgumentError);
  });

  it('a corrupt input fails with the InvalidFileError the rewriter thread gives, naming the file; nothing is left behind', async () => {
    const t = await buildTable(2);
    const plan = await planAll(io, t.metadata);
    const victim = plan.groups[0].inputs[6].file.filePath;
    const bytes = readFileSync(victim);
    // The pages of the file's first column chunk, overwritten: the footer still reads.
    bytes.fill(0x5a, 4, 200);
    writeFileSync(victim, bytes);
    const tree = listTree(t.location);
    const here = await rewriteGroup(io, t.metadata, plan, plan.groups[0], { decodeWorkers: 0 }).catch((e: unknown) => e);
    const pooled = await rewriteGroup(io, t.metadata, plan, plan.groups[0], { decodeWorkers: 2 }).catch((e: unknown) => e);
    expect(here).toBeInstanceOf(InvalidFileError);
    expect(pooled).toBeInstanceOf(InvalidFileError);
    expect((pooled as InvalidFileError).path).toBe(victim);
    expect((pooled as Error).message).toBe((here as Error).message);
    expect(listTree(t.location)).toEqual(tree);
  });

  it('a file shorter than its manifest says fails alike', async () => {
    const t = await buildTable(3);
    const plan = await planAll(io, t.metadata);
    const victim = plan.groups[0].inputs[2].file.filePath;
    truncateSync(victim, Number(plan.groups[0].inputs[2].file.fileSizeInBytes) - 10);
    const here = await rewriteGroup(io, t.metadata, plan, plan.groups[0], { decodeWorkers: 0 }).catch((e: unknown) => e);
    const pooled = await rewriteGroup(io, t.metadata, plan, plan.groups[0], { decodeWorkers: 3 }).catch((e: unknown) => e);
    expect(pooled).toBeInstanceOf(InvalidFileError);
    expect((pooled as InvalidFileError).path).toBe(victim);
    expect((pooled as Error).message).toBe((here as Error).message);
    expect((pooled as Error).message).toMatch(/manifest records file_size_in_bytes/);
  });
});

describe('DecodePool', () => {
  failOnUnhandledRejections();

  it('keeps input order with a window of one batch, and terminates its workers on close', async () => {
    const t = await buildTable(2);
    const plan = await planAll(io, t.metadata);
    const pool = DecodePool.start(3, io, t.metadata, { mode: 'major', lineage: false, batchSize: 5, windowBytes: 1 });
    const seen: number[] = [];
    let rows = 0;
    try {
      for await (const { index, live } of pool.batches(plan.groups[0].inputs)) {
        seen.push(index);
        rows += live.batch.numRows;
        expect(live.runs.rows).toBe(live.batch.numRows);
        expect(live.hash[2]).toBe(live.batch.numRows);
      }
    } finally {
      await pool.close();
    }
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(new Set(seen).size).toBe(10);
    expect(rows).toBeGreaterThan(300);
    expect(pool.liveWorkers).toBe(0);
  });

  it('a consumer that stops early still gets every worker terminated', async () => {
    const t = await buildTable(2);
    const plan = await planAll(io, t.metadata);
    const pool = DecodePool.start(2, io, t.metadata, { mode: 'major', lineage: false, batchSize: 5 });
    for await (const _ of pool.batches(plan.groups[0].inputs)) break;
    await pool.close();
    expect(pool.liveWorkers).toBe(0);
  });
});

describe('mergeWorkerCount', () => {
  const m = { location: '/t', properties: {} } as unknown as TableMetadata;
  const MiB = 2 ** 20;
  const big = MIN_POOL_DECODE_BYTES;

  it('on a Lambda of 10,240 MB five, of 3,538 MB one, of 1,769 MB none; on a shared machine none (the 1.5 GiB group goal); an option or the property wins', () => {
    expect(mergeWorkerCount(undefined, m, 700 * MiB, 5, { vcpus: 6, memoryBytes: 10240 * MiB, dedicated: true })).toBe(5);
    expect(mergeWorkerCount(undefined, m, 700 * MiB, 5, { vcpus: 2, memoryBytes: 3538 * MiB, dedicated: true })).toBe(1);
    expect(mergeWorkerCount(undefined, m, 700 * MiB, 5, { vcpus: 1, memoryBytes: 1769 * MiB, dedicated: true })).toBe(0);
    expect(mergeWorkerCount(undefined, m, 700 * MiB, 5, { vcpus: 16, memoryBytes: 64 * 1024 * MiB })).toBe(0);
    // Little to merge; the local runner's cap.
    expect(mergeWorkerCount(undefined, m, big - 1, 5, { vcpus: 6, memoryBytes: 10240 * MiB, dedicated: true })).toBe(0);
    expect(mergeWorkerCount(undefined, m, 700 * MiB, 2, { vcpus: 6, memoryBytes: 10240 * MiB, dedicated: true })).toBe(2);
    expect(mergeWorkerCount(3, m, 0, 0)).toBe(3);
    expect(mergeWorkerCount(undefined, { ...m, properties: { [DECODE_WORKERS_PROPERTY]: '2' } }, 0)).toBe(2);
    expect(() => mergeWorkerCount(undefined, { ...m, properties: { [DECODE_WORKERS_PROPERTY]: 'x' } }, 0)).toThrow(InvalidArgumentError);
  });
});

describe('decodeWorkerCount', () => {
  const env = savedEnv(['AWS_LAMBDA_FUNCTION_MEMORY_SIZE']);
  afterEach(() => env.restore());
  const m = { location: '/t', properties: {} } as unknown as TableMetadata;
  const big = MIN_POOL_DECODE_BYTES;
  const MiB = 2 ** 20;
  /** A 10,240 MB Lambda: 6 vCPUs. */
  const lambda = { vcpus: 6, memoryBytes: 10240 * MiB };
  const load = (inputs: number, bytes: number, largestRowGroupBytes = 64 * 1024): { inputs: number; bytes: number; largestRowGroupBytes: number } =>
    ({ inputs, bytes, largestRowGroupBytes });

  it('an option or the property wins; the default is none for little to decode, and at most the inputs', () => {
    expect(decodeWorkerCount(4, m, load(10, 0))).toBe(4);
    expect(decodeWorkerCount(4, m, load(2, big))).toBe(2);
    expect(decodeWorkerCount(undefined, { ...m, properties: { [DECODE_WORKERS_PROPERTY]: '1' } }, load(10, 0))).toBe(1);
    expect(decodeWorkerCount(undefined, m, load(10, big - 1), 5, lambda)).toBe(0);
    expect(decodeWorkerCount(undefined, m, load(3, big), 5, lambda)).toBe(3);
    // A cap (the local runner's share of the cores) bounds only the default.
    expect(decodeWorkerCount(undefined, m, load(10, big), 0, lambda)).toBe(0);
    expect(decodeWorkerCount(3, m, load(10, big), 0)).toBe(3);
    expect(() => decodeWorkerCount(-1, m, load(10, big))).toThrow(InvalidArgumentError);
  });

  it('by default one fewer than the vCPUs, at most 5, when the memory holds them', () => {
    expect(decodeWorkerCount(undefined, m, load(100, big), 5, lambda)).toBe(5);
    expect(decodeWorkerCount(undefined, m, load(100, big), 5, { vcpus: 3, memoryBytes: 5308 * MiB })).toBe(2);
    expect(decodeWorkerCount(undefined, m, load(100, big), 5, { vcpus: 1, memoryBytes: 1769 * MiB })).toBe(0);
  });

  it('no more workers than the group memory budget holds, sized by the largest row group', () => {
    // 34 KB inputs (.cache/bench/t3m): five workers measured at 982 MiB.
    expect(decodeWorkerCount(undefined, m, load(1500, 50e6, 35_000), 5, lambda)).toBe(5);
    // 3.9 MB inputs of one row group with deletes (cc-40x4mb-del): five measured at 1.7-1.8 GiB, three at 1.3 GiB.
    expect(decodeWorkerCount(undefined, m, load(40, 159e6, 3_994_692), 5, lambda)).toBe(3);
    // 3.3 MB inputs, every one decoded (the 2 GiB table of "peak memory per group size"): five measured at 1.7 GiB, four at 1.4-1.5.
    expect(decodeWorkerCount(undefined, m, load(642, 2148e6, 3_345_000), 5, lambda)).toBe(3);
    // Up to ~1.7 MB row groups, all five.
    expect(decodeWorkerCount(undefined, m, load(100, 170e6, 1_700_000), 5, lambda)).toBe(5);
    // A 128 MB row group (a common writer's target): none, the rewriter's thread decodes.
    expect(decodeWorkerCount(undefined, m, load(8, 1024e6, 128 * MiB), 5, lambda)).toBe(0);
    // An explicit count is not bounded by the budget.
    expect(decodeWorkerCount(5, m, load(8, 1024e6, 128 * MiB), 5, lambda)).toBe(5);
  });

  it('the budget is the goal, or 80 % of the memory when less', () => {
    expect(workersInBudget(0, 10240 * MiB)).toBe(workersInBudget(0, 64 * 1024 * MiB));
    expect(workersInBudget(0, 10240 * MiB)).toBeGreaterThan(workersInBudget(0, 1769 * MiB));
    expect(workersInBudget(0, 512 * MiB)).toBe(0);
    expect(workersInBudget(4e6, 10240 * MiB)).toBeLessThan(workersInBudget(35_000, 10240 * MiB));
  });

  it('on Lambda, the host is the vCPUs its memory buys (1,769 MB each) and its memory', () => {
    process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE = '1769';
    expect(decodeHost()).toEqual({ vcpus: 1, memoryBytes: 1769 * MiB, dedicated: true });
    expect(decodeWorkerCount(undefined, m, load(100, big))).toBe(0);
    process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE = '10240';
    // This machine's own cores bound it too.
    expect(decodeHost().vcpus).toBeLessThanOrEqual(6);
    expect(decodeHost().memoryBytes).toBe(10240 * MiB);
    expect(decodeWorkerCount(undefined, m, load(100, big))).toBeLessThanOrEqual(5);
  });
});

describe('largestRowGroupBytes', () => {
  it('the largest gap between split offsets, the last to the end of the file; the whole file without them', () => {
    expect(largestRowGroupBytes([])).toBe(0);
    expect(largestRowGroupBytes([{ fileSizeInBytes: 1000n }])).toBe(1000);
    expect(largestRowGroupBytes([{ fileSizeInBytes: 1000n, splitOffsets: null }, { fileSizeInBytes: 300n }])).toBe(1000);
    expect(largestRowGroupBytes([{ fileSizeInBytes: 1000n, splitOffsets: [4n, 700n] }])).toBe(696);
    expect(largestRowGroupBytes([{ fileSizeInBytes: 1000n, splitOffsets: [4n, 200n, 400n] }, { fileSizeInBytes: 500n, splitOffsets: [4n] }])).toBe(600);
    // Offsets that cannot be row-group starts: the whole file.
    expect(largestRowGroupBytes([{ fileSizeInBytes: 1000n, splitOffsets: [4n, 2000n] }])).toBe(1000);
    expect(largestRowGroupBytes([{ fileSizeInBytes: 1000n, splitOffsets: [500n, 100n] }])).toBe(1000);
  });
});
