/**
 * Rewrites one file group of a plan (DESIGN.md "Compaction, major and minor", ICEBERG-RULES D):
 * reads every input batch by batch with its deletes applied and resolved to the current schema,
 * writes the live rows under the table's default spec (partition values recomputed per row, one
 * rolling writer per output partition; see outputSpecId for the one exception), records where every row went (bin-pack: the compaction
 * map) and proves, by re-reading the outputs, that the live rows are the same before anything
 * is returned. Whatever it wrote is deleted again when anything fails.
 *
 * Memory: one input batch, the open row group of each output partition, the inputs' delete
 * index and the map's runs (sort: plus one sort run, see external-sort.ts).
 */
import { randomUUID } from 'node:crypto';
import type * as arrow from 'apache-arrow';
import { IllegalStateError, IoError, ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { ReadAheadFileIO, type ReadAheadOptions } from '../io/read-ahead.js';
import { normalizePath } from '../io/path.js';
import { deleteFileKey, isDeletionVector, referencedDataFile } from '../iceberg/delete-file.js';
import type { DeleteFileRef } from '../iceberg/delete-index.js';
import { partitionFolder, tableLocationProvider, type LocationProvider } from '../iceberg/locations.js';
import { FileContent, type DataFile } from '../iceberg/manifest.js';
import { metricsConfigFromProperties, type MetricsConfig } from '../iceberg/metrics-config.js';
import { isUnpartitioned, partitionKey, type PartitionSpec } from '../iceberg/partition.js';
import type { FileScanTask } from '../iceberg/scan-planning.js';
import { indexById, type Schema } from '../iceberg/schema.js';
import { parseSortOrder, UNSORTED_ORDER, type SortOrder } from '../iceberg/sort-order.js';
import { currentSchema, defaultSortOrder, specById, type TableMetadata } from '../iceberg/table-metadata.js';
import type { StructType } from '../iceberg/types.js';
import type { Row } from '../iceberg/values.js';
import { RollingParquetWriter } from '../parquet/writer.js';
import { selectRuns, type Runs } from '../parquet/batches.js';
import { rowsFromBatch } from '../parquet/values.js';
import { readBatches } from '../table/data-reader.js';
import { parquetWriteOptions, partitioner, toDataFile } from '../table/data-writer.js';
import { readTaskBatches, tableNameMapping, type LiveBatch } from '../table/scan.js';
import type { NameMapping } from '../iceberg/name-mapping.js';
import { DecodePool, decodeWorkerCount, largestRowGroupBytes, type DecodedBatch, type DecodeHost } from './decode-pool.js';
import { mergeWorkerCount } from './merge-pool.js';
import { DeleteFileCache } from '../table/delete-filter.js';
import { proofBatchHasher, proofHasher, proofSchema, RowSetChecksum } from './checksum.js';
import { CompactionMapBuilder, compactionMapPath, safeName, writeCompactionMap } from './compaction-map.js';
import { dataFileFromJson, dataFileToJson } from '../iceberg/data-file-json.js';
import { ExternalSorter } from './external-sort.js';
import { ChunkCopy } from './chunk-copy.js';
import type { ChunkFault, CopyReads } from '../parquet/chunk-copy.js';
import { DECODE_REASON_MAX_CHARS, DECODE_REASONS_SHOWN, type DataFileJson, type DecodeReason, type FileGroup, type GroupInput, type GroupResult, type Plan } from './messages.js';

export interface RewriteFaults {
  /** Silently drop one live row before writing, so that the proof must fail (the decode path's rows). */
  readonly dropRow?: boolean;
  /** Throw once this many output files of the decode path are finished. */
  readonly failAfterOutputs?: number;
  /** Damage the first column chunk copied or merged (chunk-copy.ts) after it was hashed, so that the proof must fail. */
  readonly corruptCopiedChunk?: ChunkFault;
  /** On a group thread (lib/pipeline/rewrite-worker.ts), end the thread with this exit code instead of rewriting. */
  readonly exitThread?: number;
}

export interface RewriteOptions {
  /** Fault injection for tests of the whole flow. */
  readonly faults?: RewriteFaults;
  /** Rows per batch read from an input (default: the Parquet reader's, 65,536). */
  readonly batchSize?: number;
  /** Sort strategy: estimated bytes of rows sorted in memory before a run spills to disk (default 64 MiB). */
  readonly sortRunBytes?: number;
  /**
   * The decoded inputs fetched ahead of the reader (read-ahead.ts; bytes default to the table property
   * `packice.rewrite.read-ahead-bytes`, chunk-copy.ts readAhead); false: none.
   */
  readonly readAhead?: ReadAheadOptions | false;
  /**
   * Worker threads decoding inputs (decode-pool.ts) and building merged row groups (merge-pool.ts);
   * 0 does both on this thread. Default: the table property `packice.rewrite.decode-workers`, else
   * one fewer than the vCPUs, at most 5 (none under 8 MiB to decode or to merge), and no more than
   * fit in the group's memory budget (decode-pool.ts workersInBudget, merge-pool.ts mergeWorkerCount).
   */
  readonly decodeWorkers?: number;
  /** At most this many decode workers when neither the option nor the table property says (groups run side by side). */
  readonly maxDefaultDecodeWorkers?: number;
  /** The vCPUs and memory the default count is sized to (default: this process's, decode-pool.ts decodeHost). */
  readonly decodeHost?: DecodeHost;
  /** At most this many decode or merge workers, whatever the option or the table property asks (a batch's group: its share of the vCPUs). */
  readonly workerCap?: number;
  /** How the column-chunk copy, the merge and their proof read (tests): over the table property's window bytes. */
  readonly copyReads?: CopyReads;
}

export const DEFAULT_SORT_RUN_BYTES = 64 * 1024 * 1024;
const DEFAULT_BATCH_SIZE = 65_536;

/**
 * Rewrites `group` of `plan` and returns its result: output data files (not committed), the
 * delete files it made obsolete, the compaction map (bin-pack), and the proof. Throws a
 * ValidationError (after deleting its outputs) when the outputs' live rows differ from the inputs'.
 */
export async function rewriteGroup(
  io: FileIO,
  metadata: TableMetadata,
  plan: Plan,
  group: FileGroup,
  options: RewriteOptions = {},
): Promise<GroupResult> {
  const started = performance.now();
  const mode = plan.policy.mode ?? 'major';
  const strategy = plan.policy.strategy ?? 'binpack';
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const schema = currentSchema(metadata);
  const lineage = metadata.formatVersion >= 3;
  const writeSchema = proofSchema(schema, lineage);
  const order =
    strategy !== 'sort' ? UNSORTED_ORDER
    : plan.policy.sortOrder !== undefined ? parseSortOrder(plan.policy.sortOrder, schema, metadata.sortOrders)
    : defaultSortOrder(metadata);
  if (strategy === 'sort' && order.fields.length === 0) {
    throw new ValidationError(`group ${group.id}: cannot sort: the table has no sort order (its default order is unsorted)`, {
      path: metadata.location,
    });
  }
  const tasks = group.inputs.map((input) => scanTaskOf(metadata, input, mode));
  const mapping = tableNameMapping(metadata);
  const faults = options.faults ?? {};

  const specId = outputSpecId(metadata, group, mode);
  // Outputs kept in the group's own (non-default) spec keep its partition as it is.
  const fixed = specId !== metadata.defaultSpecId && tasks.length > 0 ? tasks[0].dataFile.partition : undefined;
  const out = new GroupWriter(io, metadata, plan, group, specById(metadata, specId), fixed, writeSchema, order, strategy === 'binpack', faults);
  const sorter =
    strategy === 'sort'
      ? new ExternalSorter({ order, schema: writeSchema, runBytes: options.sortRunBytes ?? DEFAULT_SORT_RUN_BYTES, batchSize })
      : undefined;
  let mapPath: string | undefined;
  let copy: ChunkCopy | undefined;
  let inputs: ReadAheadFileIO | undefined;
  let pool: DecodePool | undefined;
  try {
    const hashBatch = proofBatchHasher(schema, lineage);
    const checkIn = new RowSetChecksum(proofHasher(schema, lineage));
    // A partition's delete files are parsed once for the whole group.
    const deleteCache = new DeleteFileCache();
    let dropPending = faults.dropRow === true;
    // Inputs that need no decoding have their row groups copied as they are.
    const cap = options.workerCap ?? Infinity;
    const mergeWorkers = (bytes: number): number => Math.min(cap, mergeWorkerCount(options.decodeWorkers, metadata, bytes, options.maxDefaultDecodeWorkers, options.decodeHost));
    copy = await ChunkCopy.plan(io, metadata, plan, group, tasks, {
      specId, writeSchema, deleteCache, mergeWorkers, ...(faults.corruptCopiedChunk ? { fault: faults.corruptCopiedChunk } : {}), ...(options.copyReads ? { reads: options.copyReads } : {}),
    });
    const copied = await copy.write(out.map, checkIn);
    let firstReads: Map<string, { start: number; end: number }> | undefined;
    if (options.readAhead !== false) {
      // The copy is done with its share of the budget: the decoder's read-ahead has all of it.
      const ahead = copy.readAhead(options.readAhead?.bytes);
      inputs = new ReadAheadFileIO(io, ahead.ranges, { ...options.readAhead, bytes: ahead.bytes });
      firstReads = new Map(ahead.ranges.map((r) => [r.path, { start: r.start, end: r.end }]));
    }
    const decodeBytes = copy.decode.reduce((n, t) => n + Number(t.dataFile.fileSizeInBytes), 0);
    const load = { inputs: copy.decode.length, bytes: decodeBytes, largestRowGroupBytes: largestRowGroupBytes(copy.decode.map((t) => t.dataFile)) };
    const workers = Math.min(cap, decodeWorkerCount(options.decodeWorkers, metadata, load, options.maxDefaultDecodeWorkers, options.decodeHost));
    if (workers > 0) pool = DecodePool.start(workers, inputs ?? io, metadata, { mode, lineage, batchSize, ...(firstReads ? { firstReads } : {}) });
    for await (const { task, live } of decodedBatches(pool, inputs ?? io, metadata, group, tasks, copy.decode, { mapping, deleteCache, lineage, batchSize })) {
      // A worker hashed the batch already; its sum adds to the same total (the proof's sum is order-free).
      if ('hash' in live) checkIn.addDigest(live.hash[0], live.hash[1], live.hash[2]);
      else hashBatch(live.batch, checkIn);
      let { batch, runs } = live;
      if (dropPending) {
        batch = batch.slice(1, batch.numRows);
        runs = dropFirstRow(runs);
        dropPending = false;
      }
      if (batch.numRows === 0) continue;
      // The sort strategy orders rows as objects (external-sort.ts); bin-pack stays columnar.
      if (sorter) await sorter.add(rowsFromBatch(batch, writeSchema));
      else await out.writeBatch(batch, task, runs);
    }
    // The workers' memory goes before the sort's merge and the proof.
    await pool?.close();
    inputs?.close();
    if (sorter) for await (const rows of sorter.sorted()) await out.writeRows(rows);
    const decoded = await out.close();

    // The proof: re-read what was written, the next row groups fetched while one is decoded, within
    // the same budget as the copy's (its reads and the decoder's read-ahead are over by now).
    const checkOut = new RowSetChecksum(proofHasher(schema, lineage));
    const window = copy.readWindow;
    for (const f of decoded) {
      // Transient: each batch is hashed before the next is read into the same buffer.
      for await (const { batch } of readBatches(io, f, writeSchema, { batchSize, window, transient: true })) hashBatch(batch, checkOut);
    }
    await copy.prove(checkOut);
    const outputs = [...decoded, ...copied];
    const checksums = {
      rowsIn: String(checkIn.count),
      rowsOut: String(checkOut.count),
      hashIn: checkIn.hex,
      hashOut: checkOut.hex,
    };
    if (checkIn.count !== checkOut.count || checkIn.hex !== checkOut.hex) {
      throw new ValidationError(
        `group ${group.id}: the rewrite changed the live rows: inputs ${checksums.rowsIn} rows (hash ${checksums.hashIn}), ` +
          `outputs ${checksums.rowsOut} rows (hash ${checksums.hashOut}); outputs deleted`,
        { path: metadata.location },
      );
    }
    let mapBytes = 0;
    if (out.map) {
      if (out.map.rowCount !== checkOut.count) {
        throw new ValidationError(
          `group ${group.id}: the compaction map covers ${out.map.rowCount} rows but ${checkOut.count} were written`,
          { path: metadata.location },
        );
      }
      mapPath = compactionMapPath(metadata, plan.startingSnapshotId, group.id);
      mapBytes = await writeCompactionMap(io, mapPath, out.map.build());
    }
    return {
      groupId: group.id,
      outputs: outputs.map((f) => dataFileToJson(f, metadata)),
      obsoleteDeletes: deletesScopedToInputs(metadata, group),
      ...(mapPath !== undefined ? { compactionMap: mapPath } : {}),
      checksums,
      bytesRead: bytesRead(tasks),
      bytesWritten: outputs.reduce((n, f) => n + Number(f.fileSizeInBytes), 0) + mapBytes,
      durationMs: Math.round(performance.now() - started),
      inputPaths: {
        copied: copy.copiedInputs, merged: copy.mergedInputs, decoded: copy.decode.length,
        ...(copy.decode.length > 0 ? { decodedBecause: copy.decodedBecause.slice(0, DECODE_REASONS_SHOWN).map(shortReason) } : {}),
      },
    };
  } catch (e) {
    await out.abort();
    await copy?.abort();
    if (mapPath !== undefined) await io.deleteMany([mapPath]).catch(() => undefined);
    throw e;
  } finally {
    await pool?.close();
    await copy?.close();
    inputs?.close();
    await sorter?.cleanup();
  }
}

/**
 * The live batches of the inputs to decode, in group order: from the pool's workers when there
 * is one (each batch with its proof hash), else decoded here.
 */
async function* decodedBatches(
  pool: DecodePool | undefined,
  io: FileIO,
  metadata: TableMetadata,
  group: FileGroup,
  tasks: readonly FileScanTask[],
  decode: readonly FileScanTask[],
  options: { mapping: NameMapping | undefined; deleteCache: DeleteFileCache; lineage: boolean; batchSize: number },
): AsyncIterable<{ task: FileScanTask; live: LiveBatch | DecodedBatch }> {
  if (pool) {
    const inputOf = new Map(tasks.map((t, i) => [t, group.inputs[i]]));
    const inputs = decode.map((t) => inputOf.get(t)!);
    for await (const { index, live } of pool.batches(inputs)) yield { task: decode[index], live };
    return;
  }
  const schema = currentSchema(metadata);
  for (const task of decode) {
    for await (const live of readTaskBatches(io, metadata, task, schema, {
      ...(options.mapping ? { mapping: options.mapping } : {}),
      deleteCache: options.deleteCache,
      rowLineage: options.lineage,
      batchSize: options.batchSize,
    })) {
      yield { task, live };
    }
  }
}

/**
 * The spec outputs are written in: the table's default spec, except in minor mode when an input
 * has equality deletes scoped to a partition of another spec. Those deletes are not applied, and
 * they match only files of their own spec and partition: rewritten into the default spec, their
 * rows would come back. Then the outputs keep the group's own spec (and so its partition).
 */
export function outputSpecId(metadata: TableMetadata, group: FileGroup, mode: 'major' | 'minor'): number {
  if (mode !== 'minor' || group.specId === metadata.defaultSpecId) return metadata.defaultSpecId;
  const pending = group.inputs.some((i) =>
    i.deletes.some((d) => d.file.content === FileContent.EqualityDeletes && !isUnpartitioned(specById(metadata, d.file.specId))),
  );
  return pending ? group.specId : metadata.defaultSpecId;
}

/** The scan task of an input: its file and the deletes to apply (minor mode: no equality deletes). */
export function scanTaskOf(metadata: TableMetadata, input: GroupInput, mode: 'major' | 'minor' = 'major'): FileScanTask {
  const dataFile = dataFileFromJson(input.file, metadata);
  const refs: DeleteFileRef[] = input.deletes.map((d) => ({
    file: dataFileFromJson(d.file, metadata),
    dataSequenceNumber: BigInt(d.dataSequenceNumber),
  }));
  const dvs = refs.filter((r) => isDeletionVector(r.file));
  if (dvs.length > 1) {
    throw new ValidationError(
      `the plan gives data file ${dataFile.filePath} ${dvs.length} deletion vectors; at most one may apply`,
      { path: dataFile.filePath },
    );
  }
  const positionDeletes = refs.filter((r) => r.file.content === FileContent.PositionDeletes && !isDeletionVector(r.file));
  const equalityDeletes = mode === 'minor' ? [] : refs.filter((r) => r.file.content === FileContent.EqualityDeletes);
  return {
    dataFile,
    spec: specById(metadata, dataFile.specId),
    dataSequenceNumber: BigInt(input.dataSequenceNumber),
    snapshotId: null,
    // A deletion vector replaces the file's position delete files (spec "Scan Planning").
    deletes: dvs.length === 1 ? { deletionVector: dvs[0], positionDeletes: [], equalityDeletes } : { positionDeletes, equalityDeletes },
  };
}

/**
 * The delete files this rewrite makes obsolete, which its result reports: deletion vectors and
 * position delete files scoped to one input (referenced_data_file or equal file_path bounds).
 * Partition-scoped position deletes and equality deletes may still reach other files: the commit
 * decides those from metadata.
 */
export function deletesScopedToInputs(metadata: TableMetadata, group: FileGroup): DataFileJson[] {
  const inputs = new Set(group.inputs.map((i) => normalizePath(i.file.filePath)));
  const out = new Map<string, DataFileJson>();
  for (const input of group.inputs) {
    for (const { file } of input.deletes) {
      const target = referencedDataFile(dataFileFromJson(file, metadata));
      if (target !== undefined && inputs.has(normalizePath(target))) out.set(deleteFileKey(file), file);
    }
  }
  return [...out.values()];
}

/** Input bytes plus the delete bytes read for them: each delete file once (the group shares them), each deletion vector once. */
function bytesRead(tasks: readonly FileScanTask[]): number {
  let n = 0;
  const seen = new Set<string>();
  for (const t of tasks) {
    n += Number(t.dataFile.fileSizeInBytes);
    const dv = t.deletes.deletionVector?.file;
    if (dv) n += Number(dv.contentSizeInBytes ?? dv.fileSizeInBytes);
    for (const d of [...t.deletes.positionDeletes, ...t.deletes.equalityDeletes]) {
      if (seen.has(d.file.filePath)) continue;
      seen.add(d.file.filePath);
      n += Number(d.file.fileSizeInBytes);
    }
  }
  return n;
}

/** Runs without their first row. */
function dropFirstRow(runs: Runs): Runs {
  if (runs.count === 0) return runs;
  if (runs.lengths[0] > 1) {
    const starts = runs.starts.slice();
    const lengths = runs.lengths.slice();
    starts[0]++;
    lengths[0]--;
    return { starts, lengths, count: runs.count, rows: runs.rows - 1 };
  }
  return { starts: runs.starts.subarray(1), lengths: runs.lengths.subarray(1), count: runs.count - 1, rows: runs.rows - 1 };
}

/** Runs of consecutive values of `at(item)` over `items`, as batch row runs or file position runs. */
function runsOf(items: readonly number[], at: (item: number) => number): Runs {
  const starts: number[] = [];
  const lengths: number[] = [];
  for (const item of items) {
    const v = at(item);
    const last = starts.length - 1;
    if (last >= 0 && starts[last] + lengths[last] === v) lengths[last]++;
    else {
      starts.push(v);
      lengths.push(1);
    }
  }
  return { starts: Int32Array.from(starts), lengths: Int32Array.from(lengths), count: starts.length, rows: items.length };
}

interface PartitionOutput {
  readonly partition: Row;
  readonly writer: RollingParquetWriter;
  /** Path of each file by its writer index. */
  readonly paths: string[];
}

/**
 * The outputs of a group: a rolling writer per partition of the output spec, and (bin-pack)
 * the map, fed from where each write landed.
 */
class GroupWriter {
  readonly map: CompactionMapBuilder | undefined;
  private readonly partitionOf: (row: Row) => Row;
  private readonly outputs = new Map<string, PartitionOutput>();
  private readonly metricsConfig: MetricsConfig;
  private readonly locations: LocationProvider;
  private readonly uuid = randomUUID();
  private readonly prefix: string;
  /** The top-level columns holding the spec's source fields (partitioning rows of another spec). */
  private readonly sourceColumns: StructType;
  /** Every path handed to a writer, for cleanup. */
  private readonly started: string[] = [];
  private fileCount = 0;

  constructor(
    private readonly io: FileIO,
    private readonly metadata: TableMetadata,
    private readonly plan: Plan,
    group: FileGroup,
    private readonly spec: PartitionSpec,
    private readonly fixedPartition: Row | undefined,
    private readonly schema: StructType,
    private readonly order: SortOrder,
    withMap: boolean,
    private readonly faults: RewriteFaults,
  ) {
    const table: Schema = currentSchema(metadata);
    this.partitionOf = fixedPartition ? () => fixedPartition : partitioner(this.spec, table);
    const sourceIds = new Set(this.spec.fields.map((f) => f.sourceId));
    const index = indexById(table);
    const tops = new Set([...sourceIds].map((id) => index.get(id)?.path.split('.')[0]));
    this.sourceColumns = { type: 'struct', fields: schema.fields.filter((f) => tops.has(f.name)) };
    this.map = withMap ? new CompactionMapBuilder(group.id, group.inputs.map((i) => i.file.filePath)) : undefined;
    this.prefix = safeName(group.id);
    const sortIds = defaultSortOrder(metadata).fields.map((f) => f.sourceId);
    this.metricsConfig = metricsConfigFromProperties(metadata.properties, table, sortIds);
    this.locations = tableLocationProvider(metadata);
  }

  private output(key: string, partition: Row): PartitionOutput {
    let o = this.outputs.get(key);
    if (o) return o;
    const folder = partitionFolder(this.spec, partition, currentSchema(this.metadata));
    const paths: string[] = [];
    const writer = new RollingParquetWriter(this.io, this.schema, {
      targetFileSizeBytes: this.plan.policy.targetFileSizeBytes,
      ...parquetWriteOptions(this.metadata),
      metricsConfig: this.metricsConfig,
      nextPath: (index) => {
        const name = `${this.prefix}-${String(this.fileCount++).padStart(5, '0')}-${this.uuid}.parquet`;
        const path = this.locations.newDataLocation(name, folder);
        paths[index] = path;
        this.started.push(path);
        return path;
      },
    });
    o = { partition, writer, paths };
    this.outputs.set(key, o);
    return o;
  }

  /** Writes rows in order (the sort strategy: no map). */
  async writeRows(rows: readonly Row[]): Promise<void> {
    const byPartition = new Map<string, { partition: Row; rows: Row[] }>();
    for (const row of rows) {
      const partition = this.partitionOf(row);
      const key = this.spec.fields.length === 0 ? '' : partitionKey(this.spec.specId, partition);
      let g = byPartition.get(key);
      if (!g) byPartition.set(key, (g = { partition, rows: [] }));
      g.rows.push(row);
    }
    for (const [key, g] of byPartition) {
      await this.output(key, g.partition).writer.writeRows(g.rows);
      this.checkFault();
    }
  }

  /**
   * Writes the live rows of one input batch, in order; `runs` (file positions of the batch's
   * rows) feed the map. A file's rows share its partition, so the partition is computed per
   * row only when the input was written under another spec.
   */
  async writeBatch(batch: arrow.RecordBatch, task: FileScanTask, runs: Runs): Promise<void> {
    const source = task.dataFile.filePath;
    if (this.fixedPartition || this.spec.fields.length === 0 || task.dataFile.specId === this.spec.specId) {
      const partition = this.fixedPartition ?? (this.spec.fields.length === 0 ? {} : task.dataFile.partition);
      const key = this.spec.fields.length === 0 ? '' : partitionKey(this.spec.specId, partition);
      await this.writeTo(this.output(key, partition), batch, source, runs);
      return;
    }
    // Rows of an older spec: partition each row from its source columns, then write each partition's rows.
    const rows = rowsFromBatch(batch, this.sourceColumns);
    const positions = new Float64Array(batch.numRows);
    for (let k = 0, i = 0; k < runs.count; k++) for (let j = 0; j < runs.lengths[k]; j++) positions[i++] = runs.starts[k] + j;
    const byPartition = new Map<string, { partition: Row; rows: number[] }>();
    rows.forEach((row, i) => {
      const partition = this.partitionOf(row);
      const key = partitionKey(this.spec.specId, partition);
      let g = byPartition.get(key);
      if (!g) byPartition.set(key, (g = { partition, rows: [] }));
      g.rows.push(i);
    });
    for (const [key, g] of byPartition) {
      const picked = runsOf(g.rows, (i) => i);
      const sources = runsOf(g.rows, (i) => positions[i]);
      await this.writeTo(this.output(key, g.partition), picked.count === 1 && picked.rows === batch.numRows ? batch : selectRuns(batch, picked), source, sources);
    }
  }

  private async writeTo(o: PartitionOutput, batch: arrow.RecordBatch, sourceFile: string, runs: Runs): Promise<void> {
    const finishedBefore = o.writer.files.length;
    const startPos = o.writer.currentFileRecordCount;
    await o.writer.write(batch);
    if (this.map) this.record(o, batch.numRows, sourceFile, runs, finishedBefore, startPos);
    this.checkFault();
  }

  /**
   * Where the rows of one write went: the rest of the file open before it (from `startPos`), any
   * files finished during it, then the file left open. Rolls happen only between rows.
   */
  private record(o: PartitionOutput, rows: number, sourceFile: string, runs: Runs, finishedBefore: number, startPos: number): void {
    const segments: { path: string; start: number; count: number }[] = [];
    const files = o.writer.files;
    let pos = startPos;
    for (let k = finishedBefore; k < files.length; k++) {
      segments.push({ path: files[k].path, start: pos, count: files[k].recordCount - pos });
      pos = 0;
    }
    const open = o.writer.currentFileIndex;
    if (open !== undefined) {
      const count = o.writer.currentFileRecordCount - pos;
      if (count > 0) segments.push({ path: o.paths[open], start: pos, count });
    }
    const total = segments.reduce((n, s) => n + s.count, 0);
    if (total !== rows || runs.rows !== rows) {
      throw new IllegalStateError(`compaction map bookkeeping: wrote ${rows} rows (${runs.rows} in source runs) but the writer accounts for ${total}`);
    }
    const map = this.map!;
    let k = 0;
    let off = 0;
    for (const s of segments) {
      let left = s.count;
      let target = s.start;
      while (left > 0) {
        const take = Math.min(left, runs.lengths[k] - off);
        map.addRun(sourceFile, runs.starts[k] + off, s.path, target, take);
        target += take;
        left -= take;
        off += take;
        if (off === runs.lengths[k]) {
          k++;
          off = 0;
        }
      }
    }
  }

  private finishedFiles(): number {
    let n = 0;
    for (const o of this.outputs.values()) n += o.writer.files.length;
    return n;
  }

  private checkFault(): void {
    const limit = this.faults.failAfterOutputs;
    if (limit !== undefined && this.finishedFiles() >= limit) {
      throw new IoError(`injected fault: failing after ${this.finishedFiles()} output file(s)`);
    }
  }

  /** Finishes every file; returns their data file entries. */
  async close(): Promise<DataFile[]> {
    const out: DataFile[] = [];
    for (const o of this.outputs.values()) {
      for (const f of await o.writer.close()) {
        out.push(toDataFile(f, this.spec, o.partition, FileContent.Data, { sortOrderId: this.order.orderId }));
      }
      this.checkFault();
    }
    return out;
  }

  /** Stops every writer and deletes every file this group started (best effort). */
  async abort(): Promise<void> {
    for (const o of this.outputs.values()) await o.writer.abort().catch(() => undefined);
    await this.io.deleteMany(this.started).catch(() => undefined);
  }
}

/** A decode reason as the plan's size estimate counts it: printable ASCII, at most DECODE_REASON_MAX_CHARS. */
function shortReason(r: DecodeReason): DecodeReason {
  const ascii = r.reason.replace(/[^\x20-\x7e]/g, '?');
  return { file: r.file, reason: ascii.length <= DECODE_REASON_MAX_CHARS ? ascii : `${ascii.slice(0, DECODE_REASON_MAX_CHARS - 3)}...` };
}
