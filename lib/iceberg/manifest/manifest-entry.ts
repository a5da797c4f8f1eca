/**
 * Spec `manifest_entry`: status, snapshot id and sequence numbers around a data file,
 * and the Avro schema Java writes for it (core/.../ManifestEntry.java).
 */
import { type AvroSchemaObject, icebergToAvroSchema } from '../avro.js';
import type { FormatVersion } from '../table-metadata.js';
import { type StructType, optionalField as opt, requiredField as req } from '../types.js';
import { type DataFile, dataFileType } from './data-file.js';

/** Spec manifest_entry.status (0). */
export const ManifestEntryStatus = { Existing: 0, Added: 1, Deleted: 2 } as const;
export type ManifestEntryStatus = (typeof ManifestEntryStatus)[keyof typeof ManifestEntryStatus];

/** Spec `manifest_entry`. After readManifest, nulls are replaced by inherited values. */
export interface ManifestEntry {
  readonly status: ManifestEntryStatus;
  readonly snapshotId: bigint | null;
  /** Data sequence number. */
  readonly sequenceNumber: bigint | null;
  readonly fileSequenceNumber: bigint | null;
  readonly dataFile: DataFile;
}

const INT = { type: 'int' } as const;
const LONG = { type: 'long' } as const;

/** The fields of `manifest_entry`, with Java's ids and names. */
export const MANIFEST_ENTRY_FIELDS = {
  STATUS: req(0, 'status', INT),
  SNAPSHOT_ID: opt(1, 'snapshot_id', LONG),
  SEQUENCE_NUMBER: opt(3, 'sequence_number', LONG),
  FILE_SEQUENCE_NUMBER: opt(4, 'file_sequence_number', LONG),
  DATA_FILE_ID: 2,
} as const;

/** The `manifest_entry` struct Java writes for a format version and partition type. */
export function manifestEntryType(formatVersion: FormatVersion, partition: StructType): StructType {
  const ENTRY = MANIFEST_ENTRY_FIELDS;
  const dataFile = req(ENTRY.DATA_FILE_ID, 'data_file', dataFileType(formatVersion, partition));
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
