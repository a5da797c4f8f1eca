/**
 * Building merged row groups on worker threads (issue 11, "parallel inside one worker"): on a Lambda
 * of 10,240 MB (6 vCPUs) the merge would otherwise use one. Reading, the deletes and the upload stay
 * on the rewriter's thread (writeMergedParts); each output row group, once its sources are read, goes
 * to a worker (merge-worker.ts), which decompresses, drops deleted rows, joins and recompresses its
 * pages and takes the proof's digests with buildRowGroup, the function this thread runs without a
 * pool. Results come back in the order asked, so the file is the same bytes either way. The proof's
 * deep walks of re-read row groups (rewalk) go to the workers too.
 *
 * Memory: a task holds a copy of its bytes (transferred to the worker, and back with the answer to
 * be used again: fresh memory costs a page fault per 4 KiB) and its output (transferred back);
 * writeMergedParts keeps at most `inFlight` tasks or `inFlightBytes` of sources out at once. Errors thrown in a worker arrive as the same class with the same message and path
 * (lib/errors.ts errorToJson); a worker that dies fails every task it held. `close` terminates every
 * worker, whatever happened.
 */
import { Worker } from 'node:worker_threads';
import { errorFromJson, errorToJson, IllegalStateError, InvalidArgumentError, type ErrorJson } from '../errors.js';
import type { TableMetadata } from '../iceberg/table-metadata.js';
import { zstdCodec, type ZstdCodec } from '../parquet/compression-codec.js';
import { digestHasher, type DigestHasher } from '../parquet/digest.js';
import {
  buildRowGroup, rewalk, type BuiltRowGroup, type Rewalker, type RewalkJob, type RowGroupBuilder, type RowGroupShape, type SourceGroup,
} from '../parquet/row-group-merge.js';
import {
  decodeHost, DECODE_WORKERS_PROPERTY, GROUP_MEMORY_GOAL, MAX_DEFAULT_DECODE_WORKERS, MIN_POOL_DECODE_BYTES, workersAsked,
  type DecodeHost,
} from './decode-pool.js';
import { prestartThreads, terminateWhenIdle, workerStart } from './worker-start.js';

const MiB = 2 ** 20;
/** Tasks a worker holds at once: the next one waits there while it builds one. */
const TASKS_PER_WORKER = 2;
/** Sources' bytes out at once, across the workers, beyond the one task always let through. */
export const DEFAULT_IN_FLIGHT_BYTES = 128 * MiB;
/**
 * A merge worker's memory besides its tasks' bytes: its isolate and modules, codec contexts, digest module
 * and page buffers (BENCHMARKS.md, "Merged row groups on worker threads": ~160 MiB each measured on a 700 MiB
 * group from the sources through tsx, whose loader and source maps each worker carries).
 */
const MERGE_WORKER_MEMORY = 160 * MiB;
/** The rewriter's own thread merging a 700 MiB group with S3 part buffers (the same section: 0.96-1.12 GiB peak). */
const MERGE_REWRITER_MEMORY = 1152 * MiB;
/**
 * Uploads with workers: the CPU no longer hides them, and each output's last part is waited for whole.
 * Eight parts of 32 MiB hold what two of 128 MiB do (OUTPUT_PART_BYTES) and wait a quarter as long at
 * the end, for ~18 more PUTs per GB ($0.00009): worth it where a second costs a 10,240 MB Lambda's.
 */
const UPLOAD = { partBytes: 32 * MiB, partsInFlight: 8 } as const;

/** A source row group as it crosses to a worker: its chunks' bytes are in the task's buffer, in order. */
export interface SourceSent extends Omit<SourceGroup, 'bytes' | 'pages'> {
  /** Bytes of each column chunk, at consecutive offsets of the task's buffer from 0. */
  readonly lengths: readonly number[];
}

/** Messages to a worker: a row group to build, or a re-read one to walk (its chunks in the buffer likewise). */
export type ToMergeWorker =
  | { readonly type: 'build'; readonly id: number; readonly shape: RowGroupShape; readonly groups: readonly SourceSent[]; readonly buffer: ArrayBuffer }
  | { readonly type: 'rewalk'; readonly id: number; readonly job: Omit<RewalkJob, 'bytes'>; readonly lengths: readonly number[]; readonly buffer: ArrayBuffer };

/** Messages from a worker; every answer to a task gives its buffer back. */
export type FromMergeWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'built'; readonly id: number; readonly built: BuiltRowGroup; readonly buffer: ArrayBuffer }
  | { readonly type: 'walked'; readonly id: number; readonly buffer: ArrayBuffer }
  | { readonly type: 'error'; readonly id: number; readonly error: ErrorJson; readonly buffer: ArrayBuffer };

