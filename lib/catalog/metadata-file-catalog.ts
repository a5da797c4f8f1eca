import { ReadOnlyTableError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { parseTableMetadata } from '../iceberg/table-metadata.js';
import type { Catalog, LoadedMetadata } from './catalog.js';

/**
 * One metadata file named explicitly (`--metadata`): a read-only catalog. Loading reads that file
 * every time; committing is refused, as there is no pointer to swap.
 */
export class MetadataFileCatalog implements Catalog {
  readonly readOnly = true;

  /**
   * @param catalogOwned why the file is read-only when the folder belongs to a catalog service
   *   (see catalog-metadata-files.ts); undefined for a file named with `--metadata`
   */
  constructor(
    readonly io: FileIO,
    readonly metadataLocation: string,
    readonly catalogOwned?: string,
  ) {}

  /** Why a commit is refused. */
  get readOnlyReason(): string {
    return this.catalogOwned ?? 'a table opened from an explicit metadata file is read-only';
  }

  get name(): string {
    return this.metadataLocation;
  }

  async load(): Promise<LoadedMetadata> {
    const bytes = await this.io.read(this.metadataLocation);
    const metadata = parseTableMetadata(new TextDecoder().decode(bytes), this.metadataLocation);
    return { metadata, metadataLocation: this.metadataLocation, versionToken: this.metadataLocation };
  }

  commit(): Promise<LoadedMetadata> {
    return Promise.reject(
      new ReadOnlyTableError(this.readOnlyReason, { path: this.metadataLocation }),
    );
  }
}
