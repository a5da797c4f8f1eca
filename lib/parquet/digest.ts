/**
 * The 64-bit digests of the copy and merge proofs (chunk-copy.ts, row-group-merge.ts): XXH64 over
 * what each side feeds in, through xxhash-wasm. Both sides of a proof hash in one process, so the
 * function is no file format. It was the first 64 bits of SHA-256, ~4× slower (1.8 against 7 GB/s
 * here): 13 % of a merge with deletes. A check against corruption and our own mistakes, as the
 * 64-bit sum it feeds, not against a crafted collision (a truncated SHA-256 was not either).
 */
import xxhash from 'xxhash-wasm';

/** A 64-bit digest as [high, low] words. */
export type Digest = readonly [number, number];

/** A running digest; strings are hashed as their UTF-8 bytes. */
export interface DigestHash {
  update(data: Uint8Array | string): DigestHash;
  digest(): Digest;
}

/** Starts a digest. */
export type DigestHasher = () => DigestHash;

const LOW = 0xffffffffn;
/** Bytes copied into the WebAssembly memory at once (XXH64 of the whole is the same however it is cut). */
const SLICE = 1 << 20;
let loading: Promise<DigestHasher> | undefined;

/** The hasher, once its WebAssembly module is instantiated (asynchronously: the bundles are CommonJS, no top-level await). */
export function digestHasher(): Promise<DigestHasher> {
  loading ??= xxhash().then((api) => () => {
    const h = api.create64();
    const hash: DigestHash = {
      update(data) {
        // In slices: the module's memory grows to the largest input it copies in, and never shrinks.
        if (typeof data === 'string' || data.length <= SLICE) h.update(data);
        else for (let at = 0; at < data.length; at += SLICE) h.update(data.subarray(at, at + SLICE));
        return hash;
      },
      digest() {
        const v = h.digest();
        return [Number(v >> 32n), Number(v & LOW)];
      },
    };
    return hash;
  });
  return loading;
}
