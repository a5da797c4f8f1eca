/**
 * Orphan removal (Java's DeleteOrphanFilesSparkAction): list the table location, subtract every
 * file any metadata still names, and delete what is left only when it is older than a delay that
 * covers commits still in flight. Listed files and references are matched by fileKey (s3/s3a/s3n
 * one scheme, bucket case-insensitive); a listed file whose path some reference names under
 * another scheme or bucket is a prefix mismatch, which stops the run unless told otherwise.
 */
import { loadTable, type Table } from '../catalog/table.js';
import { LEGACY_VERSION_HINT_FILE, VERSION_HINT_FILE, metadataFolder } from '../catalog/object-store-catalog.js';
import { InvalidArgumentError, NotFoundError, ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { joinPath } from '../io/path.js';
import { parseTableMetadata, type TableMetadata } from '../iceberg/table-metadata.js';
import { deleteFiles, totalsOf, type DeletionTotals, type PlannedFile } from './file-deletion.js';
import { fileKey, fileUri, isInsideLocation } from './file-uri.js';
import { formatDurationText } from './duration.js';
import { pendingExpiryFolder } from './pending-expiry.js';
import { FileSet, reachableFromSnapshots, statisticsFiles } from './reachable-files.js';
import { checkGcEnabled } from './retention-policy.js';

export const DEFAULT_ORPHAN_OLDER_THAN_MS = 3 * 86_400_000;
/** Below this delay a commit still being written could lose its files; refused without force. */
export const MIN_ORPHAN_OLDER_THAN_MS = 3_600_000;
/** The demo's marker (lib/cli/demo-folder.ts) sits in the table location but is no table file. */
export const DEMO_MARKER_FILE = 'packice-demo.json';

export type PrefixMismatchMode = 'error' | 'ignore' | 'delete';
export type OrphanPhase = 'read-metadata' | 'list' | 'delete';

export interface OrphanOptions {
  /** Only files last modified longer ago than this are deleted. @default 3 days */
  readonly olderThanMs?: number;
  /** Allows olderThanMs under one hour. */
  readonly force?: boolean;
  /** @default 'error' */
  readonly prefixMismatch?: PrefixMismatchMode;
  readonly nowMs?: number;
  readonly dryRun?: boolean;
  readonly deleteConcurrency?: number;
  readonly deleteBatchSize?: number;
  readonly onProgress?: (phase: OrphanPhase, done: number, total: number | undefined) => void;
}

export interface PrefixMismatch {
  readonly path: string;
  /** How the metadata names that path. */
  readonly referencedAs: readonly string[];
}

export interface OrphanResult {
  readonly table: string;
  readonly dryRun: boolean;
  readonly olderThanMs: number;
  readonly listed: number;
  /** Listed files some metadata names. */
  readonly referenced: number;
  /** Unreferenced but younger than the delay: perhaps a commit in flight. */
  readonly tooNew: number;
  /** Names starting with `.` or `_` (not a partition folder), as Java skips them. */
  readonly hidden: number;
  readonly prefixMismatches: readonly PrefixMismatch[];
  readonly files: readonly PlannedFile[];
  readonly totals: DeletionTotals;
  readonly deleted: number;
  /** The catalog removes unreferenced files itself (S3 Tables): nothing was listed or deleted here. */
  readonly filesLeftToCatalog: boolean;
}

/** Every file the table's metadata names: snapshots of the current and every logged metadata file, and the catalog's own files. */
export async function referencedFiles(table: Table, onManifest?: (n: number, t: number) => void): Promise<FileSet> {
  const { io, location, metadata } = table;
  const valid = new FileSet();
  const folder = metadataFolder(location);
  valid.add({ path: table.metadataLocation, kind: 'metadata' });
  valid.add({ path: joinPath(folder, VERSION_HINT_FILE), kind: 'version-hint' });
  valid.add({ path: joinPath(folder, LEGACY_VERSION_HINT_FILE), kind: 'version-hint' });
  valid.add({ path: joinPath(location, DEMO_MARKER_FILE), kind: 'metadata' });
  const current = await reachableFromSnapshots(io, metadata.snapshots, { entries: 'all', missing: 'fail', ...(onManifest ? { onManifest } : {}) }, valid);
  for (const st of statisticsFiles(metadata, 'all')) valid.add(st);
  // Readers may time-travel by metadata file; what those name stays while the log names them.
  for (const entry of metadata.metadataLog) {
    valid.add({ path: entry.metadataFile, kind: 'metadata' });
    const logged = await readLogged(io, entry.metadataFile);
    if (logged === undefined) continue;
    await reachableFromSnapshots(io, logged.snapshots, { entries: 'all', missing: 'skip', skipManifests: current.manifests }, valid);
    for (const st of statisticsFiles(logged, 'all')) valid.add(st);
  }
  return valid;
}

async function readLogged(io: FileIO, path: string): Promise<TableMetadata | undefined> {
  try {
    return parseTableMetadata(new TextDecoder().decode(await io.read(path)), path);
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
}

function hiddenNameIn(relative: string, partitionNames: ReadonlySet<string>): boolean {
  return relative.split('/').some((seg) => {
    if (!seg.startsWith('.') && !seg.startsWith('_')) return false;
    const eq = seg.indexOf('=');
    return !(eq > 0 && partitionNames.has(seg.slice(0, eq)));
  });
}

/**
 * A byte copy of a table still names the original's files: listed at the copy, every one of its
 * own files would look unreferenced. Java lists `table.location()`; we refuse the mismatch.
 */
function checkOpenedAtOwnLocation(table: Table): void {
  const folder = (l: string): string => fileKey(l.replace(/\/+$/, ''));
  const declared = table.metadata.location;
  if (folder(declared) === folder(table.location)) return;
  throw new ValidationError(
    `orphans: the table's metadata says it lives at ${declared}, but it was opened at ${table.location} (a copy?); ` +
      'its files are named under the other location, so every file here would look orphaned. Nothing was deleted. ' +
      'Run orphans at the location the metadata names, or make a copy whose metadata names its own location with `packice relocate`',
    { path: table.metadataLocation },
  );
}

export async function deleteOrphanFiles(tableOrLocation: Table | string, options: OrphanOptions = {}): Promise<OrphanResult> {
  const table = typeof tableOrLocation === 'string' ? await loadTable(tableOrLocation) : tableOrLocation;
  const { io, location } = table;
  const olderThanMs = options.olderThanMs ?? DEFAULT_ORPHAN_OLDER_THAN_MS;
  if (olderThanMs < MIN_ORPHAN_OLDER_THAN_MS && options.force !== true) {
    throw new InvalidArgumentError(
      `orphans: --older-than ${formatDurationText(olderThanMs)} is under 1h, so files of a commit still being written ` +
        'could be deleted; use --force if no writer can be running',
      { path: location },
    );
  }
  checkGcEnabled(table.metadata, 'delete orphan files');
  checkOpenedAtOwnLocation(table);
  const dryRun = options.dryRun === true;
  if (table.catalog.removesUnreferencedFiles === true) {
    const none = { listed: 0, referenced: 0, tooNew: 0, hidden: 0, prefixMismatches: [], files: [], totals: totalsOf([]), deleted: 0 };
    return { table: location, dryRun, olderThanMs, ...none, filesLeftToCatalog: true };
  }
  const nowMs = options.nowMs ?? Date.now();
  const cutoff = nowMs - olderThanMs;
  const mode = options.prefixMismatch ?? 'error';

  const valid = await referencedFiles(table, (n, t) => options.onProgress?.('read-metadata', n, t));
  const byPath = new Map<string, string[]>();
  for (const f of valid.values()) {
    const p = fileUri(f.path).path;
    const list = byPath.get(p);
    if (list) list.push(f.path);
    else byPath.set(p, [f.path]);
  }
  const partitionNames = new Set(table.metadata.partitionSpecs.flatMap((s) => s.fields.map((f) => f.name)));
  const pendingFolder = fileKey(pendingExpiryFolder(location));
  const root = location.replace(/\/+$/, '');

  let listed = 0;
  let referenced = 0;
  let tooNew = 0;
  let hidden = 0;
  const mismatches: PrefixMismatch[] = [];
  const orphans: PlannedFile[] = [];
  for await (const f of io.list(location)) {
    listed++;
    if (listed % 1000 === 0) options.onProgress?.('list', listed, undefined);
    if (!isInsideLocation(location, f.path)) continue;
    const key = fileKey(f.path);
    if (valid.has(f.path) || key.startsWith(`${pendingFolder}/`)) {
      referenced++;
      continue;
    }
    const relative = f.path.startsWith(`${root}/`) ? f.path.slice(root.length + 1) : fileUri(f.path).path;
    if (hiddenNameIn(relative, partitionNames)) {
      hidden++;
      continue;
    }
    const others = byPath.get(fileUri(f.path).path);
    if (others !== undefined) {
      if (mode === 'ignore') continue;
      if (mode === 'error') {
        mismatches.push({ path: f.path, referencedAs: others });
        continue;
      }
    }
    if (f.lastModifiedMs >= cutoff) {
      tooNew++;
      continue;
    }
    orphans.push({ path: f.path, kind: 'orphan', size: f.size });
  }
  options.onProgress?.('list', listed, listed);
  if (mismatches.length > 0) {
    const shown = mismatches.slice(0, 5).map((m) => `${m.path} (metadata names ${m.referencedAs.join(', ')})`).join('; ');
    throw new ValidationError(
      `Unable to determine whether certain files are orphan: ${mismatches.length} listed files are named by the metadata ` +
        `under another scheme or bucket: ${shown}. Nothing was deleted. Rerun with --prefix-mismatch ignore to keep them, ` +
        'or --prefix-mismatch delete to treat them as orphans',
      { path: location },
    );
  }

  let deleted = 0;
  if (!dryRun) {
    deleted = await deleteFiles(io, location, orphans, {
      ...(options.deleteBatchSize !== undefined ? { batchSize: options.deleteBatchSize } : {}),
      ...(options.deleteConcurrency !== undefined ? { concurrency: options.deleteConcurrency } : {}),
      onProgress: (n, t) => options.onProgress?.('delete', n, t),
    });
  }
  return {
    table: location,
    dryRun,
    olderThanMs,
    listed,
    referenced,
    tooNew,
    hidden,
    prefixMismatches: mismatches,
    files: orphans,
    totals: totalsOf(orphans),
    deleted,
    filesLeftToCatalog: false,
  };
}
