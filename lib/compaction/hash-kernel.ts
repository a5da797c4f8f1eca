/**
 * The proof hash's SIMD kernels (scripts/hash-kernel.ts generates them): checksum.ts's
 * fixed-width column loop and its finish, four rows per instruction. Row states live in this
 * module's memory, lane A, lane B and word count as three Int32 arrays, which ColumnLanes views;
 * a column's values are copied in a chunk at a time. One instance per thread, shared by every
 * hasher in it: a batch is hashed synchronously from reset to finish, so they never interleave.
 */
import { HASH_KERNEL_WASM } from './hash-kernel-module.js';

/** How a fixed kernel reads a value (scripts/hash-kernel.ts `Kind`). */
export type KernelKind = 'two' | 'sign' | 'double' | 'decimal';

/** Bytes per value of each kind. */
const WIDTH: Record<KernelKind, number> = { two: 8, sign: 4, double: 8, decimal: 16 };

type TextKernel = (
  A: number, B: number, N: number, offsets: number, bytes: number, base: number, count: number,
  idA: number, idB: number, idWords: number, mask: number, bit0: number, hasMask: number, deferred: number,
) => number;

type FixedKernel = (
  A: number, B: number, N: number, words: number, count: number,
  idA: number, idB: number, idWords: number, tagA: number, tagB: number, mask: number, bit0: number, deferred: number,
) => number;

/** The part of the WebAssembly API used here (TypeScript declares it with the DOM's types only). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { readonly exports: object };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

interface Exports {
  readonly memory: WasmMemory;
  readonly finish: (A: number, B: number, N: number, count: number, out: number) => void;
  readonly [kernel: string]: unknown;
}

/** Rows whose values are copied in at once: 1 MiB of 16-byte decimals. */
const CHUNK = 1 << 16;
/** The sums `finish` stores. */
const SUMS = 0;
const SCRATCH = 16;
/**
 * A chunk's text bytes take at most half the values' scratch: the text kernel reads each of four
 * rows up to the longest one's length, so up to twice the chunk's bytes past its start.
 */
const TEXT_BYTES = CHUNK * 8;
/** A text chunk's value offsets. */
const OFFSETS = SCRATCH + CHUNK * 16;
/** A chunk's validity bits; padded for the kernel's 4-byte reads. */
const MASK = OFFSETS + (CHUNK + 1) * 4 + 12;
const STATE = MASK + CHUNK / 8 + 16;

/** A value column as the kernel reads it. */
export interface KernelColumn {
  readonly kind: KernelKind;
  /** The values, `WIDTH[kind]` bytes each, row 0 first. */
  readonly values: ArrayBufferView;
  /** The validity bitmap (Arrow's, LSB first) when some value is null, and the bit of row 0 in it. */
  readonly mask?: Uint8Array;
  readonly maskOffset: number;
}

export class HashKernel {
  private static instance: HashKernel | undefined;

  /** This thread's kernel (the module is compiled on first use). */
  static get(): HashKernel {
    HashKernel.instance ??= new HashKernel();
    return HashKernel.instance;
  }

  private readonly exports: Exports;
  private readonly kernels = new Map<string, FixedKernel>();
  private capacity = 0;
  private bytes: Uint8Array;
  /** Lane A, lane B, word count and the deferred rows, `capacity` each (views renewed by `reserve`). */
  A = new Int32Array(0);
  B = new Int32Array(0);
  N = new Int32Array(0);
  deferred = new Int32Array(0);

  private constructor() {
    const module = new wasm.Module(Buffer.from(HASH_KERNEL_WASM, 'base64'));
    this.exports = new wasm.Instance(module).exports as unknown as Exports;
    for (const kind of Object.keys(WIDTH)) {
      for (const name of [kind, `${kind}_nulls`]) this.kernels.set(name, this.exports[name] as FixedKernel);
    }
    this.bytes = new Uint8Array(this.exports.memory.buffer);
  }

  /** Room for `rows` row states (and the padding to a multiple of 4 the kernels write); renews the views. */
  reserve(rows: number): void {
    const capacity = (rows + 3) & ~3;
    if (capacity > this.capacity) {
      const need = STATE + 16 * capacity;
      const memory = this.exports.memory;
      if (need > memory.buffer.byteLength) memory.grow(Math.ceil((need - memory.buffer.byteLength) / 65536));
      this.capacity = capacity;
    }
    const buffer = this.exports.memory.buffer;
    this.bytes = new Uint8Array(buffer);
    const c = this.capacity;
    this.A = new Int32Array(buffer, STATE, c);
    this.B = new Int32Array(buffer, STATE + 4 * c, c);
    this.N = new Int32Array(buffer, STATE + 8 * c, c);
    this.deferred = new Int32Array(buffer, STATE + 12 * c, c);
  }

