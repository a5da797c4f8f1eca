/**
 * The tables bench/compaction.ts measures, built once and cached (they take minutes):
 *   data tables      real Parquet files, unpartitioned, 6 columns, many small files in one
 *                    commit (one manifest), rows built straight into Arrow buffers;
 *   metadata tables  manifests only: fake data and delete files (paths that do not exist,
 *                    10 columns of metrics, 1,000 day partitions), for planning, which
 *                    never opens a data file.
 * A table is complete when its `bench-table.json` exists, written last; a half-built one is
 * deleted and built again. Nothing here is imported by lib/ or by the tests.
 */
import * as arrow from 'apache-arrow';
import { existsSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { commitTable, loadTable, type Table } from '../lib/catalog/table.js';
import { LocalFileIO } from '../lib/io/local.js';
import { FileContent, ManifestWriter, type DataFile } from '../lib/iceberg/manifest.js';
import { ManifestContent, writeManifestList, type ManifestFile } from '../lib/iceberg/manifest-list.js';
import { newMetadataLocation, partitionFolder, tableLocationProvider } from '../lib/iceberg/locations.js';
import { toHumanString } from '../lib/iceberg/transform.js';
import { currentSchema, specById } from '../lib/iceberg/table-metadata.js';
import type { StructType } from '../lib/iceberg/types.js';
import type { Row } from '../lib/iceberg/values.js';
import { arrowSchema } from '../lib/parquet/schema.js';
import { ParquetWriter } from '../lib/parquet/writer.js';
import { toDataFile } from '../lib/table/data-writer.js';
import { writePositionDeleteFile } from '../lib/table/delete-writer.js';
import { commitChanges, createNewTable } from '../lib/table/operations.js';

/** What a cached table's `bench-table.json` records. */
export interface TableFacts {
  readonly kind: 'data' | 'metadata';
  readonly location: string;
  readonly dataFiles: number;
  readonly deleteFiles: number;
  readonly manifests: number;
  readonly rows: number;
  /** Sum of the data files' sizes (real ones for data tables, claimed ones for metadata tables). */
  readonly dataBytes: number;
  /** Bytes of metadata written (manifests + manifest lists), metadata tables only. */
  readonly metadataBytes: number;
  readonly buildSeconds: number;
  readonly description: string;
}

const FACTS = 'bench-table.json';

/** The facts of a complete cached table at `location`, or null (a partial one is removed). */
export function cachedTable(location: string): TableFacts | null {
  const file = join(location, FACTS);
  if (existsSync(file)) {
    const facts = JSON.parse(readFileSync(file, 'utf8')) as TableFacts;
    // Built in another folder (a copied .cache, a removed worktree): its metadata names files there.
    // Compared through symlinks: a worktree's .cache may link to another checkout's.
    if (existsSync(facts.location) && realpathSync(facts.location) === realpathSync(location)) return facts;
  }
  if (existsSync(location)) rmSync(location, { recursive: true, force: true });
  return null;
}

function finish(facts: TableFacts): TableFacts {
  writeFileSync(join(facts.location, FACTS), `${JSON.stringify(facts, null, 2)}\n`);
  return facts;
}

// ---------------------------------------------------------------------------
// Data tables

/** long, int, double, string, timestamptz, decimal(18,2): the columns of bench/parquet.ts. */
export const DATA_SCHEMA: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'qty', required: false, type: { type: 'int' } },
    { id: 3, name: 'price', required: false, type: { type: 'double' } },
    { id: 4, name: 'name', required: false, type: { type: 'string' } },
    { id: 5, name: 'at', required: false, type: { type: 'timestamptz' } },
    { id: 6, name: 'amount', required: false, type: { type: 'decimal', precision: 18, scale: 2 } },
  ],
};
export const DATA_COLUMNS = 'long, int, double, string, timestamptz, decimal(18,2)';

