/**
 * Binary single-value serialization (spec Appendix D; Java Conversions.java),
 * the value order used for lower/upper bounds (Java Comparators.java), and
 * bound truncation (Java UnicodeUtil.java, BinaryUtil.java).
 */
import { InvalidArgumentError } from '../errors.js';
import type { PrimitiveType } from './types.js';
import { isLongValued, primitiveToString } from './types.js';
import { bigIntFromTwosComplement, bigIntToMinimalBytes, uuidFromBytes, uuidToBytes, type IcebergValue } from './values.js';

const MICROS_PER_DAY = 86_400_000_000n;
const NANOS_PER_DAY = 86_400_000_000_000n;

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

function fail(type: PrimitiveType, value: unknown, why: string): never {
  const shown = typeof value === 'bigint' ? `${value}n` : value instanceof Uint8Array ? `${value.length} bytes` : JSON.stringify(value);
  throw new InvalidArgumentError(`cannot serialize ${shown} as ${primitiveToString(type)}: ${why}`);
}

function asBigInt(type: PrimitiveType, v: IcebergValue): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  return fail(type, v, 'expected a bigint');
}

function asInt32(type: PrimitiveType, v: IcebergValue): number {
  if (typeof v === 'number' && Number.isInteger(v) && v >= -2147483648 && v <= 2147483647) return v;
  return fail(type, v, 'expected a 32-bit integer');
}

/** Serializes a value for bounds and partition summaries. */
export function toBytes(type: PrimitiveType, value: IcebergValue): Uint8Array {
  if (value === null || value === undefined) fail(type, value, 'null has no single-value form');
  if (isLongValued(type)) {
    const v = asBigInt(type, value);
    if (v !== BigInt.asIntN(64, v)) fail(type, value, 'out of the 64-bit range');
    const out = new Uint8Array(8);
    new DataView(out.buffer).setBigInt64(0, v, true);
    return out;
  }
  switch (type.type) {
    case 'boolean':
      if (typeof value !== 'boolean') fail(type, value, 'expected a boolean');
      return Uint8Array.of(value ? 1 : 0);
    case 'int':
    case 'date': {
      const out = new Uint8Array(4);
      new DataView(out.buffer).setInt32(0, asInt32(type, value), true);
      return out;
    }
    case 'float': {
      if (typeof value !== 'number') fail(type, value, 'expected a number');
      const out = new Uint8Array(4);
      new DataView(out.buffer).setFloat32(0, value, true);
      return out;
    }
    case 'double': {
      if (typeof value !== 'number') fail(type, value, 'expected a number');
      const out = new Uint8Array(8);
      new DataView(out.buffer).setFloat64(0, value, true);
      return out;
    }
    case 'string':
      if (typeof value !== 'string') fail(type, value, 'expected a string');
      return utf8Encoder.encode(value);
    case 'uuid':
      if (typeof value !== 'string') fail(type, value, 'expected a uuid string');
      return uuidToBytes(value);
    case 'fixed':
      if (!(value instanceof Uint8Array)) fail(type, value, 'expected a Uint8Array');
      if (value.length !== type.length) fail(type, value, `expected ${type.length} bytes`);
      return value.slice();
    case 'binary':
      if (!(value instanceof Uint8Array)) fail(type, value, 'expected a Uint8Array');
      return value.slice();
    case 'decimal':
      return bigIntToMinimalBytes(asBigInt(type, value));
    case 'unknown':
      return fail(type, value, 'unknown has no single-value form');
  }
}

function checkLength(type: PrimitiveType, bytes: Uint8Array, allowed: readonly number[]): void {
  if (!allowed.includes(bytes.length)) {
    throw new InvalidArgumentError(
      `cannot read a ${primitiveToString(type)} from ${bytes.length} bytes (expected ${allowed.join(' or ')})`,
    );
  }
}

