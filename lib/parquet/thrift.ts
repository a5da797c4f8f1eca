/**
 * A minimal Thrift compact-protocol decoder, enough to read a Parquet footer
 * (parquet-format's FileMetaData). Structs decode to plain objects keyed by
 * field id; the footer module gives them names.
 */
import { InvalidArgumentError, InvalidFileError, UnsupportedError } from '../errors.js';
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
    if (this.pos >= this.bytes.length) throw new InvalidFileError(`thrift: read past the end at byte ${this.pos}`);
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
        if (shift > 70) throw new InvalidFileError('thrift: varint too long');
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
      throw new InvalidFileError(`thrift: length ${String(n)} exceeds the ${this.bytes.length - this.pos} bytes left`);
    }
    return n;
  }

  private value(type: number, depth: number): ThriftValue {
    if (depth > MAX_DEPTH) throw new InvalidFileError('thrift: nesting too deep');
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
        if (this.pos + 8 > this.bytes.length) throw new InvalidFileError('thrift: double past the end');
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
        throw new InvalidFileError(`thrift: unknown type ${type} at byte ${this.pos}`);
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

// ---------------------------------------------------------------------------------------------
// Typed form: keeps every field's wire type and order, so a decoded struct can be edited
// and written back (the reader rewrites footers to decode one row group at a time).

export type TypedValue = boolean | number | bigint | Uint8Array | TypedList | TypedMap | TypedField[];
export interface TypedField {
  readonly id: number;
  readonly type: number;
  readonly value: TypedValue;
}
export interface TypedList {
  readonly kind: 'list';
  readonly elementType: number;
  readonly items: TypedValue[];
}
export interface TypedMap {
  readonly kind: 'map';
  readonly keyType: number;
  readonly valueType: number;
  readonly entries: Array<[TypedValue, TypedValue]>;
}

export class TypedThriftReader extends ThriftReader {
  typedStruct(depth = 0): TypedField[] {
    if (depth > MAX_DEPTH) throw new InvalidFileError('thrift: nesting too deep');
    const out: TypedField[] = [];
    let lastId = 0;
    for (;;) {
      const h = this.fieldHeader(lastId);
      if (!h) return out;
      lastId = h.id;
      const type = h.type === T.False ? T.True : h.type;
      out.push({ id: h.id, type, value: h.type === T.True ? true : h.type === T.False ? false : this.typedValue(h.type, depth) });
    }
  }

  private typedValue(type: number, depth: number): TypedValue {
    switch (type) {
      case T.Struct:
        return this.typedStruct(depth + 1);
      case T.List:
      case T.Set: {
        const { size, elementType } = this.listHeader();
        const items: TypedValue[] = [];
        for (let i = 0; i < size; i++) {
          if (elementType === T.True || elementType === T.False) items.push(this.read(T.Byte) === 1);
          else items.push(elementType === T.Struct ? this.typedStruct(depth + 1) : this.typedValue(elementType, depth + 1));
        }
        return { kind: 'list', elementType, items };
      }
      case T.Map: {
        const m = this.read(T.Map) as ThriftMap;
        // Maps do not occur in Parquet footers; keep them only shallowly typed.
        return { kind: 'map', keyType: T.Binary, valueType: T.Binary, entries: [...m.entries()] as Array<[TypedValue, TypedValue]> };
      }
      default:
        return this.read(type) as TypedValue;
    }
  }
}

// Typed-struct access shared by the files that edit Parquet metadata (field ids are parquet-format's).

/** Field `id` of a typed struct, if set. */
export function typedField(fields: readonly TypedField[], id: number): TypedValue | undefined {
  return fields.find((f) => f.id === id)?.value;
}

/** An integer value as a number: NaN when absent or not an integer. */
export function typedNumber(v: TypedValue | undefined): number {
  return typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : Number.NaN;
}

/** An optional integer value as a number: undefined when absent. */
export function optionalNumber(v: TypedValue | undefined): number | undefined {
  return v === undefined ? undefined : typedNumber(v);
}

/** The items of a list value (none when absent). */
export function typedItems(v: TypedValue | undefined): TypedValue[] {
  return v !== undefined && typeof v === 'object' && 'kind' in v && v.kind === 'list' ? v.items : [];
}

/** The fields of a struct value (none when absent). */
export function typedFields(v: TypedValue | undefined): TypedField[] {
  return Array.isArray(v) ? v : [];
}

export function typedList(items: TypedValue[], elementType: number): TypedList {
  return { kind: 'list', elementType, items };
}

/** `fields` with field `id` set to `value`, in id order. */
export function withTypedField(fields: readonly TypedField[], id: number, type: number, value: TypedValue): TypedField[] {
  return fields.filter((f) => f.id !== id).concat([{ id, type, value }]).sort((a, b) => a.id - b.id);
}

export function readTypedStruct(bytes: Uint8Array): TypedField[] {
  return new TypedThriftReader(bytes).typedStruct();
}

/** A typed struct as readThriftStruct decodes the same bytes: a footer is parsed once for both forms. */
export function untypedStruct(fields: readonly TypedField[]): ThriftStruct {
  const out: ThriftStruct = {};
  for (const f of fields) out[f.id] = untypedValue(f.value);
  return out;
}

function untypedValue(v: TypedValue): ThriftValue {
  if (typeof v !== 'object' || v instanceof Uint8Array) return v;
  if (Array.isArray(v)) return untypedStruct(v);
  if (v.kind === 'list') return v.items.map(untypedValue);
  // Map entries are kept as readThriftStruct decoded them (TypedThriftReader).
  return new Map(v.entries as unknown as Array<[ThriftValue, ThriftValue]>);
}

/** One buffer for every write (writes are synchronous, one at a time): footers are encoded per row group read. */
let scratch = new Uint8Array(4096);
const SCRATCH_LIMIT = 1024 * 1024;

class ThriftWriter {
  private buf = scratch;
  private pos = 0;

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    // A large footer's buffer is not held for the life of the process.
    if (next.length <= SCRATCH_LIMIT) scratch = next;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b & 0xff;
  }

  varint(v: number | bigint): void {
    if (typeof v === 'number' && v >= 0 && v <= 0x7fffffff) {
      // The common case without BigInt: footers hold thousands of small numbers.
      let n = v;
      while (n > 0x7f) {
        this.byte((n & 0x7f) | 0x80);
        n >>>= 7;
      }
      this.byte(n);
      return;
    }
    let x = BigInt(v);
    if (x < 0n) throw new InvalidArgumentError('thrift: negative varint');
    do {
      const b = Number(x & 0x7fn);
      x >>= 7n;
      this.byte(x > 0n ? b | 0x80 : b);
    } while (x > 0n);
  }

  zigzag(v: number | bigint): void {
    if (typeof v === 'number' && Number.isInteger(v) && v >= -0x40000000 && v < 0x40000000) {
      this.varint(v >= 0 ? v * 2 : -v * 2 - 1);
      return;
    }
    const x = BigInt(v);
    this.varint(x >= 0n ? x << 1n : ((-x) << 1n) - 1n);
  }

  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  value(type: number, v: TypedValue): void {
    switch (type) {
      case T.True:
      case T.False:
        this.byte(v ? 1 : 2);
        return;
      case T.Byte:
        this.byte(Number(v));
        return;
      case T.I16:
      case T.I32:
      case T.I64:
        this.zigzag(v as number | bigint);
        return;
      case T.Double: {
        this.ensure(8);
        new DataView(this.buf.buffer).setFloat64(this.pos, v as number, true);
        this.pos += 8;
        return;
      }
      case T.Binary:
        this.bytes(v as Uint8Array);
        return;
      case T.List:
      case T.Set: {
        const l = v as TypedList;
        if (l.items.length < 15) this.byte((l.items.length << 4) | l.elementType);
        else {
          this.byte(0xf0 | l.elementType);
          this.varint(l.items.length);
        }
        for (const item of l.items) this.value(l.elementType, item);
        return;
      }
      case T.Map:
        throw new UnsupportedError('thrift: writing maps is not supported');
      case T.Struct:
        this.struct(v as TypedField[]);
        return;
      default:
        throw new InvalidArgumentError(`thrift: cannot write type ${type}`);
    }
  }

  struct(fields: readonly TypedField[]): void {
    let last = 0;
    for (const f of fields) {
      const wireType = f.type === T.True || f.type === T.False ? (f.value ? T.True : T.False) : f.type;
      const delta = f.id - last;
      if (delta > 0 && delta <= 15) this.byte((delta << 4) | wireType);
      else {
        this.byte(wireType);
        this.zigzag(f.id);
      }
      if (wireType !== T.True && wireType !== T.False) this.value(f.type, f.value);
      last = f.id;
    }
    this.byte(T.Stop);
  }

  result(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
}

/** Encodes a typed struct in the compact protocol. */
export function writeTypedStruct(fields: readonly TypedField[]): Uint8Array {
  const w = new ThriftWriter();
  w.struct(fields);
  return w.result();
}