/** Rows `[from, from + n)`: the formula of bench/parquet.ts's makeBatch, built into Arrow buffers. */
export function makeBatch(from: number, n: number): arrow.RecordBatch {
  const target = arrowSchema(DATA_SCHEMA);
  const ids = new BigInt64Array(n);
  const qty = new Int32Array(n);
  const price = new Float64Array(n);
  const at = new BigInt64Array(n);
  const amount = new Uint32Array(n * 4);
  const offsets = new Int32Array(n + 1);
  const names: string[] = new Array(n);
  let bytes = 0;
  for (let k = 0; k < n; k++) {
    const i = from + k;
    const h = Math.imul(i, 2654435761) >>> 0;
    ids[k] = BigInt(i);
    qty[k] = h % 1000;
    price[k] = (h % 1_000_000) / 100;
    at[k] = 1_700_000_000_000_000n + BigInt(i) * 1_000_000n;
    amount[k * 4] = h % 10_000_000;
    names[k] = `customer-${h % 50_000}`;
    bytes += names[k].length;
    offsets[k + 1] = bytes;
  }
  const text = Buffer.from(names.join(''), 'latin1');
  const col = (i: number, props: Record<string, unknown>): arrow.Data =>
    arrow.makeData({ type: target.fields[i].type, length: n, nullCount: 0, ...props } as never);
  const children = [
    col(0, { data: ids }),
    col(1, { data: qty }),
    col(2, { data: price }),
    col(3, { valueOffsets: offsets, data: new Uint8Array(text.buffer, text.byteOffset, text.length) }),
    col(4, { data: at }),
    col(5, { data: amount }),
  ];
  return new arrow.RecordBatch(target, arrow.makeData({ type: new arrow.Struct(target.fields), length: n, nullCount: 0, children }));
}

export interface DataTableOptions {
  /** Stop adding files once this many exist… */
  readonly files?: number;
  /** …or once their bytes reach this. At least one of the two. */
  readonly bytes?: number;
  readonly rowsPerFile: number;
  /**
   * Partitions by truncate(W, id), W chosen so `files` fall into this many partitions of equal
   * size (the 3M-row workload has 4). Needs `files`. Default: unpartitioned.
   */
  readonly partitions?: number;
  /**
   * Position delete files, committed after the data: each deletes every 50th row of the data
   * files it covers (files shared out evenly among them, within a partition). Default none.
   */
  readonly positionDeleteFiles?: number;
  readonly log?: (s: string) => void;
}

/** Every this-many-th row of a covered file is deleted by the position delete files. */
const DELETE_EVERY_ROWS = 50;

/**
 * A v2 table of many small Parquet files (ZSTD, the table's default), all added by one commit:
 * unpartitioned (one manifest, one partition) or, with `partitions`, truncate(W, id) partitions;
 * with `positionDeleteFiles`, a second commit adds position deletes over them.
 */
