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
    while (this.nextField(lastId)) {
      lastId = this.fieldId;
      out[lastId] = this.value(this.fieldType, depth);
    }
    return out;
  }

  /** The next field's id and type, or undefined at the struct's STOP byte (which is consumed). */
  fieldHeader(lastId: number): { id: number; type: number } | undefined {
    return this.nextField(lastId) ? { id: this.fieldId, type: this.fieldType } : undefined;
  }

  /** The last field header read by nextField. */
  protected fieldId = 0;
  protected fieldType = 0;

  /** Reads the next field's header into fieldId and fieldType, or false at the STOP byte: fieldHeader without an object per field. */
  protected nextField(lastId: number): boolean {
    const header = this.byte();
    const type = header & 0x0f;
    if (type === T.Stop) return false;
    const delta = header >> 4;
    this.fieldId = delta === 0 ? Number(this.zigzag()) : lastId + delta;
    this.fieldType = type;
    return true;
  }

  /** A long list's element count (after a header of size 15), checked against the bytes left. */
  protected listSize(): number {
    return this.size();
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

/**
 * A struct's fields are gathered here, one array per depth, and copied out at its end into an
 * array of their exact number: pushing to a fresh array reserves 17 slots at the first field.
 * Reads are synchronous and never interleave, so every reader shares them.
 */
const fieldScratch: TypedField[][] = [];

export class TypedThriftReader extends ThriftReader {
  typedStruct(depth = 0): TypedField[] {
    if (depth > MAX_DEPTH) throw new InvalidFileError('thrift: nesting too deep');
    const fields = (fieldScratch[depth] ??= []);
    let n = 0;
    let lastId = 0;
    while (this.nextField(lastId)) {
      const id = this.fieldId;
      const wire = this.fieldType;
      lastId = id;
      const type = wire === T.False ? T.True : wire;
      fields[n++] = { id, type, value: wire === T.True ? true : wire === T.False ? false : this.typedValue(wire, depth) };
    }
    return fields.slice(0, n);
  }

  private typedValue(type: number, depth: number): TypedValue {
    switch (type) {
      case T.Struct:
        return this.typedStruct(depth + 1);
      case T.List:
      case T.Set: {
        const header = (this.read(T.Byte) as number) & 0xff;
        const size = header >> 4;
        const elementType = header & 0x0f;
        // The size is checked against the bytes left before an array of that size is made.
        const items = new Array<TypedValue>(size === 15 ? this.listSize() : size);
        for (let i = 0; i < items.length; i++) {
          if (elementType === T.True || elementType === T.False) items[i] = this.read(T.Byte) === 1;
          else items[i] = elementType === T.Struct ? this.typedStruct(depth + 1) : this.typedValue(elementType, depth + 1);
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

/** `fields` (in id order) with field `id` set to `value`, in id order. */
export function withTypedField(unordered: readonly TypedField[], id: number, type: number, value: TypedValue): TypedField[] {
  // One pass, one array: footer rewrites call this per field of every column chunk.
  const fields = inIdOrder(unordered);
  const out: TypedField[] = [];
  let placed = false;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    if (!placed && f.id >= id) {
      out.push({ id, type, value });
      placed = true;
    }
    if (f.id !== id) out.push(f);
  }
  if (!placed) out.push({ id, type, value });
  return out;
}

/** `fields` in id order: themselves when they are already (as every writer writes them). */
export function inIdOrder(fields: readonly TypedField[]): readonly TypedField[] {
  for (let i = 1; i < fields.length; i++) {
    if (fields[i].id < fields[i - 1].id) return [...fields].sort((a, b) => a.id - b.id);
  }
  return fields;
}

export function readTypedStruct(bytes: Uint8Array): TypedField[] {
  return new TypedThriftReader(bytes).typedStruct();
}

/**
 * Fields to set in one struct (added in id order) and ids below 32 to leave out: what
 * ThriftWriter.editedStruct applies while it writes a parsed struct, so no edited copy is built.
 * Reusable: reset() before each struct.
 */
export class FieldEdits {
  count = 0;
  private dropMask = 0;
  readonly ids: number[] = [];
  readonly types: number[] = [];
  readonly values: TypedValue[] = [];

  /** No fields set; the ids in `dropMask` (fieldMask) left out. */
  reset(dropMask = 0): void {
    this.count = 0;
    this.dropMask = dropMask;
  }

  set(id: number, type: number, value: TypedValue): void {
    this.ids[this.count] = id;
    this.types[this.count] = type;
    this.values[this.count] = value;
    this.count++;
  }

  drops(id: number): boolean {
    return id >= 0 && id < 32 && ((this.dropMask >>> id) & 1) === 1;
  }
}

/** The drop mask of FieldEdits for field ids below 32. */
export function fieldMask(...ids: number[]): number {
  return ids.reduce((m, id) => m | (1 << id), 0);
}

/** One buffer for every write (writes are synchronous, one at a time): footers are encoded per row group read. */
let scratch = new Uint8Array(4096);
const SCRATCH_LIMIT = 1024 * 1024;

/**
 * Compact-protocol writer. Besides whole typed structs, it writes a struct field by field
 * (fieldHeader, field, listHeader, stop), so an edited copy of a parsed struct can be written
 * without building the edited struct first.
 */
export class ThriftWriter {
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
        this.listHeader(l.items.length, l.elementType);
        for (let i = 0; i < l.items.length; i++) this.value(l.elementType, l.items[i]);
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
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      this.field(last, f.id, f.type, f.value);
      last = f.id;
    }
    this.stop();
  }

  /** The header of field `id` of wire type `wireType`, after field `last` of the same struct (0 for the first). */
  fieldHeader(last: number, id: number, wireType: number): void {
    const delta = id - last;
    if (delta > 0 && delta <= 15) this.byte((delta << 4) | wireType);
    else {
      this.byte(wireType);
      this.zigzag(id);
    }
  }

  /** Field `id` (header and value), after field `last` of the same struct. */
  field(last: number, id: number, type: number, value: TypedValue): void {
    const wireType = type === T.True || type === T.False ? (value ? T.True : T.False) : type;
    this.fieldHeader(last, id, wireType);
    if (wireType !== T.True && wireType !== T.False) this.value(type, value);
  }

  /** A list's header; its `size` elements follow, each written with value(elementType, …). */
  listHeader(size: number, elementType: number): void {
    if (size < 15) this.byte((size << 4) | elementType);
    else {
      this.byte(0xf0 | elementType);
      this.varint(size);
    }
  }

  /** Struct `fields` (in id order) with `e` applied: a set field replaces the field of its id or joins in its place. */
  editedStruct(fields: readonly TypedField[], e: FieldEdits): void {
    let last = 0;
    let k = 0;
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      while (k < e.count && e.ids[k] < f.id) {
        this.field(last, e.ids[k], e.types[k], e.values[k]);
        last = e.ids[k++];
      }
      if (k < e.count && e.ids[k] === f.id) {
        this.field(last, f.id, e.types[k], e.values[k]);
        k++;
      } else if (e.drops(f.id)) continue;
      else this.field(last, f.id, f.type, f.value);
      last = f.id;
    }
    for (; k < e.count; k++) {
      this.field(last, e.ids[k], e.types[k], e.values[k]);
      last = e.ids[k];
    }
    this.stop();
  }

  /** Ends a struct written field by field. */
  stop(): void {
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