/**
 * Merge workers for one group: `explicit` (an option, else the table property
 * `packice.rewrite.decode-workers`, which counts a rewrite's worker threads whatever they do) when
 * given, else one fewer than the vCPUs, at most 5, none for less than 8 MiB to merge, never more
 * than `autoCap`, nor than the memory budget holds beside the rewriter's own thread and the tasks'
 * bytes (the sources out, DEFAULT_IN_FLIGHT_BYTES, and as much again of outputs). The budget is 80 %
 * of a Lambda function's memory (its own, configured for it: a 10,240 MB one takes five), else the
 * group's 1.5 GiB goal (a machine others share, where `compact` runs groups side by side): none there.
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
  const budget = host.dedicated === true ? 0.8 * host.memoryBytes : Math.min(GROUP_MEMORY_GOAL, 0.8 * host.memoryBytes);
  const fit = Math.floor((budget - MERGE_REWRITER_MEMORY - 2 * DEFAULT_IN_FLIGHT_BYTES) / MERGE_WORKER_MEMORY);
  return Math.max(0, Math.min(host.vcpus - 1, MAX_DEFAULT_DECODE_WORKERS, autoCap, fit));
}

interface Task {
  readonly answer: (m: Exclude<FromMergeWorker, { type: 'ready' }>) => void;
  readonly reject: (e: Error) => void;
}

/**
 * A started worker thread, kept across groups (as the plan's are, plan-pool.ts): a Lambda container
 * rewrites group after group, and a thread kept pays neither its start (isolate, modules, the
 * digest's WebAssembly) nor its JIT warm-up again. Idle, it is unref'd: it never keeps the process alive.
 */
class MergeThread {
  readonly thread: Worker;
  readonly tasks = new Map<number, Task>();
  /** Tasks sent and not yet answered (a closed pool fails `tasks`, the thread still works on them). */
  inHand = 0;
  /** Its module loaded: it takes row groups from now on. */
  ready = false;
  dead = false;
  /** Resolves when ready, rejects if it dies first. */
  readonly started: Promise<void>;
  private settle: { resolve: () => void; reject: (e: Error) => void } | undefined;

  constructor() {
    this.started = new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    this.started.catch(() => undefined);
    const { url, module } = workerStart('merge-worker');
    this.thread = new Worker(url, { workerData: { module } });
    this.thread.on('message', (m: FromMergeWorker) => {
      if (m.type === 'ready') {
        this.ready = true;
        this.settle?.resolve();
        return;
      }
      this.inHand--;
      const task = this.tasks.get(m.id);
      this.tasks.delete(m.id);
      task?.answer(m);
    });
    this.thread.on('error', (e) => this.die(e));
    this.thread.on('exit', (code) => this.die(new IllegalStateError(`a merge worker stopped (exit code ${code})`)));
  }

  /** Fails every task it holds. */
  fail(e: Error): void {
    const tasks = [...this.tasks.values()];
    this.tasks.clear();
    for (const t of tasks) t.reject(e);
  }

  private die(e: Error): void {
    this.dead = true;
    this.settle?.reject(e);
    const i = idle.indexOf(this);
    if (i >= 0) idle.splice(i, 1);
    this.fail(e);
  }
}

/** Threads no group is using, at most MAX_DEFAULT_DECODE_WORKERS. */
const idle: MergeThread[] = [];

/** This thread, as a builder the proof tracks like a worker (its own codec contexts). */
const HERE = Symbol('this thread');

/** Buffers kept for the next task's bytes, at most. */
const SPARE_BUFFERS = 2 * TASKS_PER_WORKER * MAX_DEFAULT_DECODE_WORKERS;
/** Buffers the workers gave back, kept across groups as the threads are. */
const spare: ArrayBuffer[] = [];

export class MergePool implements RowGroupBuilder, Rewalker {
  readonly inFlight: number;
  readonly inFlightBytes: number;
  readonly upload = UPLOAD;
  private readonly workers: MergeThread[] = [];
  private nextId = 0;
  private closed = false;
  /** Who has built a row group of each file (its shape), for `fresh`. */
  private readonly builtFor = new WeakMap<RowGroupShape, Set<MergeThread | typeof HERE>>();
  private here: { zstd: ZstdCodec | undefined; hasher: Promise<DigestHasher> } | undefined;

  private constructor(private readonly count: number, inFlightBytes: number) {
    this.inFlight = count * TASKS_PER_WORKER;
    this.inFlightBytes = inFlightBytes;
  }

  /**
   * A pool of `count` workers (at least one), taken (idle ones first, else started) with its first
   * row group: a group's merge may come to nothing.
   */
  static start(count: number, options: { readonly inFlightBytes?: number } = {}): MergePool {
    if (!Number.isSafeInteger(count) || count < 1) throw new InvalidArgumentError(`a merge pool needs at least one worker, got ${count}`);
    return new MergePool(count, options.inFlightBytes ?? DEFAULT_IN_FLIGHT_BYTES);
  }

  /** Starts idle worker threads until `count` are kept, and waits until they are ready (tests, benchmarks). */
  static prestart(count: number): Promise<void> {
    return prestartThreads(idle, count, MAX_DEFAULT_DECODE_WORKERS, () => new MergeThread());
  }

  /** Idle worker threads kept from earlier groups. */
  static get idleThreads(): number {
    return idle.length;
  }

  /** Workers taken. */
  get size(): number {
    return this.workers.length;
  }

