/**
 * The writer's side of compaction maps (DESIGN.md "Compaction maps"): position deletes prepared
 * against snapshot S are committed against the current files, as a row delta of their own. Each
 * attempt walks the snapshots committed since S, translates the positions through every
 * compaction map they list, oldest first (only the deleted positions move from map to map; no
 * intermediate layout is built), drops the positions whose rows a compaction already removed,
 * and writes what is left as position delete files (v2) or one deletion vector per data file,
 * merged with the one it has (v3). Metadata, maps and delete files are read; data files never.
 * A delete aimed at a file that a commit other than a mapped compaction removed (an overwrite)
 * cannot be translated: DataFileRemovedError names it.
 */
import { commitTable, type Table, type TableCommitOptions } from '../catalog/table.js';
import { DataFileRemovedError, mayHaveCommitted, ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { normalizePath } from '../io/path.js';
import { ensureRoaring, PositionDeleteIndex } from '../iceberg/deletion-vector.js';
import type { DataFile } from '../iceberg/manifest.js';
import { planFiles, type FileScanTask } from '../iceberg/scan-planning.js';
import { produceSnapshot } from '../iceberg/snapshot-producer.js';
import { Operation, type Snapshot } from '../iceberg/snapshot.js';
import { ancestorsOf, currentSchema, type TableMetadata } from '../iceberg/table-metadata.js';
import type { Row } from '../iceberg/values.js';
import { DeleteFileCache, DeleteFilter } from '../table/delete-filter.js';
import { writePositionDeletes } from '../table/delete-writer.js';
import { readTask, tableNameMapping } from '../table/scan.js';
import { COMPACTION_MAPS_SUMMARY, readCompactionMap, type CompactionMap } from './compaction-map.js';
import { translateThroughMaps } from './remap.js';

/** Position deletes a writer prepared: row positions in data files of one snapshot. */
export interface PreparedPositionDeletes {
  /** The snapshot whose data files the positions index. */
  readonly snapshotId: bigint;
  /** Deleted row positions (0-based, any order) per data file path of that snapshot. */
  readonly positions: Iterable<readonly [string, ArrayLike<number>]>;
}

export interface RowDeltaResult {
  /** The table after the commit (the last base seen when there was nothing to commit). */
  readonly table: Table;
  readonly committed: boolean;
  readonly attempts: number;
  /** The snapshot the deletes were committed in, or null. */
  readonly snapshotId: bigint | null;
  /** Rows this commit deleted (positions not deleted already). */
  readonly rowsDeleted: number;
  /** Delete files written: position delete files (v2) or deletion vectors (v3). */
  readonly filesWritten: number;
  /** Positions translated through at least one compaction map. */
  readonly rebased: number;
  /** Positions whose rows a compaction had already removed. */
  readonly dropped: number;
  /** Positions the current files already had deleted. */
  readonly alreadyDeleted: number;
  /** Compaction maps between the writer's snapshot and the one committed on. */
  readonly maps: number;
}

/** The snapshots committed after `since` up to the current one, oldest first. */
function snapshotsSince(m: TableMetadata, since: bigint): Snapshot[] {
  const out: Snapshot[] = [];
  for (const s of ancestorsOf(m, m.currentSnapshotId ?? undefined)) {
    if (s.snapshotId === since) return out.reverse();
    out.push(s);
  }
  throw new ValidationError(
    `the deletes were prepared in snapshot ${since}, which is not an ancestor of the current snapshot ${m.currentSnapshotId} (expired, or on another branch)`,
    { path: m.location },
  );
}

/** Locations of the compaction maps the snapshots committed, in commit order. */
export function compactionMapsOf(snapshots: readonly Snapshot[]): string[] {
  return snapshots.flatMap((s) => (s.summary[COMPACTION_MAPS_SUMMARY] ?? '').split(',').filter((p) => p !== ''));
}

interface Attempt {
  readonly stats: Omit<RowDeltaResult, 'table' | 'committed' | 'attempts' | 'snapshotId'>;
  readonly written: string[];
}

/**
 * Commits `prepared` on the table's current snapshot through `commitTable`: translated, re-
 * validated and rewritten on every attempt, so a compaction committed during a retry is followed
 * too. Nothing is committed when every position was dropped or already deleted.
 */
export async function commitPositionDeletes(
  table: Table,
  prepared: PreparedPositionDeletes,
  options: TableCommitOptions = {},
): Promise<RowDeltaResult> {
  const maps = new Map<string, Promise<CompactionMap>>();
  const readMap = (io: FileIO, path: string): Promise<CompactionMap> => {
    let map = maps.get(path);
    if (!map) maps.set(path, (map = readCompactionMap(io, path)));
    return map;
  };
  const input = [...prepared.positions].filter(([, p]) => p.length > 0);
  const attempts: Attempt[] = [];
  try {
    const r = await commitTable(
      table,
      async (base) => {
        const m = base.metadata;
        const mapPaths = compactionMapsOf(snapshotsSince(m, prepared.snapshotId));
        const chain = await Promise.all(mapPaths.map((p) => readMap(base.io, p)));
        const live = new Map((await planFiles(base.io, m)).tasks.map((t) => [normalizePath(t.dataFile.filePath), t]));
        const perTarget = new Map<string, { task: FileScanTask; positions: Float64Array[] }>();
        let rebased = 0;
        let dropped = 0;
        for (const [file, positions] of input) {
          const t = translateThroughMaps(chain, file, positions);
          dropped += t.dropped;
          for (const [target, moved] of t.byFile) {
            const key = normalizePath(target);
            const task = live.get(key);
            if (!task) {
              const via = key === normalizePath(file) ? '' : ` (its rows now in ${target})`;
              throw new DataFileRemovedError(
                file,
                `cannot commit deletes prepared in snapshot ${prepared.snapshotId} for ${file}${via}: the file is no longer live in snapshot ` +
                  `${m.currentSnapshotId}, and no compaction map committed since covers it (an overwrite or a rewrite without a map removed it)`,
                { path: file },
              );
            }
            if (key !== normalizePath(file)) rebased += moved.length;
            let slot = perTarget.get(key);
            if (!slot) perTarget.set(key, (slot = { task, positions: [] }));
            slot.positions.push(moved);
          }
        }
        await ensureRoaring();
        const cache = new DeleteFileCache();
        const targets: { dataFile: DataFile; positions: PositionDeleteIndex }[] = [];
        const removed: DataFile[] = [];
        let rowsDeleted = 0;
        let alreadyDeleted = 0;
        for (const { task, positions } of perTarget.values()) {
          // What the file has deleted already, by position (its DV or position delete files).
          const { deletionVector, positionDeletes } = task.deletes;
          const existing = (
            await DeleteFilter.load(base.io, task.dataFile.filePath, { ...(deletionVector ? { deletionVector } : {}), positionDeletes, equalityDeletes: [] }, m.schemas, cache)
          ).positions;
          const fresh = new PositionDeleteIndex();
          for (const list of positions) for (const p of list) if (!existing?.has(p)) fresh.add(p);
          const added = fresh.cardinality();
          alreadyDeleted += positions.reduce((n, l) => n + l.length, 0) - added;
          if (added === 0) continue;
          rowsDeleted += added;
          if (m.formatVersion >= 3 && deletionVector) {
            // One DV per data file: the new one holds the old one's positions and replaces it.
            fresh.merge(existing!);
            removed.push(deletionVector.file);
          }
          targets.push({ dataFile: task.dataFile, positions: fresh });
        }
        const stats = { rowsDeleted, filesWritten: 0, rebased, dropped, alreadyDeleted, maps: chain.length };
        if (targets.length === 0) {
          attempts.push({ stats, written: [] });
          return undefined;
        }
        const added = await writePositionDeletes(base.io, m, targets);
        const attempt = { stats: { ...stats, filesWritten: added.length }, written: added.map((f) => f.filePath) };
        attempts.push(attempt);
        const produced = await produceSnapshot(base.io, m, { addedDeleteFiles: added, removedFiles: removed, operation: Operation.Delete });
        attempt.written.push(...produced.writtenFiles);
        return produced;
      },
      options,
    );
    // Attempts before the last wrote files nobody references.
    await table.io.deleteMany(attempts.slice(0, -1).flatMap((a) => a.written)).catch(() => undefined);
    const last = attempts.at(-1)!;
    return {
      table: r.table,
      committed: r.committed,
      attempts: r.attempts,
      snapshotId: r.committed ? r.table.metadata.currentSnapshotId : null,
      ...last.stats,
    };
  } catch (e) {
    // A commit that may have applied references them.
    if (!mayHaveCommitted(e)) await table.io.deleteMany(attempts.flatMap((a) => a.written)).catch(() => undefined);
    throw e;
  }
}

export interface DeleteWhereOptions extends TableCommitOptions {
  /** Find the matching rows in this snapshot's files (default: the current snapshot), then rebase. */
  readonly snapshotId?: bigint;
}

/**
 * Deletes the rows matching `predicate`, by position: the live rows of the snapshot are read
 * (data files, once, to find the positions), and the positions are committed on the current
 * snapshot through `commitPositionDeletes`, so compactions since that snapshot are followed.
 */
export async function deleteWhere(
  table: Table,
  predicate: (row: Row) => boolean,
  options: DeleteWhereOptions = {},
): Promise<RowDeltaResult & { readonly matched: number }> {
  const m = table.metadata;
  if (m.formatVersion < 2) throw new ValidationError('row-level deletes need format version 2 or later', { path: m.location });
  const snapshotId = options.snapshotId ?? m.currentSnapshotId;
  const none = { table, committed: false, attempts: 0, snapshotId: null, rowsDeleted: 0, filesWritten: 0, rebased: 0, dropped: 0, alreadyDeleted: 0, maps: 0, matched: 0 };
  if (snapshotId === null) return none;
  const plan = await planFiles(table.io, m, snapshotId);
  const schema = currentSchema(m);
  const mapping = tableNameMapping(m);
  const cache = new DeleteFileCache();
  const positions = new Map<string, number[]>();
  let matched = 0;
  for (const task of plan.tasks) {
    const hits: number[] = [];
    for await (const rows of readTask(table.io, m, task, schema, { ...(mapping ? { mapping } : {}), positions: true, deleteCache: cache })) {
      for (const r of rows) {
        const pos = r._pos as bigint;
        delete r._pos;
        if (predicate(r)) hits.push(Number(pos));
      }
    }
    if (hits.length > 0) {
      positions.set(task.dataFile.filePath, hits);
      matched += hits.length;
    }
  }
  if (matched === 0) return none;
  const { retries, onRetry } = options;
  const result = await commitPositionDeletes(table, { snapshotId, positions }, { ...(retries !== undefined ? { retries } : {}), ...(onRetry ? { onRetry } : {}) });
  return { ...result, matched };
}
