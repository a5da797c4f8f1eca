/**
 * Writing manifests as Java's ManifestWriter does (core/.../ManifestWriter.java,
 * V1/V2/V3Metadata.java).
 */
import { IllegalStateError, UnsupportedError, ValidationError } from '../../errors.js';
import type { FileIO } from '../../io/file-io.js';
import { type AvroRecord, AvroContainerWriter, avroFieldName, icebergToAvroSchema, primitiveToAvro } from '../avro.js';
import { type ManifestFile, ManifestContent } from '../manifest-list.js';
import { type PartitionSpec, partitionFieldsToJson, partitionType } from '../partition.js';
import { type Schema, schemaToJson } from '../schema.js';
import type { FormatVersion } from '../table-metadata.js';
import { type PrimitiveType, isPrimitive } from '../types.js';
import { type DataFile, FileContent, V1_BLOCK_SIZE } from './data-file.js';
import { type ManifestEntry, ManifestEntryStatus, manifestEntryType } from './manifest-entry.js';
import { PartitionFieldStats } from './partition-summary.js';

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
    if (this.closed) throw new IllegalStateError('the manifest writer is closed', { path: this.path });
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
