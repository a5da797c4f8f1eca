/**
 * lib/compaction/worker-start.ts terminateWhenIdle: a pool's thread with work in hand is terminated
 * once it has answered (terminated mid-work, Node 20 can abort the whole process at the thread's
 * teardown), an idle one at once, one that never answers after the wait.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { terminateWhenIdle } from '../../lib/compaction/worker-start.js';

/** A thread that answers each message with itself after `delayMs` (never, with -1). */
function echo(delayMs: number): Worker {
  const answer = delayMs < 0 ? '' : `setTimeout(() => parentPort.postMessage(m), ${delayMs})`;
  return new Worker(`const { parentPort } = require('node:worker_threads'); parentPort.on('message', (m) => { ${answer} });`, { eval: true });
}

const exitOf = (w: Worker): Promise<number> => new Promise((resolve) => w.once('exit', resolve));

describe('terminateWhenIdle', () => {
  it('waits for a busy thread to answer all it holds, then terminates it', async () => {
    const w = echo(200);
    const exited = exitOf(w);
    let inHand = 0;
    const answers: unknown[] = [];
    // The pool's own listener, registered first, as the pools register theirs.
    w.on('message', (m) => {
      inHand--;
      answers.push(m);
    });
    for (const m of [1, 2, 3]) {
      inHand++;
      w.postMessage(m);
    }
    await terminateWhenIdle(w, () => inHand > 0);
    expect(answers).toEqual([1, 2, 3]);
    await exited;
  });

  it('terminates an idle thread at once, and one that never answers once the wait is over', async () => {
    const idle = echo(0);
    const idleExit = exitOf(idle);
    await terminateWhenIdle(idle, () => false);
    await idleExit;
    const stuck = echo(-1);
    const stuckExit = exitOf(stuck);
    stuck.postMessage(1);
    await terminateWhenIdle(stuck, () => true, 50);
    await stuckExit;
  });
});
