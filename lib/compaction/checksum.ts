/**
 * The proof a rewrite carries (DESIGN.md invariant 1): the number of live rows and an
 * order-independent 64-bit hash of them, computed over the inputs as read (deletes applied)
 * and over the outputs as re-read.
 *
 * Row hash: the row's canonical encoding (below) is a stream of 32-bit words mixed by two
 * 32-bit lanes. Lane A is MurmurHash3 x86_32's block step (c1 0xcc9e2d51, c2 0x1b873593);
 * lane B the same shape with xxHash32's primes (0x85ebca77, 0xc2b2ae3d) and other rotations,
 * so the lanes are different functions, not one function under two seeds. Both are finished
 * with murmur3's fmix32 after folding in the word count and each other (as MurmurHash3
 * x86_128 does); the 64-bit row hash is A·2^32 + B. Not cryptographic: it catches lost,
 * duplicated and altered rows, not an adversary.
 *
 * Set hash: the sum of the row hashes mod 2^64, so row order does not matter; it is kept as
 * two 32-bit halves with a carry, which keeps BigInt off the per-row path.
 *
 * Canonical encoding, fields in ascending field id (nested structs too), each as its id and
 * then its value:
 *   null → 0 · boolean → 1, 0|1 · int, long, date, time, timestamps, decimal (unscaled) →
 *   2, low and high word of the 64-bit two's complement (decimals beyond 64 bits: 3, sign,
 *   word count, magnitude words) · float, double → 4, the two words of the IEEE double (one NaN)
 *   · string, uuid → 5, UTF-16 length, code units two per word · fixed, binary → 6, length,
 *   bytes four per word · list → 7, length, elements · map → 8, length, key and value of each
 *   entry · struct → 9, its fields · unknown → 0.
 * Values are typed by the schema, so an int promoted to long hashes like the long it reads as.
 *
 * The rewriter hashes Arrow batches column by column (`batchHasher`): one lane state per row in
 * typed arrays, each column's words mixed into every row's state in field-id order. The words
 * are the row encoding's, so a batch hashes exactly as its rows would (checksum.test.ts checks).
 */
import * as arrow from 'apache-arrow';
import { InvalidArgumentError } from '../errors.js';
import { indexById, type Schema } from '../iceberg/schema.js';
import { type IcebergType, type NestedField, type StructType, isLongValued } from '../iceberg/types.js';
import { uuidFromBytes, type IcebergValue, type Row } from '../iceberg/values.js';
import { readData } from '../parquet/values.js';
import { HashKernel, type KernelKind } from './hash-kernel.js';
import { LAST_UPDATED_SEQUENCE_NUMBER_FIELD, ROW_ID_FIELD } from '../table/scan.js';

const A1 = 0xcc9e2d51;
const A2 = 0x1b873593;
const B1 = 0x85ebca77;
const B2 = 0xc2b2ae3d;
const SEED_A = 0x9747b28c;
const SEED_B = 0x2f1b6c3d;

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Lane A's step: one word into state `a` (the word's part and the state's part, split so constant words are mixed once). */
function mixA(a: number, w: number): number {
  return stepA(a, keyA(w));
}

function keyA(w: number): number {
  const k = Math.imul(w | 0, A1);
  return Math.imul((k << 15) | (k >>> 17), A2);
}

function stepA(a: number, key: number): number {
  a ^= key;
  a = (a << 13) | (a >>> 19);
  return (Math.imul(a, 5) + 0xe6546b64) | 0;
}

/** Lane B's step: one word into state `b`. */
function mixB(b: number, w: number): number {
  return stepB(b, keyB(w));
}

function keyB(w: number): number {
  const j = Math.imul(w ^ 0x5bd1e995, B1);
  return Math.imul((j << 13) | (j >>> 19), B2);
}

function stepB(b: number, key: number): number {
  b ^= key;
  b = (b << 17) | (b >>> 15);
  return (Math.imul(b, 9) + 0x165667b1) | 0;
}

/** The mixing state of one row hash. */
class Lanes {
  a = SEED_A;
  b = SEED_B;
  n = 0;

  reset(): void {
    this.a = SEED_A;
    this.b = SEED_B;
    this.n = 0;
  }

  word(w: number): void {
    this.a = mixA(this.a, w);
    this.b = mixB(this.b, w);
    this.n++;
  }

  /** Finishes: [high, low] words of the 64-bit row hash. */
  finish(out: Uint32Array): void {
    let a = this.a ^ this.n;
    let b = this.b ^ Math.imul(this.n, 0x27d4eb2f);
    a = (a + b) | 0;
    b = (b + a) | 0;
    a = fmix32(a);
    b = fmix32(b);
    a = (a + b) | 0;
    b = (b + a) | 0;
    out[0] = a >>> 0;
    out[1] = b >>> 0;
  }
}

