/**
 * The catalog a table name (table-name.ts) names. The AWS catalogs are imported only when named,
 * so a folder or S3 table never loads their SDKs (the Lambda bundles' cold start).
 */
import { UnsupportedError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { fileIOFor } from '../io/index.js';
import type { Catalog } from './catalog.js';
import { ObjectStoreCatalog } from './object-store-catalog.js';
import { parseTableName } from './table-name.js';

export interface CatalogOptions {
  /** The S3 endpoint the table's files are read and written through (`--s3-endpoint`). */
  readonly s3Endpoint?: string;
  /** The catalog service's endpoint (a test server); else the SDK's default for Glue and S3 Tables. */
  readonly catalogEndpoint?: string;
  readonly io?: FileIO;
}

export async function catalogFor(name: string, options: CatalogOptions = {}): Promise<Catalog> {
  const parsed = parseTableName(name);
  const endpoint = options.catalogEndpoint !== undefined ? { endpoint: options.catalogEndpoint } : {};
  // A catalog service's tables live on S3.
  const io = (): FileIO => options.io ?? fileIOFor('s3://catalog', { s3Endpoint: options.s3Endpoint });
  switch (parsed.kind) {
    case 'location':
      return new ObjectStoreCatalog(options.io ?? fileIOFor(parsed.location, { s3Endpoint: options.s3Endpoint }), parsed.location);
    case 'glue': {
      const { GlueCatalog } = await import('./glue-catalog.js');
      return new GlueCatalog(io(), parsed.database, parsed.table, endpoint);
    }
    case 's3tables': {
      const { S3TablesCatalog } = await import('./s3-tables-catalog.js');
      return new S3TablesCatalog(io(), parsed.tableBucketArn, parsed.namespace, parsed.table, endpoint);
    }
    case 'rest':
      throw new UnsupportedError('Iceberg REST catalogs are not supported yet', { path: name });
  }
}
