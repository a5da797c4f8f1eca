import { commitTable, type Table } from '../catalog/table.js';
import { ValidationError } from '../errors.js';
import { normalizePath } from '../io/path.js';
import { deleteFileKey, isDeletionVector, referencedDataFile } from '../iceberg/delete-file.js';
import type { DeleteFileRef } from '../iceberg/delete-index.js';
import { FileContent, type DataFile } from '../iceberg/manifest.js';
import { isUnpartitioned, partitionKey, type PartitionSpec } from '../iceberg/partition.js';
import { planFiles, type ScanPlan } from '../iceberg/scan-planning.js';
import { ancestorsOf, specsById, type TableMetadata } from '../iceberg/table-metadata.js';
import { produceSnapshot } from '../iceberg/snapshot-producer.js';
import { Operation } from '../iceberg/snapshot.js';
import { dataFileFromJson } from '../iceberg/data-file-json.js';
import { danglingDeletes, deletesNoFileNeeds, type LiveDataFile } from './dangling-deletes.js';
import type { AbortedGroup, CompactionCommitResult, FileGroup, GroupResult, Plan } from './messages.js';
import { COMPACTION_MAPS_SUMMARY } from './compaction-map.js';
import type { RebasedDeletes, RebaseRequest } from './rebase.js';

export const COMPACTION_GROUPS_SUMMARY = 'packice.compaction-groups';

export interface CompactionCommitOptions {
  /** Commit every K groups as its own snapshot (partial progress); default all in one. */
  readonly groupsPerCommit?: number;
  /** Spread the groups over at most this many snapshots (Iceberg's partial-progress.max-commits); groupsPerCommit wins. */
  readonly maxCommits?: number;
  readonly retries?: number;
}

interface Attempt {
  readonly committed: string[];
  readonly aborted: AbortedGroup[];
  readonly removed: number;
  readonly added: number;
  /** Concurrent position delete files and deletion vectors carried over to the outputs. */
  readonly rebased: number;
}

/**
 * Swaps the rewritten files in with one `replace` snapshot (or one per K groups).
 * Optimistic: on a conflict the table is reloaded and every group re-validated. A group
 * whose input is gone is aborted; the rest commit. A position delete or deletion vector a
 * writer added to an input meanwhile is rebased: translated through the group's compaction
 * map and written for the outputs in the same snapshot, where it takes the commit's sequence
 * number, above the outputs' (a sort rewrite writes no map: its group aborts instead).
 * Rewritten files take the starting snapshot's sequence number, so equality deletes committed
 * meanwhile still apply to them. Work already committed is recognised and not committed twice.
 * The results are the truth about what each rewrite did; the commit re-reads metadata only.
 */
export async function commitCompaction(
  table: Table,
  plan: Plan,
  results: readonly GroupResult[],
  options: CompactionCommitOptions = {},
): Promise<CompactionCommitResult> {
  const groups = new Map(plan.groups.map((g) => [g.id, g]));
  const per = Math.max(1, options.groupsPerCommit ?? (options.maxCommits ? Math.ceil(results.length / options.maxCommits) : results.length));
  let current = table;
  const committed: string[] = [];
  const aborted: AbortedGroup[] = [];
  let attempts = 0;
  let removed = 0;
  let added = 0;
  let rebased = 0;
  const snapshots: string[] = [];
  for (let i = 0; i < results.length; i += per) {
    const chunk = results.slice(i, i + per);
    let last: Attempt | undefined;
    const r = await commitTable(
      current,
      async (base) => {
        const change = await buildChange(base, plan, chunk, groups);
        last = change.attempt;
        // Undefined when already committed or every group aborted: no version is written.
        return change.changes;
      },
      { ...(options.retries !== undefined ? { retries: options.retries } : {}) },
    );
    attempts += r.attempts;
    current = r.table;
    if (last) {
      committed.push(...last.committed);
      aborted.push(...last.aborted);
      if (r.committed) {
        snapshots.push(String(r.table.metadata.currentSnapshotId));
        removed += last.removed;
        added += last.added;
        rebased += last.rebased;
      }
    }
  }
  return {
    // The table's snapshot after the commit (also when the work was already committed); none without results.
    snapshotId: results.length === 0 ? null : (current.metadata.currentSnapshotId?.toString() ?? null),
    committedSnapshotIds: snapshots,
    committedGroups: committed,
    abortedGroups: aborted,
    attempts,
    filesRemoved: removed,
    filesAdded: added,
    deletesRebased: rebased,
  };
}

