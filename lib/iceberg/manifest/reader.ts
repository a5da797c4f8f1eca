/**
 * Reading manifests (spec "Manifests", "Sequence Number Inheritance", "First Row ID
 * Inheritance"; core/.../ManifestReader.java, InheritableMetadataFactory.java).
 */
import { InvalidFileError } from '../../errors.js';
import type { FileIO } from '../../io/file-io.js';
import {
  type AvroContainerHeader,
  type AvroFieldSchema,
  type AvroProjection,
  type AvroSchema,
  type AvroRecord,
  type AvroSchemaObject,
  type ByteSource,
  fieldIndex,
  fieldName,
  headerString,
  icebergPrimitiveOf,
  namedAvroTypes,
  openAvroContainer,
  primitiveFromAvro,
  recordFieldsOf,
  resolveRecord,
  ICEBERG_FIELD_NAME_PROP,
  FIELD_ID_PROP,
  avroProjection,
  type AvroBlock,
} from '../avro.js';
import { type AvroCursor, type AvroRead, avroReader, avroSkipper } from '../avro-reader.js';
import { type ManifestFile, ManifestContent } from '../manifest-list.js';
import { type PartitionSpec, partitionType } from '../partition.js';
import type { Schema } from '../schema.js';
import { type NestedField, type PrimitiveType, type StructType, isPrimitive } from '../types.js';
import type { IcebergValue, Row } from '../values.js';
import { type DataFile, DATA_FILE_FIELDS as DF, PARTITION_FIELD_ID, isFileFormat } from './data-file.js';
import { type ManifestEntry, ManifestEntryStatus, MANIFEST_ENTRY_FIELDS as ENTRY } from './manifest-entry.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type RawEntry = Omit<Mutable<ManifestEntry>, 'dataFile'> & { dataFile: Mutable<DataFile> };

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
  /**
   * False: data files (content 0) read with null column metrics (sizes, counts, bounds), as
   * Java's scans without includeColumnStats; delete files keep theirs. @default true
   */
  readonly dataFileStats?: boolean;
  /** Stamped on every DataFile; else the header's partition-spec-id, else 0. */
  readonly specId?: number;
  /** Decode every record with avsc, never from the bytes directly (tests compare the two). */
  readonly avsc?: boolean;
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

interface ManifestDecoder {
  readonly decode: EntryDecoder;
  /** The reader schema the records are read as, when it skips fields (column metrics). */
  readonly projection?: AvroProjection;
  /** With a projection: the same entries read from the block's bytes, when the schema allows. */
  readonly direct?: DirectDecoder;
}

/**
 * The writer schema without the data_file fields named in `drop`: column metrics are most of a
 * manifest's bytes, and skipping them is cheaper than decoding them into maps and dropping them.
 */
function withoutDataFileFields(schema: AvroSchema, dataFileName: string, drop: ReadonlySet<string>): AvroSchema {
  const copy = structuredClone(schema) as AvroSchemaObject;
  const named = namedAvroTypes(copy);
  const df = resolveRecord(recordFieldsOf(copy).find((f) => f.name === dataFileName)?.type, named);
  if (df) Object.assign(df, { fields: recordFieldsOf(df).filter((f) => !drop.has(f.name)) });
  return copy;
}

