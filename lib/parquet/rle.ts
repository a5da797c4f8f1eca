/**
 * parquet-format's RLE / bit-packing hybrid (Encodings.md, "Run Length Encoding / Bit-Packing
 * Hybrid"), the encoding of dictionary indices and of v1 and v2 levels, and the deprecated
 * BIT_PACKED levels. A run header is a ULEB128 varint: `count << 1` for a repeated run (the
 * value in ceil(width / 8) little-endian bytes), `groups << 1 | 1` for groups of eight values
 * packed `width` bits each, least significant bit first.
 */

/** Bits needed for values 0..max. */
export function bitWidth(max: number): number {
  return max <= 0 ? 0 : 32 - Math.clz32(max);
}

/** Thrown for bytes that do not hold the values they should; callers name the file and column. */
export class RleError extends Error {}

/** The run header (a ULEB128 varint) at `at`, and where the run's bytes start. */
function runHeader(buf: Uint8Array, at: number, end: number, n: number, count: number): { value: number; at: number } {
  let value = 0;
  let shift = 0;
  for (;;) {
    if (at >= end) throw new RleError(`runs end after ${n} of ${count} values`);
    const b = buf[at++];
    value += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return { value, at };
    shift += 7;
    if (shift > 35) throw new RleError('run header varint is too long');
  }
}

/**
 * Walks the runs holding `count` values from `at` (not past `end`): `packed(at, n)` for the first
 * `n` values of a bit-packed run at `at` (its padding past `count` is skipped), `repeat(v, n)` for a
 * repeated run. Returns the offset after the last run read.
 */
function walkRuns(
  buf: Uint8Array, at: number, end: number, width: number, count: number,
  packed: (at: number, n: number, done: number) => void, repeat: (v: number, n: number, done: number) => void,
): number {
  if (width > 32) throw new RleError(`bit width ${width} is over 32`);
  const valueBytes = (width + 7) >> 3;
  let n = 0;
  while (n < count) {
    const header = runHeader(buf, at, end, n, count);
    at = header.at;
    if (header.value % 2 === 1) {
      const values = Math.floor(header.value / 2) * 8;
      const bytes = (values / 8) * width;
      if (at + bytes > end) throw new RleError(`a bit-packed run of ${values} values needs ${bytes} bytes, ${end - at} are left`);
      const take = Math.min(values, count - n);
      packed(at, take, n);
      n += take;
      at += bytes;
    } else {
      const run = header.value / 2;
      if (run === 0) throw new RleError('an empty repeated run');
      if (at + valueBytes > end) throw new RleError('a repeated run ends early');
      let v = 0;
      for (let i = 0; i < valueBytes; i++) v += buf[at + i] * 2 ** (8 * i);
      at += valueBytes;
      const take = Math.min(run, count - n);
      repeat(v | 0, take, n);
      n += take;
    }
  }
  return at;
}

/**
 * Decodes `count` values starting at `at` (runs must not pass `end`) into `out` from `into` on;
 * returns the offset after the last run read. A bit-packed run's padding past `count` is skipped.
 */
export function decodeHybrid(buf: Uint8Array, at: number, end: number, width: number, count: number, out: Int32Array, into = 0): number {
  return walkRuns(
    buf, at, end, width, count,
    (p, n, done) => unpackLsb(buf, p, width, n, out, into + done),
    (v, n, done) => out.fill(v, into + done, into + done + n),
  );
}

function unpackLsb(buf: Uint8Array, at: number, width: number, count: number, out: Int32Array, into: number): void {
  if (width === 0) {
    out.fill(0, into, into + count);
    return;
  }
  if (width <= 24) {
    const m = (1 << width) - 1;
    // A value's bits lie within the 4 bytes from its first (width <= 25): one little-endian read each
    // while 4 bytes are left in the buffer (2-3x the byte loop below; runs of 32 values or more).
    // At most 2^28 bytes, so the bit position stays a 32-bit int.
    const left = Math.min(buf.length - at, 2 ** 28);
    const fast = left < 4 || count < 32 ? 0 : Math.min(count, Math.floor(((left - 4) * 8 + 7) / width) + 1);
    let bit = 0;
    if (fast > 0) {
      const view = new DataView(buf.buffer, buf.byteOffset + at, left);
      for (let i = 0; i < fast; i++, bit += width) out[into + i] = (view.getUint32(bit >>> 3, true) >>> (bit & 7)) & m;
      if (fast === count) return;
    }
    // The last values, byte by byte: pending bits stay under 32, plain int arithmetic.
    let q = at + (bit >>> 3);
    let a = buf[q++] >>> (bit & 7);
    let n = 8 - (bit & 7);
    for (let i = fast; i < count; i++) {
      while (n < width) {
        a |= buf[q++] << n;
        n += 8;
      }
      out[into + i] = a & m;
      a >>>= width;
      n -= width;
    }
    return;
  }
  const mask = width === 32 ? 0xffffffff : (1 << width) - 1;
  let acc = 0;
  let bits = 0;
  let p = at;
  for (let i = 0; i < count; i++) {
    // Up to 32 + 7 bits are pending: kept in a float-safe sum rather than a 32-bit int.
    while (bits < width) {
      acc += buf[p++] * 2 ** bits;
      bits += 8;
    }
    out[into + i] = (acc % 2 ** width) & mask;
    acc = Math.floor(acc / 2 ** width);
    bits -= width;
  }
}