/** Snapshot summary key: how many dangling delete files a commit dropped on its own. */
export const DANGLING_DELETES_SUMMARY = 'packice.dangling-deletes';

/**
 * Drops the dangling delete files (see dangling-deletes.ts) in their own `replace` snapshot, for
 * when no group is planned; a compaction commit drops them with its groups. Recomputed on the
 * table each attempt commits on; deletes committed after the plan started are left to a later run.
 * No snapshot is written when none is dangling.
 */
export async function commitDanglingDeletes(
  table: Table,
  plan: Plan,
  options: Pick<CompactionCommitOptions, 'retries'> = {},
): Promise<CompactionCommitResult> {
  let removed = 0;
  const r = await commitTable(
    table,
    async (base) => {
      const scan = await planFiles(base.io, base.metadata);
      const fresh = new Set((await deletesAddedSince(base, plan, scan)).map((d) => deleteFileKey(d.file)));
      const dangling = danglingDeletes(base.metadata, scan).filter((d) => !fresh.has(deleteFileKey(d.file)));
      removed = dangling.length;
      if (dangling.length === 0) return undefined;
      return produceSnapshot(base.io, base.metadata, {
        removedFiles: dangling.map((d) => d.file),
        operation: Operation.Replace,
        summary: { [DANGLING_DELETES_SUMMARY]: String(dangling.length) },
      });
    },
    { ...(options.retries !== undefined ? { retries: options.retries } : {}) },
  );
  return {
    snapshotId: r.committed ? (r.table.metadata.currentSnapshotId?.toString() ?? null) : null,
    committedSnapshotIds: r.committed ? [String(r.table.metadata.currentSnapshotId)] : [],
    committedGroups: [],
    abortedGroups: [],
    attempts: r.attempts,
    filesRemoved: r.committed ? removed : 0,
    deletesRebased: 0,
    filesAdded: 0,
  };
}

