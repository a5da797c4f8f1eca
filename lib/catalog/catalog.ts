/**
 * The catalog as one table sees it: where its current metadata is, and how a change to it is
 * committed. Every load and every commit goes through one (DESIGN.md "Catalogs").
 *
 * A change is data: updates under requirements, with the REST spec's names (table-update.ts).
 * Catalogs differ only in who checks the requirements and what is swapped:
 * - a REST catalog sends both to the server, which checks them against the current metadata;
 * - the object store, Glue and S3 Tables hold only a pointer: the requirements are checked and
 *   the updates applied here, on the base (`applyChange`), the new metadata file is written, and
 *   the pointer is swapped only if it still names the base (`v<N+1>` created if absent; Glue's
 *   `VersionId`; S3 Tables' version token).
 * Either way a lost race is a CommitConflictError; the retry loop (table.ts) reloads and re-runs
 * the action.
 */
import { randomUUID } from 'node:crypto';
import type { FileIO } from '../io/file-io.js';
import { baseName } from '../io/path.js';
import { newMetadataLocation } from '../iceberg/locations.js';
import type { TableMetadata } from '../iceberg/table-metadata.js';
import { applyUpdates, checkRequirements, type TableRequirement, type TableUpdate } from '../iceberg/table-update.js';

/** A table's metadata as its catalog holds it. */
export interface LoadedMetadata {
  readonly metadata: TableMetadata;
  readonly metadataLocation: string;
  /**
   * Which version of the catalog's pointer this is; opaque outside the catalog that made it (the
   * object store: N of `v<N>.metadata.json`; Glue: the table's `VersionId`; S3 Tables: its version
   * token; REST: the metadata location).
   */
  readonly versionToken: string;
}

export interface Catalog {
  /** The table's name in this catalog, for messages: a location, `glue://db/t`, … */
  readonly name: string;
  /** Reads and writes the table's files. */
  readonly io: FileIO;
  /** True when no commit can succeed (a table opened from an explicit metadata file). */
  readonly readOnly?: boolean;
  /**
   * True when the catalog service itself deletes the files no snapshot reaches, and refuses to
   * list or delete the table's files (S3 Tables' unreferenced file removal): expiry then only
   * commits, and orphan removal has nothing to do.
   */
  readonly removesUnreferencedFiles?: boolean;
  load(): Promise<LoadedMetadata>;
  /**
   * Commits `updates` under `requirements`, computed from `base`. Resolves to the new current
   * metadata. Rejects with CommitConflictError when a requirement fails (its `requirement` names
   * which) or the pointer moved since `base` (refresh, re-run the action, retry); with another
   * error when the commit can never succeed as asked.
   */
  commit(requirements: readonly TableRequirement[], updates: readonly TableUpdate[], base: LoadedMetadata): Promise<LoadedMetadata>;
}

/**
 * The next metadata of a pointer-swapping catalog: the requirements checked against the base
 * (CommitConflictError naming the failed one), then the updates applied to it.
 */
export function applyChange(
  catalog: Pick<Catalog, 'name'>,
  base: LoadedMetadata,
  requirements: readonly TableRequirement[],
  updates: readonly TableUpdate[],
): TableMetadata {
  checkRequirements(base.metadata, requirements, catalog.name);
  return applyUpdates(base.metadata, updates, { baseMetadataLocation: base.metadataLocation });
}

/**
 * Where a metastore catalog (Glue, S3 Tables, the in-memory one) writes the next metadata file:
 * `<NNNNN>-<uuid>.metadata.json` in the metadata folder, NNNNN one above the previous file's
 * prefix (0 after a file without one), as Java's BaseMetastoreTableOperations names them.
 */
export function nextMetadataFileLocation(next: TableMetadata, previousLocation: string | undefined): string {
  const m = previousLocation === undefined ? null : /^(\d+)-/.exec(baseName(previousLocation));
  const version = m ? Number(m[1]) + 1 : 0;
  return newMetadataLocation(next, `${String(version).padStart(5, '0')}-${randomUUID()}.metadata.json`);
}
