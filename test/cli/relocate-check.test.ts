/**
 * `packice relocate` checks every file the history names before writing: a table whose history
 * names a manifest list that is gone (a writer expired without cleaning up) writes nothing and
 * names the file.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalFileIO } from '../../lib/io/local.js';
import { runMain } from '../support/cli.js';
import { tempDir } from '../support/fixtures.js';
import { smallTable } from '../support/small-table.js';

describe('relocate', () => {
  it('writes nothing and names the file when the history names a manifest list that is gone', async () => {
    const t = await smallTable(new LocalFileIO(), join(tempDir(), 'src'), 2);
    const gone = t.metadata.snapshots[0].manifestList!;
    rmSync(gone);
    const target = join(tempDir(), 'dst');
    const r = await runMain(['relocate', t.location, target]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`relocate: the manifest list of snapshot ${t.metadata.snapshots[0].snapshotId} ${gone} is missing; nothing was written`);
    expect(existsSync(target) ? readdirSync(target, { recursive: true }) : []).toEqual([]);
  });
});
