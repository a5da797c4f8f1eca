/**
 * The compaction planner: from the current snapshot's manifests alone (DESIGN.md invariant 7),
 * which data files to rewrite, in which groups, and what it will cost. Selection follows Java's
 * BinPackRewriteFilePlanner (a file is a candidate when wrongly sized or carrying too many
 * deletes; a group is kept when it has enough files, enough content, too much content, or a
 * delete issue), with the additions DESIGN.md asks for: a partition filter, a quiet window,
 * groups capped to what one worker run can rewrite, and minor compaction's sequence intervals.
 */
import { danglingFigures, unneededDeletes } from './dangling-deletes.js';
import { createHash } from 'node:crypto';
import type { FileIO } from '../io/file-io.js';
import { deleteFileKey, deleteFileReadBytes } from '../iceberg/delete-file.js';
import type { DeleteFileIndex } from '../iceberg/delete-index.js';
import { FileContent, type DataFile } from '../iceberg/manifest.js';
import { isUnpartitioned } from '../iceberg/partition.js';
import { MetadataColumns } from '../iceberg/schema.js';
import { streamFileColumns, streamFiles, type DecodeColumns, type FileScanTask, type ScanPlan, type StreamedScan } from '../iceberg/scan-planning.js';
import type { ManifestFile } from '../iceberg/manifest-list.js';
import { specsById, type TableMetadata } from '../iceberg/table-metadata.js';
import { dataFileToJson } from '../iceberg/data-file-json.js';
import { FactsAccumulator, type KeptFiles, type PartitionFacts, type SnapshotFacts } from './file-facts.js';
import type { DataFileJson, FileGroup, GroupEstimate, GroupInput, Plan, PlanRequest, TableSummary } from './messages.js';
import { scopeDeletes } from './partition-filter.js';
import { ManifestDecodePool, planDecodeWorkerCount } from './plan-pool.js';
import { resolvePolicy, type ResolvedPolicy, type TablePolicy } from './policy.js';

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Plans a compaction of the table's current snapshot; reads the manifest list and manifests only,
 * streaming them: a data file that cannot be a candidate is counted and dropped as it is read.
 */
export async function planCompaction(
  io: FileIO,
  metadata: TableMetadata,
  request: PlanRequest,
  options: {
    readonly nowMs?: number;
    readonly concurrency?: number;
    /** Worker threads decoding data manifests (plan-pool.ts); else the table property `packice.plan.decode-workers`, else one per vCPU from 2. */
    readonly decodeWorkers?: number;
  } = {},
): Promise<Plan> {
  const resolved = resolvePolicy(metadata, request.policy);
  const filter = resolved.filter;
  const accumulator = new FactsAccumulator(metadata, resolved.policy, filter, { keep: 'candidates' });
  const concurrency = options.concurrency !== undefined ? { concurrency: options.concurrency } : {};
  let scan: StreamedScan;
  if (filter) {
    // The planner needs no column metrics (as Java's planFiles) unless --where names a column. Under
    // --where the plan covers the partitions it may match (scopeScan): the others are not counted.
    const add = (t: FileScanTask): void => {
      if (filter.partitionMayMatch(t.dataFile)) accumulator.add(t);
    };
    scan = await streamFiles(io, metadata, add, undefined, {
      columnStats: filter.columnIds.size ? filter.columnIds : false,
      mayMatchManifest: filter.mayMatchManifest,
      ...concurrency,
    });
  } else {
    let pool: ManifestDecodePool | undefined;
    try {
      const decoder = (data: readonly ManifestFile[], deletes: DeleteFileIndex): DecodeColumns => {
        const bytes = data.reduce((sum, m) => sum + Number(m.manifestLength), 0);
        pool = ManifestDecodePool.start(planDecodeWorkerCount(options.decodeWorkers, metadata, data.length, bytes), metadata, deletes.pathKeys());
        return pool.decode;
      };
      scan = await streamFileColumns(io, metadata, decoder, (c, spec, deletes) => accumulator.addColumns(c, spec, deletes), concurrency);
    } finally {
      await (pool as ManifestDecodePool | undefined)?.close();
    }
  }
  const facts = accumulator.finish();
  // The deletes applied to a file in scope are those the accumulator saw applied.
  const scoped = filter ? scopeDeletes(metadata, scan, facts.neededDeletes, filter) : scan;
  return planFromFacts(metadata, scoped, facts, request, resolved, options.nowMs ?? Date.now());
}

