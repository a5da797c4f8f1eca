/**
 * Manifests (spec "Manifests", "Sequence Number Inheritance", "First Row ID
 * Inheritance"; core/.../ManifestWriter.java, ManifestReader.java,
 * InheritableMetadataFactory.java, V1/V2/V3Metadata.java, PartitionSummary.java).
 */
import { InvalidFileError, UnsupportedError, ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import {
  type AvroContainerHeader,
  type AvroFieldSchema,
  type AvroRecord,
  type AvroSchemaObject,
  AvroContainerWriter,
  type ByteSource,
  fieldIndex,
  fieldName,
  headerString,
  icebergPrimitiveOf,
  icebergToAvroSchema,
  namedAvroTypes,
  openAvroContainer,
  primitiveFromAvro,
  primitiveToAvro,
  recordFieldsOf,
  resolveRecord,
  avroFieldName,
  ICEBERG_FIELD_NAME_PROP,
  FIELD_ID_PROP,
} from './avro.js';
import { compareValues, toBytes } from './bounds.js';
import { type ManifestFile, ManifestContent, type PartitionFieldSummary } from './manifest-list.js';
import { type PartitionSpec, partitionFieldsToJson, partitionType } from './partition.js';
import { type Schema, schemaToJson } from './schema.js';
import type { FormatVersion } from './table-metadata.js';
import type { NestedField, PrimitiveType, StructType } from './types.js';
import { isPrimitive } from './types.js';
import type { IcebergValue, Row } from './values.js';

export { ManifestContent } from './manifest-list.js';

/** Spec data_file.content (134). */
export const FileContent = { Data: 0, PositionDeletes: 1, EqualityDeletes: 2 } as const;
export type FileContent = (typeof FileContent)[keyof typeof FileContent];

/** Spec manifest_entry.status (0). */
export const ManifestEntryStatus = { Existing: 0, Added: 1, Deleted: 2 } as const;
export type ManifestEntryStatus = (typeof ManifestEntryStatus)[keyof typeof ManifestEntryStatus];

export type FileFormat = 'PARQUET' | 'AVRO' | 'ORC' | 'PUFFIN';
const FILE_FORMATS: ReadonlySet<string> = new Set(['PARQUET', 'AVRO', 'ORC', 'PUFFIN']);

/** Spec `data_file` (also delete files), with the partition keyed by partition field name. */
export interface DataFile {
  readonly content: FileContent;
  readonly filePath: string;
  readonly fileFormat: FileFormat;
  /** Not stored in the file: the spec of the manifest that holds it. */
  readonly specId: number;
  /** Partition tuple keyed by partition field name, in spec order. */
  readonly partition: Row;
  readonly recordCount: bigint;
  readonly fileSizeInBytes: bigint;
  readonly columnSizes?: ReadonlyMap<number, bigint> | null;
  readonly valueCounts?: ReadonlyMap<number, bigint> | null;
  readonly nullValueCounts?: ReadonlyMap<number, bigint> | null;
  readonly nanValueCounts?: ReadonlyMap<number, bigint> | null;
  /** Single-value serialized bounds, kept as the bytes the writer stored. */
  readonly lowerBounds?: ReadonlyMap<number, Uint8Array> | null;
  readonly upperBounds?: ReadonlyMap<number, Uint8Array> | null;
  readonly keyMetadata?: Uint8Array | null;
  readonly splitOffsets?: readonly bigint[] | null;
  readonly equalityIds?: readonly number[] | null;
  readonly sortOrderId?: number | null;
  /** v3 data files; inherited on read (see readManifest). */
  readonly firstRowId?: bigint | null;
  readonly referencedDataFile?: string | null;
  /** Deletion vectors: the blob's offset and length in the Puffin file. */
  readonly contentOffset?: bigint | null;
  readonly contentSizeInBytes?: bigint | null;
}

/** Spec `manifest_entry`. After readManifest, nulls are replaced by inherited values. */
export interface ManifestEntry {
  readonly status: ManifestEntryStatus;
  readonly snapshotId: bigint | null;
  /** Data sequence number. */
  readonly sequenceNumber: bigint | null;
  readonly fileSequenceNumber: bigint | null;
  readonly dataFile: DataFile;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type RawEntry = Omit<Mutable<ManifestEntry>, 'dataFile'> & { dataFile: Mutable<DataFile> };

// ---------------------------------------------------------------------------
// Schemas (api/.../DataFile.java, core/.../ManifestEntry.java)

const req = (id: number, name: string, type: NestedField['type'], doc?: string): NestedField => ({
  id, name, required: true, type, ...(doc !== undefined ? { doc } : {}),
});
const opt = (id: number, name: string, type: NestedField['type'], doc?: string): NestedField => ({
  id, name, required: false, type, ...(doc !== undefined ? { doc } : {}),
});
const INT = { type: 'int' } as const;
const LONG = { type: 'long' } as const;
const STRING = { type: 'string' } as const;
const BINARY = { type: 'binary' } as const;
const intMap = (keyId: number, valueId: number, value: PrimitiveType): NestedField['type'] => ({
  type: 'map', keyId, key: INT, valueId, valueRequired: true, value,
});

const DF = {
  CONTENT: req(134, 'content', INT, 'Contents of the file: 0=data, 1=position deletes, 2=equality deletes'),
  FILE_PATH: req(100, 'file_path', STRING, 'Location URI with FS scheme'),
  FILE_FORMAT: req(101, 'file_format', STRING, 'File format name: avro, orc, or parquet'),
  RECORD_COUNT: req(103, 'record_count', LONG, 'Number of records in the file'),
  FILE_SIZE: req(104, 'file_size_in_bytes', LONG, 'Total file size in bytes'),
  BLOCK_SIZE: req(105, 'block_size_in_bytes', LONG),
  COLUMN_SIZES: opt(108, 'column_sizes', intMap(117, 118, LONG), 'Map of column id to total size on disk'),
  VALUE_COUNTS: opt(109, 'value_counts', intMap(119, 120, LONG), 'Map of column id to total count, including null and NaN'),
  NULL_VALUE_COUNTS: opt(110, 'null_value_counts', intMap(121, 122, LONG), 'Map of column id to null value count'),
  NAN_VALUE_COUNTS: opt(137, 'nan_value_counts', intMap(138, 139, LONG), 'Map of column id to number of NaN values in the column'),
  LOWER_BOUNDS: opt(125, 'lower_bounds', intMap(126, 127, BINARY), 'Map of column id to lower bound'),
  UPPER_BOUNDS: opt(128, 'upper_bounds', intMap(129, 130, BINARY), 'Map of column id to upper bound'),
  KEY_METADATA: opt(131, 'key_metadata', BINARY, 'Encryption key metadata blob'),
  SPLIT_OFFSETS: opt(132, 'split_offsets', { type: 'list', elementId: 133, elementRequired: true, element: LONG }, 'Splittable offsets'),
  EQUALITY_IDS: opt(135, 'equality_ids', { type: 'list', elementId: 136, elementRequired: true, element: INT }, 'Equality comparison field IDs'),
  SORT_ORDER_ID: opt(140, 'sort_order_id', INT, 'Sort order ID'),
  FIRST_ROW_ID: opt(142, 'first_row_id', LONG, 'The first row ID assigned to the first row in the data file'),
  REFERENCED_DATA_FILE: opt(
    143,
    'referenced_data_file',
    STRING,
    'Fully qualified location (URI with FS scheme) of a data file that all deletes reference',
  ),
  CONTENT_OFFSET: opt(144, 'content_offset', LONG, 'The offset in the file where the content starts'),
  CONTENT_SIZE: opt(145, 'content_size_in_bytes', LONG, 'The length of referenced content stored in the file'),
} as const;

const PARTITION_ID = 102;
const PARTITION_DOC = 'Partition data tuple, schema based on the partition spec';
const ENTRY = {
  STATUS: req(0, 'status', INT),
  SNAPSHOT_ID: opt(1, 'snapshot_id', LONG),
  SEQUENCE_NUMBER: opt(3, 'sequence_number', LONG),
  FILE_SEQUENCE_NUMBER: opt(4, 'file_sequence_number', LONG),
  DATA_FILE_ID: 2,
} as const;

/** V1Metadata.DataFileWrapper's block_size_in_bytes, required in v1 and never read. */
const V1_BLOCK_SIZE = 64n * 1024n * 1024n;

/** The `manifest_entry` struct Java writes for a format version and partition type. */
export function manifestEntryType(formatVersion: FormatVersion, partition: StructType): StructType {
  let fileFields: NestedField[];
  if (formatVersion === 1) {
    fileFields = [
      DF.FILE_PATH, DF.FILE_FORMAT, req(PARTITION_ID, 'partition', partition), DF.RECORD_COUNT, DF.FILE_SIZE,
      DF.BLOCK_SIZE, DF.COLUMN_SIZES, DF.VALUE_COUNTS, DF.NULL_VALUE_COUNTS, DF.NAN_VALUE_COUNTS, DF.LOWER_BOUNDS,
      DF.UPPER_BOUNDS, DF.KEY_METADATA, DF.SPLIT_OFFSETS, DF.SORT_ORDER_ID,
    ];
  } else {
    fileFields = [
      DF.CONTENT, DF.FILE_PATH, DF.FILE_FORMAT, req(PARTITION_ID, 'partition', partition, PARTITION_DOC),
      DF.RECORD_COUNT, DF.FILE_SIZE, DF.COLUMN_SIZES, DF.VALUE_COUNTS, DF.NULL_VALUE_COUNTS, DF.NAN_VALUE_COUNTS,
      DF.LOWER_BOUNDS, DF.UPPER_BOUNDS, DF.KEY_METADATA, DF.SPLIT_OFFSETS, DF.EQUALITY_IDS, DF.SORT_ORDER_ID,
    ];
    if (formatVersion === 2) fileFields.push(DF.REFERENCED_DATA_FILE);
    else fileFields.push(DF.FIRST_ROW_ID, DF.REFERENCED_DATA_FILE, DF.CONTENT_OFFSET, DF.CONTENT_SIZE);
  }
  const dataFile = req(ENTRY.DATA_FILE_ID, 'data_file', { type: 'struct', fields: fileFields });
  const fields =
    formatVersion === 1
      ? [ENTRY.STATUS, ENTRY.SNAPSHOT_ID, dataFile]
      : [ENTRY.STATUS, ENTRY.SNAPSHOT_ID, ENTRY.SEQUENCE_NUMBER, ENTRY.FILE_SEQUENCE_NUMBER, dataFile];
  return { type: 'struct', fields };
}

/** The Avro schema of a manifest, as Java writes it into `avro.schema`. */
export function manifestAvroSchema(formatVersion: FormatVersion, partition: StructType): AvroSchemaObject {
  return icebergToAvroSchema(manifestEntryType(formatVersion, partition), 'manifest_entry');
}

// ---------------------------------------------------------------------------
// Reading

/** The key-value metadata of a manifest; every key is optional when reading. */
export interface ManifestHeader {
  readonly avro: AvroContainerHeader;
  readonly formatVersion: number | undefined;
  readonly content: ManifestContent | undefined;
  readonly partitionSpecId: number | undefined;
  readonly schemaId: number | undefined;
  /** Raw JSON text of `schema` and `partition-spec`. */
  readonly schemaJson: string | undefined;
  readonly partitionSpecJson: string | undefined;
}

export interface ReadManifestFileOptions {
  /** Partition type to convert partition values to (partitionType(spec, schema)); else inferred from the file. */
  readonly partitionType?: StructType;
  /** Stamped on every DataFile; else the header's partition-spec-id, else 0. */
  readonly specId?: number;
}

export interface OpenManifest {
  readonly header: ManifestHeader;
  /** Entries as stored: null snapshot ids and sequence numbers are not inherited. */
  readonly entries: AsyncIterable<ManifestEntry>;
}

function intOrUndefined(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const n = Number(s);
  return Number.isInteger(n) ? n : undefined;
}

function parseHeader(avro: AvroContainerHeader): ManifestHeader {
  const content = headerString(avro, 'content');
  return {
    avro,
    formatVersion: intOrUndefined(headerString(avro, 'format-version')),
    content: content === 'deletes' ? ManifestContent.Deletes : content === 'data' ? ManifestContent.Data : undefined,
    partitionSpecId: intOrUndefined(headerString(avro, 'partition-spec-id')),
    schemaId: intOrUndefined(headerString(avro, 'schema-id')),
    schemaJson: headerString(avro, 'schema'),
    partitionSpecJson: headerString(avro, 'partition-spec'),
  };
}

type Convert = (v: unknown) => IcebergValue;

const MICROS_PER_DAY = 86_400_000_000n;

function partitionConverter(fileType: PrimitiveType | undefined, target: PrimitiveType): Convert {
  // A date partition promoted to timestamp (v3) is stored as days in older manifests.
  if (fileType?.type === 'date' && (target.type === 'timestamp' || target.type === 'timestamptz')) {
    return (v) => (v === null || v === undefined ? null : BigInt(v as number) * MICROS_PER_DAY);
  }
  if (fileType?.type === 'date' && (target.type === 'timestamp_ns' || target.type === 'timestamptz_ns')) {
    return (v) => (v === null || v === undefined ? null : BigInt(v as number) * MICROS_PER_DAY * 1000n);
  }
  return (v) => primitiveFromAvro(target, v);
}

interface PartitionSlot {
  readonly name: string;
  readonly avroName: string | undefined;
  readonly convert: Convert;
}

function partitionDecoder(
  record: AvroSchemaObject | undefined,
  named: ReadonlyMap<string, AvroSchemaObject>,
  target: StructType | undefined,
): (rec: AvroRecord | null | undefined) => Row {
  const fileFields: readonly AvroFieldSchema[] = record ? recordFieldsOf(record) : [];
  const byId = new Map<number, AvroFieldSchema>();
  for (const f of fileFields) if (f[FIELD_ID_PROP] !== undefined) byId.set(Number(f[FIELD_ID_PROP]), f);
  const slots: PartitionSlot[] = [];
  if (target) {
    target.fields.forEach((tf, i) => {
      const ff = byId.get(tf.id) ?? (byId.size === 0 ? fileFields[i] : undefined);
      const fileType = ff ? icebergPrimitiveOf(ff.type, named) : undefined;
      const type = isPrimitive(tf.type) && tf.type.type !== 'unknown' ? tf.type : (fileType ?? { type: 'unknown' });
      slots.push({ name: tf.name, avroName: ff?.name, convert: partitionConverter(fileType, type) });
    });
  } else {
    for (const ff of fileFields) {
      const type = icebergPrimitiveOf(ff.type, named) ?? { type: 'unknown' };
      const name = typeof ff[ICEBERG_FIELD_NAME_PROP] === 'string' ? (ff[ICEBERG_FIELD_NAME_PROP] as string) : ff.name;
      slots.push({ name, avroName: ff.name, convert: partitionConverter(type, type) });
    }
  }
  return (rec) => {
    const row: Row = {};
    for (const s of slots) row[s.name] = rec && s.avroName !== undefined ? s.convert(rec[s.avroName]) : null;
    return row;
  };
}

function longMap(v: unknown): Map<number, bigint> | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Map) return v as Map<number, bigint>;
  const m = new Map<number, bigint>();
  if (Array.isArray(v)) {
    for (const kv of v as { key: number; value: bigint }[]) m.set(kv.key, kv.value);
  } else {
    for (const [k, x] of Object.entries(v as Record<string, bigint>)) m.set(Number(k), x);
  }
  return m;
}

