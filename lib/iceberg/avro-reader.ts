/**
 * Avro binary decoding compiled from a writer schema (Avro spec "Binary Encoding"), for the hot
 * path of reading manifests: a field is either read into a plain value or skipped without
 * building anything, and no record object is made. Values are those avsc gives through
 * avroType (long as bigint, bytes as a Uint8Array view), so callers convert them as before.
 * Only what manifests need is compiled; anything else returns undefined and the caller keeps
 * avsc.
 */
import { BIGINT_LONG, type AvroSchema, type AvroSchemaObject } from './avro.js';

/** A position in one decompressed block. */
export interface AvroCursor {
  buf: Buffer;
  pos: number;
}

export type AvroSkip = (c: AvroCursor) => void;
export type AvroRead = (c: AvroCursor) => unknown;

const readLong = (BIGINT_LONG as unknown as { _read(c: AvroCursor): bigint })._read;

/** A zig-zag varint as a number (exact up to 2^53; ints, lengths and counts). */
export function readVarInt(c: AvroCursor): number {
  const buf = c.buf;
  let pos = c.pos;
  let b = buf[pos++];
  if (b < 0x80) {
    c.pos = pos;
    return (b >>> 1) ^ -(b & 1);
  }
  let n = b & 0x7f;
  let mul = 128;
  do {
    b = buf[pos++];
    n += (b & 0x7f) * mul;
    mul *= 128;
  } while (b & 0x80 && mul < 2 ** 70);
  c.pos = pos;
  return n % 2 === 1 ? -(n + 1) / 2 : n / 2;
}

function skipVarInt(c: AvroCursor): void {
  const buf = c.buf;
  let pos = c.pos;
  // Past the end buf[pos] is undefined and the loop stops; the caller sees pos > length.
  while (buf[pos++] & 0x80);
  c.pos = pos;
}

function length(c: AvroCursor): number {
  const n = readVarInt(c);
  // A negative or overlong length leaves the cursor past the end, which the caller reports.
  if (n < 0 || c.pos + n > c.buf.length) {
    c.pos = c.buf.length + 1;
    return 0;
  }
  return n;
}

function skipBytes(c: AvroCursor): void {
  const n = length(c);
  c.pos += n;
}

function readString(c: AvroCursor): string {
  const n = length(c);
  const start = c.pos;
  c.pos += n;
  return c.buf.toString('utf8', start, start + n);
}

function readBytes(c: AvroCursor): Uint8Array {
  const n = length(c);
  const start = c.pos;
  c.pos += n;
  return new Uint8Array(c.buf.buffer, c.buf.byteOffset + start, n);
}

const readNull = (): null => null;
const skipNull = (): void => {};

/** Each item compiled, or undefined when one cannot be. */
function all<T, F>(items: readonly T[], compile: (item: T) => F | undefined): F[] | undefined {
  const out: F[] = [];
  for (const item of items) {
    const f = compile(item);
    if (f === undefined) return undefined;
    out.push(f);
  }
  return out;
}

function typeOf(schema: AvroSchema, named: ReadonlyMap<string, AvroSchemaObject>): AvroSchema | undefined {
  if (typeof schema === 'string') return named.get(schema) ?? schema;
  return schema;
}

/** Skips one value of `schema`; undefined when the schema cannot be followed (an unknown name). */
export function avroSkipper(schema: AvroSchema, named: ReadonlyMap<string, AvroSchemaObject>): AvroSkip | undefined {
  const s = typeOf(schema, named);
  if (s === undefined) return undefined;
  if (Array.isArray(s)) {
    const skips = all(s as readonly AvroSchema[], (b) => avroSkipper(b, named));
    if (!skips) return undefined;
    return (c) => {
      const i = readVarInt(c);
      const skip = skips[i];
      if (skip === undefined) c.pos = c.buf.length + 1;
      else skip(c);
    };
  }
  if (typeof s === 'string') return primitiveSkipper(s);
  const o = s as AvroSchemaObject;
  switch (o.type) {
    case 'record':
    case 'error': {
      const fields = (Array.isArray(o.fields) ? o.fields : []) as { type: AvroSchema }[];
      const skips = all(fields, (f) => avroSkipper(f.type, named));
      if (!skips) return undefined;
      return (c) => {
        for (let i = 0; i < skips.length; i++) skips[i](c);
      };
    }
    case 'enum':
      return skipVarInt;
    case 'fixed': {
      const size = Number(o.size);
      return (c) => {
        c.pos += size;
      };
    }
    case 'array':
    case 'map': {
      const itemSchema = (o.type === 'array' ? o.items : o.values) as AvroSchema;
      const flat = flatKinds(itemSchema, named);
      if (flat !== undefined) return flatArraySkipper(o.type === 'map' ? [BYTES, ...flat] : flat);
      const item = avroSkipper(itemSchema, named);
      if (item === undefined) return undefined;
      const isMap = o.type === 'map';
      const items = (c: AvroCursor, n: number): void => {
        for (; n > 0; n--) {
          if (isMap) skipBytes(c);
          item(c);
        }
      };
      return (c) => skipBlocks(c, items);
    }
    default:
      return typeof o.type === 'string' ? (named.has(o.type) ? avroSkipper(o.type, named) : primitiveSkipper(o.type)) : avroSkipper(o.type, named);
  }
}

