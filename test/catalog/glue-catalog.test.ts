/**
 * AWS Glue Data Catalog against moto's Glue and S3 on loopback: load by `glue://db/t`, compact
 * through the pipeline steps, and commit by swapping `metadata_location`. moto does not check
 * UpdateTable's VersionId; the conflict on a stale VersionId is proven against a loopback Glue
 * endpoint in front of moto that checks it as AWS does (test/support/glue-version-check.ts).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateDatabaseCommand, CreateTableCommand, GetTableCommand, GlueClient, UpdateTableCommand } from '@aws-sdk/client-glue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GlueCatalog } from '../../lib/catalog/glue-catalog.js';
import { loadTable, openTable } from '../../lib/catalog/table.js';
import { fileIOFor } from '../../lib/io/index.js';
import { commitStep, planStep, rewriteStep } from '../../lib/pipeline/steps.js';
import { appendRows } from '../../lib/table/operations.js';
import { scanRows } from '../../lib/table/scan.js';
import { runCli } from '../support/cli.js';
import { startGlueVersionCheck, type GlueVersionCheck } from '../support/glue-version-check.js';
import { commitAfterRace, raceProperty } from '../support/catalog-race.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { smallTable } from '../support/small-table.js';

let moto: string;
let glue: GlueClient;
let versionCheck: GlueVersionCheck;
let tables = 0;

beforeAll(async () => {
  moto = testS3Endpoint();
  // How the pipeline steps (which take a table name only) find the Glue endpoint, as the SDK reads it.
  process.env.AWS_ENDPOINT_URL_GLUE = moto;
  glue = new GlueClient({ endpoint: moto, region: 'us-east-1' });
  versionCheck = await startGlueVersionCheck(moto);
});

afterAll(async () => {
  await versionCheck.close();
});

/** The small table on S3, registered in Glue as an Iceberg table; its glue:// name. */
async function glueTable(): Promise<{ name: string; database: string; table: string; location: string }> {
  const location = `s3://${await freshBucket()}/warehouse/events`;
  const written = await smallTable(fileIOFor(location, { s3Endpoint: moto }), location, 2);
  const database = `db${process.pid}_${++tables}`;
  const table = 'events';
  await glue.send(new CreateDatabaseCommand({ DatabaseInput: { Name: database } }));
  await glue.send(
    new CreateTableCommand({
      DatabaseName: database,
      TableInput: {
        Name: table,
        TableType: 'EXTERNAL_TABLE',
        Parameters: { table_type: 'ICEBERG', metadata_location: written.metadataLocation },
        StorageDescriptor: { Location: location },
      },
    }),
  );
  return { name: `glue://${database}/${table}`, database, table, location };
}

async function ids(name: string): Promise<number[]> {
  const t = await loadTable(name, { s3Endpoint: moto });
  const out: number[] = [];
  for await (const r of scanRows(t.io, t.metadata)) out.push(Number(r.id));
  return out.sort((a, b) => a - b);
}

async function glueParameters(database: string, table: string): Promise<Record<string, string>> {
  return (await glue.send(new GetTableCommand({ DatabaseName: database, Name: table }))).Table?.Parameters ?? {};
}

const SMALL_IDS = Array.from({ length: 40 }, (_, i) => i + 1).filter((i) => i % 5 !== 0);