function view(b: Uint8Array): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

function bytesMap(v: unknown): Map<number, Uint8Array> | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Map) return v as Map<number, Uint8Array>;
  const m = new Map<number, Uint8Array>();
  if (Array.isArray(v)) {
    for (const kv of v as { key: number; value: Uint8Array }[]) m.set(kv.key, view(kv.value));
  } else {
    for (const [k, x] of Object.entries(v as Record<string, Uint8Array>)) m.set(Number(k), view(x));
  }
  return m;
}

type EntryDecoder = (rec: AvroRecord, index: number) => RawEntry;

function entryDecoder(header: AvroContainerHeader, options: ReadManifestFileOptions, specId: number): EntryDecoder {
  const path = header.path;
  const named = namedAvroTypes(header.schema);
  const root = resolveRecord(header.schema, named);
  if (!root) throw new InvalidFileError('manifest schema is not a record', { path });
  const e = fieldIndex(root, named);
  const need = (idx: ReturnType<typeof fieldIndex>, f: NestedField, where: string): string => {
    const n = fieldName(idx, f.id, f.name);
    if (n === undefined) throw new InvalidFileError(`manifest has no ${where} field ${f.id} (${f.name})`, { path });
    return n;
  };
  const status = need(e, ENTRY.STATUS, 'manifest_entry');
  const dataFileName = fieldName(e, ENTRY.DATA_FILE_ID, 'data_file');
  if (dataFileName === undefined) throw new InvalidFileError('manifest has no manifest_entry field 2 (data_file)', { path });
  const snapshotId = fieldName(e, ENTRY.SNAPSHOT_ID.id, ENTRY.SNAPSHOT_ID.name);
  const seq = fieldName(e, ENTRY.SEQUENCE_NUMBER.id, ENTRY.SEQUENCE_NUMBER.name);
  const fileSeq = fieldName(e, ENTRY.FILE_SEQUENCE_NUMBER.id, ENTRY.FILE_SEQUENCE_NUMBER.name);

  const dfRecord = resolveRecord(recordFieldsOf(root).find((f) => f.name === dataFileName)?.type, named);
  if (!dfRecord) throw new InvalidFileError('manifest data_file is not a record', { path });
  const d = fieldIndex(dfRecord, named);
  const n = {
    content: fieldName(d, DF.CONTENT.id, DF.CONTENT.name),
    filePath: need(d, DF.FILE_PATH, 'data_file'),
    fileFormat: need(d, DF.FILE_FORMAT, 'data_file'),
    partition: fieldName(d, PARTITION_ID, 'partition'),
    recordCount: need(d, DF.RECORD_COUNT, 'data_file'),
    fileSize: need(d, DF.FILE_SIZE, 'data_file'),
    columnSizes: fieldName(d, DF.COLUMN_SIZES.id, DF.COLUMN_SIZES.name),
    valueCounts: fieldName(d, DF.VALUE_COUNTS.id, DF.VALUE_COUNTS.name),
    nullValueCounts: fieldName(d, DF.NULL_VALUE_COUNTS.id, DF.NULL_VALUE_COUNTS.name),
    nanValueCounts: fieldName(d, DF.NAN_VALUE_COUNTS.id, DF.NAN_VALUE_COUNTS.name),
    lowerBounds: fieldName(d, DF.LOWER_BOUNDS.id, DF.LOWER_BOUNDS.name),
    upperBounds: fieldName(d, DF.UPPER_BOUNDS.id, DF.UPPER_BOUNDS.name),
    keyMetadata: fieldName(d, DF.KEY_METADATA.id, DF.KEY_METADATA.name),
    splitOffsets: fieldName(d, DF.SPLIT_OFFSETS.id, DF.SPLIT_OFFSETS.name),
    equalityIds: fieldName(d, DF.EQUALITY_IDS.id, DF.EQUALITY_IDS.name),
    sortOrderId: fieldName(d, DF.SORT_ORDER_ID.id, DF.SORT_ORDER_ID.name),
    firstRowId: fieldName(d, DF.FIRST_ROW_ID.id, DF.FIRST_ROW_ID.name),
    referencedDataFile: fieldName(d, DF.REFERENCED_DATA_FILE.id, DF.REFERENCED_DATA_FILE.name),
    contentOffset: fieldName(d, DF.CONTENT_OFFSET.id, DF.CONTENT_OFFSET.name),
    contentSize: fieldName(d, DF.CONTENT_SIZE.id, DF.CONTENT_SIZE.name),
  };
  const partRecord = n.partition
    ? resolveRecord(recordFieldsOf(dfRecord).find((f) => f.name === n.partition)?.type, named)
    : undefined;
  const decodePartition = partitionDecoder(partRecord, named, options.partitionType);
  // Absent columns read as null through a key no record has. One access site per field
  // keeps V8's keyed loads monomorphic, which a shared getter would not.
  const ABSENT = '\u0000absent';
  const k = (name: string | undefined): string => name ?? ABSENT;
  const kContent = k(n.content);
  const kColumnSizes = k(n.columnSizes);
  const kValueCounts = k(n.valueCounts);
  const kNullValueCounts = k(n.nullValueCounts);
  const kNanValueCounts = k(n.nanValueCounts);
  const kLowerBounds = k(n.lowerBounds);
  const kUpperBounds = k(n.upperBounds);
  const kKeyMetadata = k(n.keyMetadata);
  const kSplitOffsets = k(n.splitOffsets);
  const kEqualityIds = k(n.equalityIds);
  const kSortOrderId = k(n.sortOrderId);
  const kFirstRowId = k(n.firstRowId);
  const kReferencedDataFile = k(n.referencedDataFile);
  const kContentOffset = k(n.contentOffset);
  const kContentSize = k(n.contentSize);
  const kSnapshotId = k(snapshotId);
  const kSeq = k(seq);
  const kFileSeq = k(fileSeq);
  const kPartition = k(n.partition);
  const { filePath: kFilePath, fileFormat: kFileFormat, recordCount: kRecordCount, fileSize: kFileSize } = n;

  return (rec, index) => {
    const st = rec[status] as number;
    if (st !== 0 && st !== 1 && st !== 2) {
      throw new InvalidFileError(`manifest entry ${index} has status ${st} (expected 0, 1 or 2)`, { path });
    }
    const df = rec[dataFileName] as AvroRecord;
    const content = (df[kContent] as number | undefined) ?? 0;
    if (content !== 0 && content !== 1 && content !== 2) {
      throw new InvalidFileError(`manifest entry ${index} has data_file.content ${content} (expected 0, 1 or 2)`, { path });
    }
    const rawFormat = df[kFileFormat] as string;
    const format = FILE_FORMATS.has(rawFormat) ? rawFormat : String(rawFormat).toUpperCase();
    if (!FILE_FORMATS.has(format)) {
      throw new InvalidFileError(`manifest entry ${index} has unknown file_format "${String(rawFormat)}"`, { path });
    }
    const keyMetadata = (df[kKeyMetadata] ?? null) as Uint8Array | null;
    const dataFile: Mutable<DataFile> = {
      content,
      filePath: df[kFilePath] as string,
      fileFormat: format as FileFormat,
      specId,
      partition: decodePartition(df[kPartition] as AvroRecord | undefined),
      recordCount: df[kRecordCount] as bigint,
      fileSizeInBytes: df[kFileSize] as bigint,
      columnSizes: longMap(df[kColumnSizes]),
      valueCounts: longMap(df[kValueCounts]),
      nullValueCounts: longMap(df[kNullValueCounts]),
      nanValueCounts: longMap(df[kNanValueCounts]),
      lowerBounds: bytesMap(df[kLowerBounds]),
      upperBounds: bytesMap(df[kUpperBounds]),
      keyMetadata: keyMetadata === null ? null : view(keyMetadata),
      splitOffsets: (df[kSplitOffsets] ?? null) as bigint[] | null,
      equalityIds: (df[kEqualityIds] ?? null) as number[] | null,
      sortOrderId: (df[kSortOrderId] ?? null) as number | null,
      firstRowId: (df[kFirstRowId] ?? null) as bigint | null,
      referencedDataFile: (df[kReferencedDataFile] ?? null) as string | null,
      contentOffset: (df[kContentOffset] ?? null) as bigint | null,
      contentSizeInBytes: (df[kContentSize] ?? null) as bigint | null,
    };
    return {
      status: st,
      snapshotId: (rec[kSnapshotId] ?? null) as bigint | null,
      sequenceNumber: (rec[kSeq] ?? null) as bigint | null,
      fileSequenceNumber: (rec[kFileSeq] ?? null) as bigint | null,
      dataFile,
    };
  };
}