async function buildChange(
  base: Table,
  plan: Plan,
  results: readonly GroupResult[],
  groups: ReadonlyMap<string, FileGroup>,
): Promise<{ attempt: Attempt; changes?: Awaited<ReturnType<typeof produceSnapshot>> }> {
  const m = base.metadata;
  const livePlan = await planFiles(base.io, m);
  const live = new Map(livePlan.tasks.map((t) => [normalizePath(t.dataFile.filePath), t]));
  const startingId = plan.startingSnapshotId === null ? null : BigInt(plan.startingSnapshotId);
  const startingSeq = BigInt(plan.startingSequenceNumber);
  if (startingId !== null && m.currentSnapshotId !== startingId && ![...ancestorsOf(m, m.currentSnapshotId ?? undefined)].some((s) => s.snapshotId === startingId)) {
    throw new ValidationError(
      `Cannot determine history between starting snapshot ${startingId} and the current snapshot ${m.currentSnapshotId}`,
      { path: m.location },
    );
  }
  // Deletes committed after the plan started: those not live in the starting snapshot.
  const concurrentDeletes = await deletesAddedSince(base, plan, livePlan);

  const liveDeletes = new Map(livePlan.deleteRefs.map((d) => [deleteFileKey(d.file), d.file]));
  const committed: string[] = [];
  const aborted: AbortedGroup[] = [];
  const removedFiles: DataFile[] = [];
  const addedFiles: { file: DataFile; dataSequenceNumber: bigint }[] = [];
  // The deletes the committed rewrites applied and made obsolete, as each GroupResult says.
  const appliedDeletes = new Map<string, DataFile>();
  const maps: string[] = [];
  const rebase: RebaseRequest[] = [];
  for (const result of results) {
    const group = groups.get(result.groupId);
    if (!group) throw new ValidationError(`group ${result.groupId} is not in the plan`);
    const outputs = result.outputs.map((o) => dataFileFromJson(o, m));
    // Idempotence: a group whose outputs are all live was committed by an earlier run.
    if (outputs.length > 0 && outputs.every((o) => live.has(normalizePath(o.filePath)))) {
      committed.push(group.id);
      continue;
    }
    const check = validateGroup(group, result, outputs, live, concurrentDeletes, specsById(m), plan.policy.strategy === 'sort');
    const reason = check.reason ?? validateObsoleteDeletes(group, result, m);
    if (reason !== undefined) {
      aborted.push({ groupId: group.id, reason });
      continue;
    }
    committed.push(group.id);
    const inputs = group.inputs.map((input) => live.get(normalizePath(input.file.filePath))!.dataFile);
    removedFiles.push(...inputs);
    if (check.rebase.length > 0) {
      rebase.push({ groupId: group.id, compactionMap: result.compactionMap!, inputs, outputs, deletes: check.rebase });
    }
    const seq = group.outputSequenceNumber !== undefined ? BigInt(group.outputSequenceNumber) : startingSeq;
    for (const o of outputs) addedFiles.push({ file: o, dataSequenceNumber: seq });
    for (const d of result.obsoleteDeletes) {
      // One another commit already removed is not removed again.
      const file = liveDeletes.get(deleteFileKey(d));
      if (file) appliedDeletes.set(deleteFileKey(d), file);
    }
    if (result.compactionMap) maps.push(result.compactionMap);
  }
  const attempt = { committed, aborted, removed: removedFiles.length, added: addedFiles.length, rebased: 0 };
  if (removedFiles.length === 0) return { attempt };

  // Written again on every attempt: a retry may find more concurrent deletes.
  // rebase.js reads Parquet and deletion vectors: loaded only when a writer's deletes need it, so
  // a plain commit (and the commit Lambda's cold start) never loads their wasm.
  const rebased: RebasedDeletes =
    rebase.length === 0
      ? { added: [], removed: [], files: 0, positions: 0, dropped: 0 }
      : await (await import('./rebase.js')).rebaseDeletes(base.io, m, rebase, livePlan.deleteRefs);
  const obsolete = [...appliedDeletes.values(), ...deletesDroppedWith(m, livePlan, removedFiles, addedFiles, concurrentDeletes)];
  const dropped = new Set(obsolete.map(deleteFileKey));
  for (const d of rebased.removed) if (!dropped.has(deleteFileKey(d))) obsolete.push(d);
  const changes = await produceSnapshot(base.io, m, {
    addedDataFiles: addedFiles,
    addedDeleteFiles: rebased.added,
    removedFiles: [...removedFiles, ...obsolete],
    operation: Operation.Replace,
    summary: {
      ...(maps.length > 0 ? { [COMPACTION_MAPS_SUMMARY]: maps.join(',') } : {}),
      [COMPACTION_GROUPS_SUMMARY]: String(committed.length),
    },
  });
  return { attempt: { ...attempt, removed: removedFiles.length + obsolete.length, rebased: rebased.files }, changes };
}

async function deletesAddedSince(base: Table, plan: Plan, livePlan: ScanPlan): Promise<DeleteFileRef[]> {
  const startingId = plan.startingSnapshotId === null ? undefined : BigInt(plan.startingSnapshotId);
  if (startingId === base.metadata.currentSnapshotId) return [];
  const before = new Set(startingId === undefined ? [] : (await planFiles(base.io, base.metadata, startingId)).deleteFiles.map(deleteFileKey));
  return livePlan.deleteRefs.filter((d) => !before.has(deleteFileKey(d.file)));
}

/**
 * Why a group can't commit now (undefined when it can), and the concurrent position deletes and
 * deletion vectors reaching its inputs, which the commit rebases onto its outputs.
 */
