/**
 * Plan and health JSON pinned byte for byte: the planner's speed work (a decoder that reads
 * manifest entries from their bytes, shared partition tuples, leaner records) must not change
 * one byte of what `plan` and `health` print. The hashes were taken with the code before that
 * work, on the three fixture tables and a 600-file metadata-only table built as the planning
 * bench builds its million-file ones, under four policies. Paths are part of the output (and of
 * group ids and delete files' sizes), so each table is written at one fixed place; commit times
 * (the table was written just now) are hidden. Every plan is made twice, its data manifests
 * decoded on this thread and on two worker threads (lib/compaction/plan-pool.ts): the same bytes.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMetadataTable } from '../../bench/compaction-tables.js';
import { loadTable } from '../../lib/catalog/table.js';
import { tableHealth } from '../../lib/compaction/health.js';
import type { CompactionPolicy } from '../../lib/compaction/messages.js';
import { ManifestDecodePool } from '../../lib/compaction/plan-pool.js';
import { planCompaction } from '../../lib/compaction/planner.js';
import { relocateTable } from '../../lib/table/relocate.js';
import { FIXTURES } from '../support/fixtures.js';

const POLICIES: Record<string, CompactionPolicy | undefined> = {
  default: undefined,
  minor: { mode: 'minor' },
  small: { minFileSizeBytes: 1, targetFileSizeBytes: 1024 * 1024, deleteFileThreshold: 1 },
  all: { deleteFileThreshold: 0, maxGroups: 100_000 },
};

const NOW_MS = 1_800_000_000_000;

/** Paths are hashed too: every checkout writes at this one place, one run at a time (LOCK). */
const ROOT = '/tmp/packice-plan-pin';
const LOCK = `${ROOT}.lock`;

/** The table's folder, emptied first (only this test writes there). */
function place(name: string): string {
  const dir = join(ROOT, name);
  rmSync(dir, { recursive: true, force: true });
  return dir;
}

beforeAll(async () => {
  for (let waited = 0; ; waited += 200) {
    try {
      mkdirSync(LOCK);
      return;
    } catch (e) {
      // Another checkout is running this test; a lock older than ten minutes was left by a crash.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (waited > 600_000 || Date.now() - statSync(LOCK).mtimeMs > 600_000) {
        rmSync(LOCK, { recursive: true, force: true });
        continue;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
});

afterAll(() => {
  rmSync(ROOT, { recursive: true, force: true });
  rmSync(LOCK, { recursive: true, force: true });
});

const digest = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 16);

async function outputs(location: string): Promise<Record<string, string>> {
  const t = await loadTable(location);
  const out: Record<string, string> = {};
  for (const [name, policy] of Object.entries(POLICIES)) {
    const request = { table: { location }, ...(policy ? { policy } : {}) };
    const plan = JSON.stringify(await planCompaction(t.io, t.metadata, request, { nowMs: NOW_MS, decodeWorkers: 0 }));
    // Manifests decoded on worker threads (plan-pool.ts) give the same bytes as on this thread
    // (started first: until a worker is ready, this thread decodes).
    await ManifestDecodePool.prestart(2);
    expect(JSON.stringify(await planCompaction(t.io, t.metadata, request, { nowMs: NOW_MS, decodeWorkers: 2 }))).toBe(plan);
    out[`${name} plan`] = digest(plan);
    const health = JSON.parse(JSON.stringify(await tableHealth(t.io, t.metadata, policy, { nowMs: NOW_MS })), (k, v: unknown) =>
      k === 'lastCommitMs' && v !== null ? 'commit time' : v,
    ) as unknown;
    out[`${name} health`] = digest(JSON.stringify(health));
  }
  return out;
}

describe('plan and health JSON, pinned', () => {
  it.each([
    ['iceberg_v2_partitioned_position_deletes'],
    ['iceberg_v2_delete_equality_partitioned'],
    ['iceberg_v3_deletion_vectors'],
  ])('%s', async (name) => {
    const location = place(name);
    // Relocation rewrites position delete files, whose sizes the plan prints: the pins were taken
    // with parquet-wasm's ZSTD (level 1), so they are written that way here, not natively at level 3.
    const saved = process.env.PACKICE_ZSTD;
    process.env.PACKICE_ZSTD = 'wasm';
    try {
      await relocateTable(join(FIXTURES, name), location);
    } finally {
      if (saved === undefined) delete process.env.PACKICE_ZSTD;
      else process.env.PACKICE_ZSTD = saved;
    }
    expect(await outputs(location)).toEqual(PINNED[name]);
  });

  it('a 600-file table in 6 manifests with position, partition and equality deletes', async () => {
    const location = place('plan-600-6');
    await buildMetadataTable(location, 600, undefined, 100);
    expect(await outputs(location)).toEqual(PINNED['plan-600-6']);
  });
});

const PINNED: Record<string, Record<string, string>> = {
  'iceberg_v2_partitioned_position_deletes': {
    'default plan': '5181ca683aea7e06',
    'default health': 'f4b1e4c790a8a1a0',
    'minor plan': 'e8ead5f77d290cd1',
    'minor health': 'a13a53265a44f3f2',
    'small plan': '93d9cb1257dbda6a',
    'small health': 'c8c683e72bb2e8fc',
    'all plan': '433ffb9d49c89496',
    'all health': '52a4e1781a0ea9df',
  },
  'iceberg_v2_delete_equality_partitioned': {
    'default plan': 'b905bb07c192781e',
    'default health': 'd59480771409b924',
    'minor plan': 'feb07bf38db720b6',
    'minor health': 'dd31c183825cb442',
    'small plan': '38af4b8369de5e30',
    'small health': '4b5344105edad8d9',
    'all plan': '3c2d36f339fea2c8',
    'all health': '1b91a848d48981ea',
  },
  'iceberg_v3_deletion_vectors': {
    'default plan': '0e7a854b361261da',
    'default health': '555d2fe091b487a8',
    'minor plan': 'b8d4197a2a7131f1',
    'minor health': '71f1785573230241',
    'small plan': 'c9ba5d2cc2d7c308',
    'small health': '97b242b7c44b51a8',
    'all plan': 'b5c9e3c5b0ecc636',
    'all health': 'debe4bec7722b280',
  },
  'plan-600-6': {
    'default plan': 'decf7dbd3f396736',
    'default health': 'd5f76f617af679df',
    'minor plan': 'a708362a27bc3a86',
    'minor health': '6fc79b6998cd7b11',
    'small plan': '5e0e25cfa020e2e9',
    'small health': '0b22686ab9b32378',
    'all plan': '7fa5300b5aa5f02a',
    'all health': 'ca8c4633d238e482',
  },
};