  /**
   * Mixes the field id (its key parts; `idWords` 0 when there is none), then each of rows
   * [0, count)'s value (type tag's key parts `tagA`, `tagB`) or null, into the row states.
   * Returns how many rows it left in `deferred` (decimals beyond 64 bits), in row order.
   */
  fixed(column: KernelColumn, count: number, idA: number, idB: number, idWords: number, tagA: number, tagB: number): number {
    const width = WIDTH[column.kind];
    const kernel = this.kernels.get(column.mask ? `${column.kind}_nulls` : column.kind)!;
    const values = new Uint8Array(column.values.buffer, column.values.byteOffset, column.values.byteLength);
    const c = this.capacity;
    let put = 0;
    for (let from = 0; from < count; from += CHUNK) {
      const rows = Math.min(CHUNK, count - from);
      this.bytes.set(values.subarray(from * width, (from + rows) * width), SCRATCH);
      let bit0 = 0;
      if (column.mask) {
        const first = column.maskOffset + from;
        this.bytes.set(column.mask.subarray(first >> 3, ((first + rows - 1) >> 3) + 1), MASK);
        bit0 = first & 7;
      }
      const at = 4 * from;
      const deferredAt = STATE + 12 * c + 4 * put;
      const wide = kernel(STATE + at, STATE + 4 * c + at, STATE + 8 * c + at, SCRATCH, rows, idA, idB, idWords, tagA, tagB, MASK, bit0, deferredAt);
      // Rows past the chunk (the padding to 4) may read as wide: they are not rows.
      const base = put;
      for (let d = 0; d < wide; d++) {
        const row = this.deferred[base + d];
        if (row < rows) this.deferred[put++] = from + row;
      }
    }
    return put;
  }

  /**
   * utf8Words' loop: mixes the field id (`idWords` 0 when there is none), then each of rows
   * [0, count)'s UTF-8 value (Arrow `offsets` into `bytes`) or null. A value with a non-ASCII byte
   * is left in `deferred` (id mixed, value not), as is one too long for a chunk (`long` mixes
   * its id first, or its id and null). Returns how many rows are in `deferred`, in row order.
   */
  utf8(offsets: Int32Array, bytes: Uint8Array, mask: Uint8Array | undefined, maskOffset: number, count: number, idA: number, idB: number, idWords: number, long: (row: number) => boolean): number {
    const kernel = this.exports.utf8 as TextKernel;
    const c = this.capacity;
    let put = 0;
    let from = 0;
    while (from < count) {
      let to = Math.min(count, from + CHUNK);
      const base = offsets[from];
      // Rows whose bytes fit the chunk (offsets ascend): binary search for the last end that fits.
      if (offsets[to] - base > TEXT_BYTES) {
        let lo = from;
        let hi = to;
        while (lo < hi) {
          const mid = (lo + hi + 1) >> 1;
          if (offsets[mid] - base <= TEXT_BYTES) lo = mid;
          else hi = mid - 1;
        }
        to = lo;
      }
      if (to === from) {
        if (long(from)) this.deferred[put++] = from;
        from++;
        continue;
      }
      const rows = to - from;
      this.bytes.set(bytes.subarray(base, offsets[to]), SCRATCH);
      this.bytes.set(new Uint8Array(offsets.buffer, offsets.byteOffset + 4 * from, 4 * (rows + 1)), OFFSETS);
      let bit0 = 0;
      if (mask) {
        const first = maskOffset + from;
        this.bytes.set(mask.subarray(first >> 3, ((first + rows - 1) >> 3) + 1), MASK);
        bit0 = first & 7;
      }
      const at = 4 * from;
      const n = kernel(STATE + at, STATE + 4 * c + at, STATE + 8 * c + at, OFFSETS, SCRATCH, base, rows, idA, idB, idWords, MASK, bit0, mask ? 1 : 0, STATE + 12 * c + 4 * put);
      for (let d = 0; d < n; d++) this.deferred[put + d] += from;
      put += n;
      from = to;
    }
    return put;
  }

  /**
   * The sums of rows [0, count & ~3)'s finished high and low words, each mod 2^64, as
   * [high sum's high word, high sum's low word, low sum's high word, low sum's low word].
   */
  finish(count: number, out: Uint32Array): void {
    const c = this.capacity;
    this.exports.finish(STATE, STATE + 4 * c, STATE + 8 * c, count & ~3, SUMS);
    const sums = new Uint32Array(this.exports.memory.buffer, SUMS, 4);
    out[0] = sums[1];
    out[1] = sums[0];
    out[2] = sums[3];
    out[3] = sums[2];
  }
}