/** Decodes `count` deprecated BIT_PACKED values (most significant bit first) from `at`; returns the offset after them. */
export function decodeBitPacked(buf: Uint8Array, at: number, end: number, width: number, count: number, out: Int32Array): number {
  const bytes = Math.ceil((count * width) / 8);
  if (at + bytes > end) throw new RleError(`BIT_PACKED levels need ${bytes} bytes, ${end - at} are left`);
  for (let i = 0; i < count; i++) {
    let v = 0;
    for (let b = 0; b < width; b++) {
      const bit = i * width + b;
      v = (v << 1) | ((buf[at + (bit >> 3)] >> (7 - (bit & 7))) & 1);
    }
    out[i] = v;
  }
  return at + bytes;
}

/** Growable byte output. */
class Bytes {
  buf = new Uint8Array(256);
  length = 0;

  ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  varint(v: number): void {
    this.ensure(5);
    while (v > 0x7f) {
      this.buf[this.length++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.length++] = v;
  }
}

/** parquet-mr's encoder caps a bit-packed run at 63 groups (its header then fits one byte); readers may rely on it. */
const MAX_GROUPS = 63;

/**
 * Encodes `values[0..count)` (each < 2^width) as the hybrid: repeats of eight or more as repeated
 * runs, the rest bit-packed in groups of eight (the last group zero-padded).
 */
export function encodeHybrid(values: Int32Array, count: number, width: number, repeat = 0, packedOnly = false): Uint8Array {
  const out = new Bytes();
  const valueBytes = (width + 7) >> 3;
  if (repeat > 0) {
    // One repeated run of values[0] (encodeRuns).
    out.varint(repeat << 1);
    out.ensure(valueBytes);
    for (let i = 0; i < valueBytes; i++) out.buf[out.length++] = (values[0] >>> (8 * i)) & 0xff;
    return out.buf.slice(0, out.length);
  }
  const packed = (from: number, n: number): void => {
    for (let s = from; s < from + n; ) {
      const groups = Math.min(MAX_GROUPS, Math.ceil((from + n - s) / 8));
      const take = Math.min(groups * 8, from + n - s);
      out.varint((groups << 1) | 1);
      out.ensure(groups * width);
      // The buffer and position in locals: the loop below is where dictionary-indexed pages spend their encoding.
      const buf = out.buf;
      let at = out.length;
      let acc = 0;
      let bits = 0;
      if (width <= 24) {
        // Pending bits stay under 8 + 24: plain int arithmetic.
        for (let i = 0; i < take; i++) {
          acc |= values[s + i] << bits;
          bits += width;
          while (bits >= 8) {
            buf[at++] = acc & 0xff;
            acc >>>= 8;
            bits -= 8;
          }
        }
        // The last group's padding: zeros, then whatever bits are pending.
        for (let i = take; i < groups * 8; i++) {
          bits += width;
          while (bits >= 8) {
            buf[at++] = acc & 0xff;
            acc >>>= 8;
            bits -= 8;
          }
        }
      } else {
        for (let i = 0; i < groups * 8; i++) {
          const v = i < take ? values[s + i] >>> 0 : 0;
          acc += v * 2 ** bits;
          bits += width;
          while (bits >= 8) {
            buf[at++] = acc % 256;
            acc = Math.floor(acc / 256);
            bits -= 8;
          }
        }
      }
      out.length = at;
      s += take;
    }
  };
  const repeated = (v: number, n: number): void => {
    out.varint(n << 1);
    out.ensure(valueBytes);
    for (let i = 0; i < valueBytes; i++) out.buf[out.length++] = (v >>> (8 * i)) & 0xff;
  };
  if (packedOnly) {
    packed(0, count);
    return out.buf.slice(0, out.length);
  }
  let literalFrom = 0;
  let i = 0;
  while (i < count) {
    let run = 1;
    while (i + run < count && values[i + run] === values[i]) run++;
    if (run < 8) {
      i += run;
      continue;
    }
    const literal = i - literalFrom;
    if (literal > 0) {
      // A bit-packed run other than the last holds a multiple of eight: borrow from the repeat.
      const pad = (8 - (literal % 8)) % 8;
      packed(literalFrom, literal + pad);
      i += pad;
      run -= pad;
    }
    if (run > 0) repeated(values[i], run);
    i += run;
    literalFrom = i;
  }
  if (literalFrom < count) packed(literalFrom, count - literalFrom);
  return out.buf.slice(0, out.length);
}

/**
 * A level sequence as its maximal runs, (value, count) pairs: levels are mostly long runs (a
 * column without nulls is one), so they are decoded, hashed, split and re-encoded as runs. Runs
 * appended merge with the last one, so the pairs of a sequence are the same however it was cut.
 */
export class Runs {
  data = new Int32Array(8);
  /** Int32 slots used: twice the runs. */
  length = 0;
  /** Values held. */
  values = 0;

