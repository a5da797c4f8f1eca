/**
 * bench/planning.ts at a tiny size, so that it keeps working: a metadata-only table built as
 * the bench builds its million-file ones, planned by the bench's phase (the streaming path) and
 * by planFromScan over a collected scan, which must give the same plan.
 */
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { planPhase } from '../../bench/compaction-phases.js';
import { buildMetadataTable } from '../../bench/compaction-tables.js';
import { loadTable } from '../../lib/catalog/table.js';
import { planCompaction, planFromScan } from '../../lib/compaction/planner.js';
import { resolvePolicy } from '../../lib/compaction/policy.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { tempDir } from '../support/fixtures.js';

describe('planning bench, tiny', () => {
  it('streams 600 files in 6 manifests into the same plan as a collected scan, and reports them', async () => {
    const location = join(tempDir(), 'plan-600-6');
    const facts = await buildMetadataTable(location, 600, undefined, 100);
    expect(facts.dataFiles).toBe(600);
    const table = await loadTable(location);
    const request = { table: { location } };
    const streamed = await planCompaction(table.io, table.metadata, request, { nowMs: 1, concurrency: 2 });
    const scan = await planFiles(table.io, table.metadata, undefined, { columnStats: false });
    expect(planFromScan(table.metadata, scan, request, resolvePolicy(table.metadata), 1)).toEqual(streamed);
    expect(streamed.groups.length).toBeGreaterThan(0);
    expect(streamed.summary.dataFilesBefore).toBe(600);

    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((s: unknown) => void lines.push(String(s)));
    try {
      await planPhase(location, 1);
    } finally {
      log.mockRestore();
    }
    const result = JSON.parse(lines.at(-1)!) as { wallS: number[]; maxRssKiB: number; info: Record<string, number> };
    const pairs = scan.tasks.reduce(
      (n, t) => n + (t.deletes.deletionVector ? 1 : 0) + t.deletes.positionDeletes.length + t.deletes.equalityDeletes.length,
      0,
    );
    expect([result.wallS.length, result.info.tasks, result.info.deletes, result.info.groups]).toEqual([1, 600, pairs, streamed.groups.length]);
    expect(result.maxRssKiB).toBeGreaterThan(0);
  });
});