/** Kinds of flatKinds: a varint, a length-prefixed run, else a fixed number of bytes (>= 0). */
const VARINT = -1;
const BYTES = -2;

/**
 * The kinds of a primitive, or of a record whose fields are all primitives (the key-value
 * records of the metrics maps a manifest skips), in order; undefined for anything else.
 */
function flatKinds(schema: AvroSchema, named: ReadonlyMap<string, AvroSchemaObject>): number[] | undefined {
  const s = typeOf(schema, named);
  if (s === undefined || Array.isArray(s)) return undefined;
  const o = typeof s === 'string' ? undefined : (s as AvroSchemaObject);
  const name = o === undefined ? (s as string) : typeof o.type === 'string' && !named.has(o.type) ? o.type : undefined;
  if (o?.type === 'record') {
    const fields = (Array.isArray(o.fields) ? o.fields : []) as { type: AvroSchema }[];
    const kinds: number[] = [];
    for (const f of fields) {
      const k = flatKinds(f.type, named);
      if (k === undefined || k.length !== 1) return undefined;
      kinds.push(k[0]);
    }
    return kinds;
  }
  if (o?.type === 'fixed') return [Number(o.size)];
  switch (name) {
    case 'null':
      return [0];
    case 'boolean':
      return [1];
    case 'int':
    case 'long':
    case 'enum':
      return [VARINT];
    case 'float':
      return [4];
    case 'double':
      return [8];
    case 'bytes':
    case 'string':
      return [BYTES];
    default:
      return undefined;
  }
}

/**
 * Skips an array (or map, its key first in `kinds`) of flat items in one loop over the bytes:
 * a manifest's column metrics are most of its values, and one call per value cost more than
 * the skipping.
 */
function flatArraySkipper(kinds: readonly number[]): AvroSkip {
  if (kinds.length === 2 && kinds[0] === VARINT && (kinds[1] === VARINT || kinds[1] === BYTES)) {
    return pairSkipper(kinds[1] === BYTES);
  }
  const k = Int32Array.from(kinds);
  const fields = k.length;
  const items = (c: AvroCursor, n: number): void => {
    const buf = c.buf;
    const end = buf.length;
    let pos = c.pos;
    for (; n > 0 && pos <= end; n--) {
      for (let f = 0; f < fields; f++) {
        const kind = k[f];
        if (kind === VARINT) {
          while (buf[pos++] & 0x80);
        } else if (kind === BYTES) {
          pos = skipRun(buf, pos, end);
        } else {
          pos += kind;
        }
      }
    }
    c.pos = pos;
  };
  return (c) => skipBlocks(c, items);
}

/**
 * The position past a length-prefixed run (a zig-zag varint length, then that many bytes) at
 * `pos`; end + 1 when the length is negative or runs past `end` (the caller sees pos > length).
 */
function skipRun(buf: Buffer, pos: number, end: number): number {
  let b = buf[pos++];
  let len = b & 0x7f;
  for (let mul = 128; b & 0x80 && mul < 2 ** 70; mul *= 128) {
    b = buf[pos++];
    len += (b & 0x7f) * mul;
  }
  return len % 2 === 1 || pos + len / 2 > end ? end + 1 : pos + len / 2;
}

