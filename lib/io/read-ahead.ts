/**
 * Reading ahead: a FileIO told which files will be read next, in order, and the range each one's
 * first read asks for. It keeps up to `files` of those ranges (at most `bytes` in all) fetched or
 * in flight ahead of the reader, so that on S3 the next files' first-byte latency passes while the
 * current one is decoded. A read that lies inside a fetched range is served from it; everything
 * else goes to the FileIO underneath, unchanged (its retries included).
 *
 * A file's bytes are let go once a later file of the list is read. A fetch that fails is not
 * retried: its error is the one the read would have had, and it is thrown by the read that asks
 * for those bytes (never left unhandled). `close` lets go of everything; fetches still in flight
 * then finish into nothing.
 */
import { InvalidArgumentError } from '../errors.js';
import type { FileIO } from './file-io.js';
import { ForwardingFileIO } from './forwarding.js';

/** A file to read ahead: bytes [start, end) are fetched before the reader asks for them. */
export interface ReadAheadRange {
  readonly path: string;
  readonly start: number;
  readonly end: number;
  /**
   * The last bytes of [start, end), fetched already by someone else (the column-chunk copy's footer
   * read of an input it then left to the decoder): held and served, never fetched again. When they
   * are only the range's tail, the rest is fetched ahead and joined to them.
   */
  readonly bytes?: Uint8Array;
}

export interface ReadAheadOptions {
  /**
   * Files fetched or in flight at once, the one being read included.
   * @default 16: hides ~16 files' worth of decode time, several first-byte latencies of S3 (20-60 ms,
   * longer in its tail) for files that take a few ms each to decode
   */
  readonly files?: number;
  /**
   * Bytes fetched or in flight at once. A range larger than this alone is not read ahead.
   * @default 8 MiB: under 1 % of a one-vCPU Lambda (1,769 MB), and at the rewriter's rates
   * (a few MB per CPU-second) several hundred ms of reading
   */
  readonly bytes?: number;
}

export const DEFAULT_READ_AHEAD_FILES = 16;
export const DEFAULT_READ_AHEAD_BYTES = 8 * 1024 * 1024;

interface Entry {
  readonly index: number;
  readonly start: number;
  readonly end: number;
  readonly bytes: Promise<Uint8Array>;
}

/** What the read-ahead holds now, and what it has done (tests and benchmarks). */
export interface ReadAheadStats {
  /** Ranges fetched or in flight now. */
  readonly held: number;
  readonly heldBytes: number;
  /** The most ever held at once. */
  readonly maxHeld: number;
  readonly maxHeldBytes: number;
  /** Ranges fetched ahead. */
  readonly fetched: number;
  /** Ranges handed over already fetched (ReadAheadRange.bytes). */
  readonly seeded: number;
  /** Reads served from a fetched range. */
  readonly hits: number;
}

export class ReadAheadFileIO extends ForwardingFileIO {
  private readonly files: number;
  private readonly budget: number;
  private readonly order = new Map<string, number>();
  private readonly entries = new Map<string, Entry>();
  /** ReadAheadRange.bytes by index, let go once taken (or on close). */
  private readonly seeds = new Map<number, Uint8Array>();
  private readonly ranges: readonly ReadAheadRange[];
  /** The next range of `ranges` to fetch. */
  private next = 0;
  /** Files before this one in `ranges` are done with. */
  private cursor = 0;
  private heldBytes = 0;
  private closed = false;
  private counts = { maxHeld: 0, maxHeldBytes: 0, fetched: 0, seeded: 0, hits: 0 };

