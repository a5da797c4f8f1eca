import type { FileIO, WriteOptions } from '../../lib/io/file-io.js';
import { ForwardingFileIO } from '../../lib/io/forwarding.js';

/** One range read that reached the FileIO underneath. */
export interface RangeRead {
  readonly path: string;
  readonly start: number;
  readonly end: number;
}

/**
 * A FileIO that records the range reads it passes on and how many of them (and how many bytes)
 * were in flight at once; `settled` waits until none is.
 */
export class CountingIO extends ForwardingFileIO {
  readonly ranges: RangeRead[] = [];
  /** Every write passed on, with the options it asked for. */
  readonly writes: { readonly path: string; readonly options: WriteOptions | undefined }[] = [];
  inFlight = 0;
  inFlightBytes = 0;
  maxInFlight = 0;
  maxInFlightBytes = 0;
  private idle: Array<() => void> = [];

  constructor(inner: FileIO, private readonly counts: (path: string) => boolean = () => true) {
    super(inner);
  }

  override async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    if (!this.counts(path)) return this.inner.readRange(path, start, end);
    this.ranges.push({ path, start, end });
    this.inFlight++;
    this.inFlightBytes += end - start;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.maxInFlightBytes = Math.max(this.maxInFlightBytes, this.inFlightBytes);
    try {
      return await this.inner.readRange(path, start, end);
    } finally {
      this.inFlight--;
      this.inFlightBytes -= end - start;
      if (this.inFlight === 0) for (const wake of this.idle.splice(0)) wake();
    }
  }

  override write(path: string, data: Uint8Array | AsyncIterable<Uint8Array>, options?: WriteOptions): Promise<void> {
    this.writes.push({ path, options });
    return this.inner.write(path, data, options);
  }

  /** Resolves once no counted read is in flight. */
  settled(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }

  /** Range reads of `path`, in order. */
  readsOf(path: string): Array<[number, number]> {
    return this.ranges.filter((r) => r.path === path).map((r) => [r.start, r.end]);
  }
}
