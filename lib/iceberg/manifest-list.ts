/**
 * Manifest lists (spec "Manifest Lists"; core/.../ManifestListWriter.java,
 * V1Metadata/V2Metadata/V3Metadata.java): the `manifest_file` records of a snapshot.
 */
import { InvalidFileError, ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import {
  type AvroContainerHeader,
  type AvroRecord,
  type AvroSchema,
  type AvroSchemaObject,
  type ByteSource,
  fieldIndex,
  fieldName,
  icebergToAvroSchema,
  namedAvroTypes,
  openAvroContainer,
  recordFieldsOf,
  resolveRecord,
  writeAvroContainer,
} from './avro.js';
import { schemaToJson } from './schema.js';
import type { FormatVersion } from './table-metadata.js';
import { type NestedField, type StructType, optionalField as opt, requiredField as req } from './types.js';

export const ManifestContent = { Data: 0, Deletes: 1 } as const;
export type ManifestContent = (typeof ManifestContent)[keyof typeof ManifestContent];

/** Spec `field_summary` (508): one per partition field of the manifest's spec. */
export interface PartitionFieldSummary {
  readonly containsNull: boolean;
  /** null when the writer did not say (v1 writers). */
  readonly containsNan: boolean | null;
  /** Single-value serialization (spec Appendix D) of the partition field type. */
  readonly lowerBound: Uint8Array | null;
  readonly upperBound: Uint8Array | null;
}

/**
 * Spec `manifest_file`. Read from a list, every field is set (v1 lists: content 0 and
 * sequence numbers 0). A manifest just written by ManifestWriter has a null
 * `sequenceNumber` (and a null `minSequenceNumber` if no entry had a data sequence
 * number): writeManifestList fills in the commit's sequence number.
 */
export interface ManifestFile {
  readonly manifestPath: string;
  readonly manifestLength: bigint;
  readonly partitionSpecId: number;
  readonly content: ManifestContent;
  readonly sequenceNumber: bigint | null;
  readonly minSequenceNumber: bigint | null;
  readonly addedSnapshotId: bigint;
  /** Counts are optional only in v1 lists; null means "assume non-zero". */
  readonly addedFilesCount: number | null;
  readonly existingFilesCount: number | null;
  readonly deletedFilesCount: number | null;
  readonly addedRowsCount: bigint | null;
  readonly existingRowsCount: bigint | null;
  readonly deletedRowsCount: bigint | null;
  readonly partitions?: readonly PartitionFieldSummary[] | null;
  readonly keyMetadata?: Uint8Array | null;
  /** v3: first row id of the manifest's data files that have none. */
  readonly firstRowId?: bigint | null;
}

// ---------------------------------------------------------------------------
// Schemas (api/.../ManifestFile.java), field order as V1/V2/V3Metadata write them

const INT = { type: 'int' } as const;
const LONG = { type: 'long' } as const;
const BINARY = { type: 'binary' } as const;

export const PARTITION_SUMMARY_TYPE: StructType = {
  type: 'struct',
  fields: [
    req(509, 'contains_null', { type: 'boolean' }, 'True if any file has a null partition value'),
    opt(518, 'contains_nan', { type: 'boolean' }, 'True if any file has a nan partition value'),
    opt(510, 'lower_bound', BINARY, 'Partition lower bound for all files'),
    opt(511, 'upper_bound', BINARY, 'Partition upper bound for all files'),
  ],
};

const F = {
  PATH: req(500, 'manifest_path', { type: 'string' }, 'Location URI with FS scheme'),
  LENGTH: req(501, 'manifest_length', LONG, 'Total file size in bytes'),
  SPEC_ID: req(502, 'partition_spec_id', INT, 'Spec ID used to write'),
  CONTENT: req(517, 'content', INT, 'Contents of the manifest: 0=data, 1=deletes'),
  SEQUENCE_NUMBER: req(515, 'sequence_number', LONG, 'Sequence number when the manifest was added'),
  MIN_SEQUENCE_NUMBER: req(516, 'min_sequence_number', LONG, 'Lowest sequence number in the manifest'),
  SNAPSHOT_ID: req(503, 'added_snapshot_id', LONG, 'Snapshot ID that added the manifest'),
  ADDED_FILES: req(504, 'added_files_count', INT, 'Added entry count'),
  EXISTING_FILES: req(505, 'existing_files_count', INT, 'Existing entry count'),
  DELETED_FILES: req(506, 'deleted_files_count', INT, 'Deleted entry count'),
  ADDED_ROWS: req(512, 'added_rows_count', LONG, 'Added rows count'),
  EXISTING_ROWS: req(513, 'existing_rows_count', LONG, 'Existing rows count'),
  DELETED_ROWS: req(514, 'deleted_rows_count', LONG, 'Deleted rows count'),
  PARTITIONS: opt(
    507,
    'partitions',
    { type: 'list', elementId: 508, elementRequired: true, element: PARTITION_SUMMARY_TYPE },
    'Summary for each partition',
  ),
  KEY_METADATA: opt(519, 'key_metadata', BINARY, 'Encryption key metadata blob'),
  FIRST_ROW_ID: opt(520, 'first_row_id', LONG, 'Starting row ID to assign to new rows in ADDED data files'),
} as const;

const asOptional = (f: NestedField): NestedField => ({ ...f, required: false });

/** The `manifest_file` struct Java writes for a format version. */
export function manifestListType(formatVersion: FormatVersion): StructType {
  if (formatVersion === 1) {
    return {
      type: 'struct',
      fields: [
        F.PATH, F.LENGTH, F.SPEC_ID, F.SNAPSHOT_ID,
        asOptional(F.ADDED_FILES), asOptional(F.EXISTING_FILES), asOptional(F.DELETED_FILES),
        F.PARTITIONS,
        asOptional(F.ADDED_ROWS), asOptional(F.EXISTING_ROWS), asOptional(F.DELETED_ROWS),
        F.KEY_METADATA,
      ],
    };
  }
  const fields = [
    F.PATH, F.LENGTH, F.SPEC_ID, F.CONTENT, F.SEQUENCE_NUMBER, F.MIN_SEQUENCE_NUMBER, F.SNAPSHOT_ID,
    F.ADDED_FILES, F.EXISTING_FILES, F.DELETED_FILES, F.ADDED_ROWS, F.EXISTING_ROWS, F.DELETED_ROWS,
    F.PARTITIONS, F.KEY_METADATA,
  ];
  if (formatVersion >= 3) fields.push(F.FIRST_ROW_ID);
  return { type: 'struct', fields };
}

/** The Avro schema of a manifest list, as Java writes it into `avro.schema`. */
export function manifestListAvroSchema(formatVersion: FormatVersion): AvroSchemaObject {
  return icebergToAvroSchema(manifestListType(formatVersion), 'manifest_file');
}

function fieldSchemaById(record: AvroSchemaObject, id: number): AvroSchema | undefined {
  return recordFieldsOf(record).find((f) => Number(f['field-id']) === id)?.type;
}

// ---------------------------------------------------------------------------
// Reading

function u8(v: unknown): Uint8Array | null {
  if (v === null || v === undefined) return null;
  const b = v as Uint8Array;
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

function big(v: unknown): bigint | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'bigint' ? v : BigInt(v as number);
}

function num(v: unknown): number | null {
  return v === null || v === undefined ? null : Number(v);
}

export interface ManifestListFile {
  readonly header: AvroContainerHeader;
  readonly manifests: ManifestFile[];
}

/**
 * Reads a manifest list from bytes or a stream. Fields are found by field id. When
 * the list has no content/sequence-number columns (v1, or written before an upgrade)
 * content is 0 and both sequence numbers are 0, as the spec says for v1 lists.
 */
export async function readManifestListFile(
  source: ByteSource,
  path: string,
  formatVersion?: FormatVersion,
): Promise<ManifestListFile> {
  const reader = await openAvroContainer<AvroRecord>(source, path);
  const named = namedAvroTypes(reader.header.schema);
  const root = resolveRecord(reader.header.schema, named);
  if (!root) throw new InvalidFileError('manifest list schema is not a record', { path });
  const idx = fieldIndex(root, named);
  const need = (f: NestedField): string => {
    const n = fieldName(idx, f.id, f.name);
    if (n === undefined) throw new InvalidFileError(`manifest list has no field ${f.id} (${f.name})`, { path });
    return n;
  };
  const may = (f: NestedField): string | undefined => fieldName(idx, f.id, f.name);
  const n = {
    path: need(F.PATH),
    length: need(F.LENGTH),
    specId: need(F.SPEC_ID),
    snapshotId: need(F.SNAPSHOT_ID),
    content: may(F.CONTENT),
    seq: may(F.SEQUENCE_NUMBER),
    minSeq: may(F.MIN_SEQUENCE_NUMBER),
    addedFiles: may(F.ADDED_FILES),
    existingFiles: may(F.EXISTING_FILES),
    deletedFiles: may(F.DELETED_FILES),
    addedRows: may(F.ADDED_ROWS),
    existingRows: may(F.EXISTING_ROWS),
    deletedRows: may(F.DELETED_ROWS),
    partitions: may(F.PARTITIONS),
    keyMetadata: may(F.KEY_METADATA),
    firstRowId: may(F.FIRST_ROW_ID),
  };
  const get = (rec: AvroRecord, name: string | undefined): unknown => (name === undefined ? undefined : rec[name]);

  const summaryRecord = n.partitions ? resolveRecord(fieldSchemaById(root, F.PARTITIONS.id), named) : undefined;
  const s = summaryRecord ? fieldIndex(summaryRecord, named) : undefined;
  const sn = s && {
    containsNull: fieldName(s, 509, 'contains_null'),
    containsNan: fieldName(s, 518, 'contains_nan'),
    lower: fieldName(s, 510, 'lower_bound'),
    upper: fieldName(s, 511, 'upper_bound'),
  };

  const manifests: ManifestFile[] = [];
  for await (const rec of reader) {
    const content = num(get(rec, n.content)) ?? 0;
    if (content !== 0 && content !== 1) {
      throw new InvalidFileError(`manifest_file ${manifests.length} has content ${content} (expected 0 or 1)`, { path });
    }
    if (content === 1 && formatVersion === 1) {
      throw new InvalidFileError('a v1 table cannot have delete manifests', { path });
    }
    const parts = get(rec, n.partitions) as AvroRecord[] | null | undefined;
    manifests.push({
      manifestPath: rec[n.path] as string,
      manifestLength: big(rec[n.length]) as bigint,
      partitionSpecId: Number(rec[n.specId]),
      content,
      sequenceNumber: big(get(rec, n.seq)) ?? 0n,
      minSequenceNumber: big(get(rec, n.minSeq)) ?? 0n,
      addedSnapshotId: big(rec[n.snapshotId]) as bigint,
      addedFilesCount: num(get(rec, n.addedFiles)),
      existingFilesCount: num(get(rec, n.existingFiles)),
      deletedFilesCount: num(get(rec, n.deletedFiles)),
      addedRowsCount: big(get(rec, n.addedRows)),
      existingRowsCount: big(get(rec, n.existingRows)),
      deletedRowsCount: big(get(rec, n.deletedRows)),
      partitions:
        parts === null || parts === undefined || !sn
          ? null
          : parts.map((p) => ({
              containsNull: Boolean(get(p, sn.containsNull)),
              containsNan: (get(p, sn.containsNan) as boolean | null | undefined) ?? null,
              lowerBound: u8(get(p, sn.lower)),
              upperBound: u8(get(p, sn.upper)),
            })),
      keyMetadata: u8(get(rec, n.keyMetadata)),
      firstRowId: big(get(rec, n.firstRowId)),
    });
  }
  return { header: reader.header, manifests };
}

/** Reads the manifest list at `path` (spec "Manifest Lists"). */
export async function readManifestList(io: FileIO, path: string, formatVersion?: FormatVersion): Promise<ManifestFile[]> {
  const bytes = await io.read(path);
  return (await readManifestListFile(bytes, path, formatVersion)).manifests;
}

// ---------------------------------------------------------------------------
// Writing (ManifestListWriter.V1Writer/V2Writer/V3Writer)

export interface ManifestListWriteOptions {
  readonly formatVersion: FormatVersion;
  readonly snapshotId: bigint;
  readonly parentSnapshotId?: bigint | null;
  /** The commit's sequence number (ignored in v1). */
  readonly sequenceNumber: bigint;
  /** v3: the snapshot's first-row-id (the table's next-row-id). Required in v3. */
  readonly firstRowId?: bigint;
  /** For tests: a fixed sync marker. */
  readonly syncMarker?: Uint8Array;
}

export interface EncodedManifestList {
  readonly bytes: Uint8Array;
  /** The manifests as written: sequence numbers and first_row_id filled in. */
  readonly manifests: ManifestFile[];
  /** v3: next-row-id after this snapshot's assignments; null before v3. */
  readonly nextRowId: bigint | null;
  /** v3: the snapshot's `added-rows` (next-row-id − first-row-id); null before v3. */
  readonly addedRows: bigint | null;
}

export interface WrittenManifestList extends EncodedManifestList {
  readonly path: string;
}

function requireCount<T>(v: T | null, what: string, m: ManifestFile, path: string): T {
  if (v === null || v === undefined) {
    throw new ValidationError(`Cannot write ${what} of null for manifest ${m.manifestPath} in a v2+ manifest list`, { path });
  }
  return v;
}

const bytesOrNull = (b: Uint8Array | null | undefined): Buffer | null =>
  b === null || b === undefined ? null : Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/** Encodes a manifest list exactly as Java's ManifestListWriter does (see writeManifestList). */
export function encodeManifestList(
  options: ManifestListWriteOptions,
  manifests: readonly ManifestFile[],
  path: string,
): EncodedManifestList {
  const v = options.formatVersion;
  if (v === 3 && options.firstRowId === undefined) {
    throw new ValidationError('a v3 manifest list needs the snapshot first-row-id', { path });
  }
  const commitSeq = options.sequenceNumber;
  let nextRowId = v >= 3 ? (options.firstRowId as bigint) : null;
  const written: ManifestFile[] = [];
  const records: AvroRecord[] = [];

  for (const m of manifests) {
    if (v === 1 && m.content !== ManifestContent.Data) {
      throw new ValidationError('Cannot store delete manifests in a v1 table', { path });
    }
    const assign = (value: bigint | null): bigint => {
      if (value !== null && value !== undefined) return value;
      // Only a manifest this commit wrote may still wait for its sequence number.
      if (m.addedSnapshotId !== options.snapshotId) {
        throw new ValidationError(`Found unassigned sequence number for a manifest from snapshot: ${m.addedSnapshotId}`, {
          path,
        });
      }
      return commitSeq;
    };
    const sequenceNumber = v === 1 ? (m.sequenceNumber ?? 0n) : assign(m.sequenceNumber);
    const minSequenceNumber = v === 1 ? (m.minSequenceNumber ?? 0n) : assign(m.minSequenceNumber);

    let firstRowId: bigint | null = null;
    if (v >= 3 && m.content === ManifestContent.Data) {
      if (m.firstRowId !== null && m.firstRowId !== undefined) {
        firstRowId = m.firstRowId;
      } else {
        firstRowId = nextRowId as bigint;
        // Room for existing rows too: their files may have no first_row_id yet (pre-v3 manifests).
        nextRowId =
          (nextRowId as bigint) +
          requireCount(m.existingRowsCount, 'existing_rows_count', m, path) +
          requireCount(m.addedRowsCount, 'added_rows_count', m, path);
      }
    }

    const out: ManifestFile = { ...m, sequenceNumber, minSequenceNumber, firstRowId: v >= 3 ? firstRowId : (m.firstRowId ?? null) };
    written.push(out);

    const counts = (x: number | null, what: string): number | null => (v === 1 ? x : requireCount(x, what, m, path));
    const rows = (x: bigint | null, what: string): bigint | null => (v === 1 ? x : requireCount(x, what, m, path));
    const rec: AvroRecord = {
      manifest_path: m.manifestPath,
      manifest_length: m.manifestLength,
      partition_spec_id: m.partitionSpecId,
    };
    if (v >= 2) {
      rec.content = m.content;
      rec.sequence_number = sequenceNumber;
      rec.min_sequence_number = minSequenceNumber;
    }
    rec.added_snapshot_id = m.addedSnapshotId;
    rec.added_files_count = counts(m.addedFilesCount, 'added_files_count');
    rec.existing_files_count = counts(m.existingFilesCount, 'existing_files_count');
    rec.deleted_files_count = counts(m.deletedFilesCount, 'deleted_files_count');
    rec.added_rows_count = rows(m.addedRowsCount, 'added_rows_count');
    rec.existing_rows_count = rows(m.existingRowsCount, 'existing_rows_count');
    rec.deleted_rows_count = rows(m.deletedRowsCount, 'deleted_rows_count');
    rec.partitions =
      m.partitions === null || m.partitions === undefined
        ? null
        : m.partitions.map((p) => ({
            contains_null: p.containsNull,
            contains_nan: p.containsNan,
            lower_bound: bytesOrNull(p.lowerBound),
            upper_bound: bytesOrNull(p.upperBound),
          }));
    rec.key_metadata = bytesOrNull(m.keyMetadata);
    if (v >= 3) rec.first_row_id = firstRowId;
    records.push(rec);
  }

  // Java's ImmutableMap order; Avro.WriteBuilder then adds iceberg.schema.
  const meta: [string, string][] = [
    ['snapshot-id', String(options.snapshotId)],
    ['parent-snapshot-id', options.parentSnapshotId === null || options.parentSnapshotId === undefined ? 'null' : String(options.parentSnapshotId)],
  ];
  if (v >= 2) meta.push(['sequence-number', String(options.sequenceNumber)]);
  if (v >= 3) meta.push(['first-row-id', String(options.firstRowId)]);
  meta.push(['format-version', String(v)]);
  const struct = manifestListType(v);
  meta.push(['iceberg.schema', JSON.stringify(schemaToJson({ ...struct, schemaId: 0, identifierFieldIds: [] }))]);

  let bytes: Uint8Array;
  try {
    bytes = writeAvroContainer(icebergToAvroSchema(struct, 'manifest_file'), records, {
      meta,
      ...(options.syncMarker ? { syncMarker: options.syncMarker } : {}),
    });
  } catch (e) {
    if (e instanceof ValidationError) throw e;
    throw new ValidationError(`cannot encode manifest list: ${(e as Error).message}`, { path, cause: e });
  }
  const addedRows = nextRowId === null ? null : nextRowId - (options.firstRowId as bigint);
  return { bytes, manifests: written, nextRowId, addedRows };
}

/**
 * Writes a snapshot's manifest list through FileIO. New manifests (null sequence
 * numbers, added by this snapshot) get the commit's sequence number; in v3 each data
 * manifest without a first_row_id gets the next row id, which then advances by its
 * added + existing rows (ManifestListWriter.V3Writer). Returns the manifests as
 * written plus next-row-id and added-rows for the snapshot.
 */
export async function writeManifestList(
  io: FileIO,
  path: string,
  options: ManifestListWriteOptions,
  manifests: readonly ManifestFile[],
): Promise<WrittenManifestList> {
  const encoded = encodeManifestList(options, manifests, path);
  await io.write(path, encoded.bytes);
  return { path, ...encoded };
}