describe('a table in AWS Glue Data Catalog (moto)', () => {
  it('loads by glue://db/t and compacts through the pipeline: the swap keeps previous_metadata_location', async () => {
    // Prepare
    const { name, database, table } = await glueTable();
    const before = await loadTable(name, { s3Endpoint: moto });
    expect(before.catalog).toBeInstanceOf(GlueCatalog);
    expect(before.metadata.snapshots.length).toBe(5);

    // Act
    const plan = await planStep({ table: { location: name, s3Endpoint: moto }, policy: { minInputFiles: 2 } });
    const results = await Promise.all(plan.groups.map((g) => rewriteStep({ plan, groupId: g.id })));
    const commit = await commitStep({ plan, results });

    // Assess
    expect(commit.abortedGroups).toEqual([]);
    expect(commit.committedGroups.length).toBe(2);
    const params = await glueParameters(database, table);
    expect(params.previous_metadata_location).toBe(before.metadataLocation);
    expect(params.metadata_location).toMatch(/\/metadata\/00000-[0-9a-f-]{36}\.metadata\.json$/);
    const after = await loadTable(name, { s3Endpoint: moto });
    expect(after.metadataLocation).toBe(params.metadata_location);
    expect(after.metadata.currentSnapshotId?.toString()).toBe(commit.snapshotId);
    expect(await ids(name)).toEqual(SMALL_IDS);
  });

  it('a writer commits between our load and our commit: we refresh and retry, never overwrite', async () => {
    // Prepare
    const { name } = await glueTable();
    const ours = await loadTable(name, { s3Endpoint: moto });
    await appendRows(await loadTable(name, { s3Endpoint: moto }), [{ id: 41n, category: 'b', amount: 5125n }]);

    // Act
    const { result: r, conflicts } = await commitAfterRace(ours);

    // Assess
    expect(r.attempts).toBe(2);
    expect(conflicts[0].message).toMatch(/pointer moved/);
    expect(await raceProperty(name, moto)).toBe('yes');
    expect(await ids(name)).toEqual([...SMALL_IDS, 41]);
  });

  it('a stale VersionId is refused by a Glue that checks it: a conflict, then a retried success', async () => {
    // Prepare: through the checking endpoint; someone edits the Glue table (not its pointer) after our load
    const { name, database, table } = await glueTable();
    const catalog = new GlueCatalog(fileIOFor('s3://x', { s3Endpoint: moto }), database, table, { endpoint: versionCheck.endpoint });
    const ours = await openTable(catalog);
    const current = (await glue.send(new GetTableCommand({ DatabaseName: database, Name: table }))).Table!;
    await glue.send(
      new UpdateTableCommand({
        DatabaseName: database,
        TableInput: { Name: table, TableType: current.TableType, Parameters: current.Parameters, StorageDescriptor: current.StorageDescriptor, Description: 'edited' },
      }),
    );
    const refusedBefore = versionCheck.refused;

    // Act
    const { result: r, conflicts } = await commitAfterRace(ours);

    // Assess
    expect(versionCheck.refused).toBe(refusedBefore + 1);
    expect(r.attempts).toBe(2);
    expect(conflicts[0].message).toMatch(/Glue refused the swap/);
    const params = await glueParameters(database, table);
    expect(params.metadata_location).toBe(r.table.metadataLocation);
    expect((await glue.send(new GetTableCommand({ DatabaseName: database, Name: table }))).Table?.Description).toBe('edited');
    expect(await ids(name)).toEqual(SMALL_IDS);
  });

  it('the command line takes the glue:// name: info, compact, expire --dry-run', async () => {
    // Prepare
    const { name, database, table } = await glueTable();

    // Act
    const info = JSON.parse(await runCli(['--s3-endpoint', moto, 'info', '--json', name])) as { dataFiles?: number; formatVersion?: number };
    await runCli(['--s3-endpoint', moto, 'compact', '--json', '--min-input-files', '2', name]);
    // A dry run writes its report; keep it out of the working directory (the repository).
    const report = join(await mkdtemp(join(tmpdir(), 'packice-glue-')), 'expire-report.json');
    const expire = await runCli(['--s3-endpoint', moto, 'expire', '--dry-run', '--json', '--report', report, '--retain-last', '1', '--older-than', '0s', name]);

    // Assess
    expect(info.formatVersion).toBe(2);
    const after = await loadTable(name, { s3Endpoint: moto });
    expect(after.metadata.snapshots.at(-1)?.summary.operation).toBe('replace');
    expect(JSON.parse(expire)).toMatchObject({ dryRun: true });
    expect((await glueParameters(database, table)).metadata_location).toMatch(/00000-[0-9a-f-]{36}\.metadata\.json$/);
    expect(await ids(name)).toEqual(SMALL_IDS);
  });
});