export async function buildDataTable(location: string, options: DataTableOptions): Promise<TableFacts> {
  const cached = cachedTable(location);
  if (cached) return cached;
  const t0 = performance.now();
  const io = new LocalFileIO();
  const partitions = options.partitions ?? 0;
  if (partitions > 0 && !(options.files && options.files % partitions === 0)) {
    throw new Error(`partitions=${partitions} needs a file count that it divides`);
  }
  const width = partitions > 0 ? ((options.files ?? 0) / partitions) * options.rowsPerFile : 0;
  let table = await createNewTable(io, location, {
    schema: DATA_SCHEMA,
    formatVersion: 2,
    ...(partitions > 0 ? { partitionFields: [{ sourceId: 1, name: 'id_trunc', transform: { kind: 'truncate' as const, width } }] } : {}),
  });
  const spec = specById(table.metadata, 0);
  const files: DataFile[] = [];
  let bytes = 0;
  let rows = 0;
  const maxFiles = options.files ?? Number.POSITIVE_INFINITY;
  const maxBytes = options.bytes ?? Number.POSITIVE_INFINITY;
  const batch = 65_536;
  while (files.length < maxFiles && bytes < maxBytes) {
    const name = `${String(files.length).padStart(6, '0')}-bench.parquet`;
    const partition: Row = partitions > 0 ? { id_trunc: BigInt(rows - (rows % width)) } : {};
    const folder = partitions > 0 ? partitionFolder(spec, partition, DATA_SCHEMA) : undefined;
    const path = tableLocationProvider(table.metadata).newDataLocation(name, folder);
    const w = ParquetWriter.open(io, path, DATA_SCHEMA, { compression: 'zstd' });
    for (let done = 0; done < options.rowsPerFile; done += batch) {
      await w.write(makeBatch(rows + done, Math.min(batch, options.rowsPerFile - done)));
    }
    const written = await w.close();
    files.push(toDataFile(written, spec, partition));
    bytes += written.fileSizeInBytes;
    rows += options.rowsPerFile;
    if (files.length % 100 === 0) options.log?.(`  ${files.length} files, ${(bytes / 2 ** 20).toFixed(0)} MiB`);
  }
  table = await commitChanges(table, { addedDataFiles: files });

  const deleteFiles = options.positionDeleteFiles ?? 0;
  const deletes: DataFile[] = [];
  let deletedRows = 0;
  for (let d = 0; d < deleteFiles; d++) {
    // Files [from, to) share a partition: the split is even and a partition's files are contiguous.
    const from = Math.floor((d * files.length) / deleteFiles);
    const to = Math.max(from + 1, Math.floor(((d + 1) * files.length) / deleteFiles));
    const perPartition = partitions > 0 ? files.length / partitions : files.length;
    const partitionOf = (i: number): number => Math.floor(i / perPartition);
    const covered = files.slice(from, to).filter((_, k) => partitionOf(from + k) === partitionOf(from));
    const positions = covered.flatMap((f) => {
      const out: { filePath: string; pos: bigint }[] = [];
      for (let r = d % DELETE_EVERY_ROWS; r < Number(f.recordCount); r += DELETE_EVERY_ROWS) out.push({ filePath: f.filePath, pos: BigInt(r) });
      return out;
    });
    deletes.push(await writePositionDeleteFile(io, table.metadata, DATA_SCHEMA, spec, files[from].partition, positions));
    deletedRows += positions.length;
  }
  if (deletes.length > 0) table = await commitChanges(table, { addedDeleteFiles: deletes, operation: 'delete' });

  const shape = partitions > 0 ? `truncate(${width}, id) into ${partitions} partitions` : 'unpartitioned';
  const deleteNote = deletes.length > 0 ? `; then ${deletes.length} position delete files (${deletedRows.toLocaleString('en-US')} rows, every ${DELETE_EVERY_ROWS}th row)` : '';
  return finish({
    kind: 'data',
    location,
    dataFiles: files.length,
    deleteFiles: deletes.length,
    manifests: deletes.length > 0 ? 2 : 1,
    rows: rows - deletedRows,
    dataBytes: bytes,
    metadataBytes: 0,
    buildSeconds: (performance.now() - t0) / 1000,
    description:
      `${shape} v2 table, ${files.length.toLocaleString('en-US')} Parquet files × ${options.rowsPerFile.toLocaleString('en-US')} rows ` +
      `× 6 columns (${DATA_COLUMNS}), ZSTD, one commit${deleteNote}`,
  });
}

// ---------------------------------------------------------------------------
// Metadata-only tables

export const PARTITIONS = 1000;
/** Data files per manifest. */
export const ENTRIES_PER_MANIFEST = 10_000;
/** One file-scoped position delete file (referenced_data_file set) per this many data files. */
export const FILE_SCOPED_DELETE_EVERY = 100;
/** One partition-scoped position delete file and one equality delete file per this many partitions. */
export const PARTITION_DELETE_EVERY = 10;