/**
 * The plan for an already-read scan of the current snapshot, under a policy resolved for the
 * table (its filter already parsed).
 */
export function planFromScan(metadata: TableMetadata, scan: ScanPlan, request: PlanRequest, resolved: TablePolicy, nowMs: number): Plan {
  const accumulator = new FactsAccumulator(metadata, resolved.policy, resolved.filter, { keep: 'candidates' });
  for (const t of scan.tasks) accumulator.add(t);
  return planFromFacts(metadata, scan, accumulator.finish(), request, resolved, nowMs);
}

/**
 * The plan from what an accumulator kept of the scan (FactsAccumulator, under the same policy and
 * filter). Health passes the facts it keeps for itself.
 */
export function planFromFacts(
  metadata: TableMetadata,
  scan: StreamedScan,
  snapshotFacts: SnapshotFacts,
  request: PlanRequest,
  resolved: TablePolicy,
  nowMs: number,
): Plan {
  const policy = resolved.policy;
  const kept = snapshotFacts.kept;
  const skipped: { path: string; reason: string }[] = [];
  for (const [i, why] of kept.unrewritableFiles()) skipped.push({ path: kept.path(i), reason: why });

  const quietMs = policy.quietMinutes * 60_000;
  // Minor compaction keeps equality deletes in place, but they match by spec and partition: moving
  // a file to the default spec would change which of them apply to its rows.
  const specs = specsById(metadata);
  const scopedEqualityDeletes =
    policy.mode === 'minor' &&
    scan.deleteFiles.some((d) => d.content === FileContent.EqualityDeletes && !isUnpartitioned(specs.get(d.specId) ?? { specId: d.specId, fields: [] }));

  const drafts: DraftGroup[] = [];
  for (const partition of snapshotFacts.partitions) {
    const last = partition.lastCommitMs;
    if (quietMs > 0 && last !== undefined && nowMs - last < quietMs) continue;
    let candidates = partition.indexes.filter((i) => kept.reasons[i] !== 0 && kept.unrewritable(i) === undefined);
    if (scopedEqualityDeletes) {
      for (const i of candidates.filter((c) => kept.has(c, 'spec-change'))) {
        skipped.push({
          path: kept.path(i),
          reason: 'minor compaction cannot move a file to another partition spec while partition-scoped equality deletes exist',
        });
      }
      candidates = candidates.filter((c) => !kept.has(c, 'spec-change'));
    }
    for (const run of policy.mode === 'minor' ? sequenceIntervals(kept, candidates) : [candidates]) {
      for (const bin of binPack(kept, run, policy.maxGroupBytes)) {
        if (!keepGroup(kept, bin, policy)) continue;
        drafts.push(draftGroup(kept, partition, bin, policy));
      }
    }
  }

  // Most files removed per byte read first; the rest wait for the next run. Only the chosen
  // groups are written out as messages.
  drafts.sort((a, b) => b.value - a.value || cmp(draftId(kept, a), draftId(kept, b)));
  const deleteJsons = new Map<string, DataFileJson>();
  const picked = drafts.slice(0, policy.maxGroups);
  const chosen = picked.map((d) => makeGroup(metadata, kept, d, policy, deleteJsons));

  const snapshot = scan.snapshot;
  const dangling = danglingFigures(unneededDeletes(scan.deleteRefs, snapshotFacts.neededDeletes));
  return {
    table: request.table,
    policy,
    startingSnapshotId: snapshot ? snapshot.snapshotId.toString() : null,
    startingSequenceNumber: (snapshot?.sequenceNumber ?? 0n).toString(),
    formatVersion: metadata.formatVersion,
    groups: chosen,
    summary: tableSummary(scan, snapshotFacts, chosen, rewrittenIndexes(kept, picked)),
    skipped: skipped.sort((a, b) => cmp(a.path, b.path)),
    createdAtMs: nowMs,
    ...(dangling.files > 0 ? { danglingDeletes: dangling } : {}),
  };
}

