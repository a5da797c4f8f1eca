import { CommitConflictError, NotFoundError, ReadOnlyTableError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { fileIOFor } from '../io/index.js';
import { baseName } from '../io/path.js';
import { intProperty, type TableMetadata } from '../iceberg/table-metadata.js';
import type { TableRequirement, TableUpdate } from '../iceberg/table-update.js';
import type { Catalog, LoadedMetadata } from './catalog.js';
import { catalogFor } from './catalog-for.js';
import { CATALOG_OWNED_REASON, newestCatalogMetadataFile } from './catalog-metadata-files.js';
import { MetadataFileCatalog } from './metadata-file-catalog.js';
import { metadataVersionOf, ObjectStoreCatalog, versionOf } from './object-store-catalog.js';
import { isCatalogName } from './table-name.js';

/** A loaded table: its catalog, where it lives, its current metadata, and the catalog version it came from. */
export interface Table extends LoadedMetadata {
  /** Every load and commit of this table goes through it. */
  readonly catalog: Catalog;
  readonly io: FileIO;
  /** The location the table was opened at (a folder or s3:// prefix), else its metadata's location. */
  readonly location: string;
  /** The N of v<N>.metadata.json in the object-store layout; undefined in other catalogs and for an explicit metadata file. */
  readonly version: number | undefined;
}

export interface OpenOptions {
  readonly s3Endpoint?: string;
  /** Open this metadata file instead of the catalog's current one (read-only). */
  readonly metadataFile?: string;
  readonly io?: FileIO;
  /** Load through this catalog instead of the one `location` names. */
  readonly catalog?: Catalog;
  /** The catalog service's endpoint for `glue://` and `s3tables://` names (a test server). */
  readonly catalogEndpoint?: string;
  /** Told when the table is read from a catalog service's folder (see catalog-metadata-files.ts). */
  readonly warn?: (message: string) => void;
}

/**
 * Loads a table by name: a location (the object-store layout there), or a table in a catalog
 * service (`glue://db/t`, `s3tables://…`; see table-name.ts).
 */
export async function loadTable(location: string, options: OpenOptions = {}): Promise<Table> {
  if (options.catalog !== undefined) return openTable(options.catalog, location);
  if (isCatalogName(location) && options.metadataFile === undefined) return openTable(await catalogFor(location, options));
  const io = options.io ?? fileIOFor(location, { s3Endpoint: options.s3Endpoint });
  if (options.metadataFile !== undefined) return openTable(new MetadataFileCatalog(io, options.metadataFile), location);
  try {
    return await openTable(new ObjectStoreCatalog(io, location), location);
  } catch (e) {
    // No v<N>.metadata.json: a catalog service's folder is read from its newest metadata file.
    if (!(e instanceof NotFoundError)) throw e;
    const newest = await newestCatalogMetadataFile(io, location).catch(() => undefined);
    if (newest === undefined) throw e;
    options.warn?.(
      `${location} has no v<N>.metadata.json; reading its newest metadata file ${baseName(newest)} (read-only): ` +
        'the catalog that wrote it, not the folder, holds which version is current',
    );
    return openTable(new MetadataFileCatalog(io, newest, CATALOG_OWNED_REASON), location);
  }
}

/** Loads the table `catalog` holds; `location` defaults to the one its metadata records. */
export async function openTable(catalog: Catalog, location?: string): Promise<Table> {
  return tableOf(catalog, await catalog.load(), location);
}

/** The table as its catalog holds it now. */
export async function refreshTable(table: Table): Promise<Table> {
  return tableOf(table.catalog, await table.catalog.load(), table.location);
}

function tableOf(catalog: Catalog, loaded: LoadedMetadata, location: string | undefined): Table {
  return {
    catalog,
    io: catalog.io,
    location: location ?? (catalog instanceof ObjectStoreCatalog ? catalog.location : loaded.metadata.location),
    metadata: loaded.metadata,
    metadataLocation: loaded.metadataLocation,
    versionToken: loaded.versionToken,
    version: versionNumber(catalog, loaded),
  };
}

function versionNumber(catalog: Catalog, loaded: LoadedMetadata): number | undefined {
  if (catalog instanceof ObjectStoreCatalog) return versionOf(loaded);
  if (catalog instanceof MetadataFileCatalog) return metadataVersionOf(baseName(loaded.metadataLocation));
  return undefined;
}

/** Creates v1 of a new table in the object-store layout. */
export async function createTable(io: FileIO, location: string, metadata: TableMetadata): Promise<Table> {
  const catalog = new ObjectStoreCatalog(io, location);
  return tableOf(catalog, await catalog.create(metadata), location);
}

/** What an action returns: the changes, and what must still hold of the base for them to apply. */
export interface TableChange {
  readonly updates: readonly TableUpdate[];
  readonly requirements: readonly TableRequirement[];
}

export interface TableCommitOptions {
  /** Attempts after the first; defaults to the table's `commit.retry.num-retries` (4). */
  readonly retries?: number;
  readonly onRetry?: (attempt: number, error: CommitConflictError) => void;
}

export interface TableCommitResult {
  /** The table after the commit; the base the action last saw when it had nothing to commit. */
  readonly table: Table;
  readonly attempts: number;
  /** False when the action found nothing to commit: then no version was written. */
  readonly committed: boolean;
}

/**
 * Commits an action with optimistic concurrency through the table's catalog: the action runs
 * against the latest metadata and returns updates under requirements; the catalog commits them
 * or answers a conflict. On a conflict the table is reloaded and the action re-run (it
 * re-validates), up to the retry limit with exponential backoff; past it, a CommitConflictError
 * naming the table and the attempts. An action that returns undefined has nothing to commit
 * against that base.
 */
export async function commitTable(
  table: Table,
  action: (base: Table) => Promise<TableChange | undefined> | TableChange | undefined,
  options: TableCommitOptions = {},
): Promise<TableCommitResult> {
  const catalog = table.catalog;
  if (catalog.readOnly === true) {
    const reason = catalog instanceof MetadataFileCatalog ? catalog.readOnlyReason : 'a table opened from an explicit metadata file is read-only';
    throw new ReadOnlyTableError(reason, { path: table.metadataLocation });
  }
  const retries = options.retries ?? intProperty(table.metadata, 'commit.retry.num-retries', 4);
  const minWait = intProperty(table.metadata, 'commit.retry.min-wait-ms', 100);
  const maxWait = intProperty(table.metadata, 'commit.retry.max-wait-ms', 60_000);
  let base = table;
  for (let attempt = 1; ; attempt++) {
    try {
      const change = await action(base);
      if (change === undefined) return { table: base, attempts: attempt, committed: false };
      const next = await catalog.commit(change.requirements, change.updates, base);
      return { table: tableOf(catalog, next, base.location), attempts: attempt, committed: true };
    } catch (e) {
      if (!(e instanceof CommitConflictError)) throw e;
      if (attempt > retries) {
        throw new CommitConflictError(`gave up committing to ${catalog.name} after ${attempt} attempts: ${e.message}`, {
          path: catalog.name,
          cause: e,
          attempts: attempt,
          ...(e.requirement !== undefined ? { requirement: e.requirement } : {}),
        });
      }
      options.onRetry?.(attempt, e);
      const wait = Math.min(maxWait, minWait * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
      await new Promise((r) => setTimeout(r, wait));
      base = await refreshTable(base);
    }
  }
}