type Encoder = (v: IcebergValue, s: Lanes) => void;

const TWO_32 = 4294967296;
const F64 = new Float64Array(1);
const F64_WORDS = new Uint32Array(F64.buffer);
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const SAFE = 2n ** 53n;

function integer(v: number | bigint, s: Lanes): void {
  if (typeof v === 'number') {
    s.word(2);
    s.word(v >>> 0);
    s.word(Math.floor(v / TWO_32) | 0);
    return;
  }
  if (v > -SAFE && v < SAFE) {
    integer(Number(v), s);
    return;
  }
  if (v >= LONG_MIN && v <= LONG_MAX) {
    const u = BigInt.asUintN(64, v);
    s.word(2);
    s.word(Number(u & 0xffffffffn));
    s.word(Number(u >> 32n));
    return;
  }
  // Wide decimals: sign and magnitude.
  let m = v < 0n ? -v : v;
  const words: number[] = [];
  while (m > 0n) {
    words.push(Number(m & 0xffffffffn));
    m >>= 32n;
  }
  s.word(3);
  s.word(v < 0n ? 1 : 0);
  s.word(words.length);
  for (const w of words) s.word(w);
}

function float(v: number, s: Lanes): void {
  F64[0] = Number.isNaN(v) ? Number.NaN : v;
  s.word(4);
  s.word(F64_WORDS[0]);
  s.word(F64_WORDS[1]);
}

function text(v: string, s: Lanes): void {
  const n = v.length;
  s.word(5);
  s.word(n);
  let i = 0;
  for (; i + 1 < n; i += 2) s.word(v.charCodeAt(i) | (v.charCodeAt(i + 1) << 16));
  if (i < n) s.word(v.charCodeAt(i));
}

function bytes(v: Uint8Array, s: Lanes): void {
  const n = v.length;
  s.word(6);
  s.word(n);
  let i = 0;
  for (; i + 3 < n; i += 4) s.word(v[i] | (v[i + 1] << 8) | (v[i + 2] << 16) | (v[i + 3] << 24));
  if (i < n) {
    let w = 0;
    for (let k = 0; i < n; i++, k += 8) w |= v[i] << k;
    s.word(w);
  }
}

const integerEncoder: Encoder = (v, s) => (v === null ? s.word(0) : integer(v as number | bigint, s));

function encoderFor(type: IcebergType): Encoder {
  if (isLongValued(type)) return integerEncoder;
  switch (type.type) {
    case 'boolean':
      return (v, s) => {
        if (v === null) return s.word(0);
        s.word(1);
        s.word(v ? 1 : 0);
      };
    case 'int':
    case 'date':
    case 'decimal':
      return integerEncoder;
    case 'float':
    case 'double':
      return (v, s) => (v === null ? s.word(0) : float(v as number, s));
    case 'string':
    case 'uuid':
      return (v, s) => (v === null ? s.word(0) : text(v as string, s));
    case 'fixed':
    case 'binary':
      return (v, s) => (v === null ? s.word(0) : bytes(v as Uint8Array, s));
    case 'unknown':
      return (_v, s) => s.word(0);
    case 'list': {
      const element = encoderFor(type.element);
      return (v, s) => {
        if (v === null) return s.word(0);
        const list = v as IcebergValue[];
        s.word(7);
        s.word(list.length);
        for (const e of list) element(e ?? null, s);
      };
    }
    case 'map': {
      const key = encoderFor(type.key);
      const value = encoderFor(type.value);
      return (v, s) => {
        if (v === null) return s.word(0);
        const entries = v as Array<[IcebergValue, IcebergValue]>;
        s.word(8);
        s.word(entries.length);
        for (const [k, x] of entries) {
          key(k ?? null, s);
          value(x ?? null, s);
        }
      };
    }
    case 'struct': {
      const fields = structEncoder(type.fields);
      return (v, s) => {
        if (v === null) return s.word(0);
        s.word(9);
        fields(v as Row, s);
      };
    }
  }
}

function structEncoder(fields: readonly NestedField[]): (row: Row, s: Lanes) => void {
  const parts = [...fields]
    .sort((x, y) => x.id - y.id)
    .map((f) => ({ id: f.id, name: f.name, encode: encoderFor(f.type) }));
  return (row, s) => {
    for (const p of parts) {
      s.word(p.id);
      p.encode(row[p.name] ?? null, s);
    }
  };
}

