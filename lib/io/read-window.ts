/**
 * A window of reads in flight: items are read in list order, several at once, bounded in bytes and
 * in count, so that on S3 their first-byte latencies and transfers overlap while memory stays
 * bounded. An item's bytes count against the window from the moment its read starts until the
 * consumer asks for the next item (it is done with this one). An item larger than the window alone
 * is read alone.
 *
 * A read that fails fails the iteration (ordered: when its turn comes; unordered: as soon as it
 * fails). Reads still in flight when the iteration ends early finish into nothing, never as an
 * unhandled rejection.
 */
import { InvalidArgumentError } from '../errors.js';

export interface ReadWindowOptions {
  /** Bytes read or in flight at once. */
  readonly bytes: number;
  /** Reads in flight at once. @default 16 */
  readonly reads?: number;
  /** Hand items over in list order (true), or as their reads complete (false). @default true */
  readonly ordered?: boolean;
}

export const DEFAULT_WINDOW_READS = 16;

export interface WindowRead<T, R> {
  readonly item: T;
  /** Position of the item in the list. */
  readonly index: number;
  readonly value: R;
}

/** What a window did (tests and benchmarks). */
export interface ReadWindowStats {
  /** The most reads and bytes held at once. */
  maxHeld: number;
  maxHeldBytes: number;
}

/** Reads `items` through `read`, `options.bytes` (by `sizeOf`) and `options.reads` at most at once. */
export async function* readWindow<T, R>(
  items: readonly T[],
  sizeOf: (item: T) => number,
  read: (item: T) => Promise<R>,
  options: ReadWindowOptions,
  stats?: ReadWindowStats,
): AsyncGenerator<WindowRead<T, R>> {
  const reads = options.reads ?? DEFAULT_WINDOW_READS;
  if (!Number.isSafeInteger(options.bytes) || options.bytes < 0 || !Number.isSafeInteger(reads) || reads < 1) {
    throw new InvalidArgumentError(`a read window needs bytes >= 0 and reads >= 1, got bytes ${options.bytes}, reads ${reads}`);
  }
  const ordered = options.ordered ?? true;
  // Started and not yet handed over (in flight or done): what the window holds.
  const held = new Map<number, Promise<WindowRead<T, R>>>();
  let heldBytes = 0;
  let next = 0;
  const fill = (): void => {
    while (next < items.length && held.size < reads) {
      const size = sizeOf(items[next]);
      if (held.size > 0 && heldBytes + size > options.bytes) break;
      const index = next++;
      const item = items[index];
      let p: Promise<WindowRead<T, R>>;
      try {
        p = read(item).then((value) => ({ item, index, value }));
      } catch (e) {
        p = Promise.reject(e);
      }
      // Its error is thrown where it is awaited; a read nobody awaits any more must not surface unhandled.
      p.catch(() => undefined);
      held.set(index, p);
      heldBytes += size;
      if (stats) {
        stats.maxHeld = Math.max(stats.maxHeld, held.size);
        stats.maxHeldBytes = Math.max(stats.maxHeldBytes, heldBytes);
      }
    }
  };
  for (let want = 0; want < items.length; want++) {
    fill();
    const done = ordered ? await held.get(want)! : await Promise.race(held.values());
    held.delete(done.index);
    yield done;
    heldBytes -= sizeOf(done.item);
  }
}
