/**
 * ZSTD for Parquet pages (parquet-format CompressionCodec ZSTD), done natively outside wasm.
 *
 * parquet-wasm's ZSTD runs at ~130 MB/s of output and is ~85 % of its read; native zstd does
 * ~1 GB/s, and parquet-wasm 0.8 cannot set a ZSTD level. So the reader decompresses ZSTD pages
 * before wasm sees them (row-group-file.ts) and the writer compresses wasm's uncompressed pages
 * (page-compression.ts). Which native codec, in order:
 *
 * 1. `node:zlib`'s zstdCompressSync / zstdDecompressSync (Node >= 22.15, the Lambda's nodejs22.x);
 * 2. the `zstd-napi` package (prebuilt native module), loaded lazily and only when zlib lacks
 *    zstd, so the Lambda bundles neither carry nor need it;
 * 3. none: parquet-wasm compresses and decompresses itself, as before.
 *
 * `PACKICE_ZSTD` = `auto` (default) | `zlib` | `zstd-napi` | `wasm` picks one (tests, benchmarks).
 */
import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';
import { InvalidArgumentError } from '../errors.js';

/** A native ZSTD implementation. */
export interface ZstdCodec {
  /** Where it comes from: `node:zlib` or `zstd-napi`. */
  readonly name: string;
  /** Whether compression and decompression keep their contexts from call to call (`kept`) or build one each time (`per call`). */
  readonly contexts: 'kept' | 'per call';
  compress(data: Uint8Array, level: number): Uint8Array;
  /** Decompresses one or more frames; throws when they do not hold exactly `uncompressedSize` bytes. */
  decompress(data: Uint8Array, uncompressedSize: number): Uint8Array;
  /** Decompresses one or more frames into `dst`; throws when they do not hold exactly `dst.length` bytes. Needs no `this`. */
  decompressInto(data: Uint8Array, dst: Uint8Array): void;
}

/** ZSTD level when none is set: Iceberg's `write.parquet.compression-level` default for zstd (parquet-mr's too). */
export const DEFAULT_ZSTD_LEVEL = 3;

export type ZstdChoice = 'auto' | 'zlib' | 'zstd-napi' | 'wasm';

interface ZlibZstd {
  zstdCompressSync(data: Uint8Array, options: { params: Record<number, number>; chunkSize?: number }): Buffer;
  zstdDecompressSync(data: Uint8Array, options: { maxOutputLength?: number; chunkSize?: number }): Buffer;
  createZstdCompress(options: { params: Record<number, number> }): ZlibEngine;
  createZstdDecompress(): ZlibEngine;
  constants: { ZSTD_c_compressionLevel: number; ZSTD_e_end: number };
}

/**
 * What `node:zlib`'s own zstdCompressSync drives (lib/zlib.js processChunkSync): the native
 * handle's writeSync and the [avail out, avail in] it leaves in `_writeState`. Not public API:
 * used only when both are there, else zstdCompressSync.
 */
interface ZlibEngine {
  readonly _handle?: {
    writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void;
    /** Called by the native side, synchronously, with a failure's message (the stream's 'error' event comes a tick later). */
    onerror?: (message: string, errno: number) => void;
  } | null;
  readonly _writeState?: Uint32Array;
  close(): void;
}

/**
 * A zlib engine driven call by call through its native handle, as processChunkSync drives it, with
 * failures recorded synchronously (the engine's own handler only destroys it; its 'error' event
 * comes a tick later, and `_writeState` is left as the last call that worked set it).
 */
class KeptEngine {
  private failed: string | undefined;

  private constructor(private readonly engine: ZlibEngine) {
    engine._handle!.onerror = (message) => void (this.failed = message);
  }

  /** A kept engine, or undefined where the engine lacks what this drives (the engine is then closed). */
  static open(engine: ZlibEngine): KeptEngine | undefined {
    const handle = engine._handle;
    if (typeof handle?.writeSync !== 'function' || !(engine._writeState instanceof Uint32Array) || engine._writeState.length < 2 || !('onerror' in handle)) {
      engine.close();
      return undefined;
    }
    return new KeptEngine(engine);
  }

