/**
 * Building merged row groups on worker threads (issue 11, "parallel inside one worker"): on a Lambda
 * of 10,240 MB (6 vCPUs) the merge would otherwise use one. Reading, the deletes and the upload stay
 * on the rewriter's thread (writeMergedParts); each output row group, once its sources are read, goes
 * to a worker (merge-worker.ts), which decompresses, drops deleted rows, joins and recompresses its
 * pages and takes the proof's digests with buildRowGroup, the function this thread runs without a
 * pool. Results come back in the order asked, so the file is the same bytes either way.
 *
 * Memory: a task holds a copy of its sources' bytes (transferred to the worker) and its output
 * (transferred back); writeMergedParts keeps at most `inFlight` tasks or `inFlightBytes` of sources
 * out at once. Errors thrown in a worker arrive as the same class with the same message and path
 * (lib/errors.ts errorToJson); a worker that dies fails every task it held. `close` terminates every
 * worker, whatever happened.
 */
import { Worker } from 'node:worker_threads';
import { errorFromJson, errorToJson, IllegalStateError, InvalidArgumentError, type ErrorJson } from '../errors.js';
import type { TableMetadata } from '../iceberg/table-metadata.js';
import type { BuiltRowGroup, RowGroupBuilder, RowGroupShape, SourceGroup } from '../parquet/row-group-merge.js';
import {
  decodeHost, DECODE_WORKERS_PROPERTY, GROUP_MEMORY_GOAL, MAX_DEFAULT_DECODE_WORKERS, MIN_POOL_DECODE_BYTES, REWRITER_MEMORY, workersAsked,
  type DecodeHost,
} from './decode-pool.js';
import { workerStart } from './worker-start.js';

const MiB = 2 ** 20;
/** Tasks a worker holds at once: the next one waits there while it builds one. */
const TASKS_PER_WORKER = 2;
/** Sources' bytes out at once, across the workers, beyond the one task always let through. */
export const DEFAULT_IN_FLIGHT_BYTES = 256 * MiB;
/** A merge worker's memory besides its tasks' bytes: its isolate, codec contexts, digest module and page buffers. */
const MERGE_WORKER_MEMORY = 48 * MiB;

/** A source row group as it crosses to a worker: its chunks' bytes are in the task's buffer, in order. */
export interface SourceSent extends Omit<SourceGroup, 'bytes' | 'pages'> {
  /** Bytes of each column chunk, at consecutive offsets of the task's buffer. */
  readonly lengths: readonly number[];
}

/** Messages to a worker. */
export type ToMergeWorker = {
  readonly type: 'task';
  readonly id: number;
  readonly shape: RowGroupShape;
  readonly groups: readonly SourceSent[];
  readonly buffer: ArrayBuffer;
};

/** Messages from a worker. */
export type FromMergeWorker =
  | { readonly type: 'built'; readonly id: number; readonly built: BuiltRowGroup }
  | { readonly type: 'error'; readonly id: number; readonly error: ErrorJson };

/**
 * Merge workers for one group: `explicit` (an option, else the table property
 * `packice.rewrite.decode-workers`, which counts a rewrite's worker threads whatever they do) when
 * given, else one fewer than the vCPUs, at most 5, none for less than 8 MiB to merge, never more
 * than `autoCap`, nor than the group's memory budget holds beside the rewriter's own thread and the
 * tasks' bytes (the sources out, DEFAULT_IN_FLIGHT_BYTES, and as much again of outputs).
 */
export function mergeWorkerCount(
  explicit: number | undefined,
  metadata: TableMetadata,
  mergeBytes: number,
  autoCap = MAX_DEFAULT_DECODE_WORKERS,
  host: DecodeHost = decodeHost(),
): number {
  const asked = workersAsked(explicit, metadata, DECODE_WORKERS_PROPERTY);
  if (asked !== undefined) return asked;
  if (mergeBytes < MIN_POOL_DECODE_BYTES) return 0;
  const budget = Math.min(GROUP_MEMORY_GOAL, 0.8 * host.memoryBytes);
  const fit = Math.floor((budget - REWRITER_MEMORY - 2 * DEFAULT_IN_FLIGHT_BYTES) / MERGE_WORKER_MEMORY);
  return Math.max(0, Math.min(host.vcpus - 1, MAX_DEFAULT_DECODE_WORKERS, autoCap, fit));
}

