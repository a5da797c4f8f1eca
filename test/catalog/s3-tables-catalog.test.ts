/**
 * Amazon S3 Tables against moto's S3 Tables and S3 on loopback (moto checks the version token,
 * as S3 Tables does): create, load by `s3tables://` name, compact through the pipeline steps,
 * and a racing commit refreshed and retried.
 */
import { randomBytes } from 'node:crypto';
import { CreateNamespaceCommand, CreateTableBucketCommand, CreateTableCommand, S3TablesClient } from '@aws-sdk/client-s3tables';
import { beforeAll, describe, expect, it } from 'vitest';
import { S3TablesCatalog } from '../../lib/catalog/s3-tables-catalog.js';
import { loadTable, openTable } from '../../lib/catalog/table.js';
import { fileIOFor } from '../../lib/io/index.js';
import type { Row } from '../../lib/iceberg/values.js';
import { commitStep, planStep, rewriteStep } from '../../lib/pipeline/steps.js';
import { appendRows, newTableMetadata } from '../../lib/table/operations.js';
import { scanRows } from '../../lib/table/scan.js';
import { commitAfterRace, raceProperty } from '../support/catalog-race.js';
import { testS3Endpoint } from '../support/s3.js';
import { SMALL_TABLE_SCHEMA } from '../support/small-table.js';

let moto: string;
let client: S3TablesClient;

beforeAll(() => {
  moto = testS3Endpoint();
  // How the pipeline steps (which take a table name only) find the endpoint, as the SDK reads it.
  process.env.AWS_ENDPOINT_URL_S3TABLES = moto;
  client = new S3TablesClient({ endpoint: moto, region: 'us-east-1' });
});

function rows(from: number, count: number): Row[] {
  return Array.from({ length: count }, (_, i) => {
    const id = from + i;
    return { id: BigInt(id), category: id % 2 === 0 ? 'a' : 'b', amount: BigInt(id * 125) };
  });
}

/** A new S3 table with four appends of 10 rows; its s3tables:// name. */
async function s3Table(): Promise<{ name: string; catalog: S3TablesCatalog }> {
  const bucket = await client.send(new CreateTableBucketCommand({ name: `packice-${randomBytes(4).toString('hex')}` }));
  const arn = bucket.arn!;
  await client.send(new CreateNamespaceCommand({ tableBucketARN: arn, namespace: ['sales'] }));
  await client.send(new CreateTableCommand({ tableBucketARN: arn, namespace: 'sales', name: 'events', format: 'ICEBERG' }));
  const catalog = new S3TablesCatalog(fileIOFor('s3://x', { s3Endpoint: moto }), arn, 'sales', 'events', { endpoint: moto });
  const warehouse = await catalog.warehouseLocation();
  await catalog.create(
    newTableMetadata(warehouse, {
      schema: SMALL_TABLE_SCHEMA,
      partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
    }),
  );
  let t = await openTable(catalog);
  for (let c = 0; c < 4; c++) t = await appendRows(t, rows(c * 10 + 1, 10));
  return { name: `s3tables://${arn}/sales/events`, catalog };
}

async function ids(name: string): Promise<number[]> {
  const t = await loadTable(name, { s3Endpoint: moto });
  const out: number[] = [];
  for await (const r of scanRows(t.io, t.metadata)) out.push(Number(r.id));
  return out.sort((a, b) => a - b);
}

const ALL = Array.from({ length: 40 }, (_, i) => i + 1);

describe('a table in Amazon S3 Tables (moto)', () => {
  it('loads by s3tables:// name and compacts through the pipeline steps', async () => {
    // Prepare
    const { name } = await s3Table();
    const before = await loadTable(name, { s3Endpoint: moto });
    expect(before.catalog).toBeInstanceOf(S3TablesCatalog);
    expect(before.metadataLocation).toMatch(/\/metadata\/00004-[0-9a-f-]{36}\.metadata\.json$/);

    // Act
    const plan = await planStep({ table: { location: name, s3Endpoint: moto }, policy: { minInputFiles: 2 } });
    const results = await Promise.all(plan.groups.map((g) => rewriteStep({ plan, groupId: g.id })));
    const commit = await commitStep({ plan, results });

    // Assess
    expect(commit.abortedGroups).toEqual([]);
    expect(commit.committedGroups.length).toBe(2);
    const after = await loadTable(name, { s3Endpoint: moto });
    expect(after.metadataLocation).toMatch(/\/metadata\/00005-[0-9a-f-]{36}\.metadata\.json$/);
    expect(after.metadata.metadataLog.at(-1)?.metadataFile).toBe(before.metadataLocation);
    expect(after.metadata.currentSnapshotId?.toString()).toBe(commit.snapshotId);
    expect(await ids(name)).toEqual(ALL);
  });

  it('a writer commits between our load and our commit: the stale version token is refused, we refresh and retry', async () => {
    // Prepare
    const { name } = await s3Table();
    const ours = await loadTable(name, { s3Endpoint: moto });
    await appendRows(await loadTable(name, { s3Endpoint: moto }), rows(41, 1));

    // Act
    const { result: r, conflicts } = await commitAfterRace(ours);

    // Assess
    expect(r.attempts).toBe(2);
    expect(conflicts[0].message).toMatch(/version token moved/);
    expect(await raceProperty(name, moto)).toBe('yes');
    expect(await ids(name)).toEqual([...ALL, 41]);
  });
});
