/**
 * Iceberg types (spec "Schemas and Data Types"), as a tagged union with the
 * spec's JSON names. Nested types carry their field ids.
 */
import { InvalidArgumentError } from '../errors.js';
export type PrimitiveType =
  | { readonly type: 'boolean' }
  | { readonly type: 'int' }
  | { readonly type: 'long' }
  | { readonly type: 'float' }
  | { readonly type: 'double' }
  | { readonly type: 'decimal'; readonly precision: number; readonly scale: number }
  | { readonly type: 'date' }
  | { readonly type: 'time' }
  | { readonly type: 'timestamp' }
  | { readonly type: 'timestamptz' }
  | { readonly type: 'timestamp_ns' }
  | { readonly type: 'timestamptz_ns' }
  | { readonly type: 'string' }
  | { readonly type: 'uuid' }
  | { readonly type: 'fixed'; readonly length: number }
  | { readonly type: 'binary' }
  | { readonly type: 'unknown' };

export interface NestedField {
  readonly id: number;
  readonly name: string;
  readonly required: boolean;
  readonly type: IcebergType;
  readonly doc?: string;
  /** JSON single-value form (spec Appendix C), as parsed. */
  readonly initialDefault?: unknown;
  readonly writeDefault?: unknown;
}

export interface StructType {
  readonly type: 'struct';
  readonly fields: readonly NestedField[];
}

export interface ListType {
  readonly type: 'list';
  readonly elementId: number;
  readonly elementRequired: boolean;
  readonly element: IcebergType;
}

export interface MapType {
  readonly type: 'map';
  readonly keyId: number;
  readonly key: IcebergType;
  readonly valueId: number;
  readonly valueRequired: boolean;
  readonly value: IcebergType;
}

export type IcebergType = PrimitiveType | StructType | ListType | MapType;

/** A required field, as the spec's metadata schemas (manifest, manifest list) declare theirs. */
export function requiredField(id: number, name: string, type: IcebergType, doc?: string): NestedField {
  return { id, name, required: true, type, ...(doc !== undefined ? { doc } : {}) };
}

/** An optional field; see requiredField. */
export function optionalField(id: number, name: string, type: IcebergType, doc?: string): NestedField {
  return { id, name, required: false, type, ...(doc !== undefined ? { doc } : {}) };
}
export type TypeName = IcebergType['type'];

const SIMPLE = new Set([
  'boolean', 'int', 'long', 'float', 'double', 'date', 'time', 'timestamp', 'timestamptz',
  'timestamp_ns', 'timestamptz_ns', 'string', 'uuid', 'binary', 'unknown',
]);

export function isPrimitive(t: IcebergType): t is PrimitiveType {
  return t.type !== 'struct' && t.type !== 'list' && t.type !== 'map';
}

/** The types whose values are 64-bit integers (bigint in values.ts): long, time and the timestamps. */
export type LongValuedType = Extract<
  PrimitiveType,
  { readonly type: 'long' | 'time' | 'timestamp' | 'timestamptz' | 'timestamp_ns' | 'timestamptz_ns' }
