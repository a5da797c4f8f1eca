/**
 * Spec `data_file` (also delete files): the domain type and the Avro struct Java writes
 * for each format version (api/.../DataFile.java, V1/V2/V3Metadata.DataFileWrapper).
 */
import { type NestedField, type PrimitiveType, type StructType, optionalField as opt, requiredField as req } from '../types.js';
import type { FormatVersion } from '../table-metadata.js';
import type { Row } from '../values.js';

/** Spec data_file.content (134). */
export const FileContent = { Data: 0, PositionDeletes: 1, EqualityDeletes: 2 } as const;
export type FileContent = (typeof FileContent)[keyof typeof FileContent];

export type FileFormat = 'PARQUET' | 'AVRO' | 'ORC' | 'PUFFIN';
const FILE_FORMATS: ReadonlySet<string> = new Set(['PARQUET', 'AVRO', 'ORC', 'PUFFIN']);

export function isFileFormat(s: string): s is FileFormat {
  return FILE_FORMATS.has(s);
}

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

const INT = { type: 'int' } as const;
const LONG = { type: 'long' } as const;
const STRING = { type: 'string' } as const;
const BINARY = { type: 'binary' } as const;
const intMap = (keyId: number, valueId: number, value: PrimitiveType): NestedField['type'] => ({
  type: 'map', keyId, key: INT, valueId, valueRequired: true, value,
});

/** The fields of `data_file`, with Java's ids, names and docs. */
export const DATA_FILE_FIELDS = {
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

export const PARTITION_FIELD_ID = 102;
const PARTITION_DOC = 'Partition data tuple, schema based on the partition spec';

/** V1Metadata.DataFileWrapper's block_size_in_bytes, required in v1 and never read. */
export const V1_BLOCK_SIZE = 64n * 1024n * 1024n;

/** The `data_file` struct Java writes for a format version and partition type. */
export function dataFileType(formatVersion: FormatVersion, partition: StructType): StructType {
  const DF = DATA_FILE_FIELDS;
  let fileFields: NestedField[];
  if (formatVersion === 1) {
    fileFields = [
      DF.FILE_PATH, DF.FILE_FORMAT, req(PARTITION_FIELD_ID, 'partition', partition), DF.RECORD_COUNT, DF.FILE_SIZE,
      DF.BLOCK_SIZE, DF.COLUMN_SIZES, DF.VALUE_COUNTS, DF.NULL_VALUE_COUNTS, DF.NAN_VALUE_COUNTS, DF.LOWER_BOUNDS,
      DF.UPPER_BOUNDS, DF.KEY_METADATA, DF.SPLIT_OFFSETS, DF.SORT_ORDER_ID,
    ];
  } else {
    fileFields = [
      DF.CONTENT, DF.FILE_PATH, DF.FILE_FORMAT, req(PARTITION_FIELD_ID, 'partition', partition, PARTITION_DOC),
      DF.RECORD_COUNT, DF.FILE_SIZE, DF.COLUMN_SIZES, DF.VALUE_COUNTS, DF.NULL_VALUE_COUNTS, DF.NAN_VALUE_COUNTS,
      DF.LOWER_BOUNDS, DF.UPPER_BOUNDS, DF.KEY_METADATA, DF.SPLIT_OFFSETS, DF.EQUALITY_IDS, DF.SORT_ORDER_ID,
    ];
    if (formatVersion === 2) fileFields.push(DF.REFERENCED_DATA_FILE);
    else fileFields.push(DF.FIRST_ROW_ID, DF.REFERENCED_DATA_FILE, DF.CONTENT_OFFSET, DF.CONTENT_SIZE);
  }
  return { type: 'struct', fields: fileFields };
}
