/**
 * The demo builds only where nothing of the user's can be lost: an absent or empty folder,
 * or one an earlier demo built (it holds the marker and nothing the demo did not write).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AlreadyExistsError } from '../../lib/errors.js';
import { DEMO_MARKER, prepareDemoFolder } from '../../lib/cli/demo-folder.js';
import { runDemo } from '../../lib/cli/demo.js';
import { runMain } from '../support/cli.js';
import { copyFixture, tempDir } from '../support/fixtures.js';
import { hashTree } from '../support/table-files.js';

describe('the demo folder', () => {
  it('refuses a folder holding a table and a stranger file, through the CLI, and leaves every file', async () => {
    const folder = copyFixture('iceberg_v2_partitioned_position_deletes');
    writeFileSync(join(folder, 'notes.txt'), 'mine');
    const before = hashTree(folder);
    const r = await runMain(['demo', folder]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain(folder);
    expect(r.stderr).toContain(DEMO_MARKER);
    expect(hashTree(folder)).toEqual(before);
  });

  it('refuses the current directory when it holds anything', async () => {
    const cwd = process.cwd();
    const folder = tempDir('packice-demo-');
    writeFileSync(join(folder, 'package.json'), '{}');
    process.chdir(folder);
    try {
      await expect(prepareDemoFolder('.')).rejects.toBeInstanceOf(AlreadyExistsError);
    } finally {
      process.chdir(cwd);
    }
    expect(readFileSync(join(folder, 'package.json'), 'utf8')).toBe('{}');
  });

  it('refuses a file, and a marker that is not the demo’s', async () => {
    const folder = tempDir('packice-demo-');
    writeFileSync(join(folder, 'a-file'), 'x');
    await expect(prepareDemoFolder(join(folder, 'a-file'))).rejects.toBeInstanceOf(AlreadyExistsError);
    const fake = join(folder, 'fake');
    mkdirSync(join(fake, 'data'), { recursive: true });
    writeFileSync(join(fake, DEMO_MARKER), '{"something":"else"}');
    writeFileSync(join(fake, 'data', 'precious.parquet'), 'x');
    await expect(prepareDemoFolder(fake)).rejects.toBeInstanceOf(AlreadyExistsError);
    expect(existsSync(join(fake, 'data', 'precious.parquet'))).toBe(true);
  });

  it('refuses an earlier demo that also holds files the demo did not write', async () => {
    const folder = join(tempDir('packice-demo-'), 'demo');
    await prepareDemoFolder(folder);
    mkdirSync(join(folder, 'data'));
    writeFileSync(join(folder, 'mine.csv'), 'a,b');
    await expect(prepareDemoFolder(folder)).rejects.toThrow(/mine\.csv/);
    expect(existsSync(join(folder, 'mine.csv'))).toBe(true);
    expect(existsSync(join(folder, 'data'))).toBe(true);
  });

  it('builds into an absent folder, then again over its own earlier demo', { timeout: 120_000 }, async () => {
    const folder = join(tempDir('packice-demo-'), 'demo');
    const out: string[] = [];
    await runDemo(folder, { json: true, out: (s) => out.push(s), commits: 12, rowsPerCommit: 20 });
    expect(existsSync(join(folder, DEMO_MARKER))).toBe(true);
    type Report = { before: { dataFiles: number }; after: { dataFiles: number }; fullScan: { after: { rows: number } } };
    const first = JSON.parse(out.join('')) as Report;
    out.length = 0;
    await runDemo(folder, { json: true, out: (s) => out.push(s), commits: 12, rowsPerCommit: 20 });
    const second = JSON.parse(out.join('')) as Report;
    // A fresh table each time, not the first one grown.
    expect(second.before.dataFiles).toBe(first.before.dataFiles);
    expect(second.fullScan.after.rows).toBe(first.fullScan.after.rows);
  });

  it('builds into an empty folder', async () => {
    const folder = tempDir('packice-demo-');
    await prepareDemoFolder(folder);
    expect(JSON.parse(readFileSync(join(folder, DEMO_MARKER), 'utf8'))).toMatchObject({ packice: 'demo' });
  });
});
