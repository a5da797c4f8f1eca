/**
 * bench/compaction.ts's peak-memory phase at a tiny size, so that it keeps working: a data table
 * built as the bench builds its 2 GiB one, one group rewritten by the phase (rewriteGroup, the
 * Lambda rewriter's path), its figures reported and its outputs removed.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { rssPhase } from '../../bench/compaction-phases.js';
import { buildDataTable } from '../../bench/compaction-tables.js';
import { tempDir } from '../support/fixtures.js';

describe('peak-memory bench, tiny', () => {
  it('rewrites the largest group of a 4-file table, reports rows, bytes and memory, and leaves the data folder as it was', async () => {
    const location = join(tempDir(), 'rss-4');
    const facts = await buildDataTable(location, { files: 4, rowsPerFile: 500 });
    expect(facts.dataFiles).toBe(4);
    const before = readdirSync(join(location, 'data'), { recursive: true }).sort();

    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((s: unknown) => void lines.push(String(s)));
    try {
      await rssPhase(location, 1024 ** 3);
    } finally {
      log.mockRestore();
    }
    const result = JSON.parse(lines.at(-1)!) as { wallS: number[]; cpuS: number[]; maxRssKiB: number; info: Record<string, number> };
    expect([result.wallS.length, result.cpuS.length, result.info.inputs, result.info.rows]).toEqual([1, 1, 4, 2_000]);
    expect(result.info.outputs).toBeGreaterThan(0);
    expect(result.info.bytesIn).toBe(facts.dataBytes);
    expect(result.maxRssKiB).toBeGreaterThan(0);
    expect(result.info.peakRssMiB).toBeGreaterThan(0);
    expect(readdirSync(join(location, 'data'), { recursive: true }).sort()).toEqual(before);
  });
});
