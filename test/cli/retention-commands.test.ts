/**
 * `packice expire` and `packice orphans` through the CLI, on the demo table after compaction:
 * a dry run writes its JSON report and deletes nothing; the real runs bring storage down to the
 * live data (figures printed); the live rows do not change; the demo's marker stays; the
 * refusals (gc.enabled=false, a delay under 1h) say why.
 */
import { cpSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitTable, loadTable } from '../../lib/catalog/table.js';
import { DEMO_MARKER } from '../../lib/cli/demo-folder.js';
import { runDemo } from '../../lib/cli/demo.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { scanRows } from '../../lib/table/scan.js';
import { runCli, runMain } from '../support/cli.js';
import { tempDir } from '../support/fixtures.js';
import { hashTree, listTree } from '../support/table-files.js';

function storage(dir: string): { files: number; bytes: number; dataFiles: number } {
  const files = listTree(dir);
  return {
    files: files.length,
    bytes: files.reduce((n, f) => n + statSync(join(dir, f)).size, 0),
    dataFiles: files.filter((f) => f.startsWith('data/')).length,
  };
}

async function liveRowCount(location: string): Promise<number> {
  const t = await loadTable(location);
  let n = 0;
  for await (const _ of scanRows(t.io, t.metadata)) n++;
  return n;
}

describe('packice expire and orphans', () => {
  it('bring the compacted demo table down to its live data; a dry run only reports', async () => {
    const dir = join(tempDir('packice-retention-cli-'), 'demo');
    await runDemo(dir, { json: true, out: () => undefined, commits: 40, rowsPerCommit: 40 });
    const rows = await liveRowCount(dir);
    const before = storage(dir);

    const reportPath = join(tempDir('packice-report-'), 'expire.json');
    const treeBefore = hashTree(dir);
    const dry = JSON.parse(await runCli(['expire', dir, '--older-than', '0s', '--dry-run', '--report', reportPath, '--json'])) as {
      files: { path: string; size: number }[];
      totals: { files: number; bytes: number };
      deleted: number;
    };
    expect(hashTree(dir)).toEqual(treeBefore);
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as typeof dry & { command: string };
    expect(report.command).toBe('expire');
    expect(report.totals.files).toBe(dry.files.length);
    expect(report.totals.bytes).toBe(dry.files.reduce((n, f) => n + f.size, 0));
    expect(report.files.length).toBeGreaterThan(0);
    expect(dry.deleted).toBe(0);

    const text = await runCli(['expire', dir, '--older-than', '0s']);
    expect(text).toMatch(/^expired \d+ snapshots; 1 retained/);
    const afterExpire = storage(dir);
    const orphans = await runCli(['orphans', dir, '--older-than', '0s', '--force']);
    expect(orphans).toMatch(/^deleted \d+ orphan files/);
    const after = storage(dir);

    const t = await loadTable(dir);
    const plan = await planFiles(t.io, t.metadata);
    const live = new Set([...plan.tasks.map((x) => x.dataFile.filePath), ...plan.deleteFiles.map((d) => d.filePath)]);
    expect(after.dataFiles).toBe(live.size);
    expect(await liveRowCount(dir)).toBe(rows);
    expect(existsSync(join(dir, DEMO_MARKER))).toBe(true);
    expect(t.metadata.snapshots.length).toBe(1);
    // Printed for the figures: storage before, after expiry, after orphan removal.
    console.log(
      `demo storage: before ${before.files} files / ${before.bytes} B (${before.dataFiles} under data/); ` +
        `after expire ${afterExpire.files} / ${afterExpire.bytes} B; after orphans ${after.files} files / ${after.bytes} B ` +
        `(${after.dataFiles} under data/, all live); live rows ${rows}`,
    );
    expect(after.bytes).toBeLessThan(before.bytes);
  });

  it('refuse with a reason: gc.enabled=false, and orphans under 1h without --force', async () => {
    const dir = join(tempDir('packice-retention-cli-'), 'demo');
    await runDemo(dir, { json: true, out: () => undefined, commits: 3, rowsPerCommit: 10 });
    const tree = hashTree(dir);
    const short = await runMain(['orphans', dir, '--older-than', '30m']);
    expect(short.exitCode).toBe(1);
    expect(short.stderr).toMatch(/under 1h.*--force/);
    const bad = await runMain(['expire', dir, '--older-than', '3 days']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/not a duration/);
    const t = await loadTable(dir);
    await commitTable(t, () => ({ updates: [{ action: 'set-properties', updates: { 'gc.enabled': 'false' } }], requirements: [] }));
    const treeGcOff = hashTree(dir);
    for (const cmd of ['expire', 'orphans']) {
      const r = await runMain([cmd, dir, '--older-than', '1d']);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain('GC is disabled');
    }
    expect(hashTree(dir)).toEqual(treeGcOff);
    expect(Object.keys(tree).every((f) => existsSync(join(dir, f)))).toBe(true);
  });

  it('refuse before deleting anything: a --report file that exists, and orphans on a byte copy of a table', async () => {
    const root = tempDir('packice-retention-cli-');
    const dir = join(root, 'demo');
    await runDemo(dir, { json: true, out: () => undefined, commits: 3, rowsPerCommit: 10 });
    const tree = hashTree(dir);
    const report = join(root, 'mine.json');
    writeFileSync(report, 'the user\'s file');
    for (const args of [['expire', dir, '--older-than', '0s'], ['orphans', dir, '--older-than', '0s', '--force']]) {
      const r = await runMain([...args, '--report', report]);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(`--report ${report} already exists`);
    }
    expect(readFileSync(report, 'utf8')).toBe('the user\'s file');
    expect(hashTree(dir)).toEqual(tree);

    // A byte copy still names the original's files: every file in it would look orphaned.
    const copy = join(root, 'copy');
    cpSync(dir, copy, { recursive: true });
    const copyTree = hashTree(copy);
    const r = await runMain(['orphans', copy, '--older-than', '0s', '--force']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/metadata says it lives at .*demo.*opened at .*copy.*Nothing was deleted.*packice relocate/s);
    expect(hashTree(copy)).toEqual(copyTree);
  });
});