  /**
   * Builds one output row group on the ready worker with the fewest in hand, its sources' bytes
   * copied into one buffer that moves there; while none is ready yet (threads still loading their
   * modules), on this thread rather than wait.
   */
  async build(shape: RowGroupShape, groups: readonly SourceGroup[]): Promise<BuiltRowGroup> {
    const w = this.pick();
    let seen = this.builtFor.get(shape);
    if (!seen) this.builtFor.set(shape, (seen = new Set()));
    const fresh = !seen.has(w ?? HERE);
    seen.add(w ?? HERE);
    if (w === undefined) {
      const here = this.hereCodecs();
      return { ...buildRowGroup(shape, groups, here.zstd, await here.hasher), fresh };
    }
    const { buffer } = this.pack(groups.flatMap((g) => g.bytes));
    // Pages and kept pages stay here: the worker parses and decompresses its own.
    const sent: SourceSent[] = groups.map(({ bytes, pages: _, kept: __, ...g }) => ({ ...g, lengths: bytes.map((b) => b.length) }));
    const m = await this.send(w, (id) => ({ type: 'build', id, shape, groups: sent, buffer }), buffer);
    if (m.type !== 'built') throw new IllegalStateError(`a merge worker answered a row group with ${m.type}`);
    return { ...m.built, fresh };
  }

  /** The proof's deep walk of a re-read row group (rewalk), on a ready worker, else here. */
  async rewalk(job: RewalkJob): Promise<void> {
    const w = this.pick();
    if (w === undefined) {
      const here = this.hereCodecs();
      rewalk(job, here.zstd, await here.hasher);
      return;
    }
    const { buffer } = this.pack(job.bytes);
    const plain: Omit<RewalkJob, 'bytes'> = {
      leaves: job.leaves, codecs: job.codecs, signature: job.signature,
      segments: job.segments.map((s) => ({ rows: s.rows, modes: s.modes, pages: s.pages, written: s.written })),
    };
    const m = await this.send(w, (id) => ({ type: 'rewalk', id, job: plain, lengths: job.bytes.map((b) => b.length), buffer }), buffer);
    if (m.type !== 'walked') throw new IllegalStateError(`a merge worker answered a walk with ${m.type}`);
  }

  /** The ready worker with the fewest tasks in hand; none ready yet: undefined (this thread does it). */
  private pick(): MergeThread | undefined {
    if (this.closed) throw new IllegalStateError('the merge pool is closed');
    if (this.workers.length === 0) this.take();
    let w: MergeThread | undefined;
    for (const x of this.workers) if (x.ready && !x.dead && (w === undefined || x.tasks.size < w.tasks.size)) w = x;
    return w;
  }

  private hereCodecs(): { zstd: ZstdCodec | undefined; hasher: Promise<DigestHasher> } {
    return (this.here ??= { zstd: zstdCodec(), hasher: digestHasher() });
  }

  /** `chunks` copied one after another into a buffer (a spare one large enough, else a new one). */
  private pack(chunks: readonly Uint8Array[]): { buffer: ArrayBuffer } {
    let total = 0;
    for (const b of chunks) total += b.length;
    const i = spare.findIndex((b) => b.byteLength >= total);
    // A new one with room to spare: the next row group is rarely the same size.
    const buffer = i >= 0 ? spare.splice(i, 1)[0] : new ArrayBuffer(Math.ceil(total * 1.25));
    const into = new Uint8Array(buffer);
    let at = 0;
    for (const b of chunks) {
      into.set(b, at);
      at += b.length;
    }
    return { buffer };
  }

  /** Sends the message `make` builds to `w` with `buffer` transferred; resolves with the answer, its buffer kept as a spare. */
  private send(w: MergeThread, make: (id: number) => ToMergeWorker, buffer: ArrayBuffer): Promise<Exclude<FromMergeWorker, { type: 'ready' | 'error' }>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      w.tasks.set(id, {
        answer: (m) => {
          if (spare.length < SPARE_BUFFERS) spare.push(m.buffer);
          if (m.type === 'error') reject(errorFromJson(m.error));
          else resolve(m);
        },
        reject,
      });
      w.inHand++;
      w.thread.postMessage(make(id), [buffer]);
    });
  }

  /**
   * Gives the workers back for the next group (one with a row group still in hand is terminated
   * instead, failing it); safe to call more than once.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const stop: MergeThread[] = [];
    for (const w of this.workers) {
      if (!w.dead && w.tasks.size === 0 && idle.length < MAX_DEFAULT_DECODE_WORKERS) {
        w.thread.unref();
        idle.push(w);
      } else {
        stop.push(w);
      }
    }
    for (const w of stop) w.fail(new IllegalStateError('the merge pool is closed'));
    await Promise.all(stop.map((w) => terminateWhenIdle(w.thread, () => !w.dead && w.inHand > 0)));
  }

  private take(): void {
    for (let i = 0; i < this.count; i++) {
      const w = idle.pop() ?? new MergeThread();
      w.thread.ref();
      this.workers.push(w);
    }
  }
}

/** A worker's error as it crosses back (lib/errors.ts), with the task's buffer. */
export function taskError(id: number, e: unknown, buffer: ArrayBuffer): FromMergeWorker {
  return { type: 'error', id, error: errorToJson(e), buffer };
}
