/**
 * Avro for Iceberg metadata (spec "Avro", Appendix A): the Iceberg → Avro schema
 * mapping of Java's avro/TypeToSchema.java, a BigInt-backed `long`, and container
 * files (Avro spec "Object Container Files") read as a stream and written the way
 * Java's DataFileWriter does.
 *
 * avsc decodes and encodes single records; the container framing is ours so that
 * the header keeps Iceberg's schema attributes (avsc drops them), errors name the
 * file, and reading works from an async byte stream without Node streams.
 */
import { randomBytes } from 'node:crypto';
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import avro from 'avsc';
import type { Schema as AvscSchema, Type as AvscType } from 'avsc';
import { IllegalStateError, InvalidArgumentError, InvalidFileError, UnsupportedError } from '../errors.js';
import type { IcebergType, NestedField, PrimitiveType, StructType } from './types.js';
import { isLongValued, typeToJson } from './types.js';
import type { IcebergValue, Row } from './values.js';
import { bigIntFromTwosComplement, bigIntToTwosComplement, uuidFromBytes, uuidToBytes } from './values.js';

/** An Avro schema as JSON: a type name, a union array, or a schema object. */
export type AvroSchema = string | readonly AvroSchema[] | AvroSchemaObject;
export interface AvroSchemaObject {
  readonly type: AvroSchema;
  readonly [attribute: string]: unknown;
}

export type AvroType = AvscType;

// ---------------------------------------------------------------------------
// long as BigInt

/** The parts of avsc's (internal) Tap that a long reader and writer touch. */
interface Tap {
  buf: Buffer;
  pos: number;
  readLong(): number;
  skipLong(): void;
  writeLong(n: number): void;
}