>;
const LONG_VALUED: ReadonlySet<string> = new Set(['long', 'time', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);

export function isLongValued(t: IcebergType): t is LongValuedType {
  return LONG_VALUED.has(t.type);
}

/** The spec's string form of a primitive type: `decimal(9,2)`, `fixed[16]`, `long`. */
export function primitiveToString(t: PrimitiveType): string {
  switch (t.type) {
    case 'decimal':
      return `decimal(${t.precision}, ${t.scale})`;
    case 'fixed':
      return `fixed[${t.length}]`;
    default:
      return t.type;
  }
}

export function parsePrimitive(s: string): PrimitiveType {
  const name = s.trim();
  if (SIMPLE.has(name)) return { type: name } as PrimitiveType;
  const dec = /^decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(name);
  if (dec) return { type: 'decimal', precision: Number(dec[1]), scale: Number(dec[2]) };
  const fixed = /^fixed\s*\[\s*(\d+)\s*\]$/.exec(name);
  if (fixed) return { type: 'fixed', length: Number(fixed[1]) };
  throw new InvalidArgumentError(`unknown Iceberg type "${s}"`);
}

/** Parses the JSON form of a type (spec Appendix C). */
export function typeFromJson(json: unknown): IcebergType {
  if (typeof json === 'string') return parsePrimitive(json);
  if (json === null || typeof json !== 'object') throw new InvalidArgumentError(`invalid type JSON: ${JSON.stringify(json)}`);
  const o = json as Record<string, unknown>;
  switch (o.type) {
    case 'struct':
      return structFromJson(o);
    case 'list':
      return {
        type: 'list',
        elementId: Number(o['element-id']),
        elementRequired: Boolean(o['element-required']),
        element: typeFromJson(o.element),
      };
    case 'map':
      return {
        type: 'map',
        keyId: Number(o['key-id']),
        key: typeFromJson(o.key),
        valueId: Number(o['value-id']),
        valueRequired: Boolean(o['value-required']),
        value: typeFromJson(o.value),
      };
    default:
      throw new InvalidArgumentError(`unknown nested type ${JSON.stringify(o.type)}`);
  }
}

export function structFromJson(o: Record<string, unknown>): StructType {
  const fields = o.fields;
  if (!Array.isArray(fields)) throw new InvalidArgumentError('struct type without a "fields" array');
  return {
    type: 'struct',
    fields: fields.map((f: Record<string, unknown>) => {
      const field: NestedField = {
        id: Number(f.id),
        name: String(f.name),
        required: Boolean(f.required),
        type: typeFromJson(f.type),
        ...(f.doc !== undefined ? { doc: String(f.doc) } : {}),
        ...('initial-default' in f ? { initialDefault: f['initial-default'] } : {}),
        ...('write-default' in f ? { writeDefault: f['write-default'] } : {}),
      };
      return field;
    }),
  };
}

export function typeToJson(t: IcebergType): unknown {
  switch (t.type) {
    case 'struct':
      return structToJson(t);
    case 'list':
      return {
        type: 'list',
        'element-id': t.elementId,
        element: typeToJson(t.element),
        'element-required': t.elementRequired,
      };
    case 'map':
      return {
        type: 'map',
        'key-id': t.keyId,
        key: typeToJson(t.key),
        'value-id': t.valueId,
        value: typeToJson(t.value),
        'value-required': t.valueRequired,
      };
    default:
      return primitiveToString(t);
  }
}

export function structToJson(t: StructType): Record<string, unknown> {
  return {
    type: 'struct',
    fields: t.fields.map((f) => ({
      id: f.id,
      name: f.name,
      required: f.required,
      type: typeToJson(f.type),
      ...(f.doc !== undefined ? { doc: f.doc } : {}),
      ...(f.initialDefault !== undefined ? { 'initial-default': f.initialDefault } : {}),
      ...(f.writeDefault !== undefined ? { 'write-default': f.writeDefault } : {}),
    })),
  };
}

/** Field-id preserving promotions allowed by the spec ("Schema Evolution"). */
export function isPromotionAllowed(from: PrimitiveType, to: PrimitiveType): boolean {
  if (from.type === to.type) {
    if (from.type === 'decimal' && to.type === 'decimal') return from.scale === to.scale && to.precision >= from.precision;
    if (from.type === 'fixed' && to.type === 'fixed') return from.length === to.length;
    return true;
  }
  if (from.type === 'int' && to.type === 'long') return true;
  if (from.type === 'float' && to.type === 'double') return true;
  if (from.type === 'date' && (to.type === 'timestamp' || to.type === 'timestamp_ns')) return true;
  if (from.type === 'unknown') return true;
  return false;
}

export const INT = { type: 'int' } as const;
export const LONG = { type: 'long' } as const;
export const STRING = { type: 'string' } as const;
export const BINARY = { type: 'binary' } as const;