function validateGroup(
  group: FileGroup,
  result: GroupResult,
  outputs: readonly DataFile[],
  live: ReadonlyMap<string, { readonly dataFile: DataFile; readonly dataSequenceNumber: bigint }>,
  concurrent: readonly DeleteFileRef[],
  specs: ReadonlyMap<number, PartitionSpec>,
  sorted: boolean,
): { reason?: string; rebase: DataFile[] } {
  const rebase = new Map<string, DataFile>();
  for (const input of group.inputs) {
    const path = normalizePath(input.file.filePath);
    const task = live.get(path);
    if (!task) return { reason: `input ${input.file.filePath} is no longer live (removed by another commit)`, rebase: [] };
    const samePartition = (f: DataFile): boolean =>
      f.specId === task.dataFile.specId && partitionKey(f.specId, f.partition) === partitionKey(task.dataFile.specId, task.dataFile.partition);
    for (const d of concurrent) {
      const f = d.file;
      if (f.content === FileContent.EqualityDeletes) {
        // Equality deletes still reach the outputs through sequence numbers, unless the
        // outputs moved to another spec or partition than the one the delete is scoped to.
        const spec = specs.get(f.specId);
        const global = spec === undefined || isUnpartitioned(spec);
        const moved = outputs.some((o) => o.specId !== task.dataFile.specId || partitionKey(o.specId, o.partition) !== partitionKey(task.dataFile.specId, task.dataFile.partition));
        if (!global && moved && samePartition(f) && d.dataSequenceNumber > task.dataSequenceNumber) {
          return {
            reason: `an equality delete scoped to the old partition of ${input.file.filePath} was committed concurrently (${f.filePath}); it would not reach the rewritten files`,
            rebase: [],
          };
        }
        continue;
      }
      const target = referencedDataFile(f);
      const reaches = target !== undefined ? normalizePath(target) === path : samePartition(f);
      if (reaches && d.dataSequenceNumber >= task.dataSequenceNumber) {
        if (result.compactionMap === undefined) {
          // The operator reads this in the summary: say what happened, why, and what to do.
          const why = sorted
            ? 'a sort rewrite reorders rows and writes no compaction map, so the delete cannot be rebased onto its outputs'
            : 'the rewrite wrote no compaction map to rebase it through';
          return {
            reason:
              `a ${isDeletionVector(f) ? 'deletion vector' : 'position delete'} for input ${input.file.filePath} was committed concurrently (${f.filePath}); ` +
              `${why}: this group's rewrite is discarded and the delete kept; compact again to rewrite these files`,
            rebase: [],
          };
        }
        rebase.set(deleteFileKey(f), f);
      }
    }
  }
  return { rebase: [...rebase.values()] };
}

/**
 * Why a result's obsolete deletes cannot be dropped, or undefined when they can: each must be a
 * deletion vector or position delete file scoped to one of the group's inputs, which the commit
 * removes. Anything else could still reach a live file, and dropping it would bring rows back.
 */
function validateObsoleteDeletes(group: FileGroup, result: GroupResult, m: TableMetadata): string | undefined {
  const inputs = new Set(group.inputs.map((i) => normalizePath(i.file.filePath)));
  for (const d of result.obsoleteDeletes) {
    const target = referencedDataFile(dataFileFromJson(d, m));
    if (target === undefined || !inputs.has(normalizePath(target))) {
      return `the rewrite reports delete file ${d.filePath} obsolete, but it is not scoped to one of the group's inputs`;
    }
  }
  return undefined;
}

/**
 * Delete files that were live when the plan started and that no data file live after this commit
 * needs, other than those scoped to a rewritten input (the GroupResults name those): partition-
 * scoped position deletes and equality deletes every target of which is rewritten, and deletes
 * whose data file was already gone (Java: RewriteFileGroup dangling DVs, dropDeleteFilesOlderThan).
 */
function deletesDroppedWith(
  m: TableMetadata,
  livePlan: ScanPlan,
  removed: readonly DataFile[],
  added: readonly { file: DataFile; dataSequenceNumber: bigint }[],
  concurrent: readonly DeleteFileRef[],
): DataFile[] {
  const gone = new Set(removed.map((f) => normalizePath(f.filePath)));
  const live: LiveDataFile[] = [
    ...livePlan.tasks
      .filter((t) => !gone.has(normalizePath(t.dataFile.filePath)))
      .map((t) => ({ file: t.dataFile, dataSequenceNumber: t.dataSequenceNumber, positional: true })),
    // New files have new paths: no existing position delete or DV can name them.
    ...added.map((a) => ({ ...a, positional: false })),
  ];
  const fresh = new Set(concurrent.map((d) => deleteFileKey(d.file)));
  const reportedByRewrite = (f: DataFile): boolean => {
    const target = referencedDataFile(f);
    return target !== undefined && gone.has(normalizePath(target));
  };
  return deletesNoFileNeeds(specsById(m), livePlan.deleteRefs, live)
    .map((d) => d.file)
    .filter((f) => !fresh.has(deleteFileKey(f)) && !reportedByRewrite(f));
}
