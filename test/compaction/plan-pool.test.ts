/**
 * The plan's manifest decode workers (lib/compaction/plan-pool.ts): how many start, that a plan
 * is the same JSON whatever their number (plan-output-pin.test.ts pins the bytes), that a
 * manifest a worker cannot read fails the plan as it fails on the planner's own thread, and that
 * a file the columns cannot hold comes whole and plans alike.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, InvalidFileError } from '../../lib/errors.js';
import { ManifestDecodePool, MIN_POOL_MANIFEST_BYTES, PLAN_DECODE_WORKERS_PROPERTY, planDecodeWorkerCount } from '../../lib/compaction/plan-pool.js';
import { planCompaction } from '../../lib/compaction/planner.js';
import { readManifestList } from '../../lib/iceberg/manifest-list.js';
import { currentSnapshot, type TableMetadata } from '../../lib/iceberg/table-metadata.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { tempDir } from '../support/fixtures.js';
import { smallTable } from '../support/small-table.js';

const io = new LocalFileIO();
const NOW_MS = 1_800_000_000_000;

describe('planDecodeWorkerCount', () => {
  it('takes the option, else the property, never more than the manifests; none by default under 8 MiB', () => {
    const m = { location: '/t', properties: {} } as unknown as TableMetadata;
    const big = MIN_POOL_MANIFEST_BYTES;
    expect(planDecodeWorkerCount(3, m, 10, 0)).toBe(3);
    expect(planDecodeWorkerCount(3, m, 2, big)).toBe(2);
    expect(planDecodeWorkerCount(undefined, { ...m, properties: { [PLAN_DECODE_WORKERS_PROPERTY]: '1' } }, 10, 0)).toBe(1);
    expect(planDecodeWorkerCount(0, { ...m, properties: { [PLAN_DECODE_WORKERS_PROPERTY]: '4' } }, 10, big)).toBe(0);
    expect(planDecodeWorkerCount(undefined, m, 10, big - 1)).toBe(0);
    expect(planDecodeWorkerCount(undefined, m, 100, big)).toBeLessThanOrEqual(5);
    expect(() => planDecodeWorkerCount(-1, m, 10, big)).toThrow(InvalidArgumentError);
    expect(() => planDecodeWorkerCount(undefined, { ...m, properties: { [PLAN_DECODE_WORKERS_PROPERTY]: 'two' } }, 10, big)).toThrow(InvalidArgumentError);
  });
});

describe('planning on decode workers', () => {
  it.each([2, 3] as const)('plans a v%i table with deletes to the same JSON with 0, 1 and 3 workers', async (v) => {
    const t = await smallTable(io, join(tempDir(), `plan-pool-v${v}`), v);
    const request = { table: { location: t.location }, policy: { minInputFiles: 2 } };
    // Started first (until a worker is ready, the planner's thread decodes), kept across plans.
    await ManifestDecodePool.prestart(4);
    const plans = await Promise.all([0, 1, 3].map(async (decodeWorkers) => JSON.stringify(await planCompaction(io, t.metadata, request, { nowMs: NOW_MS, decodeWorkers }))));
    expect(ManifestDecodePool.idleThreads).toBe(4);
    expect(JSON.parse(plans[0]).groups.length).toBeGreaterThan(0);
    expect(plans[1]).toBe(plans[0]);
    expect(plans[2]).toBe(plans[0]);
  });

  it('a corrupt data manifest fails with the InvalidFileError this thread gives, naming the manifest', async () => {
    const t = await smallTable(io, join(tempDir(), 'plan-pool-corrupt'), 2);
    const manifests = await readManifestList(io, currentSnapshot(t.metadata)!.manifestList!, 2);
    const victim = manifests.find((m) => m.content === 0)!.manifestPath;
    const bytes = readFileSync(victim);
    // The first block's bytes, past the header: the container still opens.
    bytes.fill(0x5a, bytes.length - 40, bytes.length - 20);
    writeFileSync(victim, bytes);
    const request = { table: { location: t.location } };
    const here = await planCompaction(io, t.metadata, request, { decodeWorkers: 0 }).catch((e: unknown) => e);
    await ManifestDecodePool.prestart(2);
    const pooled = await planCompaction(io, t.metadata, request, { decodeWorkers: 2 }).catch((e: unknown) => e);
    expect(here).toBeInstanceOf(InvalidFileError);
    expect(pooled).toBeInstanceOf(InvalidFileError);
    expect((pooled as InvalidFileError).path).toBe(victim);
    expect((pooled as Error).message).toBe((here as Error).message);
  });
});
