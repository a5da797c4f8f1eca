/**
 * Iceberg schema ↔ Arrow schema for Parquet (spec Appendix A, "Parquet"): every field carries
 * its Iceberg id as the `PARQUET:field_id` metadata, which parquet-wasm writes as the Parquet
 * field_id and restores on read. Lists are `list<element>`, maps `map<key_value<key, value>>`.
 */
import * as arrow from 'apache-arrow';
import type { IcebergType, NestedField, PrimitiveType, StructType } from '../iceberg/types.js';

export const FIELD_ID_KEY = 'PARQUET:field_id';
const EXTENSION_NAME_KEY = 'ARROW:extension:name';

function idMetadata(id: number, extra?: [string, string]): Map<string, string> {
  const m = new Map([[FIELD_ID_KEY, String(id)]]);
  if (extra) m.set(extra[0], extra[1]);
  return m;
}

/** The Arrow type that carries an Iceberg primitive (Appendix A physical/logical types). */
export function arrowPrimitiveType(t: PrimitiveType): arrow.DataType {
  switch (t.type) {
    case 'boolean':
      return new arrow.Bool();
    case 'int':
      return new arrow.Int32();
    case 'long':
      return new arrow.Int64();
    case 'float':
      return new arrow.Float32();
    case 'double':
      return new arrow.Float64();
    case 'decimal':
      // parquet-rs stores Decimal128 as INT32 (P <= 9), INT64 (P <= 18) or minimal FLBA, as Java does.
      return new arrow.Decimal(t.scale, t.precision, 128);
    case 'date':
      return new arrow.DateDay();
    case 'time':
      return new arrow.TimeMicrosecond();
    case 'timestamp':
      return new arrow.TimestampMicrosecond();
    case 'timestamptz':
      return new arrow.TimestampMicrosecond('UTC');
    case 'timestamp_ns':
      return new arrow.TimestampNanosecond();
    case 'timestamptz_ns':
      return new arrow.TimestampNanosecond('UTC');
    case 'string':
      return new arrow.Utf8();
    case 'uuid':
      return new arrow.FixedSizeBinary(16);
    case 'fixed':
      return new arrow.FixedSizeBinary(t.length);
    case 'binary':
      return new arrow.Binary();
    case 'unknown':
      return new arrow.Null();
  }
}

/** The Arrow type of any Iceberg type; nested children carry their field ids. */
export function arrowType(t: IcebergType): arrow.DataType {
  switch (t.type) {
    case 'struct':
      return new arrow.Struct(arrowFields(t));
    case 'list':
      return new arrow.List(new arrow.Field('element', arrowType(t.element), !t.elementRequired, idMetadata(t.elementId)));
    case 'map': {
      const entries = new arrow.Field(
        'key_value',
        new arrow.Struct([
          new arrow.Field('key', arrowType(t.key), false, idMetadata(t.keyId)),
          new arrow.Field('value', arrowType(t.value), !t.valueRequired, idMetadata(t.valueId)),
        ]),
        false,
      );
      const map = new arrow.Map_(entries);
      // Arrow JS renames the entries field to "entries"; Iceberg and Java name it key_value.
      (map.children[0] as { name: string }).name = 'key_value';
      return map;
    }
    default:
      return arrowPrimitiveType(t);
  }
}

/** The Arrow field of an Iceberg field, or undefined for `unknown` (never written to data files). */
export function arrowField(f: NestedField): arrow.Field | undefined {
  if (f.type.type === 'unknown') return undefined;
  const extra: [string, string] | undefined = f.type.type === 'uuid' ? [EXTENSION_NAME_KEY, 'arrow.uuid'] : undefined;
  return new arrow.Field(f.name, arrowType(f.type), !f.required, idMetadata(f.id, extra));
}

function arrowFields(s: StructType): arrow.Field[] {
  const out: arrow.Field[] = [];
  for (const f of s.fields) {
    const a = arrowField(f);
    if (a) out.push(a);
  }
  return out;
}

/** The Arrow schema written for an Iceberg schema: `unknown` columns are omitted. */
export function arrowSchema(schema: StructType): arrow.Schema {
  return new arrow.Schema(arrowFields(schema));
}