  /** One call into the native side: [input bytes taken, output bytes made]; throws on a failure it records. */
  write(flush: number, input: Uint8Array, inAt: number, out: Uint8Array, outAt: number): [number, number] {
    const handle = this.engine._handle;
    if (!handle) throw new RangeError('ZSTD context closed');
    const state = this.engine._writeState!;
    const inLen = input.length - inAt;
    const outLen = out.length - outAt;
    // A call that fails leaves the state as it was: set to "nothing taken, nothing made" first.
    state[0] = outLen;
    state[1] = inLen;
    handle.writeSync(flush, input, inAt, inLen, out, outAt, outLen);
    if (this.failed !== undefined) throw new RangeError(this.failed);
    return [inLen - state[1], outLen - state[0]];
  }

  close(): void {
    this.engine.close();
  }
}

/**
 * Compresses each page as one ZSTD frame through one compression context per level, kept: where
 * zstdCompressSync builds a context per call and closes it (a 1 MiB page: 2.3 ms against 0.75 ms
 * through a kept one, the same bytes out; BENCHMARKS.md "Cost per GB in a 700 MiB group, Node 22's
 * ZSTD contexts kept"). Undefined where the engine lacks what processChunkSync uses. A failure
 * drops the level's context.
 */
function keptCompressor(z: ZlibZstd, levelParam: number): ((data: Uint8Array, level: number) => Uint8Array) | undefined {
  // The default level's context, opened to learn whether one can be kept, is kept.
  const first = KeptEngine.open(z.createZstdCompress({ params: { [levelParam]: DEFAULT_ZSTD_LEVEL } }));
  if (!first) return undefined;
  const engines = new Map<number, KeptEngine>([[DEFAULT_ZSTD_LEVEL, first]]);
  let out = new Uint8Array(0);
  return (data, level) => {
    let engine = engines.get(level);
    if (!engine) {
      engine = KeptEngine.open(z.createZstdCompress({ params: { [levelParam]: level } }));
      if (!engine) throw new RangeError('node:zlib ZSTD context cannot be kept');
      engines.set(level, engine);
    }
    // ZSTD's bound for one frame is under n + n/128 + 512.
    const bound = data.length + (data.length >> 7) + 1024;
    if (out.length < bound) out = new Uint8Array(bound);
    try {
      const [taken, made] = engine.write(z.constants.ZSTD_e_end, data, 0, out, 0);
      // All input taken and room left: the frame is ended (the context then starts the next one afresh).
      if (taken !== data.length || made === out.length || made === 0) throw new RangeError(`ZSTD took ${taken} of ${data.length} bytes and made ${made} of ${out.length}`);
      return out.slice(0, made);
    } catch (e) {
      engines.delete(level);
      engine.close();
      throw e;
    }
  };
}

/**
 * Decompresses pages through one kept decompression context, where zstdDecompressSync builds one
 * per call (its window buffer included: a 1 MiB page 0.18 ms against 0.5-0.9 ms). A page must be
 * whole frames (zstdFrames) that decode to exactly its size; on any failure the context, which may
 * be left mid-frame, is dropped and the next page gets a new one. Undefined where the engine
 * lacks what processChunkSync uses.
 */
function keptDecompressor(z: ZlibZstd): ((data: Uint8Array, uncompressedSize: number) => Uint8Array) | undefined {
  let current = KeptEngine.open(z.createZstdDecompress());
  if (!current) return undefined;
  return (data, uncompressedSize) => {
    const engine = (current ??= KeptEngine.open(z.createZstdDecompress()));
    if (!engine) throw new RangeError('node:zlib ZSTD context cannot be kept');
    try {
      // Whole frames only: a frame cut short would leave the context waiting for the next page's bytes.
      zstdFrames(data);
      // One byte more than the page's size tells "too long" from "exact".
      const out = Buffer.allocUnsafe(uncompressedSize + 1);
      let inAt = 0;
      let outAt = 0;
      while (inAt < data.length) {
        const [taken, made] = engine.write(z.constants.ZSTD_e_end, data, inAt, out, outAt);
        inAt += taken;
        outAt += made;
        if (outAt === out.length) throw new RangeError(`decompressed to more than ${uncompressedSize} bytes, expected ${uncompressedSize}`);
        if (taken === 0 && made === 0) throw new RangeError('ZSTD frame made no progress');
      }
      return checked(out.subarray(0, outAt), uncompressedSize);
    } catch (e) {
      current = undefined;
      engine.close();
      throw e;
    }
  };
}

