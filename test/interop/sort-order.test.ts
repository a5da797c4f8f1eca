/**
 * `--strategy sort` on a table with no sort order is refused while planning, before any worker
 * starts; `--sort-order` (Spark's `sort_order`) sorts, and Java reads each rewritten file's rows
 * in that order.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LocalFileIO } from '../../lib/io/local.js';
import { runMain } from '../support/cli.js';
import { tempDir } from '../support/fixtures.js';
import { ensureJavaHarness, javaRead } from '../support/java.js';
import { smallTable } from '../support/small-table.js';

describe('interop: compaction with a sort order', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 20 * 60_000);

  it('refuses --strategy sort without a sort order at plan time, and sorts by --sort-order', async () => {
    const t = await smallTable(new LocalFileIO(), join(tempDir(), 't'), 2);
    for (const args of [['plan', t.location, '--strategy', 'sort'], ['compact', t.location, '--strategy', 'sort', '--dry-run']]) {
      const r = await runMain(args);
      expect(r.exitCode, args[0]).toBe(1);
      expect(r.stderr).toContain("'strategy' is sort but the table has no sort order");
      expect(r.stderr).toContain("give one as 'sort-order'");
    }
    const bad = await runMain(['plan', t.location, '--sort-order', 'nope DESC']);
    expect(bad.stderr).toContain('sort order "nope DESC": no column nope');

    const r = await runMain(['compact', t.location, '--sort-order', 'id DESC NULLS LAST', '--min-input-files', '1', '--parallelism', '0', '--json']);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { groups: { status: string }[]; policy: { strategy: string } };
    expect(out.policy.strategy).toBe('sort');
    expect(out.groups.length).toBeGreaterThan(0);
    expect(out.groups.every((g) => g.status === 'committed')).toBe(true);
    expect(r.stdout).not.toContain('checksums');
    // One output file per partition: Java reads each partition's rows in the file's order.
    const rows = await javaRead(t.location);
    expect(rows).toHaveLength(32);
    for (const category of ['a', 'b']) {
      const ids = rows.filter((x) => x.category === category).map((x) => x.id as number);
      expect(ids).toEqual([...ids].sort((x, y) => y - x));
    }
  });
});
