/**
 * The JSON form of a data or delete file in the compaction messages: plain JSON, longs as
 * decimal strings, bounds as base64 of their single-value serialization, partition values
 * in the JSON single-value form of their types (spec Appendix D).
 */
import type { DataFile, FileContent, FileFormat } from './manifest.js';
import { fromJsonValue, toJsonValue } from './json-single-value.js';
import { LosslessNumber } from 'lossless-json';
import { toPlain } from './json.js';
import { partitionType } from './partition.js';
import type { TableMetadata } from './table-metadata.js';
import { currentSchema, specById } from './table-metadata.js';
import type { StructType } from './types.js';
import type { Row } from './values.js';

/** A data or delete file as it travels in messages. */
export interface DataFileJson {
  readonly content: FileContent;
  readonly filePath: string;
  readonly fileFormat: FileFormat;
  readonly specId: number;
  /** Partition values in the JSON single-value form of their types. */
  readonly partition: Record<string, unknown>;
  readonly recordCount: string;
  readonly fileSizeInBytes: string;
  readonly columnSizes?: Record<string, string>;
  readonly valueCounts?: Record<string, string>;
  readonly nullValueCounts?: Record<string, string>;
  readonly nanValueCounts?: Record<string, string>;
  /** base64 of the single-value serialization. */
  readonly lowerBounds?: Record<string, string>;
  readonly upperBounds?: Record<string, string>;
  readonly splitOffsets?: string[];
  readonly equalityIds?: number[];
  readonly sortOrderId?: number;
  readonly firstRowId?: string;
  readonly referencedDataFile?: string;
  readonly contentOffset?: string;
  readonly contentSizeInBytes?: string;
}

type Counts = ReadonlyMap<number, bigint> | null | undefined;
type Bytes = ReadonlyMap<number, Uint8Array> | null | undefined;

const countsToJson = (m: Counts): Record<string, string> | undefined =>
  m ? Object.fromEntries([...m].map(([k, v]) => [String(k), v.toString()])) : undefined;
const countsFromJson = (o: Record<string, string> | undefined): Map<number, bigint> | undefined =>
  o ? new Map(Object.entries(o).map(([k, v]) => [Number(k), BigInt(v)])) : undefined;
const bytesToJson = (m: Bytes): Record<string, string> | undefined =>
  m ? Object.fromEntries([...m].map(([k, v]) => [String(k), Buffer.from(v).toString('base64')])) : undefined;
const bytesFromJson = (o: Record<string, string> | undefined): Map<number, Uint8Array> | undefined => {
  if (!o) return undefined;
  const out = new Map<number, Uint8Array>();
  // Copied out of Buffer's shared pool: a bound owns its bytes.
  for (const k in o) out.set(Number(k), new Uint8Array(Buffer.from(o[k], 'base64')));
  return out;
};

const partitionTypes = new WeakMap<TableMetadata, Map<number, StructType>>();

/** The partition struct type of a spec under the table's current schema (kept per metadata: a plan parses thousands of files). */
export function partitionTypeOf(metadata: TableMetadata, specId: number): StructType {
  let bySpec = partitionTypes.get(metadata);
  if (!bySpec) partitionTypes.set(metadata, (bySpec = new Map()));
  let type = bySpec.get(specId);
  if (!type) bySpec.set(specId, (type = partitionType(specById(metadata, specId), currentSchema(metadata))));
  return type;
}

export function partitionToJson(partition: Row, type: StructType): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of type.fields) {
    const v = partition[f.name];
    const floating = f.type.type === 'float' || f.type.type === 'double';
    // NaN and the infinities have no JSON form (single-value serialization refuses them): a float
    // or double partition holding one travels as its name, as Java's Double.toString writes it.
    // (An int's -0 becomes 0 in toJsonValue; a float's or double's -0.0 stays a partition of its own.)
    if (floating && typeof v === 'number' && !Number.isFinite(v)) out[f.name] = String(v);
    else out[f.name] = v === null || v === undefined ? null : plainJson(toJsonValue(f.type, v));
  }
  return out;
}

/**
 * Messages are plain JSON: lossless numbers become numbers, or strings beyond 2^53; -0.0 (a
 * partition of its own, apart from 0.0) a string too, since JSON.stringify writes -0 as 0.
 */
function plainJson(v: unknown): unknown {
  const p = toPlain(v);
  if (Object.is(p, -0)) return '-0.0';
  return typeof p === 'bigint' ? p.toString() : p;
}

export function partitionFromJson(json: Record<string, unknown>, type: StructType): Row {
  const out: Row = {};
  for (const f of type.fields) {
    const v = json[f.name];
    const floating = f.type.type === 'float' || f.type.type === 'double';
    if (floating && (v === 'NaN' || v === 'Infinity' || v === '-Infinity')) {
      out[f.name] = Number(v);
      continue;
    }
    // Longs beyond 2^53 and -0.0 travel as strings (see plainJson).
    const numeric = f.type.type === 'long' || floating;
    const raw = numeric && typeof v === 'string' ? new LosslessNumber(v) : v;
    out[f.name] = raw === null || raw === undefined ? null : fromJsonValue(f.type, raw);
  }
  return out;
}