const bySeq = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Minor mode: splits candidates (indexes in `kept`) so that every equality delete of the
 * partition applies to all of a run's files or to none. E applies to file i iff seq_i < seq_E,
 * so files whose sequence numbers have the same count of delete sequence numbers at or below
 * them belong together.
 */
export function sequenceIntervals(kept: KeptFiles, files: readonly number[]): number[][] {
  const bounds = [...new Set(files.flatMap((i) => kept.equalityDeletes(i).map((d) => d.dataSequenceNumber)))].sort(bySeq);
  const runs = new Map<number, number[]>();
  for (const i of files) {
    const seq = kept.sequenceNumber(i);
    const index = bounds.filter((b) => b <= seq).length;
    const run = runs.get(index);
    if (run) run.push(i);
    else runs.set(index, [i]);
  }
  return [...runs.entries()].sort(([a], [b]) => a - b).map(([, run]) => run);
}

/** First-fit decreasing by file size into bins of at most `capacity` bytes (a larger file gets its own). */
export function binPack(kept: KeptFiles, files: readonly number[], capacity: number): number[][] {
  const sorted = [...files].sort((a, b) => kept.size(b) - kept.size(a) || kept.pathOrder(a, b));
  const bins: { used: number; files: number[] }[] = [];
  for (const i of sorted) {
    const size = kept.size(i);
    const bin = bins.find((b) => b.used + size <= capacity);
    if (bin) {
      bin.used += size;
      bin.files.push(i);
    } else {
      bins.push({ used: size, files: [i] });
    }
  }
  return bins.map((b) => b.files);
}

/**
 * Java's group filter: enoughInputFiles || enoughContent || tooMuchContent || a delete issue.
 * A lone file is thus rewritten only to apply deletes or to split it when above the max size.
 */
export function keepGroup(kept: KeptFiles, files: readonly number[], policy: ResolvedPolicy): boolean {
  let size = 0;
  for (const i of files) size += kept.size(i);
  const enoughInputFiles = files.length > 1 && files.length >= policy.minInputFiles;
  const enoughContent = files.length > 1 && size > policy.targetFileSizeBytes;
  const tooMuchContent = size > policy.maxFileSizeBytes;
  const reasons = kept.reasonsOf(files);
  const deleteIssue = reasons.includes('deletes') || reasons.includes('delete-ratio');
  return enoughInputFiles || enoughContent || tooMuchContent || deleteIssue;
}

/** Deterministic id: the same spec, partition and inputs give the same id on every re-plan. */
export function groupId(specId: number, key: string, paths: readonly string[]): string {
  const h = createHash('sha256');
  h.update(`${specId}\n${key}\n`);
  // One update: the same bytes as one per path.
  if (paths.length > 0) h.update([...paths].sort().join('\n') + '\n');
  return h.digest('hex').slice(0, 24);
}

/** A group before its message is written: what ordering the groups takes. */
interface DraftGroup {
  readonly partition: PartitionFacts;
  /** Indexes in KeptFiles, in bin-packing order (makeGroup orders the chosen groups' for the rewrite). */
  readonly files: readonly number[];
  /** groupId, made when asked (draftId): for the chosen groups and ties in value only. */
  id: string | undefined;
  readonly estimate: GroupEstimate;
  readonly value: number;
}