function entryDecoder(header: AvroContainerHeader, options: ReadManifestFileOptions, specId: number): ManifestDecoder {
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
    partition: fieldName(d, PARTITION_FIELD_ID, 'partition'),
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
  const dataStats = options.dataFileStats !== false;
  // A data manifest read without metrics skips them in the Avro decoder; a delete manifest keeps them.
  const dataOnly = headerString(header, 'content') === 'data' || (headerString(header, 'content') === undefined && n.content === undefined);
  const stats = [n.columnSizes, n.valueCounts, n.nullValueCounts, n.nanValueCounts, n.lowerBounds, n.upperBounds];
  const projection =
    !dataStats && dataOnly
      ? avroProjection(withoutDataFileFields(header.schema, dataFileName, new Set(stats.filter((x) => x !== undefined))), header.schema)
      : undefined;

  const build = entryBuilder(path, specId, dataStats);
  const v: unknown[] = [];
  const decode: EntryDecoder = (rec, index) => {
    const df = rec[dataFileName] as AvroRecord;
    v[S.STATUS] = rec[status];
    v[S.SNAPSHOT_ID] = rec[kSnapshotId];
    v[S.SEQ] = rec[kSeq];
    v[S.FILE_SEQ] = rec[kFileSeq];
    v[S.CONTENT] = df[kContent];
    v[S.FILE_PATH] = df[kFilePath];
    v[S.FILE_FORMAT] = df[kFileFormat];
    v[S.PARTITION] = decodePartition(df[kPartition] as AvroRecord | undefined);
    v[S.RECORD_COUNT] = df[kRecordCount];
    v[S.FILE_SIZE] = df[kFileSize];
    v[S.COLUMN_SIZES] = df[kColumnSizes];
    v[S.VALUE_COUNTS] = df[kValueCounts];
    v[S.NULL_VALUE_COUNTS] = df[kNullValueCounts];
    v[S.NAN_VALUE_COUNTS] = df[kNanValueCounts];
    v[S.LOWER_BOUNDS] = df[kLowerBounds];
    v[S.UPPER_BOUNDS] = df[kUpperBounds];
    v[S.KEY_METADATA] = df[kKeyMetadata];
    v[S.SPLIT_OFFSETS] = df[kSplitOffsets];
    v[S.EQUALITY_IDS] = df[kEqualityIds];
    v[S.SORT_ORDER_ID] = df[kSortOrderId];
    v[S.FIRST_ROW_ID] = df[kFirstRowId];
    v[S.REFERENCED_DATA_FILE] = df[kReferencedDataFile];
    v[S.CONTENT_OFFSET] = df[kContentOffset];
    v[S.CONTENT_SIZE] = df[kContentSize];
    return build(v, index);
  };
  if (!projection) return { decode };
  // Without metrics, entries decode straight from the block's bytes when the schema allows.
  const slots = new Map<string, number>([
    [status, S.STATUS],
    [kSnapshotId, S.SNAPSHOT_ID],
    [kSeq, S.SEQ],
    [kFileSeq, S.FILE_SEQ],
  ]);
  const dfSlots = new Map<string, number>([
    [kContent, S.CONTENT],
    [kFilePath, S.FILE_PATH],
    [kFileFormat, S.FILE_FORMAT],
    [kRecordCount, S.RECORD_COUNT],
    [kFileSize, S.FILE_SIZE],
    [kKeyMetadata, S.KEY_METADATA],
    [kSplitOffsets, S.SPLIT_OFFSETS],
    [kEqualityIds, S.EQUALITY_IDS],
    [kSortOrderId, S.SORT_ORDER_ID],
    [kFirstRowId, S.FIRST_ROW_ID],
    [kReferencedDataFile, S.REFERENCED_DATA_FILE],
    [kContentOffset, S.CONTENT_OFFSET],
    [kContentSize, S.CONTENT_SIZE],
  ]);
  const direct = directDecoder(root, named, slots, dataFileName, dfSlots, n.partition, decodePartition, build, path);
  return direct ? { decode, projection, direct } : { decode, projection };
}

/** Slots of the values an entry is built from, whichever decoder read them. */
const S = {
  STATUS: 0, SNAPSHOT_ID: 1, SEQ: 2, FILE_SEQ: 3, CONTENT: 4, FILE_PATH: 5, FILE_FORMAT: 6, PARTITION: 7, RECORD_COUNT: 8,
  FILE_SIZE: 9, COLUMN_SIZES: 10, VALUE_COUNTS: 11, NULL_VALUE_COUNTS: 12, NAN_VALUE_COUNTS: 13, LOWER_BOUNDS: 14,
  UPPER_BOUNDS: 15, KEY_METADATA: 16, SPLIT_OFFSETS: 17, EQUALITY_IDS: 18, SORT_ORDER_ID: 19, FIRST_ROW_ID: 20,
  REFERENCED_DATA_FILE: 21, CONTENT_OFFSET: 22, CONTENT_SIZE: 23,
} as const;

/** Slots whose lists repeat from file to file (split offsets, equality ids): one array per distinct value. */
const INTERNED: ReadonlySet<number> = new Set([S.SPLIT_OFFSETS, S.EQUALITY_IDS]);