/** Hashes one row: the [high, low] words of its 64-bit hash land in `out`. */
export type RowHashFunction = (row: Row, out: Uint32Array) => void;

/**
 * A row hash over `struct`'s fields, or only over the fields `fieldIds` names (identifier
 * fields, at any depth; each is encoded as its id and value, in ascending id).
 */
export function rowHasher(struct: StructType, fieldIds?: readonly number[]): RowHashFunction {
  const s = new Lanes();
  if (fieldIds === undefined) {
    const encode = structEncoder(struct.fields);
    return (row, out) => {
      s.reset();
      encode(row, s);
      s.finish(out);
    };
  }
  const parts = hashedFields(struct, fieldIds).map(({ id, path, field }) => ({ id, path, encode: encoderFor(field.type) }));
  return (row, out) => {
    s.reset();
    for (const p of parts) {
      let v: IcebergValue = row;
      for (const name of p.path) v = v === null || typeof v !== 'object' ? null : ((v as Row)[name] ?? null);
      s.word(p.id);
      p.encode(v, s);
    }
    s.finish(out);
  };
}

/** The fields `fieldIds` names, in ascending id, with their dotted-path names; throws for an id not in `struct`. */
function hashedFields(struct: StructType, fieldIds: readonly number[]): Array<{ id: number; path: string[]; field: NestedField }> {
  const index = indexById(struct);
  return [...new Set(fieldIds)]
    .sort((x, y) => x - y)
    .map((id) => {
      const f = index.get(id);
      if (!f) throw new InvalidArgumentError(`field id ${id} is not in the hashed schema`);
      return { id, path: f.path.split('.'), field: f.field };
    });
}

/**
 * The schema rows are proven with: the table schema's columns, then (v3) `_row_id` and
 * `_last_updated_sequence_number`, which a rewrite must carry over too.
 */
export function proofSchema(schema: Schema, rowLineage: boolean): StructType {
  return {
    type: 'struct',
    fields: rowLineage ? [...schema.fields, ROW_ID_FIELD, LAST_UPDATED_SEQUENCE_NUMBER_FIELD] : schema.fields,
  };
}

/**
 * The proof's row hash: every column, or only the identifier fields where the schema has
 * identifier-field-ids (DESIGN.md invariant 1); the lineage columns are always included.
 */
export function proofHasher(schema: Schema, rowLineage: boolean): RowHashFunction {
  const { struct, ids } = proofFields(schema, rowLineage);
  return rowHasher(struct, ids);
}

/** What the proof hashes: the proof schema, and the identifier fields plus lineage when the schema has identifier fields. */
function proofFields(schema: Schema, rowLineage: boolean): { struct: StructType; ids?: number[] } {
  const struct = proofSchema(schema, rowLineage);
  if (schema.identifierFieldIds.length === 0) return { struct };
  const lineage = rowLineage ? [ROW_ID_FIELD.id, LAST_UPDATED_SEQUENCE_NUMBER_FIELD.id] : [];
  return { struct, ids: [...schema.identifierFieldIds, ...lineage] };
}

/** The 64-bit hash of one row as a bigint (tests and diagnostics; the sum uses the words). */
export function hashRow(hash: RowHashFunction, row: Row): bigint {
  const out = new Uint32Array(2);
  hash(row, out);
  return (BigInt(out[0]) << 32n) | BigInt(out[1]);
}

/** Live row count and the sum mod 2^64 of the row hashes. */
export class RowSetChecksum {
  private hi = 0;
  private lo = 0;
  private rows = 0;
  private readonly scratch = new Uint32Array(2);

  constructor(private readonly hash: RowHashFunction) {}

  add(row: Row): void {
    this.hash(row, this.scratch);
    const lo = this.lo + this.scratch[1];
    this.lo = lo >>> 0;
    this.hi = (this.hi + this.scratch[0] + (lo >= TWO_32 ? 1 : 0)) >>> 0;
    this.rows++;
  }

  /** Adds one row's 64-bit hash given as its [high, low] words. */
  addWords(hi: number, lo: number): void {
    const sum = this.lo + lo;
    this.lo = sum >>> 0;
    this.hi = (this.hi + hi + (sum >= TWO_32 ? 1 : 0)) >>> 0;
    this.rows++;
  }

  /**
   * Adds `rows` rows known by one 64-bit digest of their bytes (a row group copied byte for
   * byte: chunk-copy.ts), given as its [high, low] words.
   */
  addDigest(hi: number, lo: number, rows: number): void {
    const sum = this.lo + lo;
    this.lo = sum >>> 0;
    this.hi = (this.hi + hi + (sum >= TWO_32 ? 1 : 0)) >>> 0;
    this.rows += rows;
  }

