/**
 * Amazon S3 Tables through its own API: GetTableMetadataLocation answers the current metadata
 * file and a version token; a commit writes `<NNNNN>-<uuid>.metadata.json` below the table's
 * warehouse location and swaps the pointer with UpdateTableMetadataLocation under the base's
 * token. A stale token is answered with ConflictException: a conflict.
 */
import { GetTableMetadataLocationCommand, S3TablesClient, UpdateTableMetadataLocationCommand } from '@aws-sdk/client-s3tables';
import { CommitConflictError, InvalidFileError, NotFoundError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { parseTableMetadata, serializeTableMetadata, type TableMetadata } from '../iceberg/table-metadata.js';
import type { TableRequirement, TableUpdate } from '../iceberg/table-update.js';
import { catalogError, sdkErrorName } from './sdk-errors.js';
import { applyChange, nextMetadataFileLocation, type Catalog, type LoadedMetadata } from './catalog.js';

export interface S3TablesCatalogOptions {
  readonly client?: S3TablesClient;
  /** The S3 Tables endpoint (a test server); else the SDK's (env `AWS_ENDPOINT_URL_S3TABLES`). */
  readonly endpoint?: string;
}

export class S3TablesCatalog implements Catalog {
  readonly name: string;
  // Table buckets answer ListObjects and DeleteObject with 405; their maintenance removes what no snapshot reaches.
  readonly removesUnreferencedFiles = true;
  private readonly client: S3TablesClient;

  constructor(
    readonly io: FileIO,
    readonly tableBucketArn: string,
    readonly namespace: string,
    readonly table: string,
    options: S3TablesCatalogOptions = {},
  ) {
    this.name = `s3tables://${tableBucketArn}/${namespace}/${table}`;
    // The table bucket's region is in its ARN.
    const region = tableBucketArn.split(':')[3];
    this.client = options.client ?? new S3TablesClient({ region, ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}) });
  }

  async load(): Promise<LoadedMetadata> {
    const pointer = await this.pointer();
    if (!pointer.metadataLocation) throw new NotFoundError('the S3 table has no metadata yet', { path: this.name });
    const text = new TextDecoder().decode(await this.io.read(pointer.metadataLocation));
    return {
      metadata: parseTableMetadata(text, pointer.metadataLocation),
      metadataLocation: pointer.metadataLocation,
      versionToken: pointer.versionToken,
    };
  }

  /** Where the table's files go (`s3://…`), as S3 Tables assigns it. */
  async warehouseLocation(): Promise<string> {
    return (await this.pointer()).warehouseLocation;
  }

  async commit(requirements: readonly TableRequirement[], updates: readonly TableUpdate[], base: LoadedMetadata): Promise<LoadedMetadata> {
    const next = applyChange(this, base, requirements, updates);
    return this.swap(next, base.metadataLocation, base.versionToken);
  }

  /** Writes the first metadata of a table created empty in S3 Tables (its location: the warehouse location). */
  async create(metadata: TableMetadata): Promise<LoadedMetadata> {
    const pointer = await this.pointer();
    if (pointer.metadataLocation) throw new CommitConflictError('the S3 table already has metadata', { path: this.name, requirement: 'assert-create' });
    return this.swap(metadata, undefined, pointer.versionToken);
  }

  private async swap(next: TableMetadata, previous: string | undefined, versionToken: string): Promise<LoadedMetadata> {
    const metadataLocation = nextMetadataFileLocation(next, previous);
    await this.io.createIfAbsent(metadataLocation, new TextEncoder().encode(serializeTableMetadata(next)));
    try {
      await this.client.send(
        new UpdateTableMetadataLocationCommand({
          tableBucketARN: this.tableBucketArn,
          namespace: this.namespace,
          name: this.table,
          versionToken,
          metadataLocation,
        }),
      );
    } catch (err) {
      const conflict = sdkErrorName(err) === 'ConflictException';
      if (conflict) await this.io.deleteMany([metadataLocation]).catch(() => undefined);
      throw conflict
        ? new CommitConflictError('S3 Tables refused the swap: the version token moved; refresh and retry', { path: this.name, cause: err })
        : catalogError(err, this.name, 'S3 Tables', 'UpdateTableMetadataLocation', 'NotFoundException');
    }
    // The token of our version; if someone swapped again already, none: the next commit must refresh.
    const after = await this.pointer();
    return { metadata: next, metadataLocation, versionToken: after.metadataLocation === metadataLocation ? after.versionToken : '' };
  }

  private async pointer(): Promise<{ metadataLocation: string | undefined; versionToken: string; warehouseLocation: string }> {
    try {
      const r = await this.client.send(
        new GetTableMetadataLocationCommand({ tableBucketARN: this.tableBucketArn, namespace: this.namespace, name: this.table }),
      );
      if (!r.versionToken || !r.warehouseLocation) throw new InvalidFileError('S3 Tables answered no version token or warehouse location', { path: this.name });
      return { metadataLocation: r.metadataLocation, versionToken: r.versionToken, warehouseLocation: r.warehouseLocation };
    } catch (err) {
      throw catalogError(err, this.name, 'S3 Tables', 'GetTableMetadataLocation', 'NotFoundException');
    }
  }
}
