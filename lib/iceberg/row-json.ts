import type { IcebergType, StructType } from './types.js';
import type { IcebergValue, Row } from './values.js';

/**
 * The JSON form of a row that `packice scan` prints and the interop harnesses
 * print too, so outputs compare as text: long as a number (a string beyond
 * 2^53), decimal as a plain string, date `YYYY-MM-DD`, timestamps ISO-8601
 * with microseconds (nanoseconds for *_ns) in UTC, binary as hex, maps as
 * [key, value] pairs.
 */
export function rowToJson(row: Row, struct: StructType): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of struct.fields) out[f.name] = valueToJson(row[f.name] ?? null, f.type);
  return out;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export function valueToJson(v: IcebergValue, t: IcebergType): unknown {
  if (v === null || v === undefined) return null;
  switch (t.type) {
    case 'struct':
      return rowToJson(v as Row, t);
    case 'list':
      return (v as IcebergValue[]).map((x) => valueToJson(x, t.element));
    case 'map':
      return (v as Array<[IcebergValue, IcebergValue]>).map(([k, x]) => [valueToJson(k, t.key), valueToJson(x, t.value)]);
    case 'long': {
      const b = BigInt(v as bigint | number);
      return b > MAX_SAFE || b < -MAX_SAFE ? b.toString() : Number(b);
    }
    case 'float':
    case 'double': {
      const n = v as number;
      return Number.isFinite(n) ? n : String(n);
    }
    case 'decimal':
      return decimalToString(BigInt(v as bigint), t.scale);
    case 'date':
      return dateToString(v as number);
    case 'time':
      return timeToString(BigInt(v as bigint));
    case 'timestamp':
      return timestampToString(BigInt(v as bigint), 6, '');
    case 'timestamptz':
      return timestampToString(BigInt(v as bigint), 6, 'Z');
    case 'timestamp_ns':
      return timestampToString(BigInt(v as bigint), 9, '');
    case 'timestamptz_ns':
      return timestampToString(BigInt(v as bigint), 9, 'Z');
    case 'fixed':
    case 'binary':
      return Buffer.from(v as Uint8Array).toString('hex');
    default:
      return v;
  }
}

export function decimalToString(unscaled: bigint, scale: number): string {
  const neg = unscaled < 0n;
  let digits = (neg ? -unscaled : unscaled).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0');
    digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  } else if (scale < 0) {
    digits += '0'.repeat(-scale);
  }
  return neg ? `-${digits}` : digits;
}

export function dateToString(days: number): string {
  return new Date(days * 86_400_000).toISOString().slice(0, 10);
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && (a < 0n) !== (b < 0n) ? q - 1n : q;
}

export function timeToString(micros: bigint): string {
  const secs = Number(micros / 1_000_000n);
  const frac = (micros % 1_000_000n).toString().padStart(6, '0');
  const hh = String(Math.floor(secs / 3600)).padStart(2, '0');
  const mm = String(Math.floor((secs % 3600) / 60)).padStart(2, '0');
  const ss = String(secs % 60).padStart(2, '0');
  return `${hh}:${mm}:${ss}.${frac}`;
}

/** `value` in µs (digits 6) or ns (digits 9) since the epoch. */
export function timestampToString(value: bigint, digits: 6 | 9, zone: '' | 'Z'): string {
  const unit = digits === 6 ? 1_000_000n : 1_000_000_000n;
  const secs = floorDiv(value, unit);
  const frac = (value - secs * unit).toString().padStart(digits, '0');
  const iso = new Date(Number(secs) * 1000).toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z
  return `${iso.slice(0, 19)}.${frac}${zone}`;
}