  addAll(rows: Iterable<Row>): void {
    for (const r of rows) this.add(r);
  }

  get count(): number {
    return this.rows;
  }

  /** The sum as an unsigned 64-bit bigint. */
  get sum(): bigint {
    return (BigInt(this.hi) << 32n) | BigInt(this.lo);
  }

  /** The sum as 16 lowercase hex digits. */
  get hex(): string {
    return this.hi.toString(16).padStart(8, '0') + this.lo.toString(16).padStart(8, '0');
  }
}

// ---------------------------------------------------------------------------------------------
// Column-wise hashing of Arrow batches

type AnyData = arrow.Data<arrow.DataType>;

/**
 * The lane states of a batch's rows: lane A, lane B and word count, one Int32 array each, in
 * the hash kernel's memory (hash-kernel.ts), where its SIMD loops work on four rows at once;
 * and a scratch list of rows a kernel left to a slower path. The kernel's memory serves every
 * hasher of the thread (grown when a batch is larger), so hashing a batch allocates next to nothing.
 */
class ColumnLanes {
  readonly kernel = HashKernel.get();
  A = new Int32Array(0);
  B = new Int32Array(0);
  N = new Int32Array(0);
  /** Rows a kernel put aside (non-ASCII text, decimals beyond 64 bits). */
  deferred = new Int32Array(0);
  size = 0;
  private readonly one = new Lanes();
  private readonly sums = new Uint32Array(4);

  /** Starts `size` fresh rows. */
  reset(size: number): void {
    const k = this.kernel;
    k.reserve(size);
    this.A = k.A;
    this.B = k.B;
    this.N = k.N;
    this.deferred = k.deferred;
    this.size = size;
    this.A.fill(SEED_A);
    this.B.fill(SEED_B);
    this.N.fill(0);
  }

  word(i: number, w: number): void {
    this.A[i] = mixA(this.A[i], w);
    this.B[i] = mixB(this.B[i], w);
    this.N[i]++;
  }

  /** Row i's state as a Lanes, for the per-value encoders. */
  load(i: number): Lanes {
    const l = this.one;
    l.a = this.A[i];
    l.b = this.B[i];
    l.n = this.N[i];
    return l;
  }

  store(i: number): void {
    this.A[i] = this.one.a;
    this.B[i] = this.one.b;
    this.N[i] = this.one.n;
  }

  /**
   * Finishes every row (as `Lanes.finish`) and adds their sum to `sum`: the kernel sums the
   * rows four at a time, the last rows (fewer than four) are finished here.
   */
  finish(sum: RowSetChecksum): void {
    const quads = this.size & ~3;
    const s = this.sums;
    this.kernel.finish(quads, s);
    // Σ(a·2^32 + b) mod 2^64 = (Σa mod 2^32)·2^32 + Σb mod 2^64.
    const lo = s[3];
    let hi = (s[2] + s[1]) >>> 0;
    const one = this.sums.subarray(0, 2);
    let tailLo = lo;
    for (let i = quads; i < this.size; i++) {
      this.load(i).finish(one);
      const t = tailLo + one[1];
      tailLo = t >>> 0;
      hi = (hi + one[0] + (t >= TWO_32 ? 1 : 0)) >>> 0;
    }
    sum.addDigest(hi, tailLo, this.size);
  }
}

/** Rows a column encoder works on: every row of the batch, or a subset (under non-null structs). */
type Active = Int32Array | null;

function activeCount(rows: Active, n: number): number {
  return rows ? rows.length : n;
}

function validAt(data: AnyData, i: number): boolean {
  const bitmap = data.nullBitmap;
  if (!bitmap || bitmap.length === 0 || data.nullCount === 0) return true;
  const bit = data.offset + i;
  return (bitmap[bit >> 3] & (1 << (bit & 7))) !== 0;
}

/** Mixes the field id `id` (when there is one), then the column's values, into every active row. */
type ColumnEncoder = (data: AnyData, lanes: ColumnLanes, rows: Active, id: number | undefined) => void;

/** Mixes the word `w` into every active row. */
function mixAll(lanes: ColumnLanes, rows: Active, n: number, w: number): void {
  for (let r = 0, m = activeCount(rows, n); r < m; r++) lanes.word(rows ? rows[r] : r, w);
}

/** The validity bitmap when some value is null, else undefined (every row valid). */
function nullMask(data: AnyData): Uint8Array | undefined {
  const bitmap = data.nullBitmap;
  return data.nullCount > 0 && bitmap && bitmap.length > 0 ? bitmap : undefined;
}

