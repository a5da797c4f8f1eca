/**
 * Every table command of the real `bin/packice.js` on tables named in a catalog service, moto's
 * Glue and S3 Tables on loopback (the endpoints from `AWS_ENDPOINT_URL_*`, as a person sets them):
 * the read commands answer the rows and counts of the small table and leave the pointer alone;
 * each command that commits moves the catalog's pointer to the next `<NNNNN>-<uuid>.metadata.json`
 * (Glue keeping the one before in `previous_metadata_location`); the live rows stay what they were.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { fileIOFor } from '../../lib/io/index.js';
import { glueSmallTable, metadataFileOf, s3TablesSmallTable, type CatalogTable } from '../support/catalog-tables.js';
import { runBin } from '../support/cli.js';
import { tempDir } from '../support/fixtures.js';
import { testS3Endpoint } from '../support/s3.js';

let moto: string;
let env: Record<string, string>;

beforeAll(() => {
  moto = testS3Endpoint();
  env = { AWS_ENDPOINT_URL_S3: moto, AWS_ENDPOINT_URL_GLUE: moto, AWS_ENDPOINT_URL_S3TABLES: moto };
});

/** The small table's live ids: 1…40 but every fifth. */
const SMALL_IDS = Array.from({ length: 40 }, (_, i) => i + 1).filter((i) => i % 5 !== 0);

/** `packice <args>` from the real bin; fails the test with its stderr when it fails. */
async function packice(args: readonly string[], cwd: string): Promise<string> {
  const r = await runBin(args, { cwd, env });
  if (r.status !== 0) throw new Error(`packice ${args.join(' ')} exited ${r.status}:\n${r.stderr}`);
  return r.stdout;
}

async function json<T = Record<string, unknown>>(args: readonly string[], cwd: string): Promise<T> {
  return JSON.parse(await packice(args, cwd)) as T;
}

async function scannedIds(name: string, cwd: string): Promise<number[]> {
  const lines = (await packice(['scan', name], cwd)).trim().split('\n');
  return lines.map((l) => Number((JSON.parse(l) as { id: number }).id)).sort((a, b) => a - b);
}

/**
 * Checks the commit moved the pointer from `from` to metadata file number `n`, written under the
 * table's metadata folder, with the previous one kept where the catalog keeps it; the new pointer.
 */
async function movedTo(table: CatalogTable, from: string, n: number): Promise<string> {
  const now = await table.pointer();
  expect(now.metadataLocation).toMatch(metadataFileOf(table, n));
  const io = fileIOFor(table.location, { s3Endpoint: moto });
  const written = JSON.parse(new TextDecoder().decode(await io.read(now.metadataLocation!))) as { 'metadata-log': { 'metadata-file': string }[] };
  expect(written['metadata-log'].at(-1)?.['metadata-file']).toBe(from);
  if (now.previousMetadataLocation !== undefined) expect(now.previousMetadataLocation).toBe(from);
  return now.metadataLocation!;
}