/** zlib's smallest output chunk (Z_MIN_CHUNK). */
const MIN_CHUNK = 64;

function zlibCodec(): ZstdCodec | undefined {
  const z = zlib as unknown as Partial<ZlibZstd>;
  if (typeof z.zstdCompressSync !== 'function' || typeof z.zstdDecompressSync !== 'function') return undefined;
  const levelParam = (zlib.constants as unknown as ZlibZstd['constants']).ZSTD_c_compressionLevel;
  const { zstdCompressSync, zstdDecompressSync } = z as ZlibZstd;
  const kept = typeof z.createZstdCompress === 'function' ? keptCompressor(z as ZlibZstd, levelParam) : undefined;
  const keptDecompress = typeof z.createZstdDecompress === 'function' ? keptDecompressor(z as ZlibZstd) : undefined;
  const decompress = keptDecompress ?? ((data: Uint8Array, uncompressedSize: number): Uint8Array => {
    // maxOutputLength stops a frame that claims more from allocating it; one byte more tells "too long" from "exact".
    // One output chunk of that size, not 16 KiB ones joined: ~-35 % CPU per 1 MiB page on Node 22.
    const limit = Math.max(1, uncompressedSize + 1);
    const options = { maxOutputLength: limit, chunkSize: Math.max(MIN_CHUNK, limit) };
    let out: Uint8Array = zstdDecompressSync(data, options);
    // Node's zlib stops after the first frame; a page may hold several.
    if (out.length < uncompressedSize) out = Buffer.concat(zstdFrames(data).map((f) => zstdDecompressSync(f, options)));
    return checked(out, uncompressedSize);
  });
  return {
    name: 'node:zlib',
    contexts: kept && keptDecompress ? 'kept' : 'per call',
    compress(data, level) {
      if (kept) return kept(data, level);
      // Output in one chunk (a page compresses to less than itself plus its frame header): ~-15 % CPU.
      const out = zstdCompressSync(data, { params: { [levelParam]: level }, chunkSize: Math.max(MIN_CHUNK, data.length + 1024) });
      // That chunk is the result's memory: copied out when it would hold much more (held pages, a row group's worth).
      return out.length < 0.75 * out.buffer.byteLength ? Uint8Array.prototype.slice.call(out) : out;
    },
    decompress,
    // zlib cannot write into a given buffer.
    decompressInto: (data, dst) => dst.set(decompress(data, dst.length)),
  };
}

interface ZstdNapi {
  compress(data: Uint8Array, params?: { compressionLevel?: number }): Buffer;
}
interface ZstdNapiBinding {
  DCtx: new () => { decompress(dst: Uint8Array, src: Uint8Array): number };
}

function napiCodec(): ZstdCodec | undefined {
  let m: ZstdNapi;
  let binding: ZstdNapiBinding;
  try {
    // Lazy and through createRequire: esbuild leaves it out of the bundles (marked external there too).
    const require = createRequire(import.meta.url);
    m = require('zstd-napi') as ZstdNapi;
    binding = require('zstd-napi/binding.js') as ZstdNapiBinding;
  } catch {
    return undefined;
  }
  const dctx = new binding.DCtx();
  return {
    name: 'zstd-napi',
    // Its simple API's Compressor is one shared context.
    contexts: 'kept',
    compress: (data, level) => m.compress(data, { compressionLevel: level }),
    decompress(data, uncompressedSize) {
      // Into a buffer of the size the page header gives (zstd-napi's own decompress allocates what the frame claims).
      const out = Buffer.allocUnsafe(uncompressedSize);
      return checked(out.subarray(0, dctx.decompress(out, data)), uncompressedSize);
    },
    // zstd fails on output past the end of dst; less than it is caught here.
    decompressInto: (data, dst) => void checked(dst.subarray(0, dctx.decompress(dst, data)), dst.length),
  };
}

const ZSTD_MAGIC = 0xfd2fb528;