function draftGroup(kept: KeptFiles, partition: PartitionFacts, files: readonly number[], policy: ResolvedPolicy): DraftGroup {
  const { estimate: e, deleteFiles } = estimateGroup(kept, files, policy);
  return {
    partition,
    files,
    id: undefined,
    estimate: e,
    // Delete files count as removed work too, or a lone file with a DV (one in, one out) would never run.
    value: (e.filesIn + deleteFiles - e.filesOut) / Math.max(1, e.bytesToRead),
  };
}

function draftId(kept: KeptFiles, d: DraftGroup): string {
  return (d.id ??= groupId(d.partition.specId, d.partition.key, d.files.map((i) => kept.path(i))));
}

function makeGroup(metadata: TableMetadata, kept: KeptFiles, draft: DraftGroup, policy: ResolvedPolicy, deleteJsons: Map<string, DataFileJson>): FileGroup {
  const deleteJson = (f: DataFile): DataFileJson => {
    const key = deleteFileKey(f);
    let j = deleteJsons.get(key);
    if (!j) deleteJsons.set(key, (j = dataFileToJson(forRewrite(f), metadata)));
    return j;
  };
  const { partition } = draft;
  // Older data first, so the rewrite keeps rows roughly in commit order. Sequence numbers are read
  // once per file: each read of a BigInt64Array makes a BigInt.
  const files = draft.files.map((i) => ({ i, seq: kept.sequenceNumber(i) }));
  files.sort((a, b) => bySeq(a.seq, b.seq) || kept.pathOrder(a.i, b.i));
  let maxSeq = 0n;
  const inputs: GroupInput[] = [];
  for (const { i, seq } of files) {
    if (seq > maxSeq) maxSeq = seq;
    const deletes = kept.deletes(i);
    inputs.push({
      // Each data file is in one group only: its JSON is not kept.
      file: dataFileToJson(forRewrite(kept.store.dataFile(i)), metadata),
      dataSequenceNumber: seq.toString(),
      deletes: deletes.map((d) => ({ file: deleteJson(d.file), dataSequenceNumber: d.dataSequenceNumber.toString() })),
    });
  }
  const specId = partition.specId;
  return {
    id: draftId(kept, draft),
    specId,
    partition: partition.partition,
    partitionPath: partition.partitionPath,
    inputs,
    estimate: draft.estimate,
    reasons: kept.reasonsOf(draft.files),
    ...(policy.mode === 'minor' ? { outputSequenceNumber: maxSeq.toString() } : {}),
  };
}

/**
 * What a rewrite needs of a file (docs/file-formats.md, "Plan"): no column metrics or split
 * offsets, except a position delete file's file_path bounds, which name its data file when
 * referenced_data_file is unset.
 */
export function forRewrite(f: DataFile): DataFile {
  if (!f.columnSizes && !f.valueCounts && !f.nullValueCounts && !f.nanValueCounts && !f.lowerBounds && !f.upperBounds && !f.splitOffsets) return f;
  const positionDeletes = f.content === FileContent.PositionDeletes;
  return {
    ...f,
    columnSizes: null,
    valueCounts: null,
    nullValueCounts: null,
    nanValueCounts: null,
    lowerBounds: positionDeletes ? filePathBound(f.lowerBounds) : null,
    upperBounds: positionDeletes ? filePathBound(f.upperBounds) : null,
    splitOffsets: null,
  };
}

function filePathBound(m: ReadonlyMap<number, Uint8Array> | null | undefined): ReadonlyMap<number, Uint8Array> | null {
  const b = m?.get(MetadataColumns.FILE_PATH);
  return b === undefined ? null : new Map([[MetadataColumns.FILE_PATH, b]]);
}

/**
 * Bytes read: inputs and every distinct delete file they need. Bytes written: each input's size
 * times its live fraction. Files out: bytes written over the target, rounded up.
 */
export function estimate(kept: KeptFiles, files: readonly number[], policy: ResolvedPolicy): GroupEstimate {
  return estimateGroup(kept, files, policy).estimate;
}

