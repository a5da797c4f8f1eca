import { randomUUID } from 'node:crypto';
import { ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { FileContent, type DataFile } from '../iceberg/manifest.js';
import { partitionFolder, tableLocationProvider, type LocationProvider } from '../iceberg/locations.js';
import { metricsConfigFromProperties } from '../iceberg/metrics-config.js';
import { partitionKey, type PartitionSpec } from '../iceberg/partition.js';
import { indexById, type Schema } from '../iceberg/schema.js';
import { applyTransform } from '../iceberg/transform.js';
import { currentSchema, defaultSortOrder, intProperty, specById, type TableMetadata } from '../iceberg/table-metadata.js';
import { isPrimitive, type PrimitiveType, type StructType } from '../iceberg/types.js';
import type { IcebergValue, Row } from '../iceberg/values.js';
import { RollingParquetWriter, type ParquetCompression, type ParquetWriterOptions, type WrittenFile } from '../parquet/writer.js';

export const DEFAULT_TARGET_FILE_SIZE = 512 * 1024 * 1024;

const CODECS: Record<string, ParquetCompression> = {
  zstd: 'zstd',
  snappy: 'snappy',
  gzip: 'gzip',
  brotli: 'brotli',
  lz4: 'lz4',
  uncompressed: 'uncompressed',
  none: 'uncompressed',
};

/**
 * The Parquet writer settings a table's properties ask for (Java's `write.parquet.*` names):
 * codec (default zstd), its level, row-group size in bytes, page size and dictionary page size.
 * `write.parquet.compression-level` is honoured for zstd where a native zstd exists (default 3,
 * as Java; lib/parquet/compression-codec.ts); without one parquet-wasm writes ZSTD at level 1,
 * and other codecs at their defaults.
 */
export function parquetWriteOptions(metadata: TableMetadata): Pick<
  ParquetWriterOptions,
  'compression' | 'compressionLevel' | 'rowGroupBytes' | 'pageSizeBytes' | 'dictionaryPageSizeBytes'
> {
  const codecName = (metadata.properties['write.parquet.compression-codec'] ?? 'zstd').toLowerCase();
  const compression = CODECS[codecName];
  if (compression === undefined) {
    throw new ValidationError(`table property write.parquet.compression-codec="${codecName}" names no codec packice writes`, {
      path: metadata.location,
    });
  }
  const optional = (key: string): number | undefined => {
    const v = intProperty(metadata, key, Number.NaN);
    return Number.isNaN(v) ? undefined : v;
  };
  const rowGroupBytes = optional('write.parquet.row-group-size-bytes');
  const pageSizeBytes = optional('write.parquet.page-size-bytes');
  const dictionaryPageSizeBytes = optional('write.parquet.dict-size-bytes');
  const compressionLevel = optional('write.parquet.compression-level');
  // zstd's range (negative levels are its fast ones).
  if (compressionLevel !== undefined && compression === 'zstd' && (!Number.isInteger(compressionLevel) || compressionLevel < -131072 || compressionLevel > 22)) {
    throw new ValidationError(`table property write.parquet.compression-level=${compressionLevel} is outside zstd's levels (-131072 to 22)`, {
      path: metadata.location,
    });
  }
  return {
    compression,
    ...(compressionLevel !== undefined ? { compressionLevel } : {}),
    ...(rowGroupBytes !== undefined ? { rowGroupBytes } : {}),
    ...(pageSizeBytes !== undefined ? { pageSizeBytes } : {}),
    ...(dictionaryPageSizeBytes !== undefined ? { dictionaryPageSizeBytes } : {}),
  };
}

/** Computes a row's partition tuple under a spec, keyed by partition field name; source lookups resolved once. */
export function partitioner(spec: PartitionSpec, schema: StructType): (row: Row) => Row {
  const index = indexById(schema);
  const fields = spec.fields.map((pf) => {
    const source = index.get(pf.sourceId);
    if (!source || !isPrimitive(source.field.type)) {
      throw new ValidationError(`partition field ${pf.name}: source column ${pf.sourceId} is not a primitive column of the schema`);
    }
    return { name: pf.name, path: source.path.split('.'), type: source.field.type as PrimitiveType, transform: pf.transform };
  });
  return (row) => {
    const out: Row = {};
    for (const f of fields) {
      let v: IcebergValue = row;
      for (const p of f.path) v = v === null || typeof v !== 'object' ? null : ((v as Row)[p] ?? null);
      out[f.name] = applyTransform(f.transform, f.type, v);
    }
    return out;
  };
}

/** The partition tuple of one row under a spec (for many rows, build a `partitioner` once). */
export function partitionOf(spec: PartitionSpec, schema: StructType, row: Row): Row {
  return partitioner(spec, schema)(row);
}

export function toDataFile(
  w: WrittenFile,
  spec: PartitionSpec,
  partition: Row,
  content: FileContent = FileContent.Data,
  extra: Partial<DataFile> = {},
): DataFile {
  const big = (m: ReadonlyMap<number, number>): Map<number, bigint> => new Map([...m].map(([k, v]) => [k, BigInt(v)]));
  return {
    content,
    filePath: w.path,
    fileFormat: 'PARQUET',
    specId: spec.specId,
    partition,
    recordCount: BigInt(w.recordCount),
    fileSizeInBytes: BigInt(w.fileSizeInBytes),
    columnSizes: big(w.metrics.columnSizes),
    valueCounts: big(w.metrics.valueCounts),
    nullValueCounts: big(w.metrics.nullValueCounts),
    nanValueCounts: big(w.metrics.nanValueCounts),
    lowerBounds: new Map(w.metrics.lowerBounds),
    upperBounds: new Map(w.metrics.upperBounds),
    splitOffsets: w.splitOffsets.map((o) => BigInt(o)),
    ...(content === FileContent.Data ? { sortOrderId: 0 } : {}),
    ...extra,
  };
}

export interface DataWriterOptions {
  readonly targetFileSizeBytes?: number;
  /** Spec to write with (default: the table's default spec). */
  readonly specId?: number;
  /** Schema the rows follow (default: the current schema). */
  readonly schema?: Schema;
}

/**
 * Writes rows as Parquet data files of a table: one rolling writer per partition,
 * files where the table's location provider puts them, metrics as the table's properties ask.
 */
export class PartitionedDataWriter {
  private readonly writers = new Map<string, { writer: RollingParquetWriter; partition: Row }>();
  private readonly spec: PartitionSpec;
  private readonly schema: Schema;
  private readonly partitionOf: (row: Row) => Row;
  private readonly locations: LocationProvider;
  private readonly prefix = randomUUID();
  private count = 0;

  constructor(
    private readonly io: FileIO,
    private readonly metadata: TableMetadata,
    private readonly options: DataWriterOptions = {},
  ) {
    this.spec = specById(metadata, options.specId ?? metadata.defaultSpecId);
    this.schema = options.schema ?? currentSchema(metadata);
    this.partitionOf = partitioner(this.spec, this.schema);
    this.locations = tableLocationProvider(metadata);
  }

  async write(rows: readonly Row[]): Promise<void> {
    const groups = new Map<string, { partition: Row; rows: Row[] }>();
    for (const row of rows) {
      const partition = this.partitionOf(row);
      const key = partitionKey(this.spec.specId, partition);
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { partition, rows: [] }));
      g.rows.push(row);
    }
    for (const [key, g] of groups) {
      let w = this.writers.get(key);
      if (!w) {
        const folder = partitionFolder(this.spec, g.partition, this.schema);
        const sortIds = defaultSortOrder(this.metadata).fields.map((f) => f.sourceId);
        const writer = new RollingParquetWriter(this.io, this.schema, {
          ...parquetWriteOptions(this.metadata),
          targetFileSizeBytes:
            this.options.targetFileSizeBytes ?? intProperty(this.metadata, 'write.target-file-size-bytes', DEFAULT_TARGET_FILE_SIZE),
          metricsConfig: metricsConfigFromProperties(this.metadata.properties, this.schema, sortIds),
          nextPath: () => this.locations.newDataLocation(`${String(this.count++).padStart(5, '0')}-${this.prefix}.parquet`, folder),
        });
        this.writers.set(key, (w = { writer, partition: g.partition }));
      }
      await w.writer.writeRows(g.rows);
    }
  }

  async close(): Promise<DataFile[]> {
    const out: DataFile[] = [];
    for (const { writer, partition } of this.writers.values()) {
      for (const f of await writer.close()) out.push(toDataFile(f, this.spec, partition));
    }
    return out;
  }

  async abort(): Promise<void> {
    for (const { writer } of this.writers.values()) await writer.abort();
  }
}

/** Writes rows as data files of the table and returns their manifest entries (not committed). */
export async function writeDataFiles(
  io: FileIO,
  metadata: TableMetadata,
  rows: readonly Row[],
  options: DataWriterOptions = {},
): Promise<DataFile[]> {
  const w = new PartitionedDataWriter(io, metadata, options);
  try {
    await w.write(rows);
    return await w.close();
  } catch (e) {
    await w.abort();
    throw e;
  }
}

