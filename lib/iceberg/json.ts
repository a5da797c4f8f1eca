import { isLosslessNumber, LosslessNumber, parse, stringify } from 'lossless-json';

/**
 * Lossless JSON for metadata files: every number is kept as its source text
 * (LosslessNumber) so longs above 2^53 and fields we don't know survive a round trip.
 */
import { InvalidArgumentError } from '../errors.js';
export type JsonValue = null | boolean | string | LosslessNumber | number | bigint | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function parseJson(text: string): JsonValue {
  return parse(text) as JsonValue;
}

export function stringifyJson(value: unknown, indent?: number): string {
  const s = stringify(value as JsonValue, undefined, indent);
  if (s === undefined) throw new InvalidArgumentError('value cannot be written as JSON');
  return s;
}

export function isJsonObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !isLosslessNumber(v);
}

/** A JSON number as a bigint (throws on fractions). */
export function jsonBigInt(v: unknown, what: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (isLosslessNumber(v)) return BigInt(v.value);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
  throw new InvalidArgumentError(`${what} must be an integer, found ${JSON.stringify(String(v))}`);
}

/** A JSON number that must fit a JS number (ints, ms timestamps). */
export function jsonNumber(v: unknown, what: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (isLosslessNumber(v)) return Number(v.value);
  throw new InvalidArgumentError(`${what} must be a number, found ${JSON.stringify(String(v))}`);
}

/** Converts LosslessNumbers back to plain JS numbers (or bigint when unsafe), recursively. */
export function toPlain(v: unknown): unknown {
  if (isLosslessNumber(v)) {
    const n = Number(v.value);
    return Number.isSafeInteger(n) || !/^-?\d+$/.test(v.value) ? n : BigInt(v.value);
  }
  if (Array.isArray(v)) return v.map(toPlain);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toPlain(x);
    return out;
  }
  return v;
}