/** The parts of avsc's (internal) types that the readers below call. */
interface AvscInternals {
  _read(tap: Tap): unknown;
  readonly itemsType?: AvscInternals;
  readonly fields?: readonly { readonly type: AvscInternals }[];
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const SAFE = 2n ** 52n;

function isInt64(v: unknown): v is bigint {
  return typeof v === 'bigint' && v >= INT64_MIN && v <= INT64_MAX;
}

/** Small longs (counts, ids) are common: share their BigInts instead of allocating. */
const SMALL_LONGS: readonly bigint[] = Array.from({ length: 4096 }, (_, z) => BigInt(z % 2 === 1 ? -(z + 1) / 2 : z / 2));

function readBigLong(tap: Tap): bigint {
  const buf = tap.buf;
  let pos = tap.pos;
  const b0 = buf[pos];
  if (b0 < 0x80) {
    tap.pos = pos + 1;
    return SMALL_LONGS[b0];
  }
  const b1 = buf[pos + 1];
  if (b1 < 0x20) {
    tap.pos = pos + 2;
    return SMALL_LONGS[(b0 & 0x7f) | (b1 << 7)];
  }
  let n = 0;
  let mul = 1;
  // Up to 7 bytes (49 bits) the zig-zag value is exact in a double: no BigInt arithmetic.
  for (let i = 0; i < 7; i++) {
    const b = buf[pos++];
    n += (b & 0x7f) * mul;
    if (!(b & 0x80)) {
      tap.pos = pos;
      return BigInt(n % 2 === 1 ? -(n + 1) / 2 : n / 2);
    }
    mul *= 128;
  }
  let z = BigInt(n);
  let shift = 49n;
  let b: number;
  do {
    b = buf[pos++];
    z |= BigInt(b & 0x7f) << shift;
    shift += 7n;
  } while (b & 0x80 && shift < 70n);
  tap.pos = pos;
  return BigInt.asIntN(64, (z >> 1n) ^ -(z & 1n));
}

function writeBigLong(tap: Tap, v: unknown): void {
  if (!isInt64(v)) throw new InvalidArgumentError(`invalid "long": ${describe(v)} (expected a bigint in the int64 range)`);
  if (v > -SAFE && v < SAFE) {
    tap.writeLong(Number(v));
    return;
  }
  let z = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
  const buf = tap.buf;
  while (z >= 0x80n) {
    buf[tap.pos++] = Number(z & 0x7fn) | 0x80;
    z >>= 7n;
  }
  buf[tap.pos++] = Number(z);
}

function describe(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Uint8Array) return `bytes[${v.length}]`;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/**
 * avsc's `long` rejects values beyond 2^53 (snapshot ids are that large). This one
 * reads and writes bigint. avsc's own `LongType.__with` unpacks every long into a
 * fresh 8-byte buffer; overriding `_read`/`_write` on a derived object avoids that.
 */
export const BIGINT_LONG: AvscType = (() => {
  const base = avro.types.LongType.__with({
    fromBuffer: (b: Buffer) => b.readBigInt64LE(0),
    toBuffer: (v: bigint) => {
      const b = Buffer.alloc(8);
      b.writeBigInt64LE(v);
      return b;
    },
    fromJSON: (x: unknown) => BigInt(x as number | string | bigint),
    toJSON: (v: bigint) => (v > -SAFE && v < SAFE ? Number(v) : v.toString()),
    isValid: isInt64,
    compare: (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0),
  });
  const fast = Object.create(base) as Record<string, unknown>;
  fast._read = readBigLong;
  fast._write = writeBigLong;
  fast._skip = (tap: Tap) => tap.skipLong();
  fast._copy = (v: bigint) => v;
  return Object.freeze(fast) as unknown as AvscType;
})();

/**
 * `bytes` read as a Uint8Array view of the decoded block instead of a pooled copy
 * (most of a manifest is bounds). Written values must still be Buffers.
 */
const BYTES_VIEW: AvscType = (() => {
  const base = avro.Type.forSchema('bytes');
  const view = Object.create(base) as Record<string, unknown>;
  view._read = (tap: Tap): Uint8Array | undefined => {
    const len = tap.readLong();
    const pos = tap.pos;
    tap.pos += len;
    if (len < 0 || tap.pos > tap.buf.length) {
      tap.pos = tap.buf.length + 1; // invalid: avsc reports a truncated buffer
      return undefined;
    }
    return new Uint8Array(tap.buf.buffer, tap.buf.byteOffset + pos, len);
  };
  return Object.freeze(view) as unknown as AvscType;
})();

/**
 * An array with logicalType "map" (Iceberg's non-string-key maps) read straight into a
 * JS Map, skipping one record object per pair. Written as the array of {key, value}.
 */
function mapArrayType(schema: AvroSchemaObject, opts: unknown): AvscType | undefined {
  const plain = { ...schema, logicalType: undefined } as unknown as AvscSchema;
  const base = avro.Type.forSchema(plain, opts as Parameters<typeof avro.Type.forSchema>[1]);
  const fields = (base as unknown as AvscInternals).itemsType?.fields;
  if (!fields || fields.length !== 2) return base;
  const key = fields[0].type;
  const value = fields[1].type;
  const t = Object.create(base) as Record<string, unknown>;
  t._read = (tap: Tap): Map<unknown, unknown> => {
    const m = new Map<unknown, unknown>();
    let n: number;
    while ((n = tap.readLong())) {
      if (n < 0) {
        n = -n;
        tap.skipLong();
      }
      while (n-- > 0) m.set(key._read(tap), value._read(tap));
    }
    return m;
  };
  return Object.freeze(t) as unknown as AvscType;
}

function typeHook(schema: AvscSchema, opts: unknown): AvscType | undefined {
  if (schema === 'long') return BIGINT_LONG;
  if (schema === 'bytes') return BYTES_VIEW;
  if (typeof schema === 'object' && schema !== null && !Array.isArray(schema)) {
    const o = schema as unknown as AvroSchemaObject;
    if (o.type === 'long') return BIGINT_LONG;
    if (o.type === 'bytes' && o.logicalType === undefined) return BYTES_VIEW;
    if (o.type === 'array' && o.logicalType === 'map') return mapArrayType(o, opts);
  }
  return undefined;
}

/**
 * An avsc type for the schema. Every `long` (logical or not) reads and writes as
 * bigint; `bytes` read as Uint8Array views (write Buffers); arrays with logicalType
 * "map" read as a Map (write an array of {key, value}).
 */
export function avroType(schema: AvroSchema): AvscType {
  // Building a type compiles its readers (avsc generates code), and a table's manifests share a
  // handful of schemas: reading 260 manifests built 260 identical types, most of `packice info`.
  const key = JSON.stringify(schema);
  let type = TYPE_CACHE.get(key);
  if (type === undefined) {
    type = avro.Type.forSchema(schema as AvscSchema, { typeHook });
    if (TYPE_CACHE.size >= TYPE_CACHE_SIZE) TYPE_CACHE.delete(TYPE_CACHE.keys().next().value!);
    TYPE_CACHE.set(key, type);
  }
  return type;
}

const TYPE_CACHE_SIZE = 64;
const TYPE_CACHE = new Map<string, AvscType>();

/** A reader schema applied to data written with another (Avro schema resolution). */
export interface AvroProjection {
  readonly type: AvscType;
  readonly resolver: ReturnType<AvscType['createResolver']>;
}

/**
 * Reads data written with `writer` as `reader`: fields the reader lacks are skipped, not
 * decoded (no objects, maps or BigInts for them). Cached as avroType is.
 */
export function avroProjection(reader: AvroSchema, writer: AvroSchema): AvroProjection {
  const key = `${JSON.stringify(reader)}\n${JSON.stringify(writer)}`;
  let p = PROJECTION_CACHE.get(key);
  if (p === undefined) {
    const type = avroType(reader);
    p = { type, resolver: type.createResolver(avroType(writer)) };
    if (PROJECTION_CACHE.size >= TYPE_CACHE_SIZE) PROJECTION_CACHE.delete(PROJECTION_CACHE.keys().next().value!);
    PROJECTION_CACHE.set(key, p);
  }
  return p;
}

const PROJECTION_CACHE = new Map<string, AvroProjection>();

// ---------------------------------------------------------------------------
// Iceberg type → Avro schema (avro/TypeToSchema.java, AvroSchemaUtil.java)

export const FIELD_ID_PROP = 'field-id';
export const ELEMENT_ID_PROP = 'element-id';
export const KEY_ID_PROP = 'key-id';
export const VALUE_ID_PROP = 'value-id';
export const ADJUST_TO_UTC_PROP = 'adjust-to-utc';
export const ICEBERG_FIELD_NAME_PROP = 'iceberg-field-name';

const LETTER = /\p{L}/u;
const LETTER_OR_DIGIT = /[\p{L}\p{Nd}]/u;
const DIGIT = /\p{Nd}/u;

/** AvroSchemaUtil.validAvroName: a letter or `_`, then letters, digits or `_`. */
export function isValidAvroName(name: string): boolean {
  if (name.length === 0) throw new InvalidArgumentError('Empty name');
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    const ok = c === '_' || (i === 0 ? LETTER.test(c) : LETTER_OR_DIGIT.test(c));
    if (!ok) return false;
  }
  return true;
}

/** AvroSchemaUtil.sanitize: a leading digit gets `_`, other bad characters become `_x<HEX>`. */
export function sanitizeAvroName(name: string): string {
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    const ok = c === '_' || (i === 0 ? LETTER.test(c) : LETTER_OR_DIGIT.test(c));
    if (ok) out += c;
    else if (DIGIT.test(c)) out += `_${c}`;
    else out += `_x${c.charCodeAt(0).toString(16).toUpperCase()}`;
  }
  return out;
}

/** The Avro field name Java writes for an Iceberg field name. */
export function avroFieldName(name: string): string {
  return isValidAvroName(name) ? name : sanitizeAvroName(name);
}