/**
 * Reads a serialized value. A bound written before a type promotion is read by its length
 * (spec "Schema Evolution"): 4 bytes under long is an int, under double a float, and under
 * timestamp/timestamp_ns a date, which is returned converted to the current type's unit.
 */
export function fromBytes(type: PrimitiveType, bytes: Uint8Array): IcebergValue {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (type.type) {
    case 'boolean':
      checkLength(type, bytes, [1]);
      return bytes[0] !== 0;
    case 'int':
    case 'date':
      checkLength(type, bytes, [4]);
      return view.getInt32(0, true);
    case 'long':
      checkLength(type, bytes, [4, 8]);
      return bytes.length === 4 ? BigInt(view.getInt32(0, true)) : view.getBigInt64(0, true);
    case 'time':
    case 'timestamptz':
    case 'timestamptz_ns':
      checkLength(type, bytes, [8]);
      return view.getBigInt64(0, true);
    case 'timestamp':
    case 'timestamp_ns':
      checkLength(type, bytes, [4, 8]);
      if (bytes.length === 8) return view.getBigInt64(0, true);
      return BigInt(view.getInt32(0, true)) * (type.type === 'timestamp' ? MICROS_PER_DAY : NANOS_PER_DAY);
    case 'float':
      checkLength(type, bytes, [4]);
      return view.getFloat32(0, true);
    case 'double':
      checkLength(type, bytes, [4, 8]);
      return bytes.length === 4 ? view.getFloat32(0, true) : view.getFloat64(0, true);
    case 'string':
      return utf8Decoder.decode(bytes);
    case 'uuid':
      checkLength(type, bytes, [16]);
      return uuidFromBytes(bytes);
    case 'fixed':
      checkLength(type, bytes, [type.length]);
      return bytes.slice();
    case 'binary':
      return bytes.slice();
    case 'decimal':
      if (bytes.length === 0) throw new InvalidArgumentError(`cannot read a ${primitiveToString(type)} from 0 bytes`);
      return bigIntFromTwosComplement(bytes);
    case 'unknown':
      throw new InvalidArgumentError('unknown has no single-value form');
  }
}

/** Unsigned lexicographic order of byte strings (Java Comparators.unsignedBytes). */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/**
 * Strings in code-point order, which is UTF-8 byte order (Java Comparators.charSequences):
 * UTF-16 order differs only where a surrogate pair meets a unit of U+E000..U+FFFF.
 */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xHigh = (x & 0xfc00) === 0xd800;
    const yHigh = (y & 0xfc00) === 0xd800;
    if (xHigh !== yHigh) return xHigh ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** IEEE 754 totalOrder for one NaN: -Inf < … < -0.0 < +0.0 < … < +Inf < NaN (Java Double.compare). */
export function compareFloats(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  const aNaN = Number.isNaN(a);
  const bNaN = Number.isNaN(b);
  if (aNaN || bNaN) return aNaN === bNaN ? 0 : aNaN ? 1 : -1;
  if (a === 0 && b === 0) {
    const aNeg = Object.is(a, -0);
    const bNeg = Object.is(b, -0);
    return aNeg === bNeg ? 0 : aNeg ? -1 : 1;
  }
  return 0;
}

/**
 * Orders two non-null values of one primitive type. Decimals compare their unscaled values
 * (same scale). UUIDs compare as unsigned big-endian bytes, the Parquet order; Java's
 * UUID.compareTo is signed and differs for uuids whose first or ninth byte is >= 0x80.
 */
export function compareValues(type: PrimitiveType, a: IcebergValue, b: IcebergValue): number {
  if (isLongValued(type)) return compareBigInts(a, b);
  switch (type.type) {
    case 'boolean':
    case 'int':
    case 'date':
      return a === b ? 0 : (a as number | boolean) < (b as number | boolean) ? -1 : 1;
    case 'decimal':
      return compareBigInts(a, b);
    case 'float':
    case 'double':
      return compareFloats(a as number, b as number);
    case 'string':
      return compareStrings(a as string, b as string);
    case 'uuid': {
      const x = (a as string).toLowerCase();
      const y = (b as string).toLowerCase();
      return x === y ? 0 : x < y ? -1 : 1;
    }
    case 'fixed':
    case 'binary':
      return compareBytes(a as Uint8Array, b as Uint8Array);
    case 'unknown':
      return 0;
  }
}

