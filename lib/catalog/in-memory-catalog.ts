/**
 * A catalog whose pointer lives in memory, for tests: it writes metadata files through its FileIO
 * as a metastore does (`<NNNNN>-<uuid>.metadata.json`) and can be told to fail a chosen commit
 * attempt with a conflict, or to let another change commit first, as iceberg-rust's tests do.
 */
import { CommitConflictError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { serializeTableMetadata, type TableMetadata } from '../iceberg/table-metadata.js';
import { applyUpdates, checkRequirements, type TableRequirement, type TableUpdate } from '../iceberg/table-update.js';
import { applyChange, nextMetadataFileLocation, type Catalog, type LoadedMetadata } from './catalog.js';

export interface InMemoryCatalogOptions {
  /**
   * Who checks: `pointer` (as the object store and Glue do) checks the requirements on the base
   * and refuses when the pointer moved since; `server` (as a REST server does) checks them
   * against the current metadata and applies the updates to it.
   * @default 'pointer'
   */
  readonly checks?: 'pointer' | 'server';
}

/** Runs before the attempt it is set for: typically another writer's commit through the same catalog. */
export type ConcurrentChange = (catalog: InMemoryCatalog) => Promise<void>;

export class InMemoryCatalog implements Catalog {
  /** Commit attempts made, not counting those of concurrent changes. */
  attempts = 0;
  /** Commits that succeeded, concurrent changes included. */
  commits = 0;
  private current: LoadedMetadata;
  private readonly checks: 'pointer' | 'server';
  private readonly failures = new Map<number, string>();
  private readonly changes = new Map<number, ConcurrentChange>();
  private inChange = false;

  constructor(
    readonly io: FileIO,
    readonly name: string,
    initial: LoadedMetadata,
    options: InMemoryCatalogOptions = {},
  ) {
    this.current = { ...initial, versionToken: '0' };
    this.checks = options.checks ?? 'pointer';
  }

  /** Commit attempt `attempt` (1-based) fails with a conflict and changes nothing. */
  failAt(attempt: number, message = `conflict injected at commit attempt ${attempt}`): this {
    this.failures.set(attempt, message);
    return this;
  }

  /** Before commit attempt `attempt` is checked, `change` runs (and may commit through this catalog). */
  beforeAttempt(attempt: number, change: ConcurrentChange): this {
    this.changes.set(attempt, change);
    return this;
  }

  load(): Promise<LoadedMetadata> {
    return Promise.resolve(this.current);
  }

  async commit(requirements: readonly TableRequirement[], updates: readonly TableUpdate[], base: LoadedMetadata): Promise<LoadedMetadata> {
    if (!this.inChange) {
      const attempt = ++this.attempts;
      const change = this.changes.get(attempt);
      if (change) {
        this.changes.delete(attempt);
        this.inChange = true;
        try {
          await change(this);
        } finally {
          this.inChange = false;
        }
      }
      const failure = this.failures.get(attempt);
      if (failure !== undefined) throw new CommitConflictError(failure, { path: this.name });
    }
    const current = this.current;
    let next: TableMetadata;
    if (this.checks === 'server') {
      checkRequirements(current.metadata, requirements, this.name);
      next = applyUpdates(current.metadata, updates, { baseMetadataLocation: current.metadataLocation });
    } else {
      if (base.versionToken !== current.versionToken) {
        throw new CommitConflictError(
          `the catalog's pointer moved: the change was made on version ${base.versionToken}, the table is at ${current.versionToken}; refresh and retry`,
          { path: this.name },
        );
      }
      next = applyChange(this, base, requirements, updates);
    }
    const metadataLocation = nextMetadataFileLocation(next, current.metadataLocation);
    await this.io.createIfAbsent(metadataLocation, new TextEncoder().encode(serializeTableMetadata(next)));
    // The swap: only if nobody swapped while the file was written.
    if (this.current !== current) throw new CommitConflictError('another commit swapped the pointer first; refresh and retry', { path: this.name });
    this.current = { metadata: next, metadataLocation, versionToken: String(Number(current.versionToken) + 1) };
    this.commits++;
    return this.current;
  }
}