const NULL_A = keyA(0);
const NULL_B = keyB(0);
const TEXT_A = keyA(5);
const TEXT_B = keyB(5);

F64[0] = Number.NaN;
/** The words of the one NaN the row encoding hashes. */
const NAN_LO = F64_WORDS[0] | 0;
const NAN_HI = F64_WORDS[1] | 0;

/** How `fixedWords` reads a value's two words at `words[stride·i]`. */
const TWO_WORDS = 0;
/** One 32-bit word and its sign. */
const SIGN_EXTENDED = 1;
/** An IEEE double: any NaN hashes as the one NaN. */
const DOUBLE = 2;
/** A 128-bit decimal: one beyond 64 bits is deferred to the row encoder's wide form. */
const DECIMAL_128 = 3;
/** The hash kernel's loop for each. */
const KERNEL_KIND: readonly KernelKind[] = ['two', 'sign', 'double', 'decimal'];

/**
 * The hot loop of fixed-width columns: the field id `id` when there is one, then for a value
 * the type tag and its low and high word (read as `kind` says), for a null the word 0. A row's
 * lane state stays in locals, and the constant words' parts are mixed once per column. Returns
 * how many rows it left in `lanes.deferred` (id mixed, value not).
 */
function fixedWords(data: AnyData, lanes: ColumnLanes, rows: Active, id: number | undefined, tag: number, words: Int32Array, stride: number, kind: number): number {
  const mask = nullMask(data);
  const idWords = id === undefined ? 0 : 1;
  const idA = keyA(id ?? 0);
  const idB = keyB(id ?? 0);
  const tagA = keyA(tag);
  const tagB = keyB(tag);
  if (rows === null) {
    const count = data.length;
    const column = { kind: KERNEL_KIND[kind], values: words.subarray(0, stride * count), mask, maskOffset: data.offset };
    return lanes.kernel.fixed(column, count, idA, idB, idWords, tagA, tagB);
  }
  const SA = lanes.A;
  const SB = lanes.B;
  const SN = lanes.N;
  const deferred = lanes.deferred;
  let put = 0;
  const offset = data.offset;
  for (let r = 0, m = activeCount(rows, data.length); r < m; r++) {
    const i = rows === null ? r : rows[r];
    let a = SA[i];
    let b = SB[i];
    if (idWords !== 0) {
      a = stepA(a, idA);
      b = stepB(b, idB);
    }
    if (mask !== undefined && (mask[(offset + i) >> 3] & (1 << ((offset + i) & 7))) === 0) {
      SA[i] = stepA(a, NULL_A);
      SB[i] = stepB(b, NULL_B);
      SN[i] += idWords + 1;
      continue;
    }
    const x = stride * i;
    let lo = words[x];
    let hi = 0;
    if (kind === SIGN_EXTENDED) hi = lo >> 31;
    else {
      hi = words[x + 1];
      if (kind === DOUBLE) {
        if ((hi & 0x7ff00000) === 0x7ff00000 && ((hi & 0xfffff) | lo) !== 0) {
          lo = NAN_LO;
          hi = NAN_HI;
        }
      } else if (kind === DECIMAL_128 && (words[x + 2] !== hi >> 31 || words[x + 3] !== hi >> 31)) {
        SA[i] = a;
        SB[i] = b;
        SN[i] += idWords;
        deferred[put++] = i;
        continue;
      }
    }
    SA[i] = stepA(stepA(stepA(a, tagA), keyA(lo)), keyA(hi));
    SB[i] = stepB(stepB(stepB(b, tagB), keyB(lo)), keyB(hi));
    SN[i] += idWords + 3;
  }
  return put;
}

/**
 * The hot loop of UTF-8 columns, after the field id `id` when there is one: ASCII values hash
 * word by word from their bytes (two per word, as UTF-16 code units), the ASCII test made in the
 * same loop; a value with a non-ASCII byte is left in `lanes.deferred` (id mixed, value not) and
 * hashed from its decoded string after the loop. Its start (id, null) repeats fixedWords' on
 * purpose: one kernel for both, or a helper for that start, measured 45% and 16% slower.
 */
