/**
 * JSON single-value serialization (spec Appendix D "JSON single-value serialization";
 * Java SingleValueParser.java), the form of `initial-default` and `write-default`.
 * Values are the project's representation (values.ts); JSON comes and goes as the
 * lossless JSON model of json.ts, so longs beyond 2^53 survive and doubles keep ".0".
 */
import { InvalidArgumentError } from '../errors.js';
import { isLosslessNumber, LosslessNumber } from 'lossless-json';
import type { JsonValue } from './json.js';
import type { IcebergType, PrimitiveType } from './types.js';
import { primitiveToString } from './types.js';
import { uuidFromBytes, uuidToBytes, type IcebergValue, type Row } from './values.js';

const DAY_MS = 86_400_000;

function typeName(t: IcebergType): string {
  return t.type === 'struct' || t.type === 'list' || t.type === 'map' ? t.type : primitiveToString(t as PrimitiveType);
}

function bad(t: IcebergType, json: unknown, why = ''): never {
  const shown = isLosslessNumber(json) ? json.value : typeof json === 'bigint' ? String(json) : JSON.stringify(json);
  throw new InvalidArgumentError(`cannot parse ${shown} as a ${typeName(t)} value${why ? `: ${why}` : ''}`);
}

function invalid(t: IcebergType, v: unknown, why = ''): never {
  const shown = typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? `${v.length} bytes` : JSON.stringify(v);
  throw new InvalidArgumentError(`invalid ${typeName(t)} value ${shown}${why ? `: ${why}` : ''}`);
}

/** The text of a JSON number in any of the forms our JSON model holds. */
function numberText(json: unknown): string | undefined {
  // String(-0) is "0": the sign kept (a -0.0 partition is not 0.0's).
  if (typeof json === 'number') return Number.isFinite(json) ? (Object.is(json, -0) ? '-0' : String(json)) : undefined;
  if (typeof json === 'bigint') return json.toString();
  if (isLosslessNumber(json)) return json.value;
  return undefined;
}

const INTEGER = /^-?\d+$/;

function pad(n: number | bigint, width: number): string {
  return String(n).padStart(width, '0');
}

function yearText(y: number): string {
  if (y > 9999) return `+${y}`;
  if (y < 0) return `-${pad(-y, 4)}`;
  return pad(y, 4);
}

export function daysToIsoDate(days: number): string {
  const d = new Date(days * DAY_MS);
  if (Number.isNaN(d.getTime())) throw new InvalidArgumentError(`day ${days} is outside the supported date range`);
  return `${yearText(d.getUTCFullYear())}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
}

const DATE = /^([+-]?\d{4,})-(\d{2})-(\d{2})$/;

export function isoDateToDays(s: string): number {
  const m = DATE.exec(s);
  if (!m) throw new InvalidArgumentError(`invalid ISO date "${s}"`);
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  if (date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) throw new InvalidArgumentError(`invalid ISO date "${s}"`);
  return Math.round(date.getTime() / DAY_MS);
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** `HH:MM:SS.ffffff` (or 9 digits) for a time of day in the given unit per second. */
function timeOfDay(unitsOfDay: bigint, perSecond: bigint, digits: number): string {
  const secs = unitsOfDay / perSecond;
  const frac = unitsOfDay % perSecond;
  const h = secs / 3600n;
  const m = (secs % 3600n) / 60n;
  const s = secs % 60n;
  return `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}.${pad(frac, digits)}`;
}

const TIME = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/;

/** Time of day as units of 10^-digits seconds; fractions beyond `digits` are truncated. */
function parseTime(s: string, digits: number): bigint {
  const m = TIME.exec(s);
  if (!m) throw new InvalidArgumentError(`invalid ISO time "${s}"`);
  const [h, mi, sec] = [Number(m[1]), Number(m[2]), Number(m[3] ?? '0')];
  if (h > 23 || mi > 59 || sec > 59) throw new InvalidArgumentError(`invalid ISO time "${s}"`);
  const frac = BigInt((m[4] ?? '').padEnd(9, '0').slice(0, digits) || '0');
  return (BigInt(h * 3600 + mi * 60 + sec)) * 10n ** BigInt(digits) + frac;
}

function formatTimestamp(v: bigint, digits: 6 | 9, zone: boolean): string {
  const perSecond = 10n ** BigInt(digits);
  const perDay = 86_400n * perSecond;
  const days = floorDiv(v, perDay);
  return `${daysToIsoDate(Number(days))}T${timeOfDay(v - days * perDay, perSecond, digits)}${zone ? '+00:00' : ''}`;
}

const TIMESTAMP = /^([+-]?\d{4,}-\d{2}-\d{2})T(\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:\d{2}(?::\d{2})?)?$/;

function parseTimestamp(t: IcebergType, s: string, digits: 6 | 9, zone: boolean): bigint {
  const m = TIMESTAMP.exec(s);
  if (!m) bad(t, s, 'not an ISO-8601 timestamp');
  const offset = m[3];
  if (zone) {
    if (offset === undefined) bad(t, s, 'a zone offset is required');
    if (!/^(Z|[+-]00:00(:00)?)$/.test(offset)) bad(t, s, 'the offset must be +00:00');
  } else if (offset !== undefined) {
    bad(t, s, 'must not include a zone offset');
  }
  const perDay = 86_400n * 10n ** BigInt(digits);
  return BigInt(isoDateToDays(m[1])) * perDay + parseTime(m[2], digits);
}

function hex(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
}

function fromHex(t: IcebergType, s: string): Uint8Array {
  if (!/^([0-9a-fA-F]{2})*$/.test(s)) bad(t, s, 'not a hexadecimal string');
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Java BigDecimal text: plain for scale >= 0, scientific (`2E+20`) for a negative scale. */
export function decimalToJsonString(unscaled: bigint, scale: number): string {
  const neg = unscaled < 0n;
  const digits = (neg ? -unscaled : unscaled).toString();
  let body: string;
  if (scale > 0) {
    const padded = digits.padStart(scale + 1, '0');
    body = `${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
  } else if (scale === 0) {
    body = digits;
  } else {
    const exponent = digits.length - 1 - scale;
    body = `${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ''}E+${exponent}`;
  }
  return neg ? `-${body}` : body;
}

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** Parses decimal text to its unscaled value; its scale must be `scale` (Java checks the same). */
export function decimalFromJsonString(s: string, scale: number): bigint {
  const m = DECIMAL.exec(s);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw new InvalidArgumentError(`invalid decimal "${s}"`);
  const frac = m[3] ?? '';
  const textScale = frac.length - Number(m[4] ?? '0');
  if (textScale !== scale) throw new InvalidArgumentError(`decimal "${s}" has scale ${textScale}, expected ${scale}`);
  const unscaled = BigInt(`${m[2]}${frac}` || '0');
  return m[1] === '-' ? -unscaled : unscaled;
}

