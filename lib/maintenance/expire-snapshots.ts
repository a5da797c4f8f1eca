/**
 * Snapshot expiry (Java's RemoveSnapshots + ReachableFileCleanup): decide what the table keeps,
 * commit the removal through the catalog (re-decided on every retry), then delete exactly the
 * files that only removed snapshots reached. The retained side counts ADDED and EXISTING entries
 * of every retained snapshot's manifests — so a Puffin file holding one live deletion vector
 * stays — and fails rather than guesses when one of them cannot be read.
 */
import { commitTable, loadTable, refreshTable, type Table } from '../catalog/table.js';
import { catalogMetadataVersionOf } from '../catalog/catalog-metadata-files.js';
import { metadataFolder, metadataVersionOf } from '../catalog/object-store-catalog.js';
import { mayHaveCommitted } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { baseName } from '../io/path.js';
import type { Snapshot } from '../iceberg/snapshot.js';
import { property, type TableMetadata } from '../iceberg/table-metadata.js';
import { applyUpdates, type TableUpdate } from '../iceberg/table-update.js';
import { deleteFiles, partitionByLocation, totalsOf, withSizes, type DeletionTotals, type PlannedFile } from './file-deletion.js';
import { fileKey } from './file-uri.js';
import { readPendingExpiries, writePendingExpiry } from './pending-expiry.js';
import { FileSet, reachableFromSnapshots, statisticsFiles, type ReachableFile } from './reachable-files.js';
import { checkGcEnabled, decideRetention, type RetentionDecision, type RetentionOptions } from './retention-policy.js';

export const DELETE_AFTER_COMMIT = 'write.metadata.delete-after-commit.enabled';

export type ExpirePhase = 'commit' | 'read-retained' | 'read-expired' | 'delete';

export interface ExpireOptions extends Omit<RetentionOptions, 'nowMs'> {
  readonly nowMs?: number;
  /** Decide and list, but commit and delete nothing. */
  readonly dryRun?: boolean;
  readonly deleteConcurrency?: number;
  readonly deleteBatchSize?: number;
  readonly commitRetries?: number;
  readonly onProgress?: (phase: ExpirePhase, done: number, total: number) => void;
}

export interface ExpireResult {
  readonly table: string;
  readonly dryRun: boolean;
  /** The metadata file the expiry committed (or, dry, the one it read). */
  readonly metadataLocation: string;
  readonly expiredSnapshots: readonly string[];
  readonly removedRefs: readonly string[];
  readonly retainedSnapshots: number;
  readonly commitAttempts: number;
  /** Records of earlier interrupted expiries that this run finished. */
  readonly resumedRecords: number;
  /** What is (or, dry, would be) deleted, with sizes. */
  readonly files: readonly PlannedFile[];
  readonly totals: DeletionTotals;
  readonly deleted: number;
  /** Paths only expired snapshots reached that lie outside the table location: never deleted. */
  readonly outsideLocation: readonly string[];
  /** The catalog removes unreferenced files itself (S3 Tables): the expiry committed, nothing was listed or deleted here. */
  readonly filesLeftToCatalog: boolean;
}

function expiryUpdates(d: RetentionDecision): TableUpdate[] {
  return [
    ...d.removedRefs.map((refName): TableUpdate => ({ action: 'remove-snapshot-ref', refName })),
    ...(d.expired.length > 0 ? [{ action: 'remove-snapshots', snapshotIds: d.expired } as const] : []),
  ];
}

