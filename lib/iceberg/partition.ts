import type { Schema } from './schema.js';
import { InvalidArgumentError } from '../errors.js';
import { indexById } from './schema.js';
import { parseTransform, transformResultType, transformToString, type Transform } from './transform.js';
import type { NestedField, PrimitiveType, StructType } from './types.js';
import { isPrimitive } from './types.js';

export interface PartitionField {
  readonly sourceId: number;
  readonly fieldId: number;
  readonly name: string;
  readonly transform: Transform;
}

export interface PartitionSpec {
  readonly specId: number;
  readonly fields: readonly PartitionField[];
}

/** First partition field id handed out (spec: ids start at 1000). */
export const PARTITION_DATA_ID_START = 1000;

export function partitionFieldsFromJson(fields: unknown): PartitionField[] {
  if (!Array.isArray(fields)) throw new InvalidArgumentError('partition spec without a "fields" array');
  return fields.map((f: Record<string, unknown>, i) => ({
    sourceId: Number(f['source-id']),
    // v1 specs may omit field-id: they are assigned from 1000 in order.
    fieldId: f['field-id'] === undefined ? PARTITION_DATA_ID_START + i : Number(f['field-id']),
    name: String(f.name),
    transform: parseTransform(String(f.transform)),
  }));
}

export function partitionSpecFromJson(json: Record<string, unknown>): PartitionSpec {
  return { specId: Number(json['spec-id'] ?? 0), fields: partitionFieldsFromJson(json.fields) };
}

export function partitionFieldsToJson(fields: readonly PartitionField[]): Record<string, unknown>[] {
  return fields.map((f) => ({
    name: f.name,
    transform: transformToString(f.transform),
    'source-id': f.sourceId,
    'field-id': f.fieldId,
  }));
}

export function partitionSpecToJson(spec: PartitionSpec): Record<string, unknown> {
  return { 'spec-id': spec.specId, fields: partitionFieldsToJson(spec.fields) };
}

export function isUnpartitioned(spec: PartitionSpec): boolean {
  return spec.fields.every((f) => f.transform.kind === 'void');
}

/**
 * The partition tuple's struct type for a spec. All partition fields are optional.
 * A source column dropped from the schema keeps its partition field, typed by `fallbackTypes`
 * when given, else `unknown`.
 */
export function partitionType(spec: PartitionSpec, schema: StructType): StructType {
  const index = indexById(schema);
  const fields: NestedField[] = spec.fields.map((pf) => {
    const source = index.get(pf.sourceId)?.field.type;
    const sourceType: PrimitiveType = source && isPrimitive(source) ? source : { type: 'unknown' };
    return { id: pf.fieldId, name: pf.name, required: false, type: transformResultType(pf.transform, sourceType) };
  });
  return { type: 'struct', fields };
}

export const UNPARTITIONED_SPEC: PartitionSpec = { specId: 0, fields: [] };

export function specToString(spec: PartitionSpec, schema?: Schema): string {
  if (spec.fields.length === 0) return 'unpartitioned';
  const names = schema ? indexById(schema) : undefined;
  return spec.fields
    .map((f) => `${transformToString(f.transform)}(${names?.get(f.sourceId)?.path ?? f.sourceId})`)
    .join(', ');
}

/** A stable string for a (spec, partition tuple) pair, for grouping and equality. */
export function partitionKey(specId: number, partition: Readonly<Record<string, unknown>>): string {
  return `${specId}|${canonicalValueString(Object.values(partition))}`;
}

/**
 * Canonical text of a value: bigint and integral numbers print alike, bytes as hex. -0.0 prints
 * apart from +0.0, as Java's Double.equals and hashCode tell two partitions apart, and its
 * equality deletes two keys (equalityKey; ints have no -0, lib/iceberg/json-single-value.ts reads
 * "-0" as 0); NaN prints alike whatever its bits, as Double.equals and Double.compare see it.
 */
export function canonicalValueString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Object.is(v, -0) ? 'f-0' : Number.isInteger(v) ? v.toString() : `f${v}`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v instanceof Uint8Array) return `x${Buffer.from(v).toString('hex')}`;
  if (Array.isArray(v)) return `[${v.map(canonicalValueString).join(',')}]`;
  if (typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}:${canonicalValueString(x)}`).join(',')}}`;
  }
  return String(v);
}