async function openManifest(
  source: ByteSource,
  path: string,
  options: ReadManifestFileOptions,
): Promise<{ header: ManifestHeader; entries: () => AsyncGenerator<RawEntry> }> {
  const reader = await openAvroContainer<AvroRecord>(source, path);
  const header = parseHeader(reader.header);
  const decode = entryDecoder(reader.header, options, options.specId ?? header.partitionSpecId ?? 0);
  return {
    header,
    entries: async function* () {
      let i = 0;
      for await (const block of reader.blocks()) {
        for (const rec of reader.decodeBlock(block)) yield decode(rec, i++);
      }
    },
  };
}

/**
 * Opens a manifest from its bytes or a stream of chunks and returns the header and
 * the entries as stored (no inheritance). v1 manifests (no content or sequence
 * columns, block_size_in_bytes present) read as content 0 with null sequence numbers.
 */
export async function readManifestFile(
  source: ByteSource,
  path: string,
  options: ReadManifestFileOptions = {},
): Promise<OpenManifest> {
  const m = await openManifest(source, path, options);
  return { header: m.header, entries: m.entries() };
}

export interface ReadManifestOptions {
  /** Manifests longer than this are streamed in range reads of this size. @default 8 MiB */
  readonly chunkSize?: number;
}

const READ_CHUNK = 8 * 1024 * 1024;

