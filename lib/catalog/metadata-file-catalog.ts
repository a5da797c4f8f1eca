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

  constructor(
    readonly io: FileIO,
    readonly metadataLocation: string,
  ) {}

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
      new ReadOnlyTableError('a table opened from an explicit metadata file is read-only', { path: this.metadataLocation }),
    );
  }
}