/** TypeUtil.decimalRequiredBytes: the fewest bytes whose signed range holds 10^P − 1. */
export function decimalRequiredBytes(precision: number): number {
  if (precision < 0 || precision > 40) throw new InvalidArgumentError(`Unsupported decimal precision: ${precision}`);
  const max = 10n ** BigInt(precision) - 1n;
  let n = 1;
  while (max > 2n ** BigInt(8 * n - 1) - 1n) n++;
  return n;
}

/**
 * The Avro schema Java writes for an Iceberg struct (AvroSchemaUtil.convert(type, name)):
 * records named `r<fieldId>` (the root takes `rootName`), optional fields as
 * ["null", T] with default null, ids in `field-id`/`element-id`/`key-id`/`value-id`,
 * non-string-key maps as arrays of `k<kid>_v<vid>` records with logicalType "map".
 * Named types (records, fixed) are defined at their first use and referenced by
 * name afterwards, as Avro's Schema.toString() prints them.
 */
export function icebergToAvroSchema(struct: StructType, rootName: string): AvroSchemaObject {
  const defined = new Set<string>();
  const structNames = new Map<string, string>();

  const named = (name: string, build: () => AvroSchemaObject): AvroSchema => {
    if (defined.has(name)) return name;
    defined.add(name);
    return build();
  };

  const option = (s: AvroSchema): AvroSchema => (s === 'null' ? s : ['null', s]);

  const convertStruct = (t: StructType, fieldId: number | undefined): AvroSchema => {
    // Java caches converted structs by equality: an equal struct reuses the first name.
    const key = JSON.stringify(typeToJson(t));
    let name = structNames.get(key);
    if (name === undefined) {
      name = fieldId === undefined ? rootName : `r${fieldId}`;
      structNames.set(key, name);
    }
    return named(name, () => ({
      type: 'record',
      name: name as string,
      fields: t.fields.map(convertField),
    }));
  };

  const convertField = (f: NestedField): AvroSchemaObject => {
    const inner = convert(f.type, f.id);
    const valid = isValidAvroName(f.name);
    const out: Record<string, unknown> = {
      name: valid ? f.name : sanitizeAvroName(f.name),
      type: f.required ? inner : option(inner),
    };
    if (f.doc !== undefined) out.doc = f.doc;
    if (!f.required) out.default = null;
    if (!valid) out[ICEBERG_FIELD_NAME_PROP] = f.name;
    out[FIELD_ID_PROP] = f.id;
    return out as unknown as AvroSchemaObject;
  };

  const convert = (t: IcebergType, fieldId: number | undefined): AvroSchema => {
    switch (t.type) {
      case 'struct':
        return convertStruct(t, fieldId);
      case 'list': {
        const element = convert(t.element, t.elementId);
        return { type: 'array', items: t.elementRequired ? element : option(element), [ELEMENT_ID_PROP]: t.elementId };
      }
      case 'map': {
        const key = convert(t.key, t.keyId);
        const value = convert(t.value, t.valueId);
        const valueSchema = t.valueRequired ? value : option(value);
        if (key === 'string') {
          return { type: 'map', values: valueSchema, [KEY_ID_PROP]: t.keyId, [VALUE_ID_PROP]: t.valueId };
        }
        const kvName = `k${t.keyId}_v${t.valueId}`;
        const valueField: Record<string, unknown> = { name: 'value', type: valueSchema };
        if (!t.valueRequired) valueField.default = null;
        valueField[FIELD_ID_PROP] = t.valueId;
        return {
          type: 'array',
          items: named(kvName, () => ({
            type: 'record',
            name: kvName,
            fields: [{ name: 'key', type: key, [FIELD_ID_PROP]: t.keyId }, valueField],
          })),
          logicalType: 'map',
        };
      }
      default:
        return primitiveSchema(t, named);
    }
  };

  const root = convertStruct(struct, undefined);
  if (typeof root === 'string') throw new IllegalStateError('unreachable: the root record is always defined');
  return root as AvroSchemaObject;
}

/** The primitives Avro spells as Iceberg does: the schema is the type's name, both ways. */
type NamedAsInAvro = Extract<PrimitiveType, { readonly type: 'boolean' | 'int' | 'long' | 'float' | 'double' | 'string' }>;
const NAMED_AS_IN_AVRO: ReadonlySet<string> = new Set(['boolean', 'int', 'long', 'float', 'double', 'string']);

function isNamedAsInAvro(t: PrimitiveType): t is NamedAsInAvro {
  return NAMED_AS_IN_AVRO.has(t.type);
}

function primitiveSchema(t: PrimitiveType, named: (name: string, build: () => AvroSchemaObject) => AvroSchema): AvroSchema {
  if (isNamedAsInAvro(t)) return t.type;
  switch (t.type) {
    case 'unknown':
      return 'null';
    case 'binary':
      return 'bytes';
    case 'date':
      return { type: 'int', logicalType: 'date' };
    case 'time':
      return { type: 'long', logicalType: 'time-micros' };
    case 'timestamp':
    case 'timestamptz':
      return { type: 'long', logicalType: 'timestamp-micros', [ADJUST_TO_UTC_PROP]: t.type === 'timestamptz' };
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return { type: 'long', logicalType: 'timestamp-nanos', [ADJUST_TO_UTC_PROP]: t.type === 'timestamptz_ns' };
    case 'uuid':
      return named('uuid_fixed', () => ({ type: 'fixed', name: 'uuid_fixed', size: 16, logicalType: 'uuid' }));
    case 'fixed':
      return named(`fixed_${t.length}`, () => ({ type: 'fixed', name: `fixed_${t.length}`, size: t.length }));
    case 'decimal': {
      const name = `decimal_${t.precision}_${t.scale}`;
      return named(name, () => ({
        type: 'fixed',
        name,
        size: decimalRequiredBytes(t.precision),
        logicalType: 'decimal',
        precision: t.precision,
        scale: t.scale,
      }));
    }
  }
}

/**
 * The Iceberg primitive type an Avro schema stores (SchemaToType.java), or undefined
 * for complex types. `named` resolves names of fixed types defined elsewhere.
 */