describe.each([
  ['glue://', glueSmallTable, false],
  ['s3tables://', s3TablesSmallTable, true],
] as const)('every command on a %s table (moto)', (_, make, leftToCatalog) => {
  it('reads without moving the pointer; compact, delete, step plan|rewrite|commit and expire each commit through the catalog; orphans delete nothing', async () => {
    // Prepare
    const table = await make(moto);
    const { name } = table;
    const cwd = tempDir('packice-catalog-cli-');
    const start = (await table.pointer()).metadataLocation!;
    expect(start).toMatch(/\/00005-[0-9a-f-]{36}\.metadata\.json$/);

    // Act and assess: the read commands
    const info = await json(['info', '--json', name], cwd);
    expect(info).toMatchObject({ formatVersion: 2, location: table.location, snapshots: 5, dataFiles: 8, records: '40', positionDeleteFiles: 2, partitions: 2 });
    expect(await scannedIds(name, cwd)).toEqual(SMALL_IDS);
    const described = await json<{ columns: { name: string }[]; location: string }>(['describe', '--json', name], cwd);
    expect(described.columns.map((c) => c.name)).toEqual(['id', 'category', 'amount']);
    expect(described.location).toBe(table.location);
    const snapshots = await json<{ operation: string; isCurrent: boolean }[]>(['snapshots', '--json', name], cwd);
    expect(snapshots.map((s) => s.operation)).toEqual(['append', 'append', 'append', 'append', 'delete']);
    const files = await json<{ content: string; recordCount: string }[]>(['files', '--json', '--deletes', name], cwd);
    expect(files.filter((f) => f.content === 'DATA')).toHaveLength(8);
    expect(files.filter((f) => f.content === 'POSITION_DELETES')).toHaveLength(2);
    const health = await json(['health', '--json', '--min-input-files', '2', name], cwd);
    expect(health).toMatchObject({ dataFiles: 8, records: 40, deleteFiles: 2, deletedRecords: 8 });
    const plan = await json<{ groups: unknown[] }>(['plan', '--json', '--min-input-files', '2', name], cwd);
    expect(plan.groups).toHaveLength(2);
    expect((await table.pointer()).metadataLocation).toBe(start);

    // compact: 8 data files and 2 delete files to 2 data files
    await packice(['compact', '--json', '--min-input-files', '2', name], cwd);
    const v6 = await movedTo(table, start, 6);
    expect(await json(['info', '--json', name], cwd)).toMatchObject({ dataFiles: 2, positionDeleteFiles: 0, records: '32' });
    expect(await scannedIds(name, cwd)).toEqual(SMALL_IDS);

    // delete: one row, by position
    const deleted = await json<{ matched: number }>(['delete', '--json', '--where', 'id = 1', name], cwd);
    expect(deleted.matched).toBe(1);
    const v7 = await movedTo(table, v6, 7);
    const afterDelete = SMALL_IDS.filter((i) => i !== 1);
    expect(await scannedIds(name, cwd)).toEqual(afterDelete);

    // step plan | rewrite | commit: the file the delete reaches is rewritten without it
    const planFile = join(cwd, 'plan.json');
    const planText = await packice(['step', 'plan', '--delete-file-threshold', '1', '--min-input-files', '1', name], cwd);
    writeFileSync(planFile, planText);
    const stepPlan = JSON.parse(planText) as { table: { location: string }; groups: unknown[] };
    expect(stepPlan.table.location).toBe(name);
    expect(stepPlan.groups).toHaveLength(1);
    const resultsFile = join(cwd, 'results.jsonl');
    writeFileSync(resultsFile, await packice(['step', 'rewrite', planFile], cwd));
    const stepCommit = await json<{ committedGroups: string[]; abortedGroups: unknown[] }>(['step', 'commit', planFile, resultsFile], cwd);
    expect(stepCommit.committedGroups).toHaveLength(1);
    expect(stepCommit.abortedGroups).toEqual([]);
    const v8 = await movedTo(table, v7, 8);
    expect(await json(['info', '--json', name], cwd)).toMatchObject({ dataFiles: 2, positionDeleteFiles: 0, records: '31' });

    // expire: all but the current snapshot
    const expired = await json<{ expiredSnapshots: string[]; deleted: number; filesLeftToCatalog: boolean }>(
      ['expire', '--json', '--older-than', '0s', '--retain-last', '1', name],
      cwd,
    );
    expect(expired.expiredSnapshots).toHaveLength(7);
    expect(expired.filesLeftToCatalog).toBe(leftToCatalog);
    if (leftToCatalog) expect(expired.deleted).toBe(0);
    else expect(expired.deleted).toBeGreaterThan(0);
    const v9 = await movedTo(table, v8, 9);
    expect(await json<unknown[]>(['snapshots', '--json', name], cwd)).toHaveLength(1);

    // orphans: everything unreferenced is younger than 3 days (Glue); S3 Tables lets nothing be listed
    const orphans = await json<{ deleted: number; listed: number; filesLeftToCatalog: boolean }>(['orphans', '--json', name], cwd);
    expect(orphans).toMatchObject({ deleted: 0, filesLeftToCatalog: leftToCatalog });
    if (!leftToCatalog) expect(orphans.listed).toBeGreaterThan(0);
    const orphansText = await packice(['orphans', name], cwd);
    if (leftToCatalog) expect(orphansText).toMatch(/^no orphans looked for: the catalog removes the files no snapshot reaches itself/);
    expect((await table.pointer()).metadataLocation).toBe(v9);
    expect(await scannedIds(name, cwd)).toEqual(afterDelete);
  });
});