/**
 * The header of the ZSTD frame at `at` (RFC 8878 section 3.1.1), its magic checked by the caller:
 * where its blocks start, and the content size it states (undefined when it states none).
 */
function zstdFrameHeader(data: Uint8Array, at: number): { blocksAt: number; contentSize: number | undefined } {
  const fhd = data[at + 4];
  const singleSegment = (fhd & 0x20) !== 0;
  const sizeAt = at + 5 + (singleSegment ? 0 : 1) + [0, 1, 2, 4][fhd & 3];
  const sizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][fhd >> 6];
  if (sizeAt + sizeBytes > data.length) throw new RangeError(`ZSTD frame header cut short at byte ${at} of ${data.length}`);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const contentSize = sizeBytes === 0 ? undefined
    : sizeBytes === 1 ? data[sizeAt]
      : sizeBytes === 2 ? view.getUint16(sizeAt, true) + 256
        : sizeBytes === 4 ? view.getUint32(sizeAt, true)
          : view.getUint32(sizeAt, true) + view.getUint32(sizeAt + 4, true) * 2 ** 32;
  return { blocksAt: sizeAt + sizeBytes, contentSize };
}

/** What the ZSTD frame at the start of `data` says it decompresses to (undefined: it does not say). */
export function zstdContentSize(data: Uint8Array): number | undefined {
  if (data.length < 6 || new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(0, true) !== ZSTD_MAGIC) {
    throw new RangeError('no ZSTD frame at byte 0');
  }
  return zstdFrameHeader(data, 0).contentSize;
}

/** The frames of a ZSTD stream (RFC 8878 section 3.1), skippable frames left out. */
export function zstdFrames(data: Uint8Array): Uint8Array[] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const frames: Uint8Array[] = [];
  let at = 0;
  const need = (n: number): void => {
    if (at + n > data.length) throw new RangeError(`ZSTD frame cut short at byte ${at} of ${data.length}`);
  };
  while (at < data.length) {
    need(8);
    const magic = view.getUint32(at, true);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      const skip = view.getUint32(at + 4, true);
      need(8 + skip);
      at += 8 + skip;
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw new RangeError(`no ZSTD frame at byte ${at}`);
    const start = at;
    const fhd = data[at + 4];
    at = zstdFrameHeader(data, at).blocksAt;
    for (let last = false; !last; ) {
      need(3);
      const header = data[at] | (data[at + 1] << 8) | (data[at + 2] << 16);
      last = (header & 1) !== 0;
      const type = (header >> 1) & 3;
      if (type === 3) throw new RangeError(`reserved ZSTD block type at byte ${at}`);
      at += 3 + (type === 1 ? 1 : header >>> 3);
    }
    if (fhd & 4) at += 4;
    need(0);
    frames.push(data.subarray(start, at));
  }
  return frames;
}

function checked(out: Uint8Array, uncompressedSize: number): Uint8Array {
  if (out.length !== uncompressedSize) {
    throw new RangeError(`decompressed to ${out.length > uncompressedSize ? `more than ${uncompressedSize}` : out.length} bytes, expected ${uncompressedSize}`);
  }
  return out;
}

const chosen = new Map<ZstdChoice, ZstdCodec | undefined>();

function choiceFromEnv(): ZstdChoice {
  const v = (process.env.PACKICE_ZSTD ?? 'auto').toLowerCase();
  if (v === 'auto' || v === 'zlib' || v === 'zstd-napi' || v === 'wasm') return v;
  throw new InvalidArgumentError(`PACKICE_ZSTD="${v}": expected auto, zlib, zstd-napi or wasm`);
}

/** The native ZSTD codec to use (see the module comment), or undefined to leave ZSTD to parquet-wasm. */
export function zstdCodec(choice: ZstdChoice = choiceFromEnv()): ZstdCodec | undefined {
  if (chosen.has(choice)) return chosen.get(choice);
  let codec: ZstdCodec | undefined;
  if (choice === 'zlib') codec = zlibCodec();
  else if (choice === 'zstd-napi') codec = napiCodec();
  else if (choice === 'auto') codec = zlibCodec() ?? napiCodec();
  chosen.set(choice, codec);
  return codec;
}