export function dataFileToJson(f: DataFile, metadata: TableMetadata): DataFileJson {
  // Built field by field (a plan writes ~100k of these): keys in this order, optional ones only when set.
  const out: Record<string, unknown> = {
    content: f.content,
    filePath: f.filePath,
    fileFormat: f.fileFormat,
    specId: f.specId,
    partition: partitionJsonOf(f.partition, partitionTypeOf(metadata, f.specId)),
    recordCount: f.recordCount.toString(),
    fileSizeInBytes: f.fileSizeInBytes.toString(),
  };
  if (f.columnSizes) out.columnSizes = countsToJson(f.columnSizes);
  if (f.valueCounts) out.valueCounts = countsToJson(f.valueCounts);
  if (f.nullValueCounts) out.nullValueCounts = countsToJson(f.nullValueCounts);
  if (f.nanValueCounts) out.nanValueCounts = countsToJson(f.nanValueCounts);
  if (f.lowerBounds) out.lowerBounds = bytesToJson(f.lowerBounds);
  if (f.upperBounds) out.upperBounds = bytesToJson(f.upperBounds);
  if (f.splitOffsets) out.splitOffsets = f.splitOffsets.map(String);
  if (f.equalityIds) out.equalityIds = [...f.equalityIds];
  if (f.sortOrderId !== undefined && f.sortOrderId !== null) out.sortOrderId = f.sortOrderId;
  if (f.firstRowId !== undefined && f.firstRowId !== null) out.firstRowId = f.firstRowId.toString();
  if (f.referencedDataFile !== undefined && f.referencedDataFile !== null) out.referencedDataFile = f.referencedDataFile;
  if (f.contentOffset !== undefined && f.contentOffset !== null) out.contentOffset = f.contentOffset.toString();
  if (f.contentSizeInBytes !== undefined && f.contentSizeInBytes !== null) out.contentSizeInBytes = f.contentSizeInBytes.toString();
  return out as unknown as DataFileJson;
}

/** JSON partitions made so far, per partition type: the files of one partition share their tuple object. */
const partitionJsons = new WeakMap<StructType, WeakMap<Row, Record<string, unknown>>>();

/** partitionToJson, made once per tuple object and type; the result is shared, never to be changed. */
function partitionJsonOf(partition: Row, type: StructType): Record<string, unknown> {
  let byRow = partitionJsons.get(type);
  if (!byRow) partitionJsons.set(type, (byRow = new WeakMap()));
  let json = byRow.get(partition);
  if (!json) byRow.set(partition, (json = partitionToJson(partition, type)));
  return json;
}

export function dataFileFromJson(j: DataFileJson, metadata: TableMetadata): DataFile {
  return {
    content: j.content,
    filePath: j.filePath,
    fileFormat: j.fileFormat,
    specId: j.specId,
    partition: partitionFromJson(j.partition, partitionTypeOf(metadata, j.specId)),
    recordCount: BigInt(j.recordCount),
    fileSizeInBytes: BigInt(j.fileSizeInBytes),
    ...(j.columnSizes ? { columnSizes: countsFromJson(j.columnSizes) } : {}),
    ...(j.valueCounts ? { valueCounts: countsFromJson(j.valueCounts) } : {}),
    ...(j.nullValueCounts ? { nullValueCounts: countsFromJson(j.nullValueCounts) } : {}),
    ...(j.nanValueCounts ? { nanValueCounts: countsFromJson(j.nanValueCounts) } : {}),
    ...(j.lowerBounds ? { lowerBounds: bytesFromJson(j.lowerBounds) } : {}),
    ...(j.upperBounds ? { upperBounds: bytesFromJson(j.upperBounds) } : {}),
    ...(j.splitOffsets ? { splitOffsets: j.splitOffsets.map((s) => BigInt(s)) } : {}),
    ...(j.equalityIds ? { equalityIds: j.equalityIds } : {}),
    ...(j.sortOrderId !== undefined ? { sortOrderId: j.sortOrderId } : {}),
    ...(j.firstRowId !== undefined ? { firstRowId: BigInt(j.firstRowId) } : {}),
    ...(j.referencedDataFile !== undefined ? { referencedDataFile: j.referencedDataFile } : {}),
    ...(j.contentOffset !== undefined ? { contentOffset: BigInt(j.contentOffset) } : {}),
    ...(j.contentSizeInBytes !== undefined ? { contentSizeInBytes: BigInt(j.contentSizeInBytes) } : {}),
  };
}
