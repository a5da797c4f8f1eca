/**
 * `relocate` never replaces what it did not create: a target holding any file is refused
 * (left byte for byte) unless --overwrite, and even then no metadata file is written over.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AlreadyExistsError, ValidationError } from '../../lib/errors.js';
import { relocateTable } from '../../lib/table/relocate.js';
import { runCli, runMain } from '../support/cli.js';
import { copyFixture, tempDir } from '../support/fixtures.js';
import { hashTree } from '../support/table-files.js';

const TABLE = 'iceberg_v2_partitioned_position_deletes';
const OTHER = 'iceberg_v2_delete_equality_partitioned';

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('relocate onto a location that holds files', () => {
  it('refuses an existing table and leaves it byte for byte, naming --overwrite', async () => {
    const source = copyFixture(TABLE);
    const target = copyFixture(OTHER);
    const before = hashTree(target);
    const r = await runMain(['relocate', source, target]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain(target);
    expect(r.stderr).toContain('--overwrite');
    expect(hashTree(target)).toEqual(before);
  });

  it('refuses a folder holding a stranger file, and leaves it', async () => {
    const source = copyFixture(TABLE);
    const target = tempDir('packice-relocate-');
    mkdirSync(join(target, 'notes'));
    writeFileSync(join(target, 'notes', 'todo.txt'), 'mine');
    const e = await rejection(relocateTable(source, target));
    expect(e).toBeInstanceOf(AlreadyExistsError);
    expect(String(e)).toContain('todo.txt');
    expect(hashTree(target)).toEqual({ 'notes/todo.txt': hashTree(target)['notes/todo.txt'] });
  });

  it('refuses the table onto itself, even with --overwrite', async () => {
    const source = copyFixture(TABLE);
    const before = hashTree(source);
    await expect(relocateTable(source, source, { overwrite: true })).rejects.toBeInstanceOf(ValidationError);
    expect(hashTree(source)).toEqual(before);
  });

  it('with --overwrite, never writes over a metadata file: an existing table stays readable as it was', async () => {
    const source = copyFixture(TABLE);
    const target = tempDir('packice-relocate-');
    await runCli(['relocate', source, target]);
    const first = hashTree(target);
    // The same table again: every metadata file it would write already exists.
    const e = await rejection(relocateTable(source, target, { overwrite: true }));
    expect(e).toBeInstanceOf(AlreadyExistsError);
    expect(String(e)).toMatch(/metadata files are never overwritten/);
    expect(hashTree(target)).toEqual(first);
  });

  it('with --overwrite, writes beside files that are not in its way', async () => {
    const source = copyFixture(TABLE);
    const target = tempDir('packice-relocate-');
    writeFileSync(join(target, 'README.txt'), 'keep me');
    const out = await runCli(['relocate', '--overwrite', source, target]);
    expect(out).toMatch(/^relocated /);
    const after = hashTree(target);
    expect(after['README.txt']).toBeDefined();
    const rows = (await runCli(['scan', target])).trim().split('\n');
    const plain = tempDir('packice-relocate-');
    await relocateTable(source, plain);
    const original = (await runCli(['scan', plain])).trim().split('\n');
    expect(rows.sort()).toEqual(original.sort());
  });

  it('into an absent or empty location needs no flag', async () => {
    const source = copyFixture(TABLE);
    const empty = tempDir('packice-relocate-');
    await relocateTable(source, empty);
    const absent = join(tempDir('packice-relocate-'), 'new', 'table');
    await relocateTable(source, absent);
    expect(Object.keys(hashTree(absent)).length).toBeGreaterThan(0);
  });
});