/**
 * flatArraySkipper for the key-value records of the metrics maps: an int key and a long (counts,
 * sizes) or bytes (bounds) value, without the loop over the kinds.
 */
function pairSkipper(bytesValue: boolean): AvroSkip {
  const items = (c: AvroCursor, n: number): void => {
    const buf = c.buf;
    const end = buf.length;
    let pos = c.pos;
    for (; n > 0 && pos <= end; n--) {
      while (buf[pos++] & 0x80);
      if (bytesValue) pos = skipRun(buf, pos, end);
      else while (buf[pos++] & 0x80);
    }
    c.pos = pos;
  };
  return (c) => skipBlocks(c, items);
}

/** Skips an array's or map's blocks, each block's items by `items` (a block with its byte size is jumped over). */
function skipBlocks(c: AvroCursor, items: (c: AvroCursor, n: number) => void): void {
  for (;;) {
    let n = readVarInt(c);
    if (n === 0 || c.pos > c.buf.length) return;
    if (n < 0) {
      const size = readVarInt(c);
      if (size >= 0) {
        c.pos += size;
        continue;
      }
      n = -n;
    }
    items(c, n);
  }
}

function primitiveSkipper(name: string): AvroSkip | undefined {
  switch (name) {
    case 'null':
      return skipNull;
    case 'boolean':
      return (c) => {
        c.pos += 1;
      };
    case 'int':
    case 'long':
      return skipVarInt;
    case 'float':
      return (c) => {
        c.pos += 4;
      };
    case 'double':
      return (c) => {
        c.pos += 8;
      };
    case 'bytes':
    case 'string':
      return skipBytes;
    default:
      return undefined;
  }
}

/**
 * Reads one value of `schema` as avsc would through avroType: null, boolean, int, long (bigint),
 * float, double, string, bytes (a view), arrays and unions of these. Undefined for anything else
 * (records, maps, fixed, enums, logical bytes), which the caller reads with avsc.
 */
export function avroReader(schema: AvroSchema, named: ReadonlyMap<string, AvroSchemaObject>): AvroRead | undefined {
  const s = typeOf(schema, named);
  if (s === undefined) return undefined;
  if (Array.isArray(s)) {
    const reads = all(s as readonly AvroSchema[], (b) => avroReader(b, named));
    if (!reads) return undefined;
    return (c) => {
      const read = reads[readVarInt(c)];
      if (read === undefined) {
        c.pos = c.buf.length + 1;
        return null;
      }
      return read(c);
    };
  }
  if (typeof s === 'string') return primitiveReader(s);
  const o = s as AvroSchemaObject;
  if (o.type === 'array' && o.logicalType === undefined) {
    const item = avroReader(o.items as AvroSchema, named);
    if (item === undefined) return undefined;
    return (c) => {
      let out: unknown[] | undefined;
      for (;;) {
        let n = readVarInt(c);
        if (n === 0 || c.pos > c.buf.length) return out ?? [];
        if (n < 0) {
          n = -n;
          skipVarInt(c);
        }
        // Sized to the first block (most lists are one block): no spare capacity kept.
        if (out === undefined && n <= c.buf.length - c.pos) {
          out = new Array<unknown>(n);
          for (let i = 0; i < n; i++) out[i] = item(c);
        } else {
          out ??= [];
          for (; n > 0; n--) out.push(item(c));
        }
      }
    };
  }
  if (typeof o.type !== 'string') return undefined;
  // avroType reads every long as bigint and ignores int logical types (date, time-millis).
  if (o.type === 'long' || (o.type === 'int' && o.logicalType !== undefined)) return primitiveReader(o.type);
  return o.logicalType === undefined && !named.has(o.type) ? primitiveReader(o.type) : undefined;
}

function primitiveReader(name: string): AvroRead | undefined {
  switch (name) {
    case 'null':
      return readNull;
    case 'boolean':
      return (c) => c.buf[c.pos++] !== 0;
    case 'int':
      return readVarInt;
    case 'long':
      return readLong;
    case 'float':
      return (c) => {
        const v = c.buf.readFloatLE(c.pos);
        c.pos += 4;
        return v;
      };
    case 'double':
      return (c) => {
        const v = c.buf.readDoubleLE(c.pos);
        c.pos += 8;
        return v;
      };
    case 'string':
      return readString;
    case 'bytes':
      return readBytes;
    default:
      return undefined;
  }
}
