/**
 * Partition transforms (spec "Partition Transforms", Appendix B) and the 32-bit
 * Murmur3 bucket hash. Values follow lib/iceberg/values.ts.
 */
import { InvalidArgumentError, UnsupportedError, ValidationError } from '../errors.js';
import { truncateString } from './bounds.js';
import type { PrimitiveType } from './types.js';
import type { IcebergValue } from './values.js';
import { bigIntToMinimalBytes, uuidFromBytes, uuidToBytes } from './values.js';

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

// ---- human strings (Java Transform.toHumanString, TransformUtil) ----

/**
 * A partition value as Java's `Transform.toHumanString(resultType, value)` writes it, the text of
 * partition folders (`PartitionSpec.partitionToPath`): `2026-01-01-10` for hour, `2026-01-01` for
 * day, `2026-01` for month, `2026` for year, `null` for null; identity, bucket and truncate render
 * by the result type (dates, times and timestamps in ISO form, binary in base64, decimals and
 * floating point as Java's `toString`).
 */
export function toHumanString(t: Transform, resultType: PrimitiveType, v: IcebergValue | undefined): string {
  if (v === null || v === undefined) return 'null';
  switch (t.kind) {
    case 'year':
      return javaYear(1970 + asInt(v, 'year'));
    case 'month': {
      const m = asInt(v, 'month');
      return `${javaYear(1970 + Math.floor(m / 12))}-${pad(((m % 12) + 12) % 12 + 1, 2)}`;
    }
    case 'day':
      return humanDay(asInt(v, 'day'));
    case 'hour': {
      const h = asInt(v, 'hour');
      return `${humanDay(Math.floor(h / 24))}-${pad(((h % 24) + 24) % 24, 2)}`;
    }
    default:
      return humanValue(resultType, v);
  }
}

/**
 * The inverse of `toHumanString`: a partition value typed the way `health` prints it and Java
 * writes partition folders (`2026-01-01-10` for hour, `2026-01` for month, ISO dates and
 * timestamps, base64 bytes, decimals as Java's BigDecimal text). Throws InvalidArgumentError
 * naming the expected form. `null` is not parsed: the text `null` is a string.
 */
export function fromHumanString(t: Transform, resultType: PrimitiveType, text: string): IcebergValue {
  const bad = (form: string): never => {
    throw new InvalidArgumentError(`"${text}" is not ${form}`);
  };
  switch (t.kind) {
    case 'year': {
      const m = /^([+-]?\d{4,})$/.exec(text) ?? bad(`a year 'yyyy'`);
      return Number(m[1]) - 1970;
    }
    case 'month': {
      const m = /^([+-]?\d{4,})-(\d{2})$/.exec(text) ?? bad(`a month 'yyyy-MM'`);
      const month = Number(m[2]);
      if (month < 1 || month > 12) bad(`a month 'yyyy-MM'`);
      return (Number(m[1]) - 1970) * 12 + month - 1;
    }
    case 'day':
      return parseHumanDay(text) ?? bad(`a day 'yyyy-MM-dd'`);
    case 'hour': {
      const m = /^(.*)-(\d{2})$/.exec(text);
      const day = m ? parseHumanDay(m[1]) : undefined;
      const hour = m ? Number(m[2]) : 24;
      if (day === undefined || hour > 23) return bad(`an hour 'yyyy-MM-dd-HH'`);
      return day * 24 + hour;
    }
    default:
      return parseHumanValue(resultType, text);
  }
}

/** Day number of `yyyy-MM-dd` (proleptic Gregorian, any year), or undefined. */
function parseHumanDay(text: string): number | undefined {
  const m = /^([+-]?\d{4,})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const days = daysFromCivil(y, mo, d);
  const back = civilFromDays(days);
  return back.year === y && back.month === mo && back.day === d ? days : undefined;
}

/** Hinnant's days_from_civil, the inverse of `civilFromDays`. */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const HUMAN_TIME = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/;
const HUMAN_TIMESTAMP = /^([+-]?\d{4,}-\d{2}-\d{2})T(\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]00:00)?$/;
const BIG_DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