function utf8Words(data: AnyData, lanes: ColumnLanes, rows: Active, id: number | undefined): void {
  const offsets = data.valueOffsets as Int32Array;
  const bytes = data.values as Uint8Array;
  const SA = lanes.A;
  const SB = lanes.B;
  const SN = lanes.N;
  const deferred = lanes.deferred;
  let put = 0;
  const mask = nullMask(data);
  const offset = data.offset;
  const idWords = id === undefined ? 0 : 1;
  const idA = keyA(id ?? 0);
  const idB = keyB(id ?? 0);
  if (rows === null) {
    // The SIMD kernel; a value too long for its chunk comes back here, hashed from its string below.
    put = lanes.kernel.utf8(offsets, bytes, mask, offset, data.length, idA, idB, idWords, (i) => {
      if (id !== undefined) lanes.word(i, id);
      if (mask === undefined || (mask[(offset + i) >> 3] & (1 << ((offset + i) & 7))) !== 0) return true;
      lanes.word(i, 0);
      return false;
    });
  }
  for (let r = 0, m = rows === null ? 0 : rows.length; r < m; r++) {
    const i = rows![r];
    let a = SA[i];
    let b = SB[i];
    if (idWords !== 0) {
      a = stepA(a, idA);
      b = stepB(b, idB);
    }
    if (mask !== undefined && (mask[(offset + i) >> 3] & (1 << ((offset + i) & 7))) === 0) {
      SA[i] = stepA(a, NULL_A);
      SB[i] = stepB(b, NULL_B);
      SN[i] += idWords + 1;
      continue;
    }
    const s = offsets[i];
    const e = offsets[i + 1];
    let va = mixA(stepA(a, TEXT_A), e - s);
    let vb = mixB(stepB(b, TEXT_B), e - s);
    let k = s;
    let high = 0;
    for (; k + 1 < e; k += 2) {
      const c0 = bytes[k];
      const c1 = bytes[k + 1];
      high = c0 | c1;
      if (high >= 0x80) break;
      const w = c0 | (c1 << 16);
      va = mixA(va, w);
      vb = mixB(vb, w);
    }
    if (k + 1 === e) {
      high = bytes[k];
      va = mixA(va, high);
      vb = mixB(vb, high);
    }
    if (high >= 0x80) {
      SA[i] = a;
      SB[i] = b;
      SN[i] += idWords;
      deferred[put++] = i;
      continue;
    }
    SA[i] = va;
    SB[i] = vb;
    SN[i] += idWords + 2 + ((e - s + 1) >> 1);
  }
  // UTF-16 code units are what the row encoding hashes.
  for (let d = 0; d < put; d++) {
    const i = deferred[d];
    text(utf8.decode(bytes.subarray(offsets[i], offsets[i + 1])), lanes.load(i));
    lanes.store(i);
  }
}

/** Calls `body` for each active non-null row; a null row hashes as the word 0. */
function eachValue(data: AnyData, lanes: ColumnLanes, rows: Active, body: (i: number) => void): void {
  const m = activeCount(rows, data.length);
  for (let r = 0; r < m; r++) {
    const i = rows ? rows[r] : r;
    if (validAt(data, i)) body(i);
    else lanes.word(i, 0);
  }
}

const utf8 = new TextDecoder('utf-8');

/** Encodes any value through the row encoder: for types without a column fast path. */
function perValue(type: IcebergType): ColumnEncoder {
  const encode = encoderFor(type);
  return (data, lanes, rows, id) => {
    if (id !== undefined) mixAll(lanes, rows, data.length, id);
    const values = readData(type, data, 'proof');
    const m = activeCount(rows, data.length);
    for (let r = 0; r < m; r++) {
      const i = rows ? rows[r] : r;
      encode(values[i] ?? null, lanes.load(i));
      lanes.store(i);
    }
  };
}

/** Whether a long-valued column's Arrow values are its Iceberg values as they are (no unit to rescale). */
function rawLongs(type: IcebergType, at: arrow.DataType): boolean {
  switch (type.type) {
    case 'long':
      return arrow.DataType.isInt(at) && at.bitWidth === 64 && at.isSigned;
    case 'time':
      return arrow.DataType.isTime(at) && at.unit === arrow.TimeUnit.MICROSECOND;
    case 'timestamp':
    case 'timestamptz':
      return arrow.DataType.isTimestamp(at) && at.unit === arrow.TimeUnit.MICROSECOND;
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return arrow.DataType.isTimestamp(at) && at.unit === arrow.TimeUnit.NANOSECOND;
    default:
      return false;
  }
}

/** The 32-bit words of a typed array's elements, little-endian as the platform's (Node's targets all are). */
function int32Words(v: ArrayBufferView, count: number): Int32Array {
  return new Int32Array(v.buffer, v.byteOffset, count);
}

