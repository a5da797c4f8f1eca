/**
 * Partition transforms (spec "Partition Transforms", Appendix B) and the 32-bit
 * Murmur3 bucket hash. Values follow lib/iceberg/values.ts.
 */
import { InvalidArgumentError, UnsupportedError, ValidationError } from '../errors.js';
import { truncateString } from './bounds.js';
import type { PrimitiveType } from './types.js';
import type { IcebergValue } from './values.js';
import { bigIntToMinimalBytes, uuidToBytes } from './values.js';

export type Transform =
  | { kind: 'identity' }
  | { kind: 'bucket'; numBuckets: number }
  | { kind: 'truncate'; width: number }
  | { kind: 'year' }
  | { kind: 'month' }
  | { kind: 'day' }
  | { kind: 'hour' }
  | { kind: 'void' }
  | { kind: 'unknown'; name: string }; // kept readable, never applied

const INT_MAX = 0x7fffffff;
const WIDTH = /^(\w+)\[(\d+)\]$/;

/** Parses the spec's string form, case-insensitively like Java's Transforms.fromString. */
export function parseTransform(s: string): Transform {
  const width = WIDTH.exec(s);
  if (width) {
    const name = width[1].toLowerCase();
    const n = Number(width[2]);
    if (name === 'bucket') {
      if (!(n > 0 && n <= INT_MAX)) throw new ValidationError(`Invalid number of buckets: ${width[2]} (must be > 0)`);
      return { kind: 'bucket', numBuckets: n };
    }
    if (name === 'truncate') {
      if (!(n > 0 && n <= INT_MAX)) throw new ValidationError(`Invalid truncate width: ${width[2]} (must be > 0)`);
      return { kind: 'truncate', width: n };
    }
  }
  switch (s.toLowerCase()) {
    case 'identity':
      return { kind: 'identity' };
    case 'year':
      return { kind: 'year' };
    case 'month':
      return { kind: 'month' };
    case 'day':
      return { kind: 'day' };
    case 'hour':
      return { kind: 'hour' };
    case 'void':
      return { kind: 'void' };
    default:
      return { kind: 'unknown', name: s };
  }
}

export function transformToString(t: Transform): string {
  switch (t.kind) {
    case 'bucket':
      return `bucket[${t.numBuckets}]`;
    case 'truncate':
      return `truncate[${t.width}]`;
    case 'unknown':
      return t.name;
    default:
      return t.kind;
  }
}

const INT: PrimitiveType = { type: 'int' };
const DATE: PrimitiveType = { type: 'date' };

/** Result type per the spec table. An unknown transform reads as string, as in Java's UnknownTransform. */
export function transformResultType(t: Transform, source: PrimitiveType): PrimitiveType {
  switch (t.kind) {
    case 'identity':
    case 'truncate':
    case 'void':
      return source;
    case 'bucket':
    case 'year':
    case 'month':
    case 'hour':
      return INT;
    case 'day':
      return DATE;
    case 'unknown':
      return { type: 'string' };
  }
}

