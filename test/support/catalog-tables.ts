/**
 * The small table (small-table.ts) held by a catalog service on moto: AWS Glue Data Catalog (the
 * first metadata file written as `00000-<uuid>.metadata.json` and registered with Glue, the rest
 * committed through GlueCatalog) and Amazon S3 Tables (created empty, then committed through
 * S3TablesCatalog); and the catalog's pointer, read straight from the service.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { CreateDatabaseCommand, CreateTableCommand, GetTableCommand, GlueClient } from '@aws-sdk/client-glue';
import {
  CreateNamespaceCommand,
  CreateTableBucketCommand,
  CreateTableCommand as CreateS3TableCommand,
  GetTableMetadataLocationCommand,
  S3TablesClient,
} from '@aws-sdk/client-s3tables';
import { S3TablesCatalog } from '../../lib/catalog/s3-tables-catalog.js';
import { loadTable, openTable, type Table } from '../../lib/catalog/table.js';
import { serializeTableMetadata } from '../../lib/iceberg/table-metadata.js';
import { fileIOFor } from '../../lib/io/index.js';
import { newTableMetadata } from '../../lib/table/operations.js';
import { freshBucket } from './s3.js';
import { fillSmallTable, SMALL_TABLE_SPEC } from './small-table.js';

export interface CatalogTable {
  /** `glue://…` or `s3tables://…` */
  readonly name: string;
  /** The table's Iceberg location (for Glue, where it was created; for S3 Tables, its warehouse location). */
  readonly location: string;
  /** The pointer as the service holds it now. */
  pointer(): Promise<{ readonly metadataLocation: string | undefined; readonly previousMetadataLocation?: string }>;
  /** The table after the small table's writes. */
  readonly table: Table;
}

/** `<table location>/metadata/<NNNNN>-<uuid>.metadata.json`, NNNNN being `n`: the name a metastore catalog gives its n-th metadata file. */
export function metadataFileOf(table: CatalogTable, n: number): RegExp {
  const folder = `${table.location}/metadata/`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${folder}${String(n).padStart(5, '0')}-[0-9a-f-]{36}\\.metadata\\.json$`);
}

let made = 0;

/** The small table in moto's Glue: database `db<pid>_<n>`, table `events`, files under a fresh bucket. */
export async function glueSmallTable(moto: string, formatVersion: 2 | 3 = 2): Promise<CatalogTable & { readonly database: string }> {
  const glue = new GlueClient({ endpoint: moto, region: 'us-east-1' });
  const location = `s3://${await freshBucket()}/warehouse/events`;
  const io = fileIOFor(location, { s3Endpoint: moto });
  const first = `${location}/metadata/00000-${randomUUID()}.metadata.json`;
  await io.createIfAbsent(first, new TextEncoder().encode(serializeTableMetadata(newTableMetadata(location, { formatVersion, ...SMALL_TABLE_SPEC }))));
  const database = `db${process.pid}_${++made}`;
  await glue.send(new CreateDatabaseCommand({ DatabaseInput: { Name: database } }));
  await glue.send(
    new CreateTableCommand({
      DatabaseName: database,
      TableInput: {
        Name: 'events',
        TableType: 'EXTERNAL_TABLE',
        Parameters: { table_type: 'ICEBERG', metadata_location: first },
        StorageDescriptor: { Location: location },
      },
    }),
  );
  const name = `glue://${database}/events`;
  const table = await fillSmallTable(await loadTable(name, { s3Endpoint: moto, catalogEndpoint: moto }));
  return {
    name,
    database,
    location,
    table,
    async pointer() {
      const params = (await glue.send(new GetTableCommand({ DatabaseName: database, Name: 'events' }))).Table?.Parameters ?? {};
      return { metadataLocation: params.metadata_location, previousMetadataLocation: params.previous_metadata_location };
    },
  };
}

/** The small table in moto's S3 Tables: a fresh table bucket, namespace `sales`, table `events`. */
export async function s3TablesSmallTable(moto: string, formatVersion: 2 | 3 = 2): Promise<CatalogTable> {
  const client = new S3TablesClient({ endpoint: moto, region: 'us-east-1' });
  const arn = (await client.send(new CreateTableBucketCommand({ name: `packice-${randomBytes(4).toString('hex')}` }))).arn!;
  await client.send(new CreateNamespaceCommand({ tableBucketARN: arn, namespace: ['sales'] }));
  await client.send(new CreateS3TableCommand({ tableBucketARN: arn, namespace: 'sales', name: 'events', format: 'ICEBERG' }));
  const catalog = new S3TablesCatalog(fileIOFor('s3://x', { s3Endpoint: moto }), arn, 'sales', 'events', { endpoint: moto });
  const location = await catalog.warehouseLocation();
  await catalog.create(newTableMetadata(location, { formatVersion, ...SMALL_TABLE_SPEC }));
  const table = await fillSmallTable(await openTable(catalog));
  return {
    name: `s3tables://${arn}/sales/events`,
    location,
    table,
    async pointer() {
      const r = await client.send(new GetTableMetadataLocationCommand({ tableBucketARN: arn, namespace: 'sales', name: 'events' }));
      return { metadataLocation: r.metadataLocation };
    },
  };
}