function columnEncoderFor(type: IcebergType): ColumnEncoder {
  const fallback = perValue(type);
  if (isLongValued(type)) {
    return (data, lanes, rows, id) => {
      const v = data.values;
      if (!(v instanceof BigInt64Array) || !rawLongs(type, data.type)) return fallback(data, lanes, rows, id);
      fixedWords(data, lanes, rows, id, 2, int32Words(v, 2 * v.length), 2, TWO_WORDS);
    };
  }
  switch (type.type) {
    case 'int':
    case 'date':
      return (data, lanes, rows, id) => {
        const v = data.values;
        const raw = type.type === 'int' ? arrow.DataType.isInt(data.type) : arrow.DataType.isDate(data.type) && data.type.unit === arrow.DateUnit.DAY;
        if (!(v instanceof Int32Array) || !raw) return fallback(data, lanes, rows, id);
        fixedWords(data, lanes, rows, id, 2, v, 1, SIGN_EXTENDED);
      };
    case 'decimal':
      return (data, lanes, rows, id) => {
        const at = data.type;
        if (!arrow.DataType.isDecimal(at) || at.bitWidth !== 128 || at.scale !== type.scale) return fallback(data, lanes, rows, id);
        const v = data.values as Uint32Array;
        const wide = fixedWords(data, lanes, rows, id, 2, int32Words(v, v.length), 4, DECIMAL_128);
        if (wide === 0) return;
        // Beyond 64 bits: the row encoder's sign-and-magnitude form.
        const values = readData(type, data, 'proof');
        for (let d = 0; d < wide; d++) {
          const i = lanes.deferred[d];
          integerEncoder(values[i] ?? null, lanes.load(i));
          lanes.store(i);
        }
      };
    case 'float':
    case 'double':
      return (data, lanes, rows, id) => {
        const v = data.values;
        if (!(v instanceof Float64Array || v instanceof Float32Array) || !arrow.DataType.isFloat(data.type)) return fallback(data, lanes, rows, id);
        // A float widens to the double the row encoding hashes.
        const doubles = v instanceof Float64Array ? v : Float64Array.from(v);
        fixedWords(data, lanes, rows, id, 4, int32Words(doubles, 2 * doubles.length), 2, DOUBLE);
      };
    case 'boolean':
      return (data, lanes, rows, id) => {
        if (!arrow.DataType.isBool(data.type)) return fallback(data, lanes, rows, id);
        if (id !== undefined) mixAll(lanes, rows, data.length, id);
        const bits = data.values as Uint8Array;
        eachValue(data, lanes, rows, (i) => {
          const b = data.offset + i;
          lanes.word(i, 1);
          lanes.word(i, (bits[b >> 3] >> (b & 7)) & 1);
        });
      };
    case 'string':
      return (data, lanes, rows, id) => {
        if (!arrow.DataType.isUtf8(data.type)) return fallback(data, lanes, rows, id);
        utf8Words(data, lanes, rows, id);
      };
    case 'uuid':
      return (data, lanes, rows, id) => {
        if (!arrow.DataType.isFixedSizeBinary(data.type)) return fallback(data, lanes, rows, id);
        if (id !== undefined) mixAll(lanes, rows, data.length, id);
        const bytes = data.values as Uint8Array;
        eachValue(data, lanes, rows, (i) => {
          text(uuidFromBytes(bytes.subarray(i * 16, i * 16 + 16)), lanes.load(i));
          lanes.store(i);
        });
      };
    case 'fixed':
    case 'binary':
      return (data, lanes, rows, id) => {
        const fixed = arrow.DataType.isFixedSizeBinary(data.type);
        if (!fixed && !arrow.DataType.isBinary(data.type)) return fallback(data, lanes, rows, id);
        if (id !== undefined) mixAll(lanes, rows, data.length, id);
        const bytes = data.values as Uint8Array;
        const offsets = data.valueOffsets as Int32Array | undefined;
        const width = fixed ? (data.type as arrow.FixedSizeBinary).byteWidth : 0;
        eachValue(data, lanes, rows, (i) => {
          const s = fixed ? i * width : offsets![i];
          const e = fixed ? s + width : offsets![i + 1];
          lanes.word(i, 6);
          lanes.word(i, e - s);
          let k = s;
          for (; k + 3 < e; k += 4) lanes.word(i, bytes[k] | (bytes[k + 1] << 8) | (bytes[k + 2] << 16) | (bytes[k + 3] << 24));
          if (k < e) {
            let w = 0;
            for (let sh = 0; k < e; k++, sh += 8) w |= bytes[k] << sh;
            lanes.word(i, w);
          }
        });
      };
    case 'unknown':
      return (data, lanes, rows, id) => {
        if (id !== undefined) mixAll(lanes, rows, data.length, id);
        mixAll(lanes, rows, data.length, 0);
      };
    case 'struct': {
      const fields = structColumnEncoder(type.fields);
      return (data, lanes, rows, id) => {
        if (!arrow.DataType.isStruct(data.type)) return fallback(data, lanes, rows, id);
        if (id !== undefined) mixAll(lanes, rows, data.length, id);
        const m = activeCount(rows, data.length);
        const inner = new Int32Array(m);
        let k = 0;
        for (let r = 0; r < m; r++) {
          const i = rows ? rows[r] : r;
          if (!validAt(data, i)) {
            lanes.word(i, 0);
            continue;
          }
          lanes.word(i, 9);
          inner[k++] = i;
        }
        fields(data.children, data.length, lanes, k === m && !rows ? null : inner.subarray(0, k));
      };
    }
    default:
      return fallback;
  }
}