const BUCKET_SOURCES = new Set([
  'int', 'long', 'decimal', 'date', 'time', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns',
  'string', 'uuid', 'fixed', 'binary',
]);
const TRUNCATE_SOURCES = new Set(['int', 'long', 'decimal', 'string', 'binary']);
const TIMESTAMPS = new Set(['timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);

/** Whether the spec allows `t` on `source`. Unknown transforms never apply here (Java would say yes). */
export function canTransform(t: Transform, source: PrimitiveType): boolean {
  switch (t.kind) {
    case 'identity':
    case 'void':
      return true;
    case 'bucket':
      return BUCKET_SOURCES.has(source.type);
    case 'truncate':
      return TRUNCATE_SOURCES.has(source.type);
    case 'year':
    case 'month':
    case 'day':
      return source.type === 'date' || TIMESTAMPS.has(source.type);
    case 'hour':
      return TIMESTAMPS.has(source.type);
    case 'unknown':
      return false;
  }
}

/** Applies a transform to one value; null gives null. */
export function applyTransform(t: Transform, source: PrimitiveType, v: IcebergValue): IcebergValue {
  if (t.kind === 'unknown') throw new UnsupportedError(`Cannot apply unknown partition transform "${t.name}"`);
  if (!canTransform(t, source)) {
    throw new ValidationError(`Cannot apply ${transformToString(t)} to type ${source.type}`);
  }
  if (v === null || t.kind === 'void') return null;
  switch (t.kind) {
    case 'identity':
      return v;
    case 'bucket':
      return (bucketHash(source, v) & INT_MAX) % t.numBuckets;
    case 'truncate':
      return truncate(t.width, source, v);
    case 'year':
    case 'month':
    case 'day':
    case 'hour':
      return timeTransform(t.kind, source, v);
  }
}

// ---- truncate ----

function truncate(w: number, source: PrimitiveType, v: IcebergValue): IcebergValue {
  switch (source.type) {
    case 'int': {
      // Java int arithmetic, overflow included: v - (((v % W) + W) % W)
      const x = asInt(v, 'int');
      const r = (((x % w) + w) | 0) % w;
      return (x - r) | 0;
    }
    case 'long': {
      const x = asLong(v, 'long');
      const bw = BigInt(w);
      const r = BigInt.asIntN(64, (x % bw) + bw) % bw;
      return BigInt.asIntN(64, x - r);
    }
    case 'decimal': {
      const x = asLong(v, 'decimal');
      const bw = BigInt(w);
      return x - (((x % bw) + bw) % bw);
    }
    case 'string':
      return truncateString(asString(v, 'string'), w);
    case 'binary': {
      const b = asBytes(v, 'binary');
      return b.length <= w ? b : b.slice(0, w);
    }
    default:
      throw new ValidationError(`Cannot truncate type ${source.type}`);
  }
}

// ---- year / month / day / hour ----

const MICROS_PER_HOUR = 3_600_000_000n;
const MICROS_PER_DAY = 86_400_000_000n;

function timeTransform(kind: 'year' | 'month' | 'day' | 'hour', source: PrimitiveType, v: IcebergValue): number {
  if (source.type === 'date') {
    const days = asInt(v, 'date');
    if (kind === 'hour') throw new ValidationError('Cannot apply hour to type date');
    return kind === 'day' ? days : civilUnits(kind, days);
  }
  const nanos = source.type === 'timestamp_ns' || source.type === 'timestamptz_ns';
  const x = asLong(v, source.type);
  const unit = nanos ? 1000n : 1n;
  if (kind === 'hour') return Number(floorDiv(x, MICROS_PER_HOUR * unit));
  const days = Number(floorDiv(x, MICROS_PER_DAY * unit));
  return kind === 'day' ? days : civilUnits(kind, days);
}

/** Years or months from 1970-01-01 (floored, so dates before 1970 are negative). */
function civilUnits(kind: 'year' | 'month', days: number): number {
  const { year, month } = civilFromDays(days);
  return kind === 'year' ? year - 1970 : (year - 1970) * 12 + (month - 1);
}

/** Proleptic Gregorian date of a day number (Hinnant's civil_from_days); exact beyond Date's range. */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return { year, month, day };
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
}

// ---- bucket hash (Appendix B) ----

/** 32-bit Murmur3, x86 variant; a signed int32 like Guava's `asInt()`. */
export function murmur3_x86_32(bytes: Uint8Array, seed = 0): number {
  let h = seed | 0;
  const len = bytes.length;
  const blocks = len & ~3;
  for (let i = 0; i < blocks; i += 4) {
    const k = bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24);
    h = mixH(h, mixK(k));
  }
  const tail = len & 3;
  if (tail > 0) {
    let k = bytes[blocks];
    if (tail > 1) k ^= bytes[blocks + 1] << 8;
    if (tail > 2) k ^= bytes[blocks + 2] << 16;
    h ^= mixK(k);
  }
  return fmix(h, len);
}