/** estimate, and how many distinct delete files the group reads. */
function estimateGroup(kept: KeptFiles, files: readonly number[], policy: ResolvedPolicy): { estimate: GroupEstimate; deleteFiles: number } {
  const deletes = new Map<string, DataFile>();
  let read = 0;
  let write = 0;
  let live = 0;
  for (const i of files) {
    for (const d of kept.deletes(i)) deletes.set(deleteFileKey(d.file), d.file);
    const size = kept.size(i);
    const records = kept.records(i);
    const deleted = kept.deletedRecords[i];
    read += size;
    write += records > 0 ? (size * (records - deleted)) / records : size;
    live += records - deleted;
  }
  for (const d of deletes.values()) read += Number(deleteFileReadBytes(d));
  const bytesToWrite = Math.round(write);
  return {
    estimate: {
      bytesToRead: read,
      bytesToWrite,
      filesIn: files.length,
      filesOut: Math.ceil(bytesToWrite / policy.targetFileSizeBytes),
      liveRows: Math.round(live),
    },
    deleteFiles: deletes.size,
  };
}

/** Whether file i (an index in `kept`) is an input of one of `drafts`. */
function rewrittenIndexes(kept: KeptFiles, drafts: readonly DraftGroup[]): (i: number) => boolean {
  const marks = new Uint8Array(kept.store.length);
  for (const d of drafts) for (const i of d.files) marks[i] = 1;
  return (i) => marks[i] === 1;
}

/**
 * The table before and after the plan. A delete file leaves when every data file it applies to is
 * rewritten (equality deletes never in minor mode, which does not apply them). Bytes count data
 * files and delete files (a DV by its blob); the rewrite ratio is the data bytes the plan
 * rewrites over the data bytes of the snapshot.
 */
export function tableSummary(
  scan: StreamedScan, snapshotFacts: SnapshotFacts, groups: readonly FileGroup[], isRewritten: (i: number) => boolean,
): TableSummary {
  const kept = snapshotFacts.kept;
  const targets = new Map<string, { file: DataFile; all: boolean }>();
  for (let i = 0; i < kept.store.length; i++) {
    const deletes = kept.deletes(i);
    if (deletes.length === 0) continue;
    const done = isRewritten(i);
    for (const d of deletes) {
      const k = deleteFileKey(d.file);
      const t = targets.get(k);
      if (t) t.all &&= done;
      else targets.set(k, { file: d.file, all: done });
    }
  }
  // A delete file that also applies to a file the accumulator did not keep stays.
  const obsolete = [...targets].filter(([k, t]) => t.all && !snapshotFacts.deletesOfUnkeptFiles.has(k)).map(([, t]) => t);
  const dataBytes = snapshotFacts.dataBytes;
  const deleteBytesBefore = scan.deleteFiles.reduce((s, d) => s + Number(deleteFileReadBytes(d)), 0);
  let inputBytes = 0;
  let written = 0;
  let filesIn = 0;
  let filesOut = 0;
  for (const g of groups) {
    for (const i of g.inputs) inputBytes += Number(i.file.fileSizeInBytes);
    written += g.estimate.bytesToWrite;
    filesIn += g.estimate.filesIn;
    filesOut += g.estimate.filesOut;
  }
  const bytesBefore = dataBytes + deleteBytesBefore;
  return {
    dataFilesBefore: snapshotFacts.dataFiles,
    dataFilesAfter: snapshotFacts.dataFiles - filesIn + filesOut,
    deleteFilesBefore: scan.deleteFiles.length,
    deleteFilesAfter: scan.deleteFiles.length - obsolete.length,
    bytesBefore,
    bytesAfter: bytesBefore - inputBytes + written - obsolete.reduce((s, t) => s + Number(deleteFileReadBytes(t.file)), 0),
    rewriteRatio: dataBytes === 0 ? 0 : inputBytes / dataBytes,
  };
}