function compareBigInts(a: IcebergValue, b: IcebergValue): number {
  const x = BigInt(a as bigint);
  const y = BigInt(b as bigint);
  return x === y ? 0 : x < y ? -1 : 1;
}

/** Whether a type's bounds are truncated by the truncate(N) metrics mode. */
export function isTruncatable(type: PrimitiveType): boolean {
  return type.type === 'string' || type.type === 'binary';
}

/** The first `length` code points of `s` (Java UnicodeUtil.truncateString). */
export function truncateString(s: string, length: number): string {
  if (length <= 0) throw new InvalidArgumentError('truncate length must be positive');
  let units = 0;
  for (let cp = 0; cp < length; cp++) {
    if (units >= s.length) return s;
    const c = s.charCodeAt(units);
    units += (c & 0xfc00) === 0xd800 && units + 1 < s.length && (s.charCodeAt(units + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  return units >= s.length ? s : s.slice(0, units);
}

/** A lower bound of at most `length` code points for every string starting with `s`'s prefix. */
export function truncateStringMin(s: string, length: number): string {
  return truncateString(s, length);
}

/**
 * An upper bound of at most `length` code points: the prefix with its last incrementable code
 * point incremented (U+D7FF goes to U+E000, U+10FFFF cannot grow so the search moves left).
 * Returns undefined when no such bound exists. A string no longer than `length` is its own bound.
 */
export function truncateStringMax(s: string, length: number): string | undefined {
  const prefix = truncateString(s, length);
  if (prefix.length === s.length) return s;
  const cps = Array.from(prefix, (c) => c.codePointAt(0) as number);
  for (let i = cps.length - 1; i >= 0; i--) {
    const cp = cps[i];
    if (cp >= 0xd800 && cp <= 0xdfff) throw new InvalidArgumentError(`invalid code point U+${cp.toString(16).toUpperCase()} (lone surrogate)`);
    if (cp === 0x10ffff) continue;
    const next = cp === 0xd7ff ? 0xe000 : cp + 1;
    return String.fromCodePoint(...cps.slice(0, i), next);
  }
  return undefined;
}

/** The first `length` bytes (Java BinaryUtil.truncateBinaryMin). */
export function truncateBinaryMin(b: Uint8Array, length: number): Uint8Array {
  return length >= b.length ? b : b.slice(0, length);
}

/** The first `length` bytes with the last byte below 0xFF incremented, or undefined when all are 0xFF. */
export function truncateBinaryMax(b: Uint8Array, length: number): Uint8Array | undefined {
  if (length >= b.length) return b;
  for (let i = length - 1; i >= 0; i--) {
    if (b[i] !== 0xff) {
      const out = b.slice(0, i + 1);
      out[i] += 1;
      return out;
    }
  }
  return undefined;
}

/** Applies truncate(N) to a lower bound; only string and binary change (never fixed or uuid). */
export function truncateLowerBound(type: PrimitiveType, value: IcebergValue, length: number): IcebergValue {
  if (type.type === 'string') return truncateStringMin(value as string, length);
  if (type.type === 'binary') return truncateBinaryMin(value as Uint8Array, length);
  return value;
}

/** Applies truncate(N) to an upper bound; undefined means "omit the bound". */
export function truncateUpperBound(type: PrimitiveType, value: IcebergValue, length: number): IcebergValue | undefined {
  if (type.type === 'string') return truncateStringMax(value as string, length);
  if (type.type === 'binary') return truncateBinaryMax(value as Uint8Array, length);
  return value;
}