/** Shortest decimal text that reads back as the same float32 (Java Float.toString's digits). */
function floatText(v: number): string {
  for (let p = 1; p <= 9; p++) {
    const candidate = Number(v.toPrecision(p));
    if (Math.fround(candidate) === v) return String(candidate);
  }
  return String(v);
}

function floatingNumber(t: IcebergType, v: IcebergValue, asFloat: boolean): LosslessNumber {
  if (typeof v !== 'number') invalid(t, v, 'expected a number');
  if (!Number.isFinite(v)) invalid(t, v, 'NaN and infinities have no JSON form');
  let text = asFloat ? floatText(Math.fround(v)) : String(v);
  if (Object.is(v, -0)) text = '-0';
  // Java reads float/double defaults only from floating-point JSON numbers.
  if (!/[.eE]/.test(text)) text += '.0';
  return new LosslessNumber(text);
}

/** A value as JSON (spec Appendix D); serialize the result with json.ts `stringifyJson`. */
export function toJsonValue(type: IcebergType, v: IcebergValue): JsonValue {
  if (v === null || v === undefined) return null;
  switch (type.type) {
    case 'boolean':
      if (typeof v !== 'boolean') invalid(type, v, 'expected a boolean');
      return v;
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v)) invalid(type, v, 'expected an integer');
      // An int has no -0 (a -0 here came from parsing "-0": it is 0).
      return v === 0 ? 0 : v;
    case 'long':
      if (typeof v !== 'bigint' && !(typeof v === 'number' && Number.isSafeInteger(v))) invalid(type, v, 'expected a bigint');
      return new LosslessNumber(BigInt(v).toString());
    case 'float':
      return floatingNumber(type, v, true);
    case 'double':
      return floatingNumber(type, v, false);
    case 'decimal':
      if (typeof v !== 'bigint') invalid(type, v, 'expected the unscaled bigint');
      return decimalToJsonString(v, type.scale);
    case 'date':
      if (typeof v !== 'number' || !Number.isInteger(v)) invalid(type, v, 'expected a day number');
      return daysToIsoDate(v);
    case 'time': {
      if (typeof v !== 'bigint') invalid(type, v, 'expected a bigint');
      if (v < 0n || v >= 86_400_000_000n) invalid(type, v, 'outside one day');
      return timeOfDay(v, 1_000_000n, 6);
    }
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      if (typeof v !== 'bigint') invalid(type, v, 'expected a bigint');
      const ns = type.type.endsWith('_ns');
      return formatTimestamp(v, ns ? 9 : 6, type.type.startsWith('timestamptz'));
    }
    case 'string':
      if (typeof v !== 'string') invalid(type, v, 'expected a string');
      return v;
    case 'uuid':
      if (typeof v !== 'string') invalid(type, v, 'expected a uuid string');
      return uuidFromBytes(uuidToBytes(v));
    case 'fixed':
      if (!(v instanceof Uint8Array) || v.length !== type.length) invalid(type, v, `expected ${type.length} bytes`);
      return hex(v);
    case 'binary':
      if (!(v instanceof Uint8Array)) invalid(type, v, 'expected a Uint8Array');
      return hex(v);
    case 'unknown':
      return invalid(type, v, 'unknown values are always null');
    case 'list':
      if (!Array.isArray(v)) invalid(type, v, 'expected an array');
      return (v as IcebergValue[]).map((e) => toJsonValue(type.element, e));
    case 'map': {
      if (!Array.isArray(v)) invalid(type, v, 'expected an array of [key, value] pairs');
      const pairs = v as Array<[IcebergValue, IcebergValue]>;
      return { keys: pairs.map(([k]) => toJsonValue(type.key, k)), values: pairs.map(([, x]) => toJsonValue(type.value, x)) };
    }
    case 'struct': {
      if (typeof v !== 'object' || v instanceof Uint8Array || Array.isArray(v)) invalid(type, v, 'expected a row object');
      const row = v as Row;
      const out: { [id: string]: JsonValue } = {};
      for (const f of type.fields) {
        const x = row[f.name];
        if (x !== null && x !== undefined) out[String(f.id)] = toJsonValue(f.type, x);
      }
      return out;
    }
  }
}