export function icebergPrimitiveOf(schema: AvroSchema, named?: ReadonlyMap<string, AvroSchemaObject>): PrimitiveType | undefined {
  if (Array.isArray(schema)) {
    const branches = schema.filter((s) => s !== 'null');
    return branches.length === 1 ? icebergPrimitiveOf(branches[0], named) : schema.length === 1 ? { type: 'unknown' } : undefined;
  }
  if (typeof schema === 'string') {
    if (NAMED_AS_IN_AVRO.has(schema)) return { type: schema } as NamedAsInAvro;
    switch (schema) {
      case 'null':
        return { type: 'unknown' };
      case 'bytes':
        return { type: 'binary' };
      default: {
        const def = named?.get(schema);
        return def ? icebergPrimitiveOf(def, named) : undefined;
      }
    }
  }
  const o = schema as AvroSchemaObject;
  const logical = o.logicalType;
  switch (o.type) {
    case 'int':
      return logical === 'date' ? { type: 'date' } : { type: 'int' };
    case 'long':
      if (logical === 'time-micros') return { type: 'time' };
      if (logical === 'timestamp-micros' || logical === 'timestamp-nanos') {
        const utc = o[ADJUST_TO_UTC_PROP] === true || o[ADJUST_TO_UTC_PROP] === 'true';
        if (logical === 'timestamp-micros') return { type: utc ? 'timestamptz' : 'timestamp' };
        return { type: utc ? 'timestamptz_ns' : 'timestamp_ns' };
      }
      return { type: 'long' };
    case 'string':
      return logical === 'uuid' ? { type: 'uuid' } : { type: 'string' };
    case 'bytes':
    case 'fixed':
      if (logical === 'decimal') return { type: 'decimal', precision: Number(o.precision), scale: Number(o.scale ?? 0) };
      if (o.type === 'bytes') return { type: 'binary' };
      if (logical === 'uuid') return { type: 'uuid' };
      return { type: 'fixed', length: Number(o.size) };
    case 'boolean':
    case 'float':
    case 'double':
    case 'null':
      return icebergPrimitiveOf(o.type, named);
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------
// Field lookup by id: older writers used other names (manifest lists' added_data_files_count …).

/** A record as avsc decodes it: fields by Avro name. */
export type AvroRecord = Record<string, unknown>;

export interface RecordFields {
  readonly byId: ReadonlyMap<number, string>;
  readonly byName: ReadonlySet<string>;
  readonly named: ReadonlyMap<string, AvroSchemaObject>;
}

/** Every named type (record, fixed, enum) defined in a schema, by full name. */
export function namedAvroTypes(schema: AvroSchema, out = new Map<string, AvroSchemaObject>()): Map<string, AvroSchemaObject> {
  if (Array.isArray(schema)) {
    for (const s of schema) namedAvroTypes(s, out);
  } else if (typeof schema === 'object' && schema !== null) {
    const o = schema as AvroSchemaObject;
    if (typeof o.name === 'string' && (o.type === 'record' || o.type === 'fixed' || o.type === 'enum' || o.type === 'error')) {
      out.set(o.name, o);
    }
    if (Array.isArray(o.fields)) for (const f of o.fields as { type: AvroSchema }[]) namedAvroTypes(f.type, out);
    if (o.items !== undefined) namedAvroTypes(o.items as AvroSchema, out);
    if (o.values !== undefined) namedAvroTypes(o.values as AvroSchema, out);
    if (typeof o.type === 'object') namedAvroTypes(o.type, out);
  }
  return out;
}

/** The record schema behind a field's schema: through a ["null", T] union, an array, or a name. */
export function resolveRecord(
  schema: AvroSchema | undefined,
  named: ReadonlyMap<string, AvroSchemaObject>,
): AvroSchemaObject | undefined {
  if (schema === undefined) return undefined;
  if (Array.isArray(schema)) {
    for (const s of schema) {
      const r = resolveRecord(s, named);
      if (r) return r;
    }
    return undefined;
  }
  if (typeof schema === 'string') return named.get(schema);
  const o = schema as AvroSchemaObject;
  if (o.type === 'record' || o.type === 'error') return o;
  if (o.type === 'array') return resolveRecord(o.items as AvroSchema, named);
  if (typeof o.type === 'object') return resolveRecord(o.type, named);
  if (typeof o.type === 'string' && o.type !== 'map') return named.get(o.type);
  return undefined;
}

export interface AvroFieldSchema {
  readonly name: string;
  readonly type: AvroSchema;
  readonly [attribute: string]: unknown;
}

export function recordFieldsOf(record: AvroSchemaObject): readonly AvroFieldSchema[] {
  return (Array.isArray(record.fields) ? record.fields : []) as AvroFieldSchema[];
}

export function fieldIndex(record: AvroSchemaObject, named: ReadonlyMap<string, AvroSchemaObject>): RecordFields {
  const byId = new Map<number, string>();
  const byName = new Set<string>();
  for (const f of recordFieldsOf(record)) {
    byName.add(f.name);
    const id = f['field-id'];
    if (typeof id === 'number' || typeof id === 'string') byId.set(Number(id), f.name);
  }
  return { byId, byName, named };
}

/** The Avro name of the field with this id, falling back to the spec name when ids are missing. */
export function fieldName(index: RecordFields, id: number, specName: string): string | undefined {
  const byId = index.byId.get(id);
  if (byId !== undefined) return byId;
  return index.byId.size === 0 && index.byName.has(specName) ? specName : undefined;
}

// ---------------------------------------------------------------------------
// Values: Avro (as avsc reads and writes them) ↔ lib/iceberg/values.ts

function asBytes(v: Uint8Array): Uint8Array {
  // avsc hands out Buffers; callers get plain Uint8Array views (no copy).
  return Buffer.isBuffer(v) ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : v;
}

function asBuffer(v: Uint8Array): Buffer {
  return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** A primitive value as avsc decoded it → the values.ts form for `type`. */
export function primitiveFromAvro(type: PrimitiveType, v: unknown): IcebergValue {
  if (v === null || v === undefined) return null;
  // int → long promotion reads an int.
  if (isLongValued(type)) return typeof v === 'bigint' ? v : BigInt(v as number);
  switch (type.type) {
    case 'decimal':
      return typeof v === 'bigint' ? v : bigIntFromTwosComplement(v as Uint8Array);
    case 'uuid':
      return typeof v === 'string' ? v.toLowerCase() : uuidFromBytes(v as Uint8Array);
    case 'fixed':
    case 'binary':
      return asBytes(v as Uint8Array);
    case 'unknown':
      return null;
    default:
      return v as IcebergValue;
  }
}

/** A values.ts primitive → what avsc writes for `type` (as icebergToAvroSchema maps it). */
export function primitiveToAvro(type: PrimitiveType, v: IcebergValue): unknown {
  if (v === null || v === undefined) return null;
  switch (type.type) {
    case 'decimal':
      return asBuffer(bigIntToTwosComplement(v as bigint, decimalRequiredBytes(type.precision)));
    case 'uuid':
      return asBuffer(uuidToBytes(v as string));
    case 'fixed':
    case 'binary':
      return asBuffer(v as Uint8Array);
    case 'unknown':
      return null;
    default:
      return v;
  }
}

/** Any Avro value (written per icebergToAvroSchema) → the values.ts form. */
export function fromAvroValue(type: IcebergType, v: unknown): IcebergValue {
  if (v === null || v === undefined) return null;
  switch (type.type) {
    case 'struct': {
      const rec = v as Record<string, unknown>;
      const row: Row = {};
      for (const f of type.fields) row[f.name] = fromAvroValue(f.type, rec[avroFieldName(f.name)]);
      return row;
    }
    case 'list':
      return (v as unknown[]).map((e) => fromAvroValue(type.element, e));
    case 'map': {
      if (v instanceof Map) {
        return [...v].map(([k, val]) => [fromAvroValue(type.key, k), fromAvroValue(type.value, val)] as [IcebergValue, IcebergValue]);
      }
      if (Array.isArray(v)) {
        return (v as { key: unknown; value: unknown }[]).map(
          (kv) => [fromAvroValue(type.key, kv.key), fromAvroValue(type.value, kv.value)] as [IcebergValue, IcebergValue],
        );
      }
      return Object.entries(v as Record<string, unknown>).map(
        ([k, val]) => [fromAvroValue(type.key, k), fromAvroValue(type.value, val)] as [IcebergValue, IcebergValue],
      );
    }
    default:
      return primitiveFromAvro(type, v);
  }
}

/** A values.ts value → what avsc writes for the schema icebergToAvroSchema makes for `type`. */
export function toAvroValue(type: IcebergType, v: IcebergValue): unknown {
  if (v === null || v === undefined) return null;
  switch (type.type) {
    case 'struct': {
      const row = v as Row;
      const rec: Record<string, unknown> = {};
      for (const f of type.fields) rec[avroFieldName(f.name)] = toAvroValue(f.type, row[f.name] ?? null);
      return rec;
    }
    case 'list':
      return (v as IcebergValue[]).map((e) => toAvroValue(type.element, e));
    case 'map': {
      const pairs = v as Array<[IcebergValue, IcebergValue]>;
      if (type.key.type === 'string') {
        const out = Object.create(null) as Record<string, unknown>;
        for (const [k, val] of pairs) out[k as string] = toAvroValue(type.value, val);
        return out;
      }
      return pairs.map(([k, val]) => ({ key: toAvroValue(type.key, k), value: toAvroValue(type.value, val) }));
    }
    default:
      return primitiveToAvro(type, v);
  }
}

// ---------------------------------------------------------------------------
// Container files: writing

const MAGIC = Buffer.from([0x4f, 0x62, 0x6a, 0x01]); // "Obj" 1
const SYNC_SIZE = 16;
/** Avro's DataFileConstants.DEFAULT_SYNC_INTERVAL. */
export const DEFAULT_SYNC_INTERVAL = 64000;
/** Iceberg's default Avro codec is gzip, i.e. deflate at level 9 (Avro.java). */
export const DEFAULT_DEFLATE_LEVEL = 9;

export type AvroCodec = 'null' | 'deflate';

export interface AvroWriterOptions {
  /** Key-value metadata in the order the writer sets it (it decides the order Java would write). */
  readonly meta?: ReadonlyArray<readonly [string, string | Uint8Array]>;
  /** @default 'deflate' */
  readonly codec?: AvroCodec;
  /** @default 9 */
  readonly deflateLevel?: number;
  /** Uncompressed bytes per block. @default 64000 */
  readonly syncInterval?: number;
  /** @default 16 random bytes */
  readonly syncMarker?: Uint8Array;
}

/** Java's String.hashCode. */
function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * The iteration order of a java.util.HashMap holding these keys, inserted in this
 * order. Avro's DataFileWriter keeps its metadata in one, so this is the order of the
 * keys in every header Java writes.
 */
export function javaHashMapOrder(keys: readonly string[]): string[] {
  let capacity = 16;
  while (keys.length > capacity * 0.75) capacity *= 2;
  const bucket = (k: string): number => {
    const h = javaStringHash(k);
    return (h ^ (h >>> 16)) & (capacity - 1);
  };
  return keys
    .map((k, i) => ({ k, i, b: bucket(k) }))
    .sort((x, y) => x.b - y.b || x.i - y.i)
    .map((x) => x.k);
}

class ByteSink {
  buf: Buffer;
  pos = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }
  ensure(extra: number): void {
    if (this.pos + extra <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + extra));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  varLong(n: number): void {
    this.ensure(10);
    let z = n >= 0 ? n * 2 : -n * 2 - 1;
    while (z >= 0x80) {
      this.buf[this.pos++] = (z % 0x80) | 0x80;
      z = Math.floor(z / 0x80);
    }
    this.buf[this.pos++] = z;
  }
  bytes(b: Uint8Array): void {
    this.varLong(b.length);
    this.raw(b);
  }
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
  take(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

const UTF8 = new TextEncoder();

/**
 * Writes an Avro object container file in memory. The header's `avro.schema` is the
 * schema JSON exactly as given (with Iceberg's attributes), and the header keys come
 * in the order Java's DataFileWriter would write them.
 */
export class AvroContainerWriter<T = unknown> {
  readonly type: AvscType;
  private readonly chunks: Buffer[] = [];
  private readonly block: ByteSink;
  private readonly sync: Buffer;
  private readonly codec: AvroCodec;
  private readonly level: number;
  private readonly syncInterval: number;
  private count = 0;
  private written = 0;
  private finished = false;

  constructor(schema: AvroSchemaObject, options: AvroWriterOptions = {}) {
    this.type = avroType(schema);
    this.codec = options.codec ?? 'deflate';
    this.level = options.deflateLevel ?? DEFAULT_DEFLATE_LEVEL;
    this.syncInterval = options.syncInterval ?? DEFAULT_SYNC_INTERVAL;
    this.sync = Buffer.from(options.syncMarker ?? randomBytes(SYNC_SIZE));
    if (this.sync.length !== SYNC_SIZE) throw new InvalidArgumentError('an Avro sync marker has 16 bytes');
    this.block = new ByteSink(this.syncInterval + 4096);

    // DataFileWriter: setCodec, then the caller's setMeta calls, then create() sets the schema.
    const entries = new Map<string, Uint8Array>();
    entries.set('avro.codec', UTF8.encode(this.codec));
    for (const [k, v] of options.meta ?? []) entries.set(k, typeof v === 'string' ? UTF8.encode(v) : v);
    entries.set('avro.schema', UTF8.encode(JSON.stringify(schema)));
    const header = new ByteSink(4096);
    header.raw(MAGIC);
    header.varLong(entries.size);
    for (const key of javaHashMapOrder([...entries.keys()])) {
      header.bytes(UTF8.encode(key));
      header.bytes(entries.get(key) as Uint8Array);
    }
    header.varLong(0);
    header.raw(this.sync);
    this.push(Buffer.from(header.take()));
  }

  /** Appends one record; throws TypeError naming the bad value's path when it does not fit the schema. */
  append(record: T): void {
    if (this.finished) throw new IllegalStateError('the Avro writer is closed');
    const sink = this.block;
    for (;;) {
      const end = this.type.encode(record, sink.buf, sink.pos);
      if (end >= 0) {
        sink.pos = end;
        break;
      }
      // avsc returns minus the bytes missing past the end of the buffer, not past pos.
      sink.ensure(sink.buf.length - sink.pos - end + 1024);
    }
    this.count++;
    if (sink.pos >= this.syncInterval) this.flush();
  }

  /** Bytes of the file so far (blocks still buffered not included). */
  get length(): number {
    return this.written;
  }

  /** Writes the last block and returns the whole file. */
  finish(): Uint8Array {
    if (!this.finished) {
      this.flush();
      this.finished = true;
    }
    const all = Buffer.concat(this.chunks, this.written);
    return new Uint8Array(all.buffer, all.byteOffset, all.byteLength);
  }

  private flush(): void {
    if (this.count === 0) return;
    const raw = this.block.take();
    const data = this.codec === 'deflate' ? deflateRawSync(raw, { level: this.level }) : Buffer.from(raw);
    const head = new ByteSink(20);
    head.varLong(this.count);
    head.varLong(data.length);
    this.push(Buffer.from(head.take()));
    this.push(data);
    this.push(this.sync);
    this.block.pos = 0;
    this.count = 0;
  }

  private push(b: Buffer): void {
    this.chunks.push(b);
    this.written += b.length;
  }
}

/** Writes a whole container file: the schema, the metadata, the records. */
export function writeAvroContainer<T>(schema: AvroSchemaObject, records: Iterable<T>, options: AvroWriterOptions = {}): Uint8Array {
  const w = new AvroContainerWriter<T>(schema, options);
  for (const r of records) w.append(r);
  return w.finish();
}

// ---------------------------------------------------------------------------
// Container files: reading

export interface AvroContainerHeader {
  /** The file the bytes came from, for messages. */
  readonly path: string;
  /** All key-value metadata, raw. */
  readonly meta: ReadonlyMap<string, Uint8Array>;
  /** The writer's schema, parsed from `avro.schema` with every attribute kept. */
  readonly schema: AvroSchema;
  readonly codec: string;
  readonly syncMarker: Uint8Array;
  /** Byte length of the header. */
  readonly length: number;
}

const UTF8_DECODER = new TextDecoder();

/** A metadata value as text, or undefined when absent. */
export function headerString(header: AvroContainerHeader, key: string): string | undefined {
  const v = header.meta.get(key);
  return v === undefined ? undefined : UTF8_DECODER.decode(v);
}

export type ByteSource = Uint8Array | AsyncIterable<Uint8Array>;

/** Pulls bytes from a whole buffer or a stream of chunks, keeping only the unread ones. */
class ChunkReader {
  buf: Buffer = Buffer.alloc(0);
  pos = 0;
  /** File offset of buf[0]. */
  base = 0;
  private iterator: AsyncIterator<Uint8Array> | undefined;
  private ended = false;

  constructor(source: ByteSource) {
    if (source instanceof Uint8Array) {
      this.buf = asBuffer(source);
      this.ended = true;
    } else {
      this.iterator = source[Symbol.asyncIterator]();
    }
  }

  get available(): number {
    return this.buf.length - this.pos;
  }

  get offset(): number {
    return this.base + this.pos;
  }

  /** Makes at least n unread bytes available; false when the source ends first. */
  async fill(n: number): Promise<boolean> {
    while (this.available < n) {
      if (this.ended || !this.iterator) return false;
      const next = await this.iterator.next();
      if (next.done) {
        this.ended = true;
        return false;
      }
      const chunk = asBuffer(next.value);
      if (chunk.length === 0) continue;
      const rest = this.buf.subarray(this.pos);
      this.base += this.pos;
      this.buf = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
      this.pos = 0;
    }
    return true;
  }

  async close(): Promise<void> {
    if (!this.ended && this.iterator?.return) await this.iterator.return();
    this.ended = true;
  }
}

/** Reads a zig-zag varint at pos; undefined when the buffer ends inside it. */
function varLongAt(buf: Buffer, pos: number): { value: number; end: number } | undefined {
  let z = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= buf.length) return undefined;
    const b = buf[pos++];
    z += (b & 0x7f) * mul;
    if (!(b & 0x80)) return { value: z % 2 === 1 ? -(z + 1) / 2 : z / 2, end: pos };
    mul *= 128;
  }
  throw new InvalidFileError('varint longer than 10 bytes');
}

type HeaderParse = { header: Omit<AvroContainerHeader, 'path'>; end: number } | 'more';

function parseHeader(buf: Buffer, path: string): HeaderParse {
  if (buf.length < 4) return 'more';
  if (!buf.subarray(0, 4).equals(MAGIC)) {
    throw new InvalidFileError('not an Avro container file: bad magic bytes (expected "Obj\\x01")', { path });
  }
  let pos = 4;
  const meta = new Map<string, Uint8Array>();
  const read = (): number | undefined => {
    let r;
    try {
      r = varLongAt(buf, pos);
    } catch (e) {
      throw new InvalidFileError(`corrupt Avro header: ${(e as Error).message}`, { path, cause: e });
    }
    if (r === undefined) return undefined;
    pos = r.end;
    return r.value;
  };
  for (;;) {
    let count = read();
    if (count === undefined) return 'more';
    if (count === 0) break;
    if (count < 0) {
      if (read() === undefined) return 'more';
      count = -count;
    }
    for (let i = 0; i < count; i++) {
      const klen = read();
      if (klen === undefined) return 'more';
      if (klen < 0) throw new InvalidFileError(`corrupt Avro header: negative key length ${klen}`, { path });
      if (pos + klen > buf.length) return 'more';
      const key = buf.toString('utf8', pos, pos + klen);
      pos += klen;
      const vlen = read();
      if (vlen === undefined) return 'more';
      if (vlen < 0) throw new InvalidFileError(`corrupt Avro header: negative value length for "${key}"`, { path });
      if (pos + vlen > buf.length) return 'more';
      meta.set(key, new Uint8Array(buf.subarray(pos, pos + vlen)));
      pos += vlen;
    }
  }
  if (pos + SYNC_SIZE > buf.length) return 'more';
  const syncMarker = new Uint8Array(buf.subarray(pos, pos + SYNC_SIZE));
  pos += SYNC_SIZE;
  const schemaBytes = meta.get('avro.schema');
  if (schemaBytes === undefined) throw new InvalidFileError('Avro header has no "avro.schema"', { path });
  let schema: AvroSchema;
  try {
    schema = JSON.parse(UTF8_DECODER.decode(schemaBytes)) as AvroSchema;
  } catch (e) {
    throw new InvalidFileError(`Avro header "avro.schema" is not JSON: ${(e as Error).message}`, { path, cause: e });
  }
  const codecBytes = meta.get('avro.codec');
  const codec = codecBytes === undefined ? 'null' : UTF8_DECODER.decode(codecBytes);
  return { header: { meta, schema, codec, syncMarker, length: pos }, end: pos };
}

/** Snappy block decompression (the Avro "snappy" codec: a raw block plus a CRC-32 of the output). */
function snappyDecompress(input: Buffer): Buffer {
  let pos = 0;
  let len = 0;
  let shift = 0;
  for (;;) {
    const b = input[pos++];
    if (b === undefined) throw new InvalidFileError('truncated snappy length');
    len |= (b & 0x7f) << shift;
    if (!(b & 0x80)) break;
    shift += 7;
    if (shift > 28) throw new InvalidFileError('snappy length too long');
  }
  const out = Buffer.allocUnsafe(len);
  let op = 0;
  while (pos < input.length) {
    const tag = input[pos++];
    const kind = tag & 3;
    if (kind === 0) {
      let n = tag >>> 2;
      if (n >= 60) {
        const bytes = n - 59;
        n = 0;
        for (let i = 0; i < bytes; i++) n |= input[pos++] << (8 * i);
      }
      n += 1;
      if (pos + n > input.length || op + n > len) throw new InvalidFileError('snappy literal out of range');
      input.copy(out, op, pos, pos + n);
      pos += n;
      op += n;
      continue;
    }
    let n: number;
    let offset: number;
    if (kind === 1) {
      n = ((tag >>> 2) & 7) + 4;
      offset = ((tag >>> 5) << 8) | input[pos++];
    } else if (kind === 2) {
      n = (tag >>> 2) + 1;
      offset = input[pos] | (input[pos + 1] << 8);
      pos += 2;
    } else {
      n = (tag >>> 2) + 1;
      offset = (input[pos] | (input[pos + 1] << 8) | (input[pos + 2] << 16) | (input[pos + 3] << 24)) >>> 0;
      pos += 4;
    }
    if (offset === 0 || offset > op || op + n > len) throw new InvalidFileError('snappy copy out of range');
    for (let i = 0; i < n; i++, op++) out[op] = out[op - offset];
  }
  if (op !== len) throw new InvalidFileError(`snappy output is ${op} bytes, expected ${len}`);
  return out;
}

/** Room for a block's inflated bytes: manifests' blocks inflate 3-5 times; more comes in further chunks. */
function inflateChunk(compressed: number): number {
  return Math.min(Math.max(64 * 1024, 2 ** Math.ceil(Math.log2(compressed * 6))), 8 * 1024 * 1024);
}

function decompress(codec: string, data: Buffer, path: string, blockIndex: number): Buffer {
  try {
    switch (codec) {
      case 'null':
        return data;
      case 'deflate':
        // Output in one chunk: at the default 16 KiB a 64 KB block came back in four, each a new
        // buffer, then concatenated (a fifth of a manifest's decode went to that).
        return inflateRawSync(data, { chunkSize: inflateChunk(data.length) });
      case 'snappy': {
        if (data.length < 4) throw new InvalidFileError('snappy block shorter than its checksum');
        const out = snappyDecompress(data.subarray(0, data.length - 4));
        if ((crc32(out) >>> 0) !== data.readUInt32BE(data.length - 4)) throw new InvalidFileError('snappy checksum mismatch');
        return out;
      }
      default:
        throw new UnsupportedError(`unsupported Avro codec "${codec}"`, { path });
    }
  } catch (e) {
    if (e instanceof UnsupportedError) throw e;
    throw new InvalidFileError(`cannot decompress Avro block ${blockIndex} (${codec}): ${(e as Error).message}`, {
      path,
      cause: e,
    });
  }
}

export interface AvroBlock {
  /** Number of records in the block. */
  readonly count: number;
  /** The decompressed record bytes. */
  readonly data: Buffer;
  /** 0-based index of the block in the file. */
  readonly index: number;
}

/**
 * An open container file: the header is read, the blocks are read lazily, once.
 */
export class AvroContainerReader<T = unknown> implements AsyncIterable<T> {
  readonly type: AvscType;
  private used = false;

  constructor(
    readonly header: AvroContainerHeader,
    private readonly input: ChunkReader,
  ) {
    try {
      this.type = avroType(header.schema);
    } catch (e) {
      throw new InvalidFileError(`Avro header schema is not valid: ${(e as Error).message}`, { path: header.path, cause: e });
    }
  }

  get path(): string {
    return this.header.path;
  }

  /** The decompressed blocks. */
  async *blocks(): AsyncGenerator<AvroBlock> {
    if (this.used) throw new IllegalStateError('an Avro reader can be iterated once', { path: this.path });
    this.used = true;
    const input = this.input;
    const path = this.path;
    const sync = this.header.syncMarker;
    let index = 0;
    try {
      for (;;) {
        if (!(await input.fill(1))) return;
        const start = input.offset;
        await input.fill(20);
        const c = varLongAt(input.buf, input.pos);
        const s = c && varLongAt(input.buf, c.end);
        if (!c || !s) throw new InvalidFileError(`truncated Avro block ${index} header at offset ${start}`, { path });
        if (c.value < 0 || s.value < 0) {
          throw new InvalidFileError(`corrupt Avro block ${index} at offset ${start}: negative count or size`, { path });
        }
        input.pos = s.end;
        if (!(await input.fill(s.value + SYNC_SIZE))) {
          throw new InvalidFileError(
            `truncated Avro block ${index} at offset ${start}: ${s.value + SYNC_SIZE} bytes needed, ${input.available} left`,
            { path },
          );
        }
        const raw = input.buf.subarray(input.pos, input.pos + s.value);
        input.pos += s.value;
        for (let i = 0; i < SYNC_SIZE; i++) {
          if (input.buf[input.pos + i] !== sync[i]) {
            throw new InvalidFileError(`Avro sync marker mismatch after block ${index} (offset ${input.offset})`, { path });
          }
        }
        input.pos += SYNC_SIZE;
        yield { count: c.value, data: decompress(this.header.codec, raw, path, index), index };
        index++;
      }
    } finally {
      await input.close();
    }
  }

  /** Records of one block, decoded with the writer's schema, or read as `projection`'s reader schema. */
  decodeBlock(block: AvroBlock, projection?: AvroProjection): T[] {
    const out = new Array<T>(block.count);
    const type = projection?.type ?? this.type;
    const resolver = projection?.resolver;
    const data = block.data;
    let pos = 0;
    for (let i = 0; i < block.count; i++) {
      let r;
      try {
        r = type.decode(data, pos, resolver);
      } catch (e) {
        throw new InvalidFileError(`cannot decode record ${i} of Avro block ${block.index}: ${(e as Error).message}`, {
          path: this.path,
          cause: e,
        });
      }
      if (r.offset < 0) {
        throw new InvalidFileError(`truncated record ${i} of ${block.count} in Avro block ${block.index}`, { path: this.path });
      }
      out[i] = r.value as T;
      pos = r.offset;
    }
    if (pos !== data.length) {
      throw new InvalidFileError(
        `Avro block ${block.index} has ${data.length - pos} bytes after its ${block.count} records`,
        { path: this.path },
      );
    }
    return out;
  }

  /** Every record, decoded with the writer's schema (longs as bigint, bytes as Buffer). */
  async *records(): AsyncGenerator<T> {
    for await (const block of this.blocks()) yield* this.decodeBlock(block);
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this.records();
  }
}

/**
 * Opens an Avro container file from its bytes or a stream of chunks: reads the header
 * and returns a reader over the records. Throws InvalidFileError naming `path` for a
 * bad magic, a corrupt or truncated header; blocks are checked as they are read.
 */
export async function openAvroContainer<T = unknown>(source: ByteSource, path: string): Promise<AvroContainerReader<T>> {
  const input = new ChunkReader(source);
  let want = 4096;
  for (;;) {
    const full = await input.fill(want);
    const parsed = parseHeader(input.buf.subarray(input.pos), path);
    if (parsed !== 'more') {
      input.pos += parsed.end;
      return new AvroContainerReader<T>({ path, ...parsed.header }, input);
    }
    if (!full) {
      await input.close();
      throw new InvalidFileError(
        input.available < 4 ? `not an Avro container file: ${input.available} bytes` : 'truncated Avro header',
        { path },
      );
    }
    want = input.available * 2;
  }
}