/** The field id of an Arrow field, or undefined when it has none. */
export function fieldIdOf(f: arrow.Field): number | undefined {
  const v = f.metadata.get(FIELD_ID_KEY);
  if (v === undefined || !/^-?\d+$/.test(v)) return undefined;
  return Number(v);
}

/** Field ids of an Arrow schema read from a file, by Iceberg-style dotted path. */
export interface ArrowFieldIds {
  /** `a`, `a.b`, `l.element`, `m.key`, `m.value`, … → id. */
  readonly byPath: ReadonlyMap<string, number>;
  /** Paths of fields without an id (Java ignores such columns when any field has one). */
  readonly missing: readonly string[];
}

export function fieldIdsOf(schema: arrow.Schema): ArrowFieldIds {
  const byPath = new Map<string, number>();
  const missing: string[] = [];
  const visit = (f: arrow.Field, path: string): void => {
    const id = fieldIdOf(f);
    if (id === undefined) missing.push(path);
    else byPath.set(path, id);
    visitChildren(f.type, path);
  };
  const visitChildren = (t: arrow.DataType, path: string): void => {
    if (arrow.DataType.isStruct(t)) {
      for (const c of t.children) visit(c, `${path}.${c.name}`);
    } else if (arrow.DataType.isList(t) || arrow.DataType.isFixedSizeList(t) || t.typeId === arrow.Type.LargeList) {
      visit(t.children[0], `${path}.element`);
    } else if (arrow.DataType.isMap(t)) {
      const [key, value] = t.children[0].type.children;
      visit(key, `${path}.key`);
      visit(value, `${path}.value`);
    }
  };
  for (const f of schema.fields) visit(f, f.name);
  return { byPath, missing };
}

/** Whether two Arrow types store values the same way (names of list/map children ignored). */
export function sameArrowType(a: arrow.DataType, b: arrow.DataType): boolean {
  if (a.typeId !== b.typeId) return false;
  if (arrow.DataType.isStruct(a)) {
    const bc = (b as arrow.Struct).children;
    return a.children.length === bc.length && a.children.every((c, i) => sameArrowType(c.type, bc[i].type));
  }
  if (arrow.DataType.isList(a) || arrow.DataType.isMap(a)) {
    return sameArrowType(a.children[0].type, (b as arrow.List | arrow.Map_).children[0].type);
  }
  if (arrow.DataType.isDecimal(a)) {
    const d = b as arrow.Decimal;
    return a.scale === d.scale && a.precision === d.precision && a.bitWidth === d.bitWidth;
  }
  if (arrow.DataType.isTimestamp(a)) {
    const t = b as arrow.Timestamp;
    return a.unit === t.unit && (a.timezone == null) === (t.timezone == null);
  }
  if (arrow.DataType.isTime(a)) return a.unit === (b as arrow.Time).unit && a.bitWidth === (b as arrow.Time).bitWidth;
  if (arrow.DataType.isDate(a)) return a.unit === (b as arrow.Date_).unit;
  if (arrow.DataType.isInt(a)) return a.bitWidth === (b as arrow.Int).bitWidth && a.isSigned === (b as arrow.Int).isSigned;
  if (arrow.DataType.isFloat(a)) return a.precision === (b as arrow.Float).precision;
  if (arrow.DataType.isFixedSizeBinary(a)) return a.byteWidth === (b as arrow.FixedSizeBinary).byteWidth;
  return true;
}

/**
 * `decode`, remembering the last 32 schemas by the bytes they came from: a group's files and
 * batches mostly share one, and decoding a schema costs more than comparing its bytes.
 */
export function schemaByBytes(decode: (bytes: Uint8Array) => arrow.Schema): (bytes: Uint8Array) => arrow.Schema {
  const cache = new Map<string, arrow.Schema>();
  return (bytes) => {
    const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    let schema = cache.get(key);
    if (schema === undefined) {
      schema = decode(bytes);
      if (cache.size >= SCHEMA_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      cache.set(key, schema);
    }
    return schema;
  };
}
const SCHEMA_CACHE_SIZE = 32;
