/**
 * The catalog a table name (table-name.ts) names. The AWS and REST catalogs are imported only when
 * named, so a folder or S3 table never loads their SDKs (the Lambda bundles' cold start).
 */
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
  /** A REST catalog's properties, over those of the config file and the environment (rest/rest-properties.ts). */
  readonly catalogProperties?: Readonly<Record<string, string>>;
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
    case 'rest': {
      const [{ RestCatalog }, { restCatalogProperties }] = await Promise.all([import('./rest-catalog.js'), import('./rest/rest-properties.js')]);
      return new RestCatalog(parsed.uri, parsed.namespace, parsed.table, {
        properties: restCatalogProperties(parsed.uri, options.catalogProperties),
        ...(options.s3Endpoint !== undefined ? { s3Endpoint: options.s3Endpoint } : {}),
        ...(options.io !== undefined ? { io: options.io } : {}),
      });
    }
  }
}