/** Parses a JSON single value (as parsed by json.ts, or plain JSON) into the project's form. */
export function fromJsonValue(type: IcebergType, json: unknown): IcebergValue {
  if (json === null || json === undefined) return null;
  switch (type.type) {
    case 'boolean':
      if (typeof json !== 'boolean') bad(type, json);
      return json;
    case 'int': {
      const s = numberText(json);
      if (s === undefined || !INTEGER.test(s)) bad(type, json);
      const n = Number(s);
      if (n < -2147483648 || n > 2147483647) bad(type, json, 'out of the int range');
      // "-0" is the int 0 (Number gives -0, which a partition key tells from 0).
      return n === 0 ? 0 : n;
    }
    case 'long': {
      const s = numberText(json);
      if (s === undefined || !INTEGER.test(s)) bad(type, json);
      const n = BigInt(s);
      if (n !== BigInt.asIntN(64, n)) bad(type, json, 'out of the long range');
      return n;
    }
    case 'float':
    case 'double': {
      const s = numberText(json);
      if (s === undefined) bad(type, json);
      const n = Number(s);
      return type.type === 'float' ? Math.fround(n) : n;
    }
    case 'decimal':
      if (typeof json !== 'string') bad(type, json, 'decimals are JSON strings');
      try {
        return decimalFromJsonString(json, type.scale);
      } catch (e) {
        return bad(type, json, (e as Error).message);
      }
    case 'date':
      if (typeof json !== 'string') bad(type, json);
      return isoDateToDays(json);
    case 'time':
      if (typeof json !== 'string') bad(type, json);
      return parseTime(json, 6);
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      if (typeof json !== 'string') bad(type, json);
      return parseTimestamp(type, json, type.type.endsWith('_ns') ? 9 : 6, type.type.startsWith('timestamptz'));
    case 'string':
      if (typeof json !== 'string') bad(type, json);
      return json;
    case 'uuid':
      if (typeof json !== 'string' || json.length !== 36) bad(type, json);
      return uuidFromBytes(uuidToBytes(json));
    case 'fixed': {
      if (typeof json !== 'string') bad(type, json);
      const b = fromHex(type, json);
      if (b.length !== type.length) bad(type, json, `expected ${type.length} bytes`);
      return b;
    }
    case 'binary':
      if (typeof json !== 'string') bad(type, json);
      return fromHex(type, json);
    case 'unknown':
      return bad(type, json, 'unknown values are always null');
    case 'list':
      if (!Array.isArray(json)) bad(type, json);
      return json.map((e) => fromJsonValue(type.element, e));
    case 'map': {
      const o = json as { keys?: unknown; values?: unknown };
      if (typeof json !== 'object' || !Array.isArray(o.keys) || !Array.isArray(o.values) || o.keys.length !== o.values.length) {
        bad(type, json, 'expected {"keys": [...], "values": [...]} of equal length');
      }
      const values = o.values as unknown[];
      return (o.keys as unknown[]).map((k, i): [IcebergValue, IcebergValue] => [
        fromJsonValue(type.key, k),
        fromJsonValue(type.value, values[i]),
      ]);
    }
    case 'struct': {
      if (typeof json !== 'object' || Array.isArray(json) || isLosslessNumber(json)) bad(type, json);
      const o = json as Record<string, unknown>;
      const row: Row = {};
      for (const f of type.fields) row[f.name] = fromJsonValue(f.type, o[String(f.id)]);
      return row;
    }
  }
}