/**
 * Encodes a struct's fields column by column, in ascending field id: `children` are the Arrow
 * columns of its non-`unknown` fields, in field order (schema.ts's layout).
 */
function structColumnEncoder(fields: readonly NestedField[]): (children: readonly AnyData[], n: number, lanes: ColumnLanes, rows: Active) => void {
  let column = 0;
  const parts = fields
    .map((f) => ({ id: f.id, column: f.type.type === 'unknown' ? -1 : column++, encode: columnEncoderFor(f.type) }))
    .sort((x, y) => x.id - y.id);
  return (children, n, lanes, rows) => {
    for (const p of parts) {
      if (p.column >= 0) p.encode(children[p.column], lanes, rows, p.id);
      else {
        mixAll(lanes, rows, n, p.id);
        mixAll(lanes, rows, n, 0);
      }
    }
  };
}

/** Hashes every row of a batch (in `struct`'s Arrow layout, schema.ts) into a checksum. */
export type BatchHashFunction = (batch: arrow.RecordBatch, into: RowSetChecksum) => void;

/**
 * The column-wise twin of `rowHasher`: a batch of `struct`'s Arrow layout adds to a checksum
 * exactly what its rows would add through `rowHasher(struct, fieldIds)`.
 */
export function batchHasher(struct: StructType, fieldIds?: readonly number[]): BatchHashFunction {
  const lanes = new ColumnLanes();
  if (fieldIds === undefined) {
    const encode = structColumnEncoder(struct.fields);
    return (batch, into) => {
      lanes.reset(batch.numRows);
      encode(batch.data.children, batch.numRows, lanes, null);
      lanes.finish(into);
    };
  }
  const parts = hashedFields(struct, fieldIds).map(({ id, path, field: leaf }) => {
    // The Arrow child index at each level of the path (unknown-typed fields have no column).
    const steps: number[] = [];
    let level: readonly NestedField[] = struct.fields;
    for (const name of path) {
      const at = level.findIndex((x) => x.name === name);
      const field = level[at];
      steps.push(field.type.type === 'unknown' ? -1 : level.slice(0, at).filter((x) => x.type.type !== 'unknown').length);
      level = field.type.type === 'struct' ? field.type.fields : [];
    }
    return { id, steps, encode: columnEncoderFor(leaf.type) };
  });
  return (batch, into) => {
    const n = batch.numRows;
    lanes.reset(n);
    for (const p of parts) {
      // Rows whose enclosing struct is null hash the value as null.
      let data: AnyData | undefined;
      let children: readonly AnyData[] = batch.data.children;
      let rows: Active = null;
      let id: number | undefined = p.id;
      for (let s = 0; s < p.steps.length; s++) {
        if (data) {
          if (id !== undefined) mixAll(lanes, rows, n, id);
          id = undefined;
          const m = activeCount(rows, n);
          const kept = new Int32Array(m);
          let k = 0;
          for (let r = 0; r < m; r++) {
            const i = rows ? rows[r] : r;
            if (validAt(data, i)) kept[k++] = i;
            else lanes.word(i, 0);
          }
          rows = kept.subarray(0, k);
          children = data.children;
        }
        data = p.steps[s] < 0 ? undefined : children[p.steps[s]];
        if (!data) break;
      }
      if (id !== undefined && !data) {
        mixAll(lanes, rows, n, id);
        id = undefined;
      }
      if (data) p.encode(data, lanes, rows, id);
      else mixAll(lanes, rows, n, 0);
    }
    lanes.finish(into);
  };
}

/** The column-wise twin of `proofHasher`, for batches of `proofSchema`'s Arrow layout. */
export function proofBatchHasher(schema: Schema, rowLineage: boolean): BatchHashFunction {
  const { struct, ids } = proofFields(schema, rowLineage);
  return batchHasher(struct, ids);
}
