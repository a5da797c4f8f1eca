/**
 * A minimal Thrift compact-protocol decoder, enough to read a Parquet footer
 * (parquet-format's FileMetaData). Structs decode to plain objects keyed by
 * field id; the footer module gives them names.
 */
export type ThriftValue = boolean | number | bigint | Uint8Array | ThriftValue[] | ThriftStruct | ThriftMap;
export interface ThriftStruct {
  [fieldId: number]: ThriftValue;
}
export type ThriftMap = Map<ThriftValue, ThriftValue>;

/** Compact-protocol type codes. */
export const ThriftType = {
  Stop: 0,
  True: 1,
  False: 2,
  Byte: 3,
  I16: 4,
  I32: 5,
  I64: 6,
  Double: 7,
  Binary: 8,
  List: 9,
  Set: 10,
  Map: 11,
  Struct: 12,
} as const;
const T = ThriftType;

const MAX_DEPTH = 64;

export class ThriftReader {
  private pos: number;
  private readonly view: DataView;

  constructor(private readonly bytes: Uint8Array, offset = 0) {
    this.pos = offset;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get offset(): number {
    return this.pos;
  }

  private byte(): number {
    if (this.pos >= this.bytes.length) throw new RangeError(`thrift: read past the end at byte ${this.pos}`);
    return this.bytes[this.pos++];
  }

  /** Unsigned varint; i64 values above 2^53 come back as bigint. */
  private varint(): number | bigint {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      if (shift < 49) {
        result += (b & 0x7f) * 2 ** shift;
        if ((b & 0x80) === 0) return result;
        shift += 7;
        continue;
      }
      // Wide value: finish in bigint.
      let big = BigInt(result) + (BigInt(b & 0x7f) << BigInt(shift));
      shift += 7;
      let more = (b & 0x80) !== 0;
      while (more) {
        if (shift > 70) throw new RangeError('thrift: varint too long');
        const c = this.byte();
        big += BigInt(c & 0x7f) << BigInt(shift);
        shift += 7;
        more = (c & 0x80) !== 0;
      }
      return big;
    }
  }

  private zigzag(): number | bigint {
    const v = this.varint();
    if (typeof v === 'number') {
      // (v >>> 1) ^ -(v & 1) without 32-bit truncation.
      return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
    }
    const r = (v >> 1n) ^ -(v & 1n);
    return r >= BigInt(Number.MIN_SAFE_INTEGER) && r <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(r) : r;
  }

  private size(): number {
    const n = this.varint();
    if (typeof n !== 'number' || n > this.bytes.length - this.pos) {
      throw new RangeError(`thrift: length ${String(n)} exceeds the ${this.bytes.length - this.pos} bytes left`);
    }
    return n;
  }

  private value(type: number, depth: number): ThriftValue {
    if (depth > MAX_DEPTH) throw new RangeError('thrift: nesting too deep');
    switch (type) {
      case T.True:
        return true;
      case T.False:
        return false;
      case T.Byte: {
        const b = this.byte();
        return b > 127 ? b - 256 : b;
      }
      case T.I16:
      case T.I32:
      case T.I64:
        return this.zigzag();
      case T.Double: {
        if (this.pos + 8 > this.bytes.length) throw new RangeError('thrift: double past the end');
        const d = this.view.getFloat64(this.pos, true);
        this.pos += 8;
        return d;
      }
      case T.Binary: {
        const n = this.size();
        const out = this.bytes.subarray(this.pos, this.pos + n);
        this.pos += n;
        return out;
      }
      case T.List:
      case T.Set: {
        const header = this.byte();
        let n = header >> 4;
        if (n === 15) n = this.size();
        const elemType = header & 0x0f;
        const out: ThriftValue[] = [];
        for (let i = 0; i < n; i++) {
          // Booleans inside collections are one byte each: 1 true, anything else false.
          out.push(elemType === T.True || elemType === T.False ? this.byte() === 1 : this.value(elemType, depth + 1));
        }
        return out;
      }
      case T.Map: {
        const n = this.size();
        const out: ThriftMap = new Map();
        if (n === 0) return out;
        const kv = this.byte();
        for (let i = 0; i < n; i++) {
          const k = this.value(kv >> 4, depth + 1);
          out.set(k, this.value(kv & 0x0f, depth + 1));
        }
        return out;
      }
      case T.Struct:
        return this.struct(depth + 1);
      default:
        throw new RangeError(`thrift: unknown type ${type} at byte ${this.pos}`);
    }
  }

  struct(depth = 0): ThriftStruct {
    const out: ThriftStruct = {};
    let lastId = 0;
    for (;;) {
      const h = this.fieldHeader(lastId);
      if (!h) return out;
      lastId = h.id;
      out[h.id] = this.value(h.type, depth);
    }
  }

  /** The next field's id and type, or undefined at the struct's STOP byte (which is consumed). */
  fieldHeader(lastId: number): { id: number; type: number } | undefined {
    const header = this.byte();
    const type = header & 0x0f;
    if (type === T.Stop) return undefined;
    const delta = header >> 4;
    return { id: delta === 0 ? Number(this.zigzag()) : lastId + delta, type };
  }

  /** A list or set header: element count and element type. */
  listHeader(): { size: number; elementType: number } {
    const header = this.byte();
    let size = header >> 4;
    if (size === 15) size = this.size();
    return { size, elementType: header & 0x0f };
  }

  /** Reads (or skips) one value of a compact type. */
  read(type: number): ThriftValue {
    return this.value(type, 0);
  }
}

/** Decodes one compact-protocol struct starting at `offset`. */
export function readThriftStruct(bytes: Uint8Array, offset = 0): ThriftStruct {
  return new ThriftReader(bytes, offset).struct();
}