interface PoolWorker {
  readonly thread: Worker;
  /** Its tasks not yet answered, by id. */
  readonly tasks: Map<number, Task>;
}

interface Task {
  readonly resolve: (built: BuiltRowGroup) => void;
  readonly reject: (e: Error) => void;
}

export class MergePool implements RowGroupBuilder {
  readonly inFlight: number;
  readonly inFlightBytes: number;
  private readonly workers: PoolWorker[] = [];
  private nextId = 0;
  private closed = false;
  /** The workers that have built a row group of each file (its shape), for `fresh`. */
  private readonly builtFor = new WeakMap<RowGroupShape, Set<PoolWorker>>();
  private exited = 0;

  private constructor(private readonly count: number, inFlightBytes: number) {
    this.inFlight = count * TASKS_PER_WORKER;
    this.inFlightBytes = inFlightBytes;
  }

  /** A pool of `count` workers (at least one), started with its first row group: a group's merge may come to nothing. */
  static start(count: number, options: { readonly inFlightBytes?: number } = {}): MergePool {
    if (!Number.isSafeInteger(count) || count < 1) throw new InvalidArgumentError(`a merge pool needs at least one worker, got ${count}`);
    return new MergePool(count, options.inFlightBytes ?? DEFAULT_IN_FLIGHT_BYTES);
  }

  private startWorkers(): void {
    const { url, module } = workerStart('merge-worker');
    for (let i = 0; i < this.count; i++) {
      const thread = new Worker(url, { workerData: { module } });
      const w: PoolWorker = { thread, tasks: new Map() };
      thread.on('message', (m: FromMergeWorker) => this.onMessage(w, m));
      thread.on('error', (e) => this.fail(w, e));
      thread.on('exit', (code) => {
        this.exited++;
        this.fail(w, new IllegalStateError(this.closed ? 'the merge pool is closed' : `a merge worker stopped (exit code ${code})`));
      });
      this.workers.push(w);
    }
  }

  /** Builds one output row group on the least busy worker; its sources' bytes are copied into one buffer that moves there. */
  build(shape: RowGroupShape, groups: readonly SourceGroup[]): Promise<BuiltRowGroup> {
    if (this.closed) return Promise.reject(new IllegalStateError('the merge pool is closed'));
    if (this.workers.length === 0) this.startWorkers();
    let total = 0;
    for (const g of groups) for (const b of g.bytes) total += b.length;
    const buffer = new ArrayBuffer(total);
    const into = new Uint8Array(buffer);
    let at = 0;
    const sent: SourceSent[] = groups.map((g) => {
      for (const b of g.bytes) {
        into.set(b, at);
        at += b.length;
      }
      return { path: g.path, rowGroup: g.rowGroup, rows: g.rows, deleted: g.deleted, metas: g.metas, lengths: g.bytes.map((b) => b.length) };
    });
    const w = this.workers.reduce((a, b) => (b.tasks.size < a.tasks.size ? b : a));
    const id = this.nextId++;
    let seen = this.builtFor.get(shape);
    if (!seen) this.builtFor.set(shape, (seen = new Set()));
    const fresh = !seen.has(w);
    seen.add(w);
    return new Promise<BuiltRowGroup>((resolve, reject) => {
      w.tasks.set(id, { resolve: (built) => resolve({ ...built, fresh }), reject });
      w.thread.postMessage({ type: 'task', id, shape, groups: sent, buffer } satisfies ToMergeWorker, [buffer]);
    });
  }

  /** Workers started and not yet stopped (tests). */
  get liveWorkers(): number {
    return this.workers.length - this.exited;
  }

  /** Terminates every worker, failing what they still held; safe to call more than once. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.thread.terminate().catch(() => undefined)));
  }

  private onMessage(w: PoolWorker, m: FromMergeWorker): void {
    const task = w.tasks.get(m.id);
    if (!task) return;
    w.tasks.delete(m.id);
    if (m.type === 'built') task.resolve(m.built);
    else task.reject(errorFromJson(m.error));
  }

  /** Fails every task `w` holds. */
  private fail(w: PoolWorker, e: Error): void {
    const tasks = [...w.tasks.values()];
    w.tasks.clear();
    for (const t of tasks) t.reject(e);
  }
}

/** A worker's error as it crosses back (lib/errors.ts). */
export function builtError(id: number, e: unknown): FromMergeWorker {
  return { type: 'error', id, error: errorToJson(e) };
}
