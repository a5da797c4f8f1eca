import { CommitConflictError, ReadOnlyTableError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { fileIOFor } from '../io/index.js';
import {
  intProperty, parseTableMetadata, serializeTableMetadata, type TableMetadata,
} from '../iceberg/table-metadata.js';
import { applyUpdates, checkRequirements, type TableRequirement, type TableUpdate } from '../iceberg/table-update.js';
import { commitFirstVersion, commitNext, loadCurrent } from './object-store-catalog.js';

/** A loaded table: where it lives, its current metadata, and the catalog version it came from. */
export interface Table {
  readonly io: FileIO;
  /** The location the table was opened at (a folder or s3:// prefix). */
  readonly location: string;
  readonly metadata: TableMetadata;
  readonly metadataLocation: string;
  /** The N of v<N>.metadata.json; undefined when opened from an explicit metadata file. */
  readonly version: number | undefined;
}

export interface OpenOptions {
  readonly s3Endpoint?: string;
  /** Open this metadata file instead of the catalog's current one (read-only). */
  readonly metadataFile?: string;
  readonly io?: FileIO;
}

export async function loadTable(location: string, options: OpenOptions = {}): Promise<Table> {
  const io = options.io ?? fileIOFor(location, { s3Endpoint: options.s3Endpoint });
  if (options.metadataFile !== undefined) {
    const bytes = await io.read(options.metadataFile);
    const metadata = parseTableMetadata(new TextDecoder().decode(bytes), options.metadataFile);
    const m = /(?:^|\/)v(\d+)\.metadata\.json$/.exec(options.metadataFile);
    return { io, location, metadata, metadataLocation: options.metadataFile, version: m ? Number(m[1]) : undefined };
  }
  const current = await loadCurrent(io, location);
  return {
    io,
    location,
    metadata: parseTableMetadata(current.text, current.metadataLocation),
    metadataLocation: current.metadataLocation,
    version: current.version,
  };
}

/** Creates v1 of a new table in the object-store layout. */
export async function createTable(io: FileIO, location: string, metadata: TableMetadata): Promise<Table> {
  const created = await commitFirstVersion(io, location, serializeTableMetadata(metadata));
  return { io, location, metadata, metadataLocation: created.metadataLocation, version: created.version };
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
 * Commits an action with optimistic concurrency: the action runs against the
 * latest metadata, its requirements are checked, and the next metadata version
 * is created if absent. On a conflict the table is reloaded and the action
 * re-run (it re-validates), up to the retry limit with exponential backoff. An
 * action that returns undefined has nothing to commit against that base.
 */
export async function commitTable(
  table: Table,
  action: (base: Table) => Promise<TableChange | undefined> | TableChange | undefined,
  options: TableCommitOptions = {},
): Promise<TableCommitResult> {
  if (table.version === undefined) {
    throw new ReadOnlyTableError('a table opened from an explicit metadata file is read-only', { path: table.metadataLocation });
  }
  const retries = options.retries ?? intProperty(table.metadata, 'commit.retry.num-retries', 4);
  const minWait = intProperty(table.metadata, 'commit.retry.min-wait-ms', 100);
  const maxWait = intProperty(table.metadata, 'commit.retry.max-wait-ms', 60_000);
  let base = table;
  for (let attempt = 1; ; attempt++) {
    try {
      const change = await action(base);
      if (change === undefined) return { table: base, attempts: attempt, committed: false };
      checkRequirements(base.metadata, change.requirements);
      const next = applyUpdates(base.metadata, change.updates, { baseMetadataLocation: base.metadataLocation });
      const written = await commitNext(base.io, base.location, base.version!, serializeTableMetadata(next));
      return {
        table: { ...base, metadata: next, metadataLocation: written.metadataLocation, version: written.version },
        attempts: attempt,
        committed: true,
      };
    } catch (e) {
      if (!(e instanceof CommitConflictError) || attempt > retries) throw e;
      options.onRetry?.(attempt, e);
      const wait = Math.min(maxWait, minWait * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
      await new Promise((r) => setTimeout(r, wait));
      base = await loadTable(base.location, { io: base.io });
    }
  }
}