function mixK(k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, 0x1b873593);
}

function mixH(h: number, k: number): number {
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function fmix(h: number, len: number): number {
  h ^= len;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/** hashLong: Murmur3 of the 8 little-endian bytes of a long, without allocating. */
function hashLongWords(lo: number, hi: number): number {
  return fmix(mixH(mixH(0, mixK(lo | 0)), mixK(hi | 0)), 8);
}

function hashLong(v: bigint): number {
  const x = BigInt.asUintN(64, v);
  return hashLongWords(Number(x & 0xffffffffn), Number(x >> 32n));
}

function hashIntValue(v: number): number {
  // an int widened to long: the high word is the sign extension
  return hashLongWords(v | 0, v < 0 ? -1 : 0);
}

const F64 = new DataView(new ArrayBuffer(8));

function hashDouble(v: number): number {
  if (Number.isNaN(v)) return hashLongWords(0, 0x7ff80000);
  F64.setFloat64(0, v === 0 ? 0 : v, true); // -0.0 hashes as 0.0
  return hashLongWords(F64.getInt32(0, true), F64.getInt32(4, true));
}

/** The spec's 32-bit hash of one value (Appendix B), before `& MAX_INT % N`. */
export function bucketHash(type: PrimitiveType, v: IcebergValue): number {
  switch (type.type) {
    case 'int':
    case 'date':
      return hashIntValue(asInt(v, type.type));
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return hashLong(asLong(v, type.type));
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return hashLong(floorDiv(asLong(v, type.type), 1000n));
    case 'decimal':
      return murmur3_x86_32(bigIntToMinimalBytes(asLong(v, 'decimal')));
    case 'string':
      return murmur3_x86_32(utf8JavaBytes(asString(v, 'string')));
    case 'uuid':
      return murmur3_x86_32(v instanceof Uint8Array ? v : uuidToBytes(asString(v, 'uuid')));
    case 'fixed':
    case 'binary':
      return murmur3_x86_32(asBytes(v, type.type));
    case 'boolean':
      if (typeof v !== 'boolean') throw new InvalidArgumentError(`boolean value expected, got ${describe(v)}`);
      return hashIntValue(v ? 1 : 0);
    case 'float':
    case 'double':
      if (typeof v !== 'number') throw new InvalidArgumentError(`${type.type} value expected, got ${describe(v)}`);
      return hashDouble(v);
    case 'unknown':
      throw new ValidationError('Values of type unknown have no hash');
  }
}

const UTF8 = new TextEncoder();

/** UTF-8 as Java's String.getBytes(UTF_8) does it: a lone surrogate becomes '?'. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function utf8JavaBytes(s: string): Uint8Array {
  return UTF8.encode(s.replace(LONE_SURROGATE, '?'));
}

// ---- value checks: lenient between number and bigint, strict otherwise ----

function asInt(v: IcebergValue, what: string): number {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  throw new InvalidArgumentError(`${what} value expected as an integer number, got ${describe(v)}`);
}

function asLong(v: IcebergValue, what: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  throw new InvalidArgumentError(`${what} value expected as a bigint, got ${describe(v)}`);
}

function asString(v: IcebergValue, what: string): string {
  if (typeof v === 'string') return v;
  throw new InvalidArgumentError(`${what} value expected as a string, got ${describe(v)}`);
}

function asBytes(v: IcebergValue, what: string): Uint8Array {
  if (v instanceof Uint8Array) return v;
  throw new InvalidArgumentError(`${what} value expected as a Uint8Array, got ${describe(v)}`);
}

function describe(v: IcebergValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (v instanceof Uint8Array) return 'a Uint8Array';
  return typeof v;
}
