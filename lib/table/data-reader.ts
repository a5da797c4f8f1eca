import type * as arrow from 'apache-arrow';
import { InvalidFileError, UnsupportedError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { FileContent, type DataFile } from '../iceberg/manifest.js';
import { findMapped, mappedChildren, type MappedField, type NameMapping } from '../iceberg/name-mapping.js';
import type { NestedField, StructType } from '../iceberg/types.js';
import type { IcebergValue, Row } from '../iceberg/values.js';
import { openParquet, readRowGroups, type ParquetFileReader, type ReadOptions } from '../parquet/reader.js';
import { fieldIdOf } from '../parquet/schema.js';
import { batchOf, conformColumn, constantColumn } from '../parquet/batches.js';
import { matchChildren, missingValue, rowsFromBatch } from '../parquet/values.js';

/** Rows of a file in order; `firstPos` is the file position of `rows[0]`. */
export interface RowBatch {
  readonly rows: Row[];
  readonly firstPos: number;
}

export interface ReadRowsOptions {
  /** Resolves columns of files written without field ids. */
  readonly nameMapping?: NameMapping;
  /** Values by field id for columns the file lacks (identity partition values). */
  readonly constants?: ReadonlyMap<number, IcebergValue>;
  readonly batchSize?: number;
  /** Restrict to these row groups. */
  readonly rowGroups?: readonly number[];
  /** Row groups fetched ahead of the decoder (reader.ts ReadOptions.window). */
  readonly window?: ReadOptions['window'];
  /** Each batch valid only until the next is asked for (reader.ts ReadOptions.transient). */
  readonly transient?: boolean;
}

type FileRef = Pick<DataFile, 'filePath' | 'fileFormat'> & {
  /** Data unless told otherwise: it decides whether the recorded size is used (see openLength). */
  readonly content?: FileContent;
  readonly fileSizeInBytes?: bigint;
};

/**
 * Reads a data or delete file as rows of `projection`, resolving columns by
 * field id (or through the name mapping when the file has none), promoting
 * types, and filling columns the file lacks from `constants` or initial defaults.
 */
export async function* readRows(
  io: FileIO,
  file: FileRef,
  projection: StructType,
  options: ReadRowsOptions = {},
): AsyncIterable<RowBatch> {
  for await (const { batch, firstPos } of readBatches(io, file, projection, options)) {
    yield { rows: rowsFromBatch(batch, projection), firstPos };
  }
}

/** A batch of a file's rows in a projection's Arrow layout; `firstPos` is the file position of its first row. */
export interface ConformedBatch {
  readonly batch: arrow.RecordBatch;
  readonly firstPos: number;
}

/**
 * Reads a data or delete file as Arrow batches of `projection`'s layout (schema.ts), column by
 * column: columns resolved as `readRows` resolves them (field id, else the name mapping),
 * promoted, and the ones the file lacks filled from `constants` or their initial default.
 */
export async function* readBatches(
  io: FileIO,
  file: FileRef,
  projection: StructType,
  options: ReadRowsOptions = {},
): AsyncIterable<ConformedBatch> {
  if (file.fileFormat.toUpperCase() !== 'PARQUET') {
    throw new UnsupportedError(`${file.fileFormat} files are not supported (packice reads Parquet data and delete files)`, {
      path: file.filePath,
    });
  }
  const reader = await open(io, file);
  try {
    const resolved = resolveProjection(reader.arrowSchema, projection, options.nameMapping);
    const fields = projection.fields.filter((f) => f.type.type !== 'unknown');
    const readFields = resolved.readSchema.fields.filter((f) => f.type.type !== 'unknown');
    const fill = fields.map((f) => options.constants?.get(f.id) ?? missingValue(f));
    let pos = 0;
    const columns = [...resolved.columns];
    if (columns.length === 0 && reader.arrowSchema.fields.length > 0) columns.push(reader.arrowSchema.fields[0].name);
    for await (const raw of readRowGroups(reader, {
      columns,
      ...(options.batchSize ? { batchSize: options.batchSize } : {}),
      ...(options.rowGroups ? { rowGroups: options.rowGroups } : {}),
      ...(options.window ? { window: options.window } : {}),
      ...(options.transient ? { transient: true } : {}),
    })) {
      const n = raw.numRows;
      const match = matchChildren(readFields, raw.schema.fields);
      const data = fields.map((f, k) => {
        const idx = resolved.present.has(f.id) ? match[k] : undefined;
        return idx === undefined ? constantColumn(f.type, fill[k], n) : conformColumn(f.type, raw.data.children[idx], f.name, resolved.mapped(f.id));
      });
      yield { batch: batchOf(projection, data, n), firstPos: pos };
      pos += n;
    }
  } finally {
    reader.close();
  }
}

/**
 * The length a file is opened at, chosen as Java 1.12's generic reader chooses it: a data file at
 * the file_size_in_bytes its manifest records (GenericReader, FileIO.newInputFile(DataFile)), a
 * delete file at its real length (DeleteFilter opens delete files by location alone). Engines have
 * written delete entries with wrong sizes, and Java reads those tables.
 */
function openLength(file: FileRef): number | undefined {
  if (file.fileSizeInBytes === undefined || (file.content !== undefined && file.content !== FileContent.Data)) return undefined;
  return Number(file.fileSizeInBytes);
}

/** Opens the file; when it fails at its recorded size, says whether that size is the file's. */
async function open(io: FileIO, file: FileRef): Promise<ParquetFileReader> {
  const length = openLength(file);
  try {
    return await openParquet(io, file.filePath, length);
  } catch (e) {
    if (length === undefined || !(e instanceof InvalidFileError)) throw e;
    const real = await io.stat(file.filePath).then(
      (s) => s.size,
      () => undefined,
    );
    if (real === undefined || real === length) throw e;
    throw new InvalidFileError(
      `the file has ${real} bytes but its manifest records file_size_in_bytes ${length}, the total size readers open it at: ` +
        'the file is truncated or the manifest is wrong',
      { path: file.filePath, cause: e },
    );
  }
}

interface ResolvedProjection {
  /** File column names to read. */
  readonly columns: readonly string[];
  /** Field ids found in the file. */
  readonly present: ReadonlySet<number>;
  /** The projection under the file's column names. */
  readonly readSchema: StructType;
  /** A column's nested fields as the name mapping describes them (a file without ids), else undefined. */
  readonly mapped: (id: number) => readonly MappedField[] | undefined;
}

function resolveProjection(fileSchema: arrow.Schema, projection: StructType, mapping?: NameMapping): ResolvedProjection {
  const fields = fileSchema.fields;
  const hasIds = fields.some((f) => fieldIdOf(f) !== undefined);
  const present = new Set<number>();
  const columns: string[] = [];
  if (hasIds) {
    for (const pf of projection.fields) {
      const col = fields.find((f) => fieldIdOf(f) === pf.id);
      if (col) {
        present.add(pf.id);
        columns.push(col.name);
      }
    }
    return { columns, present, readSchema: projection, mapped: () => undefined };
  }
  // No ids: the name mapping says which file column holds which field id; without a
  // mapping, columns resolve by the projection's current names.
  const readFields: NestedField[] = projection.fields.map((pf) => {
    const col = mapping
      ? fields.find((f) => findMapped(mapping, f.name)?.fieldId === pf.id)
      : fields.find((f) => f.name === pf.name);
    if (!col) return { ...pf, name: `\u0000missing_${pf.id}` };
    present.add(pf.id);
    columns.push(col.name);
    return { ...pf, name: col.name };
  });
  return { columns, present, readSchema: { type: 'struct', fields: readFields }, mapped: (id) => mappedChildren(mapping, id) };
}