export async function expireSnapshots(tableOrLocation: Table | string, options: ExpireOptions = {}): Promise<ExpireResult> {
  let table = typeof tableOrLocation === 'string' ? await loadTable(tableOrLocation) : tableOrLocation;
  const location = table.location;
  const io = table.io;
  const nowMs = options.nowMs ?? Date.now();
  const dryRun = options.dryRun === true;
  checkGcEnabled(table.metadata, 'expire snapshots');
  const retention: RetentionOptions = { ...options, nowMs };

  const leftToCatalog = table.catalog.removesUnreferencedFiles === true;
  // Records of expiries that committed but did not finish deleting.
  const pending = leftToCatalog ? [] : await readPendingExpiries(io, location);

  let expiredSnapshots: Snapshot[] = [];
  let expiredStats: ReachableFile[] = [];
  let decision = decideRetention(table.metadata, retention);
  let attempts = 0;
  let record: string | undefined;
  let after: TableMetadata;
  if (dryRun) {
    after = applyUpdates(table.metadata, expiryUpdates(decision), { nowMs });
    expiredSnapshots = table.metadata.snapshots.filter((s) => decision.expired.includes(s.snapshotId));
    expiredStats = statisticsFiles(table.metadata, new Set(decision.expired));
  } else if (decision.expired.length > 0 || decision.removedRefs.length > 0) {
    const written: string[] = [];
    try {
      const committed = await commitTable(
        table,
        async (base) => {
          attempts++;
          checkGcEnabled(base.metadata, 'expire snapshots');
          decision = decideRetention(base.metadata, retention);
          const gone = new Set(decision.expired);
          expiredSnapshots = base.metadata.snapshots.filter((s) => gone.has(s.snapshotId));
          expiredStats = statisticsFiles(base.metadata, gone);
          // Written before the commit: a crash after it still leaves the list of what to delete.
          if (!leftToCatalog) written.push(await writePendingExpiry(io, location, expiredSnapshots, expiredStats, nowMs));
          options.onProgress?.('commit', attempts, attempts);
          return { updates: expiryUpdates(decision), requirements: [{ type: 'assert-table-uuid', uuid: base.metadata.tableUuid }] };
        },
        options.commitRetries !== undefined ? { retries: options.commitRetries } : {},
      );
      record = written.pop();
      // Records of attempts that lost named snapshots the table may still keep; they go now.
      await io.deleteMany(written);
      table = committed.table;
    } catch (e) {
      // A commit that may have applied needs its record, to finish the deletes later.
      if (!mayHaveCommitted(e)) await io.deleteMany(written).catch(() => undefined);
      throw e;
    }
    // Whatever committed since is retained too.
    table = await refreshTable(table);
    after = table.metadata;
  } else {
    after = table.metadata;
  }

  const stillThere = new Set(after.snapshots.map((s) => s.snapshotId));
  const candidates = new Map<bigint, Snapshot>();
  for (const s of [...pending.flatMap((p) => p.snapshots), ...expiredSnapshots]) {
    if (!stillThere.has(s.snapshotId)) candidates.set(s.snapshotId, s);
  }
  const result = {
    table: location,
    dryRun,
    metadataLocation: table.metadataLocation,
    expiredSnapshots: [...candidates.keys()].map(String),
    removedRefs: decision.removedRefs,
    retainedSnapshots: after.snapshots.length,
    commitAttempts: attempts,
    resumedRecords: pending.length,
    filesLeftToCatalog: leftToCatalog,
  };
  if (leftToCatalog) return { ...result, files: [], totals: totalsOf([]), deleted: 0, outsideLocation: [] };

  const retained = await reachableFromSnapshots(io, after.snapshots, {
    entries: 'live',
    missing: 'fail',
    onManifest: (n, t) => options.onProgress?.('read-retained', n, t),
  });
  for (const st of statisticsFiles(after, 'all')) retained.files.add(st);
  const gone = new FileSet();
  await reachableFromSnapshots(
    io,
    candidates.values(),
    {
      entries: 'all',
      missing: 'skip',
      skipManifests: retained.manifests,
      onManifest: (n, t) => options.onProgress?.('read-expired', n, t),
    },
    gone,
  );
  for (const st of [...pending.flatMap((p) => p.statistics), ...expiredStats]) gone.add(st);
  for (const f of await oldMetadataFiles(io, location, table.metadataLocation, after)) gone.add(f);

  const unreached = [...gone.values()].filter((f) => !retained.files.has(f.path));
  const { inside, outside } = partitionByLocation(location, unreached);
  const files = await withSizes(io, location, inside);
  let deleted = 0;
  if (!dryRun) {
    deleted = await deleteFiles(io, location, files, {
      ...(options.deleteBatchSize !== undefined ? { batchSize: options.deleteBatchSize } : {}),
      ...(options.deleteConcurrency !== undefined ? { concurrency: options.deleteConcurrency } : {}),
      onProgress: (n, t) => options.onProgress?.('delete', n, t),
    });
    // The records go last: until here a rerun must be able to finish the job.
    await io.deleteMany([...pending.map((p) => p.path), ...(record !== undefined ? [record] : [])]);
  }
  return { ...result, files, totals: totalsOf(files), deleted, outsideLocation: outside.map((f) => f.path) };
}

/**
 * With `write.metadata.delete-after-commit.enabled`, metadata files older than the metadata log
 * keeps (`write.metadata.previous-versions-max`) go, as Java's CatalogUtil.deleteRemovedMetadataFiles
 * does after each commit. Only files named as the current one is (`v<N>.metadata.json` in a folder
 * table, `NNNNN-<uuid>.metadata.json` behind a catalog) below the oldest kept version are touched:
 * a folder another catalog also writes to keeps that catalog's files.
 */
async function oldMetadataFiles(io: FileIO, location: string, current: string, m: TableMetadata): Promise<ReachableFile[]> {
  if (property(m, DELETE_AFTER_COMMIT, 'false').toLowerCase() !== 'true') return [];
  const versionOf = metadataVersionOf(baseName(current)) !== undefined ? metadataVersionOf : catalogMetadataVersionOf;
  if (versionOf(baseName(current)) === undefined) return [];
  const keptVersions = m.metadataLog.map((e) => versionOf(baseName(e.metadataFile))).filter((v): v is number => v !== undefined);
  if (keptVersions.length === 0) return [];
  const oldest = Math.min(...keptVersions);
  const kept = new Set([current, ...m.metadataLog.map((e) => e.metadataFile)].map(fileKey));
  const folder = metadataFolder(location);
  const out: ReachableFile[] = [];
  for await (const f of io.list(folder)) {
    if (f.path.length - baseName(f.path).length - 1 !== folder.length) continue;
    const v = versionOf(baseName(f.path));
    if (v !== undefined && v < oldest && !kept.has(fileKey(f.path))) out.push({ path: f.path, kind: 'metadata', size: f.size });
  }
  return out;
}