function parseHumanValue(type: PrimitiveType, text: string): IcebergValue {
  const bad = (form: string): never => {
    throw new InvalidArgumentError(`"${text}" is not ${form}`);
  };
  switch (type.type) {
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : bad('true or false');
    case 'int': {
      const n = /^[+-]?\d+$/.test(text) ? Number(text) : NaN;
      return Number.isSafeInteger(n) && n === (n | 0) ? n : bad('an int');
    }
    case 'long': {
      const n = /^[+-]?\d+$/.test(text) ? BigInt(text) : undefined;
      return n !== undefined && BigInt.asIntN(64, n) === n ? n : bad('a long');
    }
    case 'float':
    case 'double': {
      const n = text === 'NaN' ? NaN : text === 'Infinity' ? Infinity : text === '-Infinity' ? -Infinity : /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : undefined;
      return n === undefined ? bad(`a ${type.type}`) : type.type === 'float' ? Math.fround(n) : n;
    }
    case 'decimal': {
      const m = BIG_DECIMAL.exec(text) ?? bad(`a decimal(${type.precision}, ${type.scale})`);
      let digits = `${m[2]}${m[3] ?? ''}`;
      let scale = (m[3] ?? '').length - Number(m[4] ?? '0');
      while (scale > type.scale && digits.endsWith('0')) {
        digits = digits.slice(0, -1) || '0';
        scale--;
      }
      if (scale > type.scale) bad(`a decimal(${type.precision}, ${type.scale}): more than ${type.scale} digits after the point`);
      const unscaled = BigInt(digits) * 10n ** BigInt(type.scale - scale);
      if (unscaled.toString().length > type.precision) bad(`a decimal(${type.precision}, ${type.scale}): more than ${type.precision} digits`);
      return m[1] === '-' ? -unscaled : unscaled;
    }
    case 'date':
      return parseHumanDay(text) ?? bad(`a date 'yyyy-MM-dd'`);
    case 'time': {
      const m = HUMAN_TIME.exec(text) ?? bad(`a time 'HH:mm[:ss[.ffffff]]'`);
      const [h, mi, s] = [Number(m[1]), Number(m[2]), Number(m[3] ?? '0')];
      if (h > 23 || mi > 59 || s > 59 || (m[4] ?? '').length > 6) bad(`a time 'HH:mm[:ss[.ffffff]]'`);
      return BigInt(h * 3600 + mi * 60 + s) * 1_000_000n + BigInt((m[4] ?? '').padEnd(6, '0'));
    }
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      const zone = type.type === 'timestamptz' || type.type === 'timestamptz_ns';
      const digits = type.type.endsWith('_ns') ? 9 : 6;
      const form = `a ${type.type} 'yyyy-MM-ddTHH:mm:ss[.${'f'.repeat(digits)}]${zone ? '+00:00' : ''}'`;
      const m = HUMAN_TIMESTAMP.exec(text) ?? bad(form);
      if (zone !== (m[3] !== undefined)) bad(form);
      const day = parseHumanDay(m[1]) ?? bad(form);
      const time = HUMAN_TIME.exec(m[2])!;
      const [h, mi, s] = [Number(time[1]), Number(time[2]), Number(time[3] ?? '0')];
      if (h > 23 || mi > 59 || s > 59 || (time[4] ?? '').length > digits) bad(form);
      const perSecond = 10n ** BigInt(digits);
      return (BigInt(day) * 86_400n + BigInt(h * 3600 + mi * 60 + s)) * perSecond + BigInt((time[4] ?? '').padEnd(digits, '0'));
    }
    case 'uuid':
      return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text) ? text.toLowerCase() : bad('a uuid');
    case 'fixed':
    case 'binary': {
      const bytes = new Uint8Array(Buffer.from(text, 'base64'));
      if (Buffer.from(bytes).toString('base64') !== text) bad('base64 bytes');
      if (type.type === 'fixed' && bytes.length !== type.length) bad(`base64 of ${type.length} bytes`);
      return bytes;
    }
    case 'string':
      return text;
    case 'unknown':
      return bad('a value: the type is unknown');
  }
}

function humanValue(type: PrimitiveType, v: IcebergValue): string {
  switch (type.type) {
    case 'date':
      return humanDay(asInt(v, 'date'));
    case 'time':
      return humanTime(asLong(v, 'time'));
    case 'timestamp':
    case 'timestamptz':
      return isoTimestamp(asLong(v, type.type), 6, type.type === 'timestamptz');
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return isoTimestamp(asLong(v, type.type), 9, type.type === 'timestamptz_ns');
    case 'fixed':
    case 'binary':
      return Buffer.from(asBytes(v, type.type)).toString('base64');
    case 'decimal':
      return javaBigDecimalString(asLong(v, 'decimal'), type.scale);
    case 'float':
      return javaFloatingString(typeof v === 'number' ? Math.fround(v) : Number.NaN, true);
    case 'double':
      return javaFloatingString(typeof v === 'number' ? v : Number.NaN, false);
    case 'uuid':
      return v instanceof Uint8Array ? uuidFromBytes(v) : asString(v, 'uuid');
    default:
      return v instanceof Uint8Array ? Buffer.from(v).toString('base64') : String(v);
  }
}