async function* rangeChunks(io: FileIO, path: string, length: number, chunk: number): AsyncGenerator<Uint8Array> {
  for (let start = 0; start < length; start += chunk) {
    yield await io.readRange(path, start, Math.min(length, start + chunk));
  }
}

/**
 * Reads the entries of a manifest listed in a snapshot's manifest list, streaming
 * large ones in range reads, with inherited metadata applied as Java does
 * (InheritableMetadataFactory, ManifestReader.idAssigner):
 * - a null snapshot_id takes the manifest's added_snapshot_id, whatever the status;
 * - null sequence numbers take the manifest's sequence_number only for ADDED entries
 *   (for every entry when that is 0, i.e. v1 manifests);
 * - v3: when the manifest has a first_row_id, each non-DELETED file with a null
 *   first_row_id gets it plus the record_count of the earlier such files; when the
 *   manifest has none (written before the upgrade), every first_row_id reads as null.
 * A manifest not yet in a list (null sequence_number) is read without inheritance
 * of sequence numbers or row ids.
 */
export async function* readManifest(
  io: FileIO,
  manifestFile: ManifestFile,
  specsById: ReadonlyMap<number, PartitionSpec>,
  schema: Schema,
  options: ReadManifestOptions = {},
): AsyncGenerator<ManifestEntry> {
  const path = manifestFile.manifestPath;
  const spec = specsById.get(manifestFile.partitionSpecId);
  if (!spec) {
    throw new InvalidFileError(`manifest uses partition spec ${manifestFile.partitionSpecId}, which the table does not have`, {
      path,
    });
  }
  const length = Number(manifestFile.manifestLength);
  const chunk = options.chunkSize ?? READ_CHUNK;
  const source = length > chunk ? rangeChunks(io, path, length, chunk) : await io.read(path);
  const m = await openManifest(source, path, { partitionType: partitionType(spec, schema), specId: spec.specId });

  const committed = manifestFile.sequenceNumber !== null && manifestFile.sequenceNumber !== undefined;
  const seq = manifestFile.sequenceNumber ?? 0n;
  const rowIds = committed && manifestFile.firstRowId !== null && manifestFile.firstRowId !== undefined;
  let nextRowId = manifestFile.firstRowId ?? 0n;

  for await (const e of m.entries()) {
    if (e.snapshotId === null) e.snapshotId = manifestFile.addedSnapshotId;
    if (committed) {
      const inherit = seq === 0n || e.status === ManifestEntryStatus.Added;
      if (e.sequenceNumber === null && inherit) e.sequenceNumber = seq;
      if (e.fileSequenceNumber === null && inherit) e.fileSequenceNumber = seq;
      if (rowIds) {
        if (e.status !== ManifestEntryStatus.Deleted && e.dataFile.firstRowId === null) {
          e.dataFile.firstRowId = nextRowId;
          nextRowId += e.dataFile.recordCount;
        }
      } else {
        e.dataFile.firstRowId = null;
      }
    }
    yield e;
  }
}

