/**
 * lib/io/read-window.ts: reads in list order, several in flight within a byte and a count bound,
 * handed over in order or as they complete; a failed read fails the iteration, and reads left in
 * flight never surface as unhandled rejections.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../lib/errors.js';
import { readWindow, type ReadWindowStats } from '../../lib/io/read-window.js';

/** A read that takes `ms`, counting what is in flight. */
function reader(delays: readonly number[], fail?: number) {
  const state = { inFlight: 0, maxInFlight: 0, started: [] as number[] };
  const read = async (i: number): Promise<number> => {
    state.started.push(i);
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    await new Promise((r) => setTimeout(r, delays[i]));
    state.inFlight--;
    if (i === fail) throw new Error(`read ${i} failed`);
    return i * 10;
  };
  return { state, read };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('readWindow', () => {
  const items = [0, 1, 2, 3, 4, 5, 6, 7];

  it('hands reads over in list order, several in flight, within the count bound', async () => {
    const { state, read } = reader([40, 30, 20, 10, 40, 30, 20, 10]);
    const stats: ReadWindowStats = { maxHeld: 0, maxHeldBytes: 0 };
    const got = await collect(readWindow(items, () => 1, read, { bytes: 100, reads: 3 }, stats));
    expect(got.map((g) => g.index)).toEqual(items);
    expect(got.map((g) => g.value)).toEqual(items.map((i) => i * 10));
    expect(state.started).toEqual(items);
    expect(state.maxInFlight).toBe(3);
    expect(stats.maxHeld).toBe(3);
  });

  it('unordered: hands reads over as they complete', async () => {
    const { read } = reader([50, 5, 5, 5, 5, 5, 5, 5]);
    const got = await collect(readWindow(items, () => 1, read, { bytes: 100, reads: 4, ordered: false }));
    expect(got[0].index).not.toBe(0);
    expect(got.map((g) => g.index).sort()).toEqual(items);
  });

  it('keeps the bytes held within the bound; an item larger than the bound is read alone', async () => {
    const sizes = [30, 30, 30, 100, 30, 30, 30, 30];
    const { state, read } = reader(items.map(() => 5));
    const stats: ReadWindowStats = { maxHeld: 0, maxHeldBytes: 0 };
    const held: number[] = [];
    for await (const { item } of readWindow(items, (i) => sizes[i], read, { bytes: 64, reads: 16 }, stats)) held.push(item);
    expect(held).toEqual(items);
    expect(stats.maxHeld).toBe(2);
    // The 100-byte item was read alone: nothing else held with it.
    expect(stats.maxHeldBytes).toBe(100);
    expect(state.maxInFlight).toBe(2);
  });

  it('a failed read fails the iteration; reads still in flight raise nothing', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      // Read 2 fails first while 3-5 are in flight and also fail later (ordered: it fails at its turn).
      const { read } = reader([5, 5, 5, 30, 30, 30, 5, 5], 2);
      const failing = (i: number): Promise<number> => (i > 3 && i < 6 ? read(i).then(() => Promise.reject(new Error(`late ${i}`))) : read(i));
      const seen: number[] = [];
      const err = await (async () => {
        for await (const { index } of readWindow(items, () => 1, failing, { bytes: 100, reads: 4 })) seen.push(index);
      })().catch((e: unknown) => e);
      expect((err as Error).message).toBe('read 2 failed');
      expect(seen).toEqual([0, 1]);
      await new Promise((r) => setTimeout(r, 80));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('a read that throws synchronously fails the iteration too', async () => {
    const err = await collect(readWindow([1], () => 1, () => { throw new Error('sync'); }, { bytes: 1 })).catch((e: unknown) => e);
    expect((err as Error).message).toBe('sync');
  });

  it('refuses bounds it cannot keep', async () => {
    await expect(collect(readWindow([1], () => 1, async () => 1, { bytes: -1 }))).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(collect(readWindow([1], () => 1, async () => 1, { bytes: 1, reads: 0 }))).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