function interned(read: AvroRead): AvroRead {
  const seen = new Map<string, unknown>();
  const last = new LastBytes<unknown>();
  return (c) => {
    const start = c.pos;
    const value = read(c);
    if (value === null) return value;
    const same = last.get(c.buf, start, c.pos);
    if (same !== undefined) return same;
    const bytes = c.buf.toString('latin1', start, c.pos);
    let known = seen.get(bytes);
    if (known === undefined) {
      known = value;
      if (seen.size < 4096) seen.set(bytes, value);
    }
    last.set(c.buf, start, c.pos, known);
    return known;
  };
}

/**
 * The value decoded from the previous entry's bytes of a field: neighbouring entries mostly
 * share their partition and split offsets, and comparing a few bytes costs less than making
 * the string that keys the map of every value seen.
 */
class LastBytes<T> {
  private buf: Buffer | undefined;
  private start = 0;
  private end = 0;
  private value: T | undefined;

  get(buf: Buffer, start: number, end: number): T | undefined {
    const prev = this.buf;
    if (prev === undefined || end - start !== this.end - this.start) return undefined;
    for (let i = start, j = this.start; i < end; i++, j++) if (buf[i] !== prev[j]) return undefined;
    return this.value;
  }

  set(buf: Buffer, start: number, end: number, value: T): void {
    this.buf = buf;
    this.start = start;
    this.end = end;
    this.value = value;
  }
}

/** Checks and converts one entry's values (slots S) into the entry. */
function entryBuilder(path: string, specId: number, dataStats: boolean): (v: readonly unknown[], index: number) => RawEntry {
  return (v, index) => {
    const st = v[S.STATUS] as number;
    if (st !== 0 && st !== 1 && st !== 2) {
      throw new InvalidFileError(`manifest entry ${index} has status ${st} (expected 0, 1 or 2)`, { path });
    }
    const content = (v[S.CONTENT] as number | undefined) ?? 0;
    if (content !== 0 && content !== 1 && content !== 2) {
      throw new InvalidFileError(`manifest entry ${index} has data_file.content ${content} (expected 0, 1 or 2)`, { path });
    }
    const rawFormat = v[S.FILE_FORMAT] as string;
    const format = isFileFormat(rawFormat) ? rawFormat : String(rawFormat).toUpperCase();
    if (!isFileFormat(format)) {
      throw new InvalidFileError(`manifest entry ${index} has unknown file_format "${String(rawFormat)}"`, { path });
    }
    const keyMetadata = (v[S.KEY_METADATA] ?? null) as Uint8Array | null;
    const stats = dataStats || content !== 0;
    const dataFile: Mutable<DataFile> = {
      content,
      filePath: v[S.FILE_PATH] as string,
      fileFormat: format,
      specId,
      partition: v[S.PARTITION] as Row,
      recordCount: v[S.RECORD_COUNT] as bigint,
      fileSizeInBytes: v[S.FILE_SIZE] as bigint,
      // One literal, no spread: every field stays in the object (a million of them are kept).
      columnSizes: stats ? longMap(v[S.COLUMN_SIZES]) : null,
      valueCounts: stats ? longMap(v[S.VALUE_COUNTS]) : null,
      nullValueCounts: stats ? longMap(v[S.NULL_VALUE_COUNTS]) : null,
      nanValueCounts: stats ? longMap(v[S.NAN_VALUE_COUNTS]) : null,
      lowerBounds: stats ? bytesMap(v[S.LOWER_BOUNDS]) : null,
      upperBounds: stats ? bytesMap(v[S.UPPER_BOUNDS]) : null,
      keyMetadata: keyMetadata === null ? null : view(keyMetadata),
      splitOffsets: (v[S.SPLIT_OFFSETS] ?? null) as bigint[] | null,
      equalityIds: (v[S.EQUALITY_IDS] ?? null) as number[] | null,
      sortOrderId: (v[S.SORT_ORDER_ID] ?? null) as number | null,
      firstRowId: (v[S.FIRST_ROW_ID] ?? null) as bigint | null,
      referencedDataFile: (v[S.REFERENCED_DATA_FILE] ?? null) as string | null,
      contentOffset: (v[S.CONTENT_OFFSET] ?? null) as bigint | null,
      contentSizeInBytes: (v[S.CONTENT_SIZE] ?? null) as bigint | null,
    };
    return {
      status: st,
      snapshotId: (v[S.SNAPSHOT_ID] ?? null) as bigint | null,
      sequenceNumber: (v[S.SEQ] ?? null) as bigint | null,
      fileSequenceNumber: (v[S.FILE_SEQ] ?? null) as bigint | null,
      dataFile,
    };
  };
}