const METADATA_SCHEMA = {
  type: 'struct' as const,
  schemaId: 0,
  identifierFieldIds: [],
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'ts', required: false, type: { type: 'timestamptz' as const } },
    { id: 3, name: 'name', required: false, type: { type: 'string' as const } },
    { id: 4, name: 'amount', required: false, type: { type: 'double' as const } },
    { id: 5, name: 'qty', required: false, type: { type: 'int' as const } },
    { id: 6, name: 'flag', required: false, type: { type: 'boolean' as const } },
    { id: 7, name: 'category', required: false, type: { type: 'string' as const } },
    { id: 8, name: 'price', required: false, type: { type: 'decimal' as const, precision: 10, scale: 2 } },
    { id: 9, name: 'd', required: false, type: { type: 'date' as const } },
    { id: 10, name: 'ratio', required: false, type: { type: 'float' as const } },
  ],
};
const FIRST_DAY = 19_000;
const MiB = 2 ** 20;

function le(n: number, bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let x = BigInt(n);
  for (let i = 0; i < bytes; i++) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

/** Partition (day number) of data file i: files are spread evenly, in runs of consecutive days. */
function dayOf(i: number, total: number): number {
  return FIRST_DAY + Math.floor((i * PARTITIONS) / total);
}

/** The partition's folder as Java names it (`ts_day=2026-01-01`). */
function dayFolder(location: string, day: number): string {
  return `${location}/data/ts_day=${toHumanString({ kind: 'day' }, { type: 'date' }, day)}`;
}

function fakePath(location: string, day: number, i: number): string {
  return `${dayFolder(location, day)}/00000-${i}-8c3f2a6e-4d5b-4f1a-9e3c-${String(i).padStart(12, '0')}-00001.parquet`;
}

/**
 * Data file i: one in five at 500 MiB (not a candidate), the rest small (1-64 MiB) and so
 * candidates; records in proportion (about 100 bytes a row); 10 columns of metrics.
 */
function fakeDataFile(location: string, i: number, total: number): DataFile {
  const day = dayOf(i, total);
  const size = i % 5 === 4 ? 500 * MiB : MiB + ((i * 7919) % (63 * MiB));
  const rows = BigInt(Math.max(1, Math.floor(size / 100)));
  const counts = new Map<number, bigint>();
  const sizes = new Map<number, bigint>();
  const nulls = new Map<number, bigint>();
  const lower = new Map<number, Uint8Array>();
  const upper = new Map<number, Uint8Array>();
  for (let c = 1; c <= 10; c++) {
    sizes.set(c, BigInt(Math.floor(size / 10)));
    counts.set(c, rows);
    nulls.set(c, c === 1 ? 0n : BigInt((i + c) % 17));
    const width = c === 3 || c === 7 ? 16 : c === 5 || c === 9 || c === 10 ? 4 : c === 6 ? 1 : 8;
    lower.set(c, le(i * c, width));
    upper.set(c, le(i * c + 1000, width));
  }
  return {
    content: FileContent.Data,
    filePath: fakePath(location, day, i),
    fileFormat: 'PARQUET',
    specId: 0,
    partition: { ts_day: day },
    recordCount: rows,
    fileSizeInBytes: BigInt(size),
    columnSizes: sizes,
    valueCounts: counts,
    nullValueCounts: nulls,
    nanValueCounts: new Map([[4, 0n], [10, 0n]]),
    lowerBounds: lower,
    upperBounds: upper,
    splitOffsets: [4n],
    sortOrderId: 0,
  };
}

/** The delete files: file-scoped position deletes, then per tenth partition one partition-scoped position delete and one equality delete. */
function* fakeDeleteFiles(location: string, total: number): Generator<DataFile> {
  const pathBytes = (s: string): Uint8Array => new TextEncoder().encode(s);
  for (let i = 0; i < total; i += FILE_SCOPED_DELETE_EVERY) {
    const day = dayOf(i, total);
    const target = fakePath(location, day, i);
    yield {
      content: FileContent.PositionDeletes,
      filePath: `${dayFolder(location, day)}/pos-file-${i}.parquet`,
      fileFormat: 'PARQUET',
      specId: 0,
      partition: { ts_day: day },
      recordCount: 100n,
      fileSizeInBytes: 2_000n,
      valueCounts: new Map([[2147483546, 100n], [2147483545, 100n]]),
      nullValueCounts: new Map([[2147483546, 0n], [2147483545, 0n]]),
      lowerBounds: new Map([[2147483546, pathBytes(target)], [2147483545, le(0, 8)]]),
      upperBounds: new Map([[2147483546, pathBytes(target)], [2147483545, le(99_999, 8)]]),
      referencedDataFile: target,
    };
  }
  for (let p = 0; p < PARTITIONS; p += PARTITION_DELETE_EVERY) {
    const day = FIRST_DAY + p;
    // Ids in the bounds of every data file of the partition, so no reader can skip the equality delete by its metrics.
    const first = Math.ceil((p * total) / PARTITIONS);
    const last = Math.ceil(((p + 1) * total) / PARTITIONS) - 1;
    yield {
      content: FileContent.PositionDeletes,
      filePath: `${dayFolder(location, day)}/pos-partition-${p}.parquet`,
      fileFormat: 'PARQUET',
      specId: 0,
      partition: { ts_day: day },
      recordCount: 1_000n,
      fileSizeInBytes: 20_000n,
    };
    yield {
      content: FileContent.EqualityDeletes,
      filePath: `${dayFolder(location, day)}/eq-${p}.parquet`,
      fileFormat: 'PARQUET',
      specId: 0,
      partition: { ts_day: day },
      recordCount: 50n,
      fileSizeInBytes: 1_500n,
      equalityIds: [1],
      valueCounts: new Map([[1, 50n]]),
      nullValueCounts: new Map([[1, 0n]]),
      lowerBounds: new Map([[1, le(first, 8)]]),
      upperBounds: new Map([[1, le(last + 1000, 8)]]),
    };
  }
}

/**
 * A v2 table partitioned by day(ts) over 1,000 days whose current snapshot holds `dataFiles`
 * fake data files in manifests of 10,000 entries (snapshot 1, sequence number 1) and the
 * delete files of fakeDeleteFiles in delete manifests (snapshot 2, sequence number 2, so
 * every delete applies). Manifests and manifest lists are written by packice's writers;
 * no data file exists.
 */
export async function buildMetadataTable(
  location: string,
  dataFiles: number,
  log?: (s: string) => void,
  entriesPerManifest: number = ENTRIES_PER_MANIFEST,
): Promise<TableFacts> {
  const cached = cachedTable(location);
  if (cached) return cached;
  const t0 = performance.now();
  const io = new LocalFileIO();
  let table: Table = await createNewTable(io, location, {
    schema: METADATA_SCHEMA,
    partitionFields: [{ sourceId: 2, name: 'ts_day', transform: { kind: 'day' } }],
    formatVersion: 2,
    // Fake files are far from 512 MiB: keep Java's and our defaults.
  });
  const m0 = table.metadata;
  const spec = specById(m0, 0);
  const schema = currentSchema(m0);
  let metadataBytes = 0;
  let manifestCount = 0;
  const writeManifests = async (
    snapshotId: bigint,
    content: ManifestContent,
    files: Iterable<DataFile>,
  ): Promise<ManifestFile[]> => {
    const out: ManifestFile[] = [];
    let writer: ManifestWriter | undefined;
    const close = async (): Promise<void> => {
      if (!writer) return;
      const m = await writer.close();
      metadataBytes += Number(m.manifestLength);
      out.push(m);
      writer = undefined;
    };
    for (const f of files) {
      writer ??= new ManifestWriter(io, newMetadataLocation(m0, `bench-${snapshotId}-m${manifestCount++}.avro`), {
        formatVersion: 2, spec, schema, snapshotId, content,
      });
      writer.add(f);
      if (writer.entryCount >= entriesPerManifest) {
        await close();
        if (out.length % 100 === 0) log?.(`  ${out.length} manifests (${content === ManifestContent.Data ? 'data' : 'deletes'})`);
      }
    }
    await close();
    return out;
  };

  function* data(): Generator<DataFile> {
    for (let i = 0; i < dataFiles; i++) yield fakeDataFile(location, i, dataFiles);
  }
  let totalBytes = 0;
  let totalRows = 0;
  for (let i = 0; i < dataFiles; i++) {
    const f = fakeDataFile(location, i, dataFiles);
    totalBytes += Number(f.fileSizeInBytes);
    totalRows += Number(f.recordCount);
  }

  // Snapshot 1: the data manifests.
  const s1 = 1_000_000_001n;
  const dataManifests = await writeManifests(s1, ManifestContent.Data, data());
  const list1 = await writeManifestList(io, newMetadataLocation(m0, `snap-${s1}-1-bench.avro`), { formatVersion: 2, snapshotId: s1, sequenceNumber: 1n }, dataManifests);
  metadataBytes += list1.bytes.length;
  // Snapshot 2: the delete manifests, the data manifests carried with their sequence numbers.
  const s2 = 1_000_000_002n;
  const deletes = [...fakeDeleteFiles(location, dataFiles)];
  const deleteManifests = await writeManifests(s2, ManifestContent.Deletes, deletes);
  const list2 = await writeManifestList(
    io,
    newMetadataLocation(m0, `snap-${s2}-1-bench.avro`),
    { formatVersion: 2, snapshotId: s2, parentSnapshotId: s1, sequenceNumber: 2n },
    [...deleteManifests, ...list1.manifests],
  );
  metadataBytes += list2.bytes.length;
  const now = Date.now();
  const summary = (op: string, files: number, kind: 'data' | 'delete'): Record<string, string> => ({
    operation: op,
    [kind === 'data' ? 'added-data-files' : 'added-delete-files']: String(files),
  });
  const commit = await commitTable(table, () => ({
    updates: [
      { action: 'add-snapshot', snapshot: { snapshotId: s1, sequenceNumber: 1n, timestampMs: now - 60_000, manifestList: list1.path, summary: summary('append', dataFiles, 'data'), schemaId: 0 } },
      { action: 'add-snapshot', snapshot: { snapshotId: s2, parentSnapshotId: s1, sequenceNumber: 2n, timestampMs: now, manifestList: list2.path, summary: summary('delete', deletes.length, 'delete'), schemaId: 0 } },
      { action: 'set-snapshot-ref', refName: 'main', snapshotId: s2, type: 'branch' },
    ],
    requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', snapshotId: null }],
  }));
  table = commit.table;
  await loadTable(location); // it opens
  return finish({
    kind: 'metadata',
    location,
    dataFiles,
    deleteFiles: deletes.length,
    manifests: dataManifests.length + deleteManifests.length,
    rows: totalRows,
    dataBytes: totalBytes,
    metadataBytes,
    buildSeconds: (performance.now() - t0) / 1000,
    description:
      `v2 table partitioned by day(ts) over ${PARTITIONS.toLocaleString('en-US')} days, 10 columns; ` +
      `${dataFiles.toLocaleString('en-US')} data files in ${dataManifests.length} manifests of up to ` +
      `${entriesPerManifest.toLocaleString('en-US')} entries (10 columns of metrics each; one in five 500 MiB, the rest 1-64 MiB), ` +
      `${deletes.length.toLocaleString('en-US')} delete files in ${deleteManifests.length} delete manifest(s) ` +
      `(a file-scoped position delete per ${FILE_SCOPED_DELETE_EVERY} data files, a partition-scoped position delete and an ` +
      `equality delete per ${PARTITION_DELETE_EVERY} partitions, all committed after the data so all apply); ` +
      `${(metadataBytes / MiB).toFixed(1)} MiB of manifests; no data file exists`,
  });
}
