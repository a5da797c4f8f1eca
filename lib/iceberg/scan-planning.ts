import { InvalidFileError, NotFoundError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { forEachLimit } from '../io/map-limit.js';
import { DeleteFileIndex, type ApplicableDeletes, type DeleteFileRef } from './delete-index.js';
import { FileContent, readManifestBatches, type DataFile, type ManifestEntry } from './manifest.js';
import { readManifestList, type ManifestFile } from './manifest-list.js';
import type { ManifestColumns } from './manifest-columns.js';
import { partitionKey, type PartitionSpec } from './partition.js';
import type { Row } from './values.js';
import type { Snapshot } from './snapshot.js';
import { currentSchema, currentSnapshot, snapshotById, specsById, type TableMetadata } from './table-metadata.js';

/** One live data file of a snapshot with the deletes that apply to it. */
export interface FileScanTask {
  readonly dataFile: DataFile;
  readonly spec: PartitionSpec;
  readonly dataSequenceNumber: bigint;
  /** The snapshot that added the file. */
  readonly snapshotId: bigint | null;
  readonly deletes: ApplicableDeletes;
  /** partitionKey(dataFile.specId, dataFile.partition), when the scan computed it. */
  readonly partitionKey?: string;
}

export interface ScanPlan {
  readonly snapshot: Snapshot | undefined;
  readonly tasks: readonly FileScanTask[];
  /** Live delete files of the snapshot, applied or not. */
  readonly deleteFiles: readonly DataFile[];
  /** The same, with their data sequence numbers. */
  readonly deleteRefs: readonly DeleteFileRef[];
  readonly manifests: readonly ManifestFile[];
}

export function resolveSnapshot(metadata: TableMetadata, snapshotId?: bigint): Snapshot | undefined {
  if (snapshotId === undefined) return currentSnapshot(metadata);
  const s = snapshotById(metadata, snapshotId);
  if (!s) throw new NotFoundError(`snapshot ${snapshotId} is not in the table metadata`, { path: metadata.location });
  return s;
}

export interface PlanFilesOptions {
  /**
   * False: data files come without column metrics (see ReadManifestFileOptions.dataFileStats);
   * a set of field ids: with the counts and bounds of those columns only (a filter's), so a
   * wide table's plan does not hold every column's. @default true
   */
  readonly columnStats?: boolean | ReadonlySet<number>;
  /** Manifests read at once. @default 8 */
  readonly concurrency?: number;
  /** False: the manifest is not read (manifest-evaluator.ts); `manifests` still lists it. */
  readonly mayMatchManifest?: (manifest: ManifestFile) => boolean;
}

/** A scan whose data files went to a callback instead of into `tasks`. */
export type StreamedScan = Omit<ScanPlan, 'tasks'>;

/** Reads a snapshot's manifests (metadata only) and pairs each live data file with its deletes. */
export async function planFiles(io: FileIO, metadata: TableMetadata, snapshotId?: bigint, options: PlanFilesOptions = {}): Promise<ScanPlan> {
  const tasks: FileScanTask[] = [];
  const scan = await streamFiles(io, metadata, (t) => tasks.push(t), snapshotId, options);
  return { ...scan, tasks };
}

/**
 * planFiles without holding the tasks: each live data file goes to `onTask` as its manifest is
 * read (in no set order; manifests are read `concurrency` at a time), so a caller that keeps
 * only what it needs plans a table of any size in memory that grows with what it keeps. Delete
 * manifests are read first: every data file arrives with all its deletes.
 */
export async function streamFiles(
  io: FileIO,
  metadata: TableMetadata,
  onTask: (task: FileScanTask) => void,
  snapshotId?: bigint,
  options: PlanFilesOptions = {},
): Promise<StreamedScan> {
  const snapshot = resolveSnapshot(metadata, snapshotId);
  if (!snapshot?.manifestList) return { snapshot, deleteFiles: [], deleteRefs: [], manifests: [] };
  const { specs, schema, manifests, read, index, deleteFiles, deleteRefs, limit } = await readDeletes(io, metadata, snapshot.manifestList, options);
  const stats = { dataFileStats: options.columnStats !== false };
  const only = typeof options.columnStats === 'object' ? options.columnStats : undefined;
  await forEachLimit(read(0), limit, async (m) => {
    // Entries of one partition often share their tuple (manifest/reader.ts): its key is made once.
    const keys = new Map<Row, string>();
    for await (const batch of readManifestBatches(io, m, specs, schema, stats)) {
      for (const e of batch) {
        if (e.status === 2 || e.dataFile.content !== FileContent.Data) continue;
        const f = e.dataFile;
        const seq = e.sequenceNumber ?? 0n;
        let key = keys.get(f.partition);
        if (key === undefined) keys.set(f.partition, (key = partitionKey(f.specId, f.partition)));
        onTask({
          dataFile: only ? keepStats(f, only) : f,
          spec: specs.get(f.specId)!,
          dataSequenceNumber: seq,
          snapshotId: e.snapshotId,
          deletes: index.forDataFile(f, seq, key),
          partitionKey: key,
        });
      }
    }
  });
  return { snapshot, deleteFiles, deleteRefs, manifests };
}

/** What a scan has read before its data manifests: the manifest list and every live delete file, indexed. */
async function readDeletes(io: FileIO, metadata: TableMetadata, manifestList: string, options: PlanFilesOptions) {
  const specs = specsById(metadata);
  const schema = currentSchema(metadata);
  const manifests = await readManifestList(io, manifestList, metadata.formatVersion);
  // The one place the manifest list is narrowed before any manifest is opened.
  const read = (content: number): ManifestFile[] =>
    manifests.filter((m) => m.content === content && (options.mayMatchManifest === undefined || options.mayMatchManifest(m)));
  const index = new DeleteFileIndex(specs);
  const deleteFiles: DataFile[] = [];
  const deleteRefs: DeleteFileRef[] = [];
  const limit = options.concurrency ?? 8;
  // Read at once, indexed in manifest-list order: the order deletes apply in (and the sums
  // estimated from them) does not depend on which manifest arrives first.
  const deleteManifests = read(1);
  const deleteEntries: ManifestEntry[][] = deleteManifests.map(() => []);
  await forEachLimit(
    deleteManifests.map((m, i) => ({ m, i })),
    limit,
    async ({ m, i }) => {
      for await (const batch of readManifestBatches(io, m, specs, schema)) {
        for (const e of batch) if (e.status !== 2) deleteEntries[i].push(e);
      }
    },
  );
  for (const e of deleteEntries.flat()) {
    index.add(e);
    deleteFiles.push(e.dataFile);
    deleteRefs.push({ file: e.dataFile, dataSequenceNumber: e.sequenceNumber ?? 0n });
  }
  return { specs, schema, manifests, read, index, deleteFiles, deleteRefs, limit };
}

/** Reads a data manifest's bytes (already read) into columns: on this thread or another (lib/compaction/plan-pool.ts). */
export type DecodeColumns = (manifest: ManifestFile, bytes: Uint8Array) => Promise<ManifestColumns>;

/**
 * streamFiles without column metrics, each data manifest's live files handed on as columns
 * (manifest-columns.ts) with the delete index to pair them with: this thread reads the bytes,
 * the `decoder` made for the data manifests to read inflates and decodes them, on worker threads
 * when it is a pool's.
 */
export async function streamFileColumns(
  io: FileIO,
  metadata: TableMetadata,
  decoder: (dataManifests: readonly ManifestFile[], deletes: DeleteFileIndex) => DecodeColumns,
  onColumns: (columns: ManifestColumns, spec: PartitionSpec, deletes: DeleteFileIndex) => void,
  options: Omit<PlanFilesOptions, 'columnStats'> = {},
): Promise<StreamedScan> {
  const snapshot = resolveSnapshot(metadata);
  if (!snapshot?.manifestList) return { snapshot, deleteFiles: [], deleteRefs: [], manifests: [] };
  const { specs, manifests, read, index, deleteFiles, deleteRefs, limit } = await readDeletes(io, metadata, snapshot.manifestList, options);
  const data = read(0);
  const decode = decoder(data, index);
  await forEachLimit(data, limit, async (m) => {
    const spec = specs.get(m.partitionSpecId);
    if (!spec) throw new InvalidFileError(`manifest uses partition spec ${m.partitionSpecId}, which the table does not have`, { path: m.manifestPath });
    onColumns(await decode(m, await readWhole(io, m)), spec, index);
  });
  return { snapshot, deleteFiles, deleteRefs, manifests };
}

/** A manifest's bytes, in range reads of 8 MiB when longer (as readManifestBatches streams it). */
async function readWhole(io: FileIO, m: ManifestFile): Promise<Uint8Array> {
  const length = Number(m.manifestLength);
  if (length <= READ_CHUNK) return io.read(m.manifestPath);
  const out = new Uint8Array(length);
  for (let start = 0; start < length; start += READ_CHUNK) {
    out.set(await io.readRange(m.manifestPath, start, Math.min(length, start + READ_CHUNK)), start);
  }
  return out;
}

const READ_CHUNK = 8 * 1024 * 1024;

/** The data file with the column metrics of `ids` only (column sizes dropped). */
function keepStats(f: DataFile, ids: ReadonlySet<number>): DataFile {
  const pick = <V>(m: ReadonlyMap<number, V> | null | undefined): ReadonlyMap<number, V> | null => {
    if (!m) return null;
    const out = new Map<number, V>();
    for (const id of ids) {
      const v = m.get(id);
      if (v !== undefined) out.set(id, v);
    }
    return out;
  };
  return {
    ...f,
    columnSizes: null,
    valueCounts: pick(f.valueCounts),
    nullValueCounts: pick(f.nullValueCounts),
    nanValueCounts: pick(f.nanValueCounts),
    lowerBounds: pick(f.lowerBounds),
    upperBounds: pick(f.upperBounds),
  };
}

