/**
 * AWS Glue Data Catalog, the way Java's GlueCatalog (GlueTableOperations) does it: the Glue
 * table's `metadata_location` parameter points at the current metadata file. A commit writes
 * `<NNNNN>-<uuid>.metadata.json`, then swaps the parameter with UpdateTable under the `VersionId`
 * the base was loaded with, keeping `previous_metadata_location`. Glue answers a stale VersionId
 * with ConcurrentModificationException: a conflict. Because some Glue stand-ins do not check
 * VersionId, the current `metadata_location` is compared with the base's first, as Java does.
 */
import {
  GetTableCommand,
  GlueClient,
  UpdateTableCommand,
  type Table as GlueTable,
  type TableInput,
} from '@aws-sdk/client-glue';
import { CommitConflictError, InvalidFileError, NotFoundError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { parseTableMetadata, serializeTableMetadata } from '../iceberg/table-metadata.js';
import type { TableRequirement, TableUpdate } from '../iceberg/table-update.js';
import { catalogError, sdkErrorName } from './sdk-errors.js';
import { applyChange, nextMetadataFileLocation, type Catalog, type LoadedMetadata } from './catalog.js';

export const METADATA_LOCATION = 'metadata_location';
export const PREVIOUS_METADATA_LOCATION = 'previous_metadata_location';
export const TABLE_TYPE = 'table_type';
export const ICEBERG_TABLE_TYPE = 'ICEBERG';

export interface GlueCatalogOptions {
  readonly client?: GlueClient;
  /** The Glue endpoint (a test server); else the SDK's (env `AWS_ENDPOINT_URL_GLUE`). */
  readonly endpoint?: string;
  /** The account whose catalog holds the database; default the caller's. */
  readonly catalogId?: string;
}

export class GlueCatalog implements Catalog {
  readonly name: string;
  private readonly client: GlueClient;
  private readonly catalogId: string | undefined;

  constructor(
    readonly io: FileIO,
    readonly database: string,
    readonly table: string,
    options: GlueCatalogOptions = {},
  ) {
    this.name = `glue://${database}/${table}`;
    this.client = options.client ?? new GlueClient(options.endpoint !== undefined ? { endpoint: options.endpoint } : {});
    this.catalogId = options.catalogId;
  }

  async load(): Promise<LoadedMetadata> {
    const glue = await this.getTable();
    const metadataLocation = icebergMetadataLocation(glue, this.name);
    const text = new TextDecoder().decode(await this.io.read(metadataLocation));
    return { metadata: parseTableMetadata(text, metadataLocation), metadataLocation, versionToken: glue.VersionId ?? '' };
  }

  async commit(requirements: readonly TableRequirement[], updates: readonly TableUpdate[], base: LoadedMetadata): Promise<LoadedMetadata> {
    const next = applyChange(this, base, requirements, updates);
    const current = await this.getTable();
    const found = icebergMetadataLocation(current, this.name);
    if (found !== base.metadataLocation) {
      throw new CommitConflictError(
        `the catalog's pointer moved: Glue's metadata_location is ${found}, the change was made on ${base.metadataLocation}; refresh and retry`,
        { path: this.name },
      );
    }
    const metadataLocation = nextMetadataFileLocation(next, base.metadataLocation);
    await this.io.createIfAbsent(metadataLocation, new TextEncoder().encode(serializeTableMetadata(next)));
    try {
      await this.client.send(
        new UpdateTableCommand({
          ...(this.catalogId !== undefined ? { CatalogId: this.catalogId } : {}),
          DatabaseName: this.database,
          TableInput: tableInput(current, next.location, {
            [METADATA_LOCATION]: metadataLocation,
            [PREVIOUS_METADATA_LOCATION]: base.metadataLocation,
          }),
          VersionId: base.versionToken,
        }),
      );
    } catch (err) {
      const conflict = sdkErrorName(err) === 'ConcurrentModificationException';
      // Only a refused swap proves the new file unreferenced; after any other failure the swap may have happened.
      if (conflict) await this.io.deleteMany([metadataLocation]).catch(() => undefined);
      throw conflict
        ? new CommitConflictError(`Glue refused the swap: the table changed since version ${base.versionToken}; refresh and retry`, {
            path: this.name,
            cause: err,
          })
        : catalogError(err, this.name, 'Glue', 'UpdateTable', 'EntityNotFoundException');
    }
    // The VersionId of our version; if someone swapped again already, none: the next commit must refresh.
    const after = await this.getTable();
    const ours = after.Parameters?.[METADATA_LOCATION] === metadataLocation;
    return { metadata: next, metadataLocation, versionToken: ours ? (after.VersionId ?? '') : '' };
  }

  private async getTable(): Promise<GlueTable> {
    try {
      const r = await this.client.send(
        new GetTableCommand({ ...(this.catalogId !== undefined ? { CatalogId: this.catalogId } : {}), DatabaseName: this.database, Name: this.table }),
      );
      if (!r.Table) throw new NotFoundError('Glue returned no table', { path: this.name });
      return r.Table;
    } catch (err) {
      throw catalogError(err, this.name, 'Glue', 'GetTable', 'EntityNotFoundException');
    }
  }
}

function icebergMetadataLocation(glue: GlueTable, name: string): string {
  const params = glue.Parameters ?? {};
  const type = params[TABLE_TYPE];
  if (type === undefined || type.toUpperCase() !== ICEBERG_TABLE_TYPE) {
    throw new InvalidFileError(`the Glue table is not an Iceberg table (table_type ${type ?? 'unset'})`, { path: name });
  }
  const location = params[METADATA_LOCATION];
  if (!location) throw new InvalidFileError('the Glue table has no metadata_location', { path: name });
  return location;
}

/** What UpdateTable takes back: the table as Glue holds it, its location and parameters updated. */
function tableInput(glue: GlueTable, location: string, parameters: Record<string, string>): TableInput {
  return {
    Name: glue.Name,
    ...(glue.Description !== undefined ? { Description: glue.Description } : {}),
    ...(glue.Owner !== undefined ? { Owner: glue.Owner } : {}),
    ...(glue.Retention !== undefined ? { Retention: glue.Retention } : {}),
    ...(glue.PartitionKeys !== undefined ? { PartitionKeys: glue.PartitionKeys } : {}),
    TableType: glue.TableType ?? 'EXTERNAL_TABLE',
    StorageDescriptor: { ...glue.StorageDescriptor, Location: location },
    Parameters: { ...glue.Parameters, ...parameters },
  };
}