  constructor(inner: FileIO, ranges: readonly ReadAheadRange[], options: ReadAheadOptions = {}) {
    super(inner);
    this.ranges = ranges.map(({ path, start, end, bytes }, i) => {
      if (bytes !== undefined && bytes.length > 0 && bytes.length <= end - start) this.seeds.set(i, bytes);
      return { path, start, end };
    });
    this.files = options.files ?? DEFAULT_READ_AHEAD_FILES;
    this.budget = options.bytes ?? DEFAULT_READ_AHEAD_BYTES;
    if (!Number.isSafeInteger(this.files) || this.files < 1 || !Number.isSafeInteger(this.budget) || this.budget < 0) {
      throw new InvalidArgumentError(`read-ahead needs files >= 1 and bytes >= 0, got files ${this.files}, bytes ${this.budget}`);
    }
    this.ranges.forEach((r, i) => {
      if (!this.order.has(r.path)) this.order.set(r.path, i);
    });
    this.fill();
  }

  stats(): ReadAheadStats {
    return { held: this.entries.size, heldBytes: this.heldBytes, ...this.counts };
  }

  /** Lets go of every range; reads after this go straight to the FileIO underneath. */
  close(): void {
    this.closed = true;
    this.entries.clear();
    this.seeds.clear();
    this.heldBytes = 0;
  }

  override async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    const entry = this.advance(path);
    if (entry && start >= entry.start && end <= entry.end) {
      const bytes = await entry.bytes;
      // A short answer (the FileIO underneath normally throws first): read again for its error.
      if (end - entry.start <= bytes.length) {
        this.counts.hits++;
        return bytes.subarray(start - entry.start, end - entry.start);
      }
    }
    return this.inner.readRange(path, start, end);
  }

  /** A read of `path`: files before it in the list are done with; its entry, if any. */
  private advance(path: string): Entry | undefined {
    const index = this.order.get(path);
    if (index === undefined || this.closed) return undefined;
    if (index > this.cursor) {
      this.cursor = index;
      for (const [p, e] of this.entries) {
        if (e.index < index) this.drop(p, e);
      }
      this.fill();
    }
    return this.entries.get(path);
  }

  private drop(path: string, e: Entry): void {
    this.entries.delete(path);
    this.heldBytes -= e.end - e.start;
  }

  /** Starts fetches in list order while both bounds allow. */
  private fill(): void {
    if (this.next < this.cursor) this.next = this.cursor;
    while (!this.closed && this.next < this.ranges.length && this.entries.size < this.files) {
      const index = this.next;
      const { path, start, end } = this.ranges[index];
      const size = end - start;
      const seed = this.seeds.get(index);
      this.seeds.delete(index);
      // All of it held already: costs no request, and is in memory already, so needs no budget.
      const whole = seed !== undefined && seed.length === size;
      if (this.order.get(path) !== index || size <= 0 || (!whole && size > this.budget)) {
        this.next++;
        continue;
      }
      if (!whole && this.heldBytes + size > this.budget) {
        // Not fetched yet: its tail waits here for the budget.
        if (seed !== undefined) this.seeds.set(index, seed);
        break;
      }
      this.next++;
      let bytes: Promise<Uint8Array>;
      if (whole) {
        bytes = Promise.resolve(seed as Uint8Array);
        this.counts.seeded++;
      } else {
        const fetchEnd = end - (seed?.length ?? 0);
        try {
          bytes = this.inner.readRange(path, start, fetchEnd);
        } catch (e) {
          bytes = Promise.reject(e);
        }
        if (seed !== undefined) bytes = bytes.then((head) => joined(head, seed, fetchEnd - start));
        // The error belongs to the read that needs these bytes; a range nobody reads any more must not
        // surface as an unhandled rejection.
        bytes.catch(() => undefined);
        this.counts.fetched++;
      }
      this.entries.set(path, { index, start, end, bytes });
      this.heldBytes += size;
      this.counts.maxHeld = Math.max(this.counts.maxHeld, this.entries.size);
      this.counts.maxHeldBytes = Math.max(this.counts.maxHeldBytes, this.heldBytes);
    }
  }
}

/** `head` then `tail` in one buffer; a short `head` stays short (the read that needs it reads again for its error). */
function joined(head: Uint8Array, tail: Uint8Array, headLength: number): Uint8Array {
  if (head.length !== headLength) return head;
  const out = new Uint8Array(headLength + tail.length);
  out.set(head, 0);
  out.set(tail, headLength);
  return out;
}