/** Decodes a block's entries from its bytes (avro-reader.ts), DIRECT_BATCH at a time. */
type DirectDecoder = (block: AvroBlock, first: number) => Generator<RawEntry[]>;

/**
 * Entries handed on at once. A block of a large manifest holds thousands: decoded whole, they
 * are all alive at the next young-generation collection, which copies them (and promotes them,
 * garbage by then). A few hundred at a time die young.
 */
const DIRECT_BATCH = 256;

/**
 * The entry decoder that reads the block's bytes into value slots, skipping every field it
 * has no slot for, and shares one partition tuple between the entries of the same partition
 * (by their bytes). Undefined when a field it reads has a type avro-reader.ts does not read.
 */
function directDecoder(
  root: AvroSchemaObject,
  named: ReadonlyMap<string, AvroSchemaObject>,
  slots: ReadonlyMap<string, number>,
  dataFileName: string,
  dfSlots: ReadonlyMap<string, number>,
  partitionName: string | undefined,
  decodePartition: (rec: AvroRecord | null | undefined) => Row,
  build: (v: readonly unknown[], index: number) => RawEntry,
  path: string,
): DirectDecoder | undefined {
  type Op = (c: AvroCursor, v: unknown[]) => void;
  const fieldOps = (fields: readonly AvroFieldSchema[], slotOf: ReadonlyMap<string, number>, nested: (f: AvroFieldSchema) => Op | null | undefined): Op[] | undefined => {
    const ops: Op[] = [];
    for (const f of fields) {
      const special = nested(f);
      if (special === undefined) return undefined;
      if (special !== null) {
        ops.push(special);
        continue;
      }
      const slot = slotOf.get(f.name);
      if (slot === undefined) {
        const skip = avroSkipper(f.type, named);
        if (!skip) return undefined;
        ops.push(skip);
      } else {
        const read = avroReader(f.type, named);
        if (!read) return undefined;
        const value = INTERNED.has(slot) ? interned(read) : read;
        ops.push((c, v) => {
          v[slot] = value(c);
        });
      }
    }
    return ops;
  };
  const partitionOp = (f: AvroFieldSchema): Op | undefined => {
    const rec = typeof f.type === 'string' || (typeof f.type === 'object' && !Array.isArray(f.type)) ? resolveRecord(f.type, named) : undefined;
    if (!rec) return undefined;
    const skip = avroSkipper(rec, named);
    const reads = recordFieldsOf(rec).map((pf) => ({ name: pf.name, read: avroReader(pf.type, named) }));
    if (!skip || reads.some((r) => r.read === undefined)) return undefined;
    const rows = new Map<string, Row>();
    const last = new LastBytes<Row>();
    return (c, v) => {
      const start = c.pos;
      skip(c);
      let row = last.get(c.buf, start, c.pos);
      if (row === undefined) {
        const bytes = c.buf.toString('latin1', start, c.pos);
        row = rows.get(bytes);
        if (row === undefined) {
          const at: AvroCursor = { buf: c.buf, pos: start };
          const raw: AvroRecord = {};
          for (const r of reads) raw[r.name] = r.read!(at);
          rows.set(bytes, (row = decodePartition(raw)));
        }
        last.set(c.buf, start, c.pos, row);
      }
      v[S.PARTITION] = row;
    };
  };
  const dfRecord = resolveRecord(recordFieldsOf(root).find((f) => f.name === dataFileName)?.type, named);
  if (!dfRecord) return undefined;
  const dfOps = fieldOps(recordFieldsOf(dfRecord), dfSlots, (f) => (f.name === partitionName ? partitionOp(f) : null));
  if (!dfOps) return undefined;
  const noPartition = decodePartition(undefined);
  const ops = fieldOps(recordFieldsOf(root), slots, (f) =>
    f.name === dataFileName
      ? (c, v) => {
          if (partitionName === undefined) v[S.PARTITION] = noPartition;
          for (let i = 0; i < dfOps.length; i++) dfOps[i](c, v);
        }
      : null,
  );
  if (!ops) return undefined;
  const v: unknown[] = [];
  return function* (block, first) {
    const c: AvroCursor = { buf: block.data, pos: 0 };
    for (let start = 0; start < block.count; start += DIRECT_BATCH) {
      const out = new Array<RawEntry>(Math.min(DIRECT_BATCH, block.count - start));
      for (let j = 0; j < out.length; j++) {
        const i = start + j;
        try {
          for (let k = 0; k < ops.length; k++) ops[k](c, v);
        } catch (e) {
          throw new InvalidFileError(`cannot decode record ${i} of Avro block ${block.index}: ${(e as Error).message}`, { path, cause: e });
        }
        if (c.pos > c.buf.length) throw new InvalidFileError(`truncated record ${i} of ${block.count} in Avro block ${block.index}`, { path });
        out[j] = build(v, first + i);
      }
      yield out;
    }
    if (c.pos !== c.buf.length) {
      throw new InvalidFileError(`Avro block ${block.index} has ${c.buf.length - c.pos} bytes after its ${block.count} records`, { path });
    }
  };
}

