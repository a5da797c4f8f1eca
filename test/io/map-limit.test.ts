/** lib/io/map-limit.ts limiter: how many calls it lets run at once, and that a failed call frees its place. */
import { describe, expect, it } from 'vitest';
import { limiter } from '../../lib/io/map-limit.js';

describe('limiter', () => {
  it('runs at most `limit` calls at once, the rest in the order they came, a failure freeing its place', async () => {
    const gate = limiter(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const call = (i: number): Promise<number> => gate(async () => {
      started.push(i);
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      if (i === 1) throw new Error('one fails');
      return i;
    });
    const results = await Promise.allSettled([0, 1, 2, 3, 4].map(call));
    expect(most).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    // Nothing left holding a place: two more run side by side.
    await Promise.all([call(5), call(6)]);
    expect(most).toBe(2);
    expect(running).toBe(0);
  });
});
