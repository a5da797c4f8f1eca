/**
 * One reused buffer for bytes built only to be copied into wasm memory at once: a rebuilt
 * row-group file for `readParquet`, an Arrow IPC stream for `Table.fromIPCStream`. A rewrite
 * builds thousands of them; as fresh ArrayBuffers they are external memory, which V8 answers
 * with major GCs (marked on helper threads, CPU the rewrite pays for). Requests past `maxBytes`
 * get a fresh buffer, so that the one kept stays small.
 */
export class ScratchBuffer {
  private buffer: ArrayBuffer | undefined;

  constructor(private readonly maxBytes: number) {}

  /** `size` bytes, not zeroed; the caller's until the next `take` (so: used synchronously, never kept). */
  take(size: number): Uint8Array<ArrayBuffer> {
    if (size > this.maxBytes) return new Uint8Array(Buffer.allocUnsafeSlow(size).buffer as ArrayBuffer, 0, size);
    if (!this.buffer || this.buffer.byteLength < size) {
      this.buffer = Buffer.allocUnsafeSlow(Math.min(this.maxBytes, Math.max(size, 2 * (this.buffer?.byteLength ?? 0)))).buffer as ArrayBuffer;
    }
    return new Uint8Array(this.buffer, 0, size);
  }
}