async function openManifest(
  source: ByteSource,
  path: string,
  options: ReadManifestFileOptions,
): Promise<{ header: ManifestHeader; entries: () => AsyncGenerator<RawEntry>; batches: () => AsyncGenerator<RawEntry[]> }> {
  const reader = await openAvroContainer<AvroRecord>(source, path);
  const header = parseHeader(reader.header);
  const { decode, projection, direct } = entryDecoder(reader.header, options, options.specId ?? header.partitionSpecId ?? 0);
  // One batch per block: a caller that takes them whole skips a promise per entry.
  const batches = async function* (): AsyncGenerator<RawEntry[]> {
    let i = 0;
    for await (const block of reader.blocks()) {
      if (direct && !options.avsc) {
        yield* direct(block, i);
        i += block.count;
      } else {
        yield reader.decodeBlock(block, projection).map((rec) => decode(rec, i++));
      }
    }
  };
  return {
    header,
    batches,
    entries: async function* () {
      for await (const batch of batches()) yield* batch;
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
  /** See ReadManifestFileOptions.dataFileStats. @default true */
  readonly dataFileStats?: boolean;
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
  for await (const batch of readManifestBatches(io, manifestFile, specsById, schema, options)) yield* batch;
}

/** readManifest's entries, one array per Avro block (fewer awaits for a caller that reads millions). */
export async function* readManifestBatches(
  io: FileIO,
  manifestFile: ManifestFile,
  specsById: ReadonlyMap<number, PartitionSpec>,
  schema: Schema,
  options: ReadManifestOptions = {},
): AsyncGenerator<ManifestEntry[]> {
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
  yield* manifestSourceBatches(source, manifestFile, spec, schema, options);
}

/**
 * readManifestBatches from the manifest's bytes already read (or a stream of its chunks): what a
 * thread that has no FileIO of its own decodes (lib/compaction/plan-worker.ts).
 */
export async function* manifestSourceBatches(
  source: ByteSource,
  manifestFile: ManifestFile,
  spec: PartitionSpec,
  schema: Schema,
  options: Pick<ReadManifestOptions, 'dataFileStats'> = {},
): AsyncGenerator<ManifestEntry[]> {
  const path = manifestFile.manifestPath;
  const m = await openManifest(source, path, {
    partitionType: partitionType(spec, schema),
    specId: spec.specId,
    ...(options.dataFileStats !== undefined ? { dataFileStats: options.dataFileStats } : {}),
  });

  const committed = manifestFile.sequenceNumber !== null && manifestFile.sequenceNumber !== undefined;
  const seq = manifestFile.sequenceNumber ?? 0n;
  const rowIds = committed && manifestFile.firstRowId !== null && manifestFile.firstRowId !== undefined;
  let nextRowId = manifestFile.firstRowId ?? 0n;

  for await (const batch of m.batches()) {
    for (const e of batch) {
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
    }
    yield batch;
  }
}