function pad(n: number | bigint, width: number): string {
  return String(n).padStart(width, '0');
}

/** Java's `String.format("%04d", year)`: the sign counts in the width (`-001`). */
function javaYear(y: number): string {
  return y < 0 ? `-${pad(-y, 3)}` : pad(y, 4);
}

/** TransformUtil.humanDay: `%04d-%02d-%02d`. */
function humanDay(days: number): string {
  const { year, month, day } = civilFromDays(days);
  return `${javaYear(year)}-${pad(month, 2)}-${pad(day, 2)}`;
}

/** Java's LocalTime.toString: `HH:mm`, then `:ss` and 3, 6 or 9 fraction digits only when not zero. */
function humanTime(micros: bigint): string {
  const nanos = micros * 1000n;
  const secs = Number(nanos / 1_000_000_000n);
  const nano = Number(nanos % 1_000_000_000n);
  let out = `${pad(Math.floor(secs / 3600), 2)}:${pad(Math.floor((secs % 3600) / 60), 2)}`;
  if (secs % 60 > 0 || nano > 0) {
    out += `:${pad(secs % 60, 2)}`;
    if (nano > 0) {
      out += nano % 1_000_000 === 0 ? `.${pad(nano / 1_000_000, 3)}` : nano % 1000 === 0 ? `.${pad(nano / 1000, 6)}` : `.${pad(nano, 9)}`;
    }
  }
  return out;
}

/** ISO_LOCAL_DATE year: 4 digits at least, `+` above 9999, `-` below 0. */
function isoYear(y: number): string {
  return y > 9999 ? `+${y}` : y < 0 ? `-${pad(-y, 4)}` : pad(y, 4);
}

/** DateTimeUtil.microsToIsoTimestamp(tz)/nanosToIsoTimestamp(tz): seconds always, fraction without trailing zeros. */
function isoTimestamp(v: bigint, digits: 6 | 9, zone: boolean): string {
  const perSecond = 10n ** BigInt(digits);
  const perDay = 86_400n * perSecond;
  const days = floorDiv(v, perDay);
  const ofDay = v - days * perDay;
  const secs = Number(ofDay / perSecond);
  const fraction = pad(ofDay % perSecond, digits).replace(/0+$/, '');
  const { year, month, day } = civilFromDays(Number(days));
  const time = `${pad(Math.floor(secs / 3600), 2)}:${pad(Math.floor((secs % 3600) / 60), 2)}:${pad(secs % 60, 2)}`;
  return `${isoYear(year)}-${pad(month, 2)}-${pad(day, 2)}T${time}${fraction ? `.${fraction}` : ''}${zone ? '+00:00' : ''}`;
}

/** Java's BigDecimal.toString: plain unless the scale is negative or the adjusted exponent is below -6. */
export function javaBigDecimalString(unscaled: bigint, scale: number): string {
  const digits = (unscaled < 0n ? -unscaled : unscaled).toString();
  const sign = unscaled < 0n ? '-' : '';
  const adjusted = digits.length - 1 - scale;
  if (scale === 0) return `${sign}${digits}`;
  if (scale > 0 && adjusted >= -6) {
    const padded = digits.padStart(scale + 1, '0');
    return `${sign}${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
  }
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${mantissa}${adjusted === 0 ? '' : `E${adjusted > 0 ? '+' : ''}${adjusted}`}`;
}

/**
 * Java's Double.toString / Float.toString (JDK 19+, the shortest digits that read back):
 * `1.0`, `0.001`, `1.0E7`, `1.0E-4`, `NaN`, `-0.0`. JDK 17 and older print more digits for a
 * few values.
 */
export function javaFloatingString(v: number, isFloat: boolean): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(isFloat ? shortestFloat(v) : v.toExponential())!;
  const digits = m[2] + (m[3] ?? '');
  const exponent = Number(m[4]);
  const abs = Math.abs(v);
  if (abs >= 1e-3 && abs < 1e7) {
    if (exponent < 0) return `${m[1]}0.${'0'.repeat(-exponent - 1)}${digits}`;
    const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
    return `${m[1]}${whole}.${digits.slice(exponent + 1) || '0'}`;
  }
  return `${m[1]}${digits[0]}.${digits.slice(1) || '0'}E${exponent}`;
}

/** The fewest significant digits that read back as the same float32, in exponential form. */
function shortestFloat(v: number): string {
  for (let p = 1; p < 9; p++) {
    const s = v.toExponential(p - 1);
    if (Math.fround(Number(s)) === v) return s;
  }
  return v.toExponential(8);
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

export function utf8JavaBytes(s: string): Uint8Array {
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