  push(value: number, count: number): void {
    if (count <= 0) return;
    this.values += count;
    if (this.length > 0 && this.data[this.length - 2] === value) {
      this.data[this.length - 1] += count;
      return;
    }
    if (this.length + 2 > this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = value;
    this.data[this.length++] = count;
  }

  append(other: Runs): void {
    for (let i = 0; i < other.length; i += 2) this.push(other.data[i], other.data[i + 1]);
  }

  /** Values equal to `value`. */
  countOf(value: number): number {
    let n = 0;
    for (let i = 0; i < this.length; i += 2) if (this.data[i] === value) n += this.data[i + 1];
    return n;
  }

  /** The pairs as bytes (what a hash takes). */
  bytes(): Uint8Array {
    return new Uint8Array(this.data.buffer, 0, this.length * 4);
  }
}

/** Decodes `count` hybrid-encoded values from `at` (not past `end`) as runs appended to `out`; returns the offset after them. */
export function decodeRuns(buf: Uint8Array, at: number, end: number, width: number, count: number, out: Runs): number {
  let scratch = new Int32Array(0);
  return walkRuns(
    buf, at, end, width, count,
    (p, take) => {
      if (scratch.length < take) scratch = new Int32Array(Math.max(take, 512));
      unpackLsb(buf, p, width, take, scratch, 0);
      let i = 0;
      while (i < take) {
        let j = i + 1;
        while (j < take && scratch[j] === scratch[i]) j++;
        out.push(scratch[i], j - i);
        i = j;
      }
    },
    (v, take) => out.push(v, take),
  );
}

/** `values[0..count)` bit-packed only (the last group zero-padded). */
function encodeHybridPacked(values: Int32Array, count: number, width: number): Uint8Array {
  return encodeHybrid(values, count, width, 0, true);
}

/** Encodes runs as the hybrid: runs of eight or more as repeated runs, the rest bit-packed. */
export function encodeRuns(runs: Runs, width: number): Uint8Array {
  const values = new Int32Array(Math.min(runs.values, 1024));
  let literal = values;
  let n = 0;
  const parts: Uint8Array[] = [];
  const flushLiteral = (): void => {
    if (n > 0) parts.push(encodeHybridPacked(literal, n, width));
    n = 0;
  };
  const add = (v: number, c: number): void => {
    if (n + c > literal.length) {
      const next = new Int32Array(Math.max(literal.length * 2, n + c));
      next.set(literal.subarray(0, n));
      literal = next;
    }
    literal.fill(v, n, n + c);
    n += c;
  };
  for (let i = 0; i < runs.length; i += 2) {
    const v = runs.data[i];
    let c = runs.data[i + 1];
    if (c < 8) {
      add(v, c);
      continue;
    }
    if (n > 0) {
      const pad = (8 - (n % 8)) % 8;
      add(v, pad);
      c -= pad;
      flushLiteral();
    }
    if (c >= 8) parts.push(encodeHybrid(Int32Array.of(v), 0, width, c));
    else add(v, c);
  }
  flushLiteral();
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