// ---------------------------------------------------------------------------
// Writing

export interface ManifestWriterOptions {
  readonly formatVersion: FormatVersion;
  readonly spec: PartitionSpec;
  /** The table schema: written into the header and used to type the partition tuple. */
  readonly schema: Schema;
  /** The snapshot that commits this manifest: ADDED and DELETED entries carry it. */
  readonly snapshotId: bigint;
  /** @default ManifestContent.Data */
  readonly content?: ManifestContent;
  /** v3 data manifests: a first_row_id already assigned (normally left to the manifest list). */
  readonly firstRowId?: bigint | null;
  readonly keyMetadata?: Uint8Array | null;
  /** Deflate level. @default 9, Iceberg's default for Avro ("gzip"); 6 writes several times faster. */
  readonly deflateLevel?: number;
  /** For tests: a fixed Avro sync marker. */
  readonly syncMarker?: Uint8Array;
}

/**
 * Java's PartitionSummary orders with Comparators.forType: for uuid that is
 * java.util.UUID.compareTo, which compares both 64-bit halves as signed longs (unlike
 * bounds.ts's unsigned order). Java readers prune with the same order, so follow it.
 */
function summaryCompare(type: PrimitiveType, a: IcebergValue, b: IcebergValue): number {
  if (type.type !== 'uuid') return compareValues(type, a, b);
  const half = (u: string, i: number): bigint => BigInt.asIntN(64, BigInt(`0x${u.replace(/-/g, '').slice(i * 16, i * 16 + 16)}`));
  for (let i = 0; i < 2; i++) {
    const x = half(a as string, i);
    const y = half(b as string, i);
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

class PartitionFieldStats {
  containsNull = false;
  containsNan = false;
  min: IcebergValue = null;
  max: IcebergValue = null;

  constructor(readonly type: PrimitiveType) {}

  update(v: IcebergValue): void {
    if (v === null || v === undefined) {
      this.containsNull = true;
    } else if (typeof v === 'number' && Number.isNaN(v)) {
      this.containsNan = true;
    } else if (this.min === null) {
      this.min = v;
      this.max = v;
    } else {
      if (summaryCompare(this.type, v, this.min) < 0) this.min = v;
      if (summaryCompare(this.type, this.max, v) < 0) this.max = v;
    }
  }

  toSummary(): PartitionFieldSummary {
    // Bound bytes per spec Appendix D (bounds.ts toBytes = Java Conversions.toByteBuffer).
    return {
      containsNull: this.containsNull,
      containsNan: this.containsNan,
      lowerBound: this.min === null ? null : toBytes(this.type, this.min),
      upperBound: this.max === null ? null : toBytes(this.type, this.max),
    };
  }
}

const toBuffer = (b: Uint8Array | null | undefined): Buffer | null =>
  b === null || b === undefined ? null : Buffer.from(b.buffer, b.byteOffset, b.byteLength);

function mapToAvro<V>(m: ReadonlyMap<number, V> | null | undefined, conv: (v: V) => unknown): unknown {
  if (m === null || m === undefined) return null;
  const out: { key: number; value: unknown }[] = [];
  for (const [key, value] of m) out.push({ key, value: conv(value) });
  return out;
}
const same = <V>(v: V): V => v;

/**
 * Writes one manifest the way Java's ManifestWriter (V1/V2/V3Writer and their delete
 * writers) does: same Avro schema and header keys (plus `schema-id`, which the spec
 * requires and Java omits), deflate, and the same counts and partition summaries.
 * Entries are encoded as they are added; close() writes the file through FileIO.
 */
export class ManifestWriter {
  private readonly writer: AvroContainerWriter<AvroRecord>;
  private readonly version: FormatVersion;
  private readonly content: ManifestContent;
  private readonly partitionFields: readonly { name: string; avroName: string; type: PrimitiveType }[];
  private readonly stats: PartitionFieldStats[];
  private closed: ManifestFile | undefined;
  private addedFiles = 0;
  private addedRows = 0n;
  private existingFiles = 0;
  private existingRows = 0n;
  private deletedFiles = 0;
  private deletedRows = 0n;
  private minDataSequenceNumber: bigint | null = null;

  constructor(
    private readonly io: FileIO,
    readonly path: string,
    private readonly options: ManifestWriterOptions,
  ) {
    const v = options.formatVersion;
    this.version = v;
    this.content = options.content ?? ManifestContent.Data;
    if (v !== 1 && v !== 2 && v !== 3) throw new UnsupportedError(`cannot write format version ${String(v)} manifests`, { path });
    if (v === 1 && this.content !== ManifestContent.Data) {
      throw new ValidationError('Cannot write delete manifests in a v1 table', { path });
    }
    const ptype = partitionType(options.spec, options.schema);
    this.partitionFields = ptype.fields.map((f) => ({
      name: f.name,
      avroName: avroFieldName(f.name),
      type: isPrimitive(f.type) ? f.type : { type: 'unknown' },
    }));
    this.stats = this.partitionFields.map((f) => new PartitionFieldStats(f.type));

    const entryType = manifestEntryType(v, ptype);
    // Avro.WriteBuilder metadata in Java's call order; the container writer adds avro.codec and avro.schema.
    const meta: [string, string][] = [
      ['schema', JSON.stringify(schemaToJson(options.schema))],
      ['schema-id', String(options.schema.schemaId)],
      ['partition-spec', JSON.stringify(partitionFieldsToJson(options.spec.fields))],
      ['partition-spec-id', String(options.spec.specId)],
      ['format-version', String(v)],
    ];
    if (v >= 2) meta.push(['content', this.content === ManifestContent.Deletes ? 'deletes' : 'data']);
    meta.push(['iceberg.schema', JSON.stringify(schemaToJson({ ...entryType, schemaId: 0, identifierFieldIds: [] }))]);
    this.writer = new AvroContainerWriter<AvroRecord>(icebergToAvroSchema(entryType, 'manifest_entry'), {
      meta,
      ...(options.deflateLevel !== undefined ? { deflateLevel: options.deflateLevel } : {}),
      ...(options.syncMarker ? { syncMarker: options.syncMarker } : {}),
    });
  }

  /** Entries written so far. */
  get entryCount(): number {
    return this.addedFiles + this.existingFiles + this.deletedFiles;
  }

  /**
   * An ADDED entry with this writer's snapshot id. The data sequence number is
   * inherited from the commit unless given (a rewrite keeping an older number);
   * the file sequence number is always inherited.
   */
  add(file: DataFile, dataSequenceNumber?: bigint | null): void {
    this.addEntry({
      status: ManifestEntryStatus.Added,
      snapshotId: this.options.snapshotId,
      sequenceNumber: dataSequenceNumber !== undefined && dataSequenceNumber !== null && dataSequenceNumber >= 0n ? dataSequenceNumber : null,
      fileSequenceNumber: null,
      dataFile: file,
    });
  }

  /** An EXISTING entry: snapshot id and sequence numbers are kept as read. */
  existing(entry: ManifestEntry): void {
    if (entry.snapshotId === null) {
      throw new ValidationError(`Cannot write an EXISTING entry without a snapshot id: ${entry.dataFile.filePath}`, {
        path: this.path,
      });
    }
    this.addEntry({ ...entry, status: ManifestEntryStatus.Existing });
  }

  /** A DELETED entry: this writer's snapshot id, the file's sequence numbers kept. */
  delete(entry: ManifestEntry): void {
    this.addEntry({ ...entry, status: ManifestEntryStatus.Deleted, snapshotId: this.options.snapshotId });
  }

  private addEntry(entry: ManifestEntry): void {
    if (this.closed) throw new Error(`${this.path}: the manifest writer is closed`);
    const file = entry.dataFile;
    const v = this.version;
    if (file.specId !== this.options.spec.specId) {
      throw new ValidationError(
        `${file.filePath} has partition spec ${file.specId}, but this manifest holds spec ${this.options.spec.specId}`,
        { path: this.path },
      );
    }
    const isData = file.content === FileContent.Data;
    if (isData !== (this.content === ManifestContent.Data)) {
      throw new ValidationError(
        `${file.filePath} has content ${file.content}, which a ${this.content === ManifestContent.Data ? 'data' : 'delete'} manifest cannot hold`,
        { path: this.path },
      );
    }
    if (v >= 2 && entry.sequenceNumber === null) {
      // V2Metadata/V3Metadata.ManifestEntryWrapper checks.
      if (entry.snapshotId !== null && entry.snapshotId !== this.options.snapshotId) {
        throw new ValidationError(`Found unassigned sequence number for an entry from snapshot: ${entry.snapshotId}`, {
          path: this.path,
        });
      }
      if (entry.status !== ManifestEntryStatus.Added) {
        throw new ValidationError(`Only entries with status ADDED can have null sequence number: ${file.filePath}`, {
          path: this.path,
        });
      }
    }

    const record = this.toRecord(entry);
    try {
      this.writer.append(record);
    } catch (e) {
      throw new ValidationError(`cannot write the entry of ${file.filePath}: ${(e as Error).message}`, { path: this.path, cause: e });
    }

    switch (entry.status) {
      case ManifestEntryStatus.Added:
        this.addedFiles++;
        this.addedRows += file.recordCount;
        break;
      case ManifestEntryStatus.Existing:
        this.existingFiles++;
        this.existingRows += file.recordCount;
        break;
      case ManifestEntryStatus.Deleted:
        this.deletedFiles++;
        this.deletedRows += file.recordCount;
        break;
    }
    for (let i = 0; i < this.partitionFields.length; i++) {
      this.stats[i].update(file.partition[this.partitionFields[i].name] ?? null);
    }
    const live = entry.status !== ManifestEntryStatus.Deleted;
    if (live && entry.sequenceNumber !== null && (this.minDataSequenceNumber === null || entry.sequenceNumber < this.minDataSequenceNumber)) {
      this.minDataSequenceNumber = entry.sequenceNumber;
    }
  }

  private toRecord(entry: ManifestEntry): AvroRecord {
    const f = entry.dataFile;
    const v = this.version;
    const partition: AvroRecord = {};
    for (const pf of this.partitionFields) partition[pf.avroName] = primitiveToAvro(pf.type, f.partition[pf.name] ?? null);

    const df: AvroRecord = {};
    if (v >= 2) df.content = f.content;
    df.file_path = f.filePath;
    df.file_format = f.fileFormat;
    df.partition = partition;
    df.record_count = f.recordCount;
    df.file_size_in_bytes = f.fileSizeInBytes;
    if (v === 1) df.block_size_in_bytes = V1_BLOCK_SIZE;
    df.column_sizes = mapToAvro(f.columnSizes, same);
    df.value_counts = mapToAvro(f.valueCounts, same);
    df.null_value_counts = mapToAvro(f.nullValueCounts, same);
    df.nan_value_counts = mapToAvro(f.nanValueCounts, same);
    df.lower_bounds = mapToAvro(f.lowerBounds, toBuffer);
    df.upper_bounds = mapToAvro(f.upperBounds, toBuffer);
    df.key_metadata = toBuffer(f.keyMetadata);
    df.split_offsets = f.splitOffsets ?? null;
    if (v >= 2) df.equality_ids = f.equalityIds ?? null;
    df.sort_order_id = f.sortOrderId ?? null;
    if (v === 2) {
      df.referenced_data_file = f.content === FileContent.Data ? null : (f.referencedDataFile ?? null);
    } else if (v === 3) {
      // V3Metadata.DataFileWrapper: row ids for data files, DV fields for position deletes only.
      const pos = f.content === FileContent.PositionDeletes;
      df.first_row_id = f.content === FileContent.Data ? (f.firstRowId ?? null) : null;
      df.referenced_data_file = pos ? (f.referencedDataFile ?? null) : null;
      df.content_offset = pos ? (f.contentOffset ?? null) : null;
      df.content_size_in_bytes = pos ? (f.contentSizeInBytes ?? null) : null;
    }

    const rec: AvroRecord = { status: entry.status, snapshot_id: entry.snapshotId };
    if (v >= 2) {
      rec.sequence_number = entry.sequenceNumber;
      rec.file_sequence_number = entry.fileSequenceNumber;
    }
    rec.data_file = df;
    return rec;
  }

  /**
   * Writes the file and returns its manifest_file summary. sequence_number is null (the
   * manifest list assigns the commit's); min_sequence_number is the lowest data sequence
   * number of live entries, or null when none had one.
   */
  async close(): Promise<ManifestFile> {
    if (this.closed) return this.closed;
    const bytes = this.writer.finish();
    await this.io.write(this.path, bytes);
    this.closed = {
      manifestPath: this.path,
      manifestLength: BigInt(bytes.length),
      partitionSpecId: this.options.spec.specId,
      content: this.content,
      sequenceNumber: null,
      minSequenceNumber: this.minDataSequenceNumber,
      addedSnapshotId: this.options.snapshotId,
      addedFilesCount: this.addedFiles,
      existingFilesCount: this.existingFiles,
      deletedFilesCount: this.deletedFiles,
      addedRowsCount: this.addedRows,
      existingRowsCount: this.existingRows,
      deletedRowsCount: this.deletedRows,
      partitions: this.stats.map((s) => s.toSummary()),
      keyMetadata: this.options.keyMetadata ?? null,
      firstRowId: this.options.firstRowId ?? null,
    };
    return this.closed;
  }
}
