/**
 * How Iceberg values live in JavaScript, everywhere in this project:
 *
 * | Iceberg type                       | JS value                                  |
 * |------------------------------------|-------------------------------------------|
 * | boolean                            | boolean                                   |
 * | int, date (days since 1970-01-01)  | number                                    |
 * | long                               | bigint                                    |
 * | time, timestamp, timestamptz (µs)  | bigint                                    |
 * | timestamp_ns, timestamptz_ns (ns)  | bigint                                    |
 * | float, double                      | number                                    |
 * | decimal(P, S)                      | bigint, the unscaled value                |
 * | string                             | string                                    |
 * | uuid                               | string, lowercase 8-4-4-4-12              |
 * | fixed, binary                      | Uint8Array                                |
 * | struct                             | Row (object keyed by field name)          |
 * | list                               | IcebergValue[]                            |
 * | map                                | Array<[key, value]>                       |
 * | null                               | null                                      |
 */
import { InvalidArgumentError } from '../errors.js';
export type IcebergValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | IcebergValue[]
  | Array<[IcebergValue, IcebergValue]>
  | Row;

export interface Row {
  [name: string]: IcebergValue;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function uuidToBytes(uuid: string): Uint8Array {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new InvalidArgumentError(`invalid uuid "${uuid}"`);
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function uuidFromBytes(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < 16; i++) {
    s += HEX[b[i]];
    if (i === 3 || i === 5 || i === 7 || i === 9) s += '-';
  }
  return s;
}

/** bigint → exactly `size` two's-complement big-endian bytes (Avro decimal fixed). */
export function bigIntToTwosComplement(v: bigint, size: number): Uint8Array {
  if (BigInt.asIntN(size * 8, v) !== v) throw new InvalidArgumentError(`${v} does not fit in ${size} bytes`);
  const out = new Uint8Array(size);
  let x = BigInt.asUintN(size * 8, v);
  for (let i = size - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

/** The fewest two's-complement big-endian bytes of a signed integer (Java's BigInteger.toByteArray; 0 → [0]). */
export function bigIntToMinimalBytes(v: bigint): Uint8Array {
  let n = 1;
  while (BigInt.asIntN(n * 8, v) !== v) n++;
  return bigIntToTwosComplement(v, n);
}

/** The signed integer in two's-complement big-endian bytes (any length; empty is 0). */
export function bigIntFromTwosComplement(b: Uint8Array): bigint {
  if (b.length === 0) return 0n;
  let v = 0n;
  for (let i = 0; i < b.length; i++) v = (v << 8n) | BigInt(b[i]);
  return BigInt.asIntN(b.length * 8, v);
}
