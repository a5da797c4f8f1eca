/**
 * Decoding a group's inputs on worker threads (issue 11, "parallel inside one worker"): a Lambda
 * of 10,240 MB has 6 vCPUs, and the rewriter alone uses one. Each worker of the pool has its own
 * parquet-wasm instance; it opens an input, applies its deletes (readTaskBatches, with a delete
 * file cache of its own), hashes the live rows for the proof and sends each batch to this thread,
 * its buffers transferred (batch-transfer.ts). Batches come out here in input order, so the
 * outputs, the map and the proof are the same bytes as when this thread decodes.
 *
 * Storage stays on this thread: a worker's reads come here as messages and go to the FileIO the
 * rewriter was given (read-ahead, retries, vended credentials and test faults included); only the
 * bytes cross. Memory: each worker sends at most `windowBytes` of batches ahead of what this
 * thread has taken, plus one decoded row group inside its wasm. Errors thrown in a worker arrive
 * as the same class with the same message and path (lib/errors.ts errorToJson); a worker that
 * dies fails the read. `close` terminates every worker, whatever happened.
 */
import { Worker } from 'node:worker_threads';
import { totalmem } from 'node:os';
import { errorFromJson, errorToJson, IllegalStateError, InvalidArgumentError, type ErrorJson } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import type { TableMetadata } from '../iceberg/table-metadata.js';
import type { Runs } from '../parquet/batches.js';
import { readAheadRange } from '../parquet/footer.js';
import { unpackBatch, type TransferredBatch } from '../parquet/batch-transfer.js';
import type { LiveBatch } from '../table/scan.js';
import type { GroupInput } from './messages.js';
import { vcpus } from './vcpus.js';
import { workerStart } from './worker-start.js';

/** Table property: decode workers per group rewrite (0: decode on the rewriter's own thread). */
export const DECODE_WORKERS_PROPERTY = 'packice.rewrite.decode-workers';
/** At most this many by default: a 10,240 MB Lambda has 6 vCPUs, one of them the rewriter's own thread. */
export const MAX_DEFAULT_DECODE_WORKERS = 5;
/** Below this many bytes to decode, the default is no pool: starting workers costs more than it saves. */
export const MIN_POOL_DECODE_BYTES = 8 * 1024 * 1024;
/** Batches a worker may have sent and this thread not yet taken, in bytes (default). */
export const DEFAULT_WINDOW_BYTES = 32 * 1024 * 1024;
const MiB = 2 ** 20;

/** What a worker is started with. */
export interface DecodeWorkerData {
  readonly module: string;
  readonly metadata: TableMetadata;
  readonly mode: 'major' | 'minor';
  readonly lineage: boolean;
  readonly batchSize: number;
  readonly windowBytes: number;
}

/** Messages to a worker. */
export type ToDecodeWorker =
  | { readonly type: 'task'; readonly seq: number; readonly input: GroupInput; readonly preload?: Preload }
  | { readonly type: 'ack'; readonly bytes: number }
  | { readonly type: 'io'; readonly id: number; readonly bytes?: Uint8Array; readonly info?: unknown; readonly error?: ErrorJson };

/** Messages from a worker. */
export type FromDecodeWorker =
  | {
      readonly type: 'batch';
      readonly seq: number;
      readonly batch: TransferredBatch;
      readonly runs: { readonly count: number; readonly rows: number };
      readonly hash: readonly [number, number, number];
      /** The input's last batch (sent one behind, so that most inputs need no 'done'). */
      readonly last: boolean;
    }
  | { readonly type: 'done'; readonly seq: number }
  | { readonly type: 'error'; readonly seq: number; readonly error: ErrorJson }
  | { readonly type: 'io'; readonly id: number; readonly op: 'read' | 'readRange' | 'stat' | 'exists'; readonly path: string; readonly start?: number; readonly end?: number };

/** Bytes [start, start + bytes.length) of the input, read here before the task is sent: all of a file up to 1 MiB, else its footer read. */
export interface Preload {
  readonly start: number;
  readonly bytes: Uint8Array<ArrayBuffer>;
}

/** A batch of live rows decoded by a worker, with its rows' proof hash already summed: [high, low, rows]. */
export interface DecodedBatch extends LiveBatch {
  readonly hash: readonly [number, number, number];
}

export interface DecodePoolOptions {
  readonly mode: 'major' | 'minor';
  readonly lineage: boolean;
  readonly batchSize: number;
  /** Bytes of batches each worker may send ahead (default 32 MiB). */
  readonly windowBytes?: number;
  /**
   * Each input's first read by path (default: readAheadRange): what the rewriter's read-ahead fetches,
   * so that an input it fetches whole goes to its worker whole, and its later reads need no fetch.
   */
  readonly firstReads?: ReadonlyMap<string, { readonly start: number; readonly end: number }>;
}

/** Peak RSS a group's rewrite is to stay under (issue 11, must-show 1); the default count of workers is sized to it. */
export const GROUP_MEMORY_GOAL = 1536 * MiB;
/**
 * A process's memory for the rewriter's own thread, besides its decode workers: Node, the modules, the writer, the
 * proof and the batches taken from the workers (BENCHMARKS.md "Peak memory with decode workers, session 22": 480-600
 * MiB measured next to 1-5 workers, with the rewrite Lambda's `--initial-old-space-size=128`).
 */
export const REWRITER_MEMORY = 640 * MiB;
/**
 * A decode worker's memory: its isolate and parquet-wasm instance, plus, per byte of the largest row group it
 * decodes, what that row group's decoded and copied buffers hold until V8 collects them (the same section: ~100 MiB
 * a worker for 34 KB inputs, 230-245 MiB for 3.3-4 MB ones; the line runs above every point measured).
 */
export const WORKER_MEMORY = 96 * MiB;
export const WORKER_MEMORY_PER_ROW_GROUP_BYTE = 48;

/** What the default count of decode workers is sized to. */
export interface DecodeHost {
  /** vCPUs this process may use. */
  readonly vcpus: number;
  /** Bytes of memory the process may use. */
  readonly memoryBytes: number;
  /** That memory is the process's alone (a Lambda function's, as configured), not a machine's it shares. */
  readonly dedicated?: boolean;
}

/** What a group asks of decode workers. */
export interface DecodeLoad {
  /** Inputs to decode. */
  readonly inputs: number;
  /** Their bytes. */
  readonly bytes: number;
  /** The largest row group's bytes among them (largestRowGroupBytes). */
  readonly largestRowGroupBytes: number;
}

/**
 * Decode workers for one group: `explicit` (an option, else the table property) when given, else
 * one fewer than the vCPUs (on Lambda: its memory ÷ 1,769 MB, rounded), at most 5, and none for
 * less than 8 MiB to decode, and never more than `autoCap` (the local runner's share of the cores),
 * nor more than the memory budget holds (workersInBudget). Never more than the inputs to decode.
 */
export function decodeWorkerCount(
  explicit: number | undefined,
  metadata: TableMetadata,
  load: DecodeLoad,
  autoCap = MAX_DEFAULT_DECODE_WORKERS,
  host: DecodeHost = decodeHost(),
): number {
  const asked = workersAsked(explicit, metadata, DECODE_WORKERS_PROPERTY);
  if (asked !== undefined) return Math.min(asked, load.inputs);
  if (load.bytes < MIN_POOL_DECODE_BYTES) return 0;
  return Math.max(0, Math.min(host.vcpus - 1, MAX_DEFAULT_DECODE_WORKERS, autoCap, load.inputs, workersInBudget(load.largestRowGroupBytes, host.memoryBytes)));
}

/**
 * Workers whose memory fits, next to the rewriter's own thread, in the group's budget: the goal, or 80 % of the
 * process's memory when less. Each worker holds its own buffers (issue 11: five workers on 3.9 MB inputs with
 * deletes peaked at 1.8 GiB); the rewriter's own thread, not the workers, bounds a rewrite's speed once the workers
 * decode as fast as it writes, which two to three do on such inputs.
 */
export function workersInBudget(largestRowGroupBytes: number, memoryBytes: number): number {
  const budget = Math.min(GROUP_MEMORY_GOAL, 0.8 * memoryBytes);
  const perWorker = WORKER_MEMORY + WORKER_MEMORY_PER_ROW_GROUP_BYTE * largestRowGroupBytes;
  return Math.max(0, Math.floor((budget - REWRITER_MEMORY) / perWorker));
}

/**
 * The largest row group among `files`, in bytes of the file: from each file's split offsets (its row groups'
 * starts; the last runs to the end of the file, footer included), else the whole file.
 */
export function largestRowGroupBytes(files: readonly { readonly fileSizeInBytes: bigint; readonly splitOffsets?: readonly bigint[] | null }[]): number {
  let largest = 0;
  for (const f of files) {
    const size = Number(f.fileSizeInBytes);
    const starts = f.splitOffsets ?? [];
    let end = size;
    let rowGroup = starts.length === 0 ? size : 0;
    for (let i = starts.length - 1; i >= 0; i--) {
      const start = Number(starts[i]);
      // Offsets out of order or past the end say nothing to trust: the whole file then.
      if (!(start >= 0 && start < end)) {
        rowGroup = size;
        break;
      }
      rowGroup = Math.max(rowGroup, end - start);
      end = start;
    }
    largest = Math.max(largest, rowGroup);
  }
  return largest;
}

/** This process's vCPUs (vcpus()) and memory: on Lambda its configured memory, else the machine's. */
export function decodeHost(): DecodeHost {
  const lambdaMb = Number(process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
  const lambda = Number.isFinite(lambdaMb) && lambdaMb > 0;
  return { vcpus: vcpus(), memoryBytes: lambda ? lambdaMb * MiB : totalmem(), dedicated: lambda };
}

/** Workers asked for: `explicit` when given, else the table property `property`; refused unless a whole number >= 0. */
export function workersAsked(explicit: number | undefined, metadata: TableMetadata, property: string): number | undefined {
  const value = metadata.properties[property];
  const asked = explicit ?? (value !== undefined ? Number(value) : undefined);
  if (asked !== undefined && (!Number.isSafeInteger(asked) || asked < 0)) {
    throw new InvalidArgumentError(`decode workers must be a whole number >= 0, got ${explicit ?? JSON.stringify(value)}`, { path: metadata.location });
  }
  return asked;
}


interface Slot {
  readonly worker: PoolWorker;
  readonly batches: Extract<FromDecodeWorker, { type: 'batch' }>[];
  done: boolean;
  error?: Error;
}

interface PoolWorker {
  readonly thread: Worker;
  /** Tasks sent and not finished: two, so that a worker never waits for its next file's bytes. */
  tasks: number;
  /** Bytes of its batches taken here and not yet acknowledged. */
  taken: number;
  /** The last task sent (tasks go out in order). */
  sending: Promise<void>;
}

const TASKS_PER_WORKER = 2;

export class DecodePool {
  private readonly workers: PoolWorker[] = [];
  private readonly slots = new Map<number, Slot>();
  private inputs: readonly GroupInput[] = [];
  private nextSeq = 0;
  private failure: Error | undefined;
  private closed = false;
  private wake: (() => void) | undefined;
  /** Taken bytes are acknowledged in steps of this many (a quarter of the window), and before every wait. */
  private ackBytes = 1;
  private exited = 0;

  private constructor(
    private readonly io: FileIO,
    private readonly firstReads: DecodePoolOptions['firstReads'],
  ) {}

  /** Starts `count` workers (at least one). */
  static start(count: number, io: FileIO, metadata: TableMetadata, options: DecodePoolOptions): DecodePool {
    if (!Number.isSafeInteger(count) || count < 1) throw new InvalidArgumentError(`a decode pool needs at least one worker, got ${count}`);
    const pool = new DecodePool(io, options.firstReads);
    const { url, module } = workerStart('decode-worker');
    const workerData: DecodeWorkerData = {
      module, metadata, mode: options.mode, lineage: options.lineage, batchSize: options.batchSize,
      windowBytes: options.windowBytes ?? DEFAULT_WINDOW_BYTES,
    };
    pool.ackBytes = Math.max(1, Math.floor(workerData.windowBytes / 4));
    for (let i = 0; i < count; i++) {
      const thread = new Worker(url, { workerData });
      const w: PoolWorker = { thread, tasks: 0, taken: 0, sending: Promise.resolve() };
      thread.on('message', (m: FromDecodeWorker) => pool.onMessage(w, m));
      thread.on('error', (e) => pool.fail(e));
      thread.on('exit', (code) => {
        pool.exited++;
        if (!pool.closed) pool.fail(new IllegalStateError(`a decode worker stopped (exit code ${code})`));
      });
      pool.workers.push(w);
    }
    return pool;
  }

  /** The live batches of `inputs`, in their order, each input's in file order. One call per pool. */
  async *batches(inputs: readonly GroupInput[]): AsyncIterable<{ readonly index: number; readonly live: DecodedBatch }> {
    if (this.inputs.length > 0 || this.nextSeq > 0) throw new IllegalStateError('a decode pool reads one list of inputs');
    this.inputs = inputs;
    for (const w of this.workers) this.assign(w);
    for (let seq = 0; seq < inputs.length; seq++) {
      for (;;) {
        if (this.failure) throw this.failure;
        if (this.closed) throw new IllegalStateError('the decode pool is closed');
        const slot = this.slots.get(seq);
        const m = slot?.batches.shift();
        if (slot && m) {
          const { batch, extras } = unpackBatch(m.batch);
          const [starts, lengths] = extras as Int32Array[];
          const runs: Runs = { starts, lengths, count: m.runs.count, rows: m.runs.rows };
          yield { index: seq, live: { batch, runs, hash: m.hash } };
          // Taken: the worker may send as much again.
          slot.worker.taken += m.batch.buffer.byteLength;
          if (slot.worker.taken >= this.ackBytes) this.ack(slot.worker);
          continue;
        }
        if (slot?.error) throw slot.error;
        if (slot?.done) {
          this.slots.delete(seq);
          break;
        }
        // A worker waiting for its window must hear of everything taken before this thread waits too.
        for (const w of this.workers) this.ack(w);
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    }
  }

  /** Workers started and not yet stopped (tests). */
  get liveWorkers(): number {
    return this.workers.length - this.exited;
  }

  /** Terminates every worker; safe to call more than once, and after a failure. */
  async close(): Promise<void> {
    this.closed = true;
    this.notify();
    await Promise.all(this.workers.map((w) => w.thread.terminate().catch(() => undefined)));
  }

  private ack(w: PoolWorker): void {
    if (w.taken === 0 || this.closed) return;
    w.thread.postMessage({ type: 'ack', bytes: w.taken } satisfies ToDecodeWorker);
    w.taken = 0;
  }

  /** Sends `w` the next inputs, each with the bytes its first read asks for (read here, through the rewriter's FileIO). */
  private assign(w: PoolWorker): void {
    while (!this.closed && w.tasks < TASKS_PER_WORKER && this.nextSeq < this.inputs.length) {
      const seq = this.nextSeq++;
      const input = this.inputs[seq];
      w.tasks++;
      this.slots.set(seq, { worker: w, batches: [], done: false });
      const preloaded = this.preload(input);
      // Sent in input order whichever read ends first: a worker must not start a later input first.
      w.sending = w.sending.then(async () => {
        const preload = await preloaded;
        if (this.closed) return;
        w.thread.postMessage({ type: 'task', seq, input, ...(preload ? { preload } : {}) } satisfies ToDecodeWorker, preload ? [preload.bytes.buffer] : []);
      }).catch((e: unknown) => this.fail(e instanceof Error ? e : new IllegalStateError(String(e))));
    }
  }

  /** The input's first read, or nothing when it fails: the worker then reads it through this thread and meets the error itself. */
  private async preload(input: GroupInput): Promise<Preload | undefined> {
    const { start, end } = this.firstReads?.get(input.file.filePath) ?? readAheadRange(input.file.filePath, Number(input.file.fileSizeInBytes));
    try {
      const got = await this.io.readRange(input.file.filePath, start, end);
      return { start, bytes: new Uint8Array(got) };
    } catch {
      return undefined;
    }
  }

  private onMessage(w: PoolWorker, m: FromDecodeWorker): void {
    if (this.closed) return;
    if (m.type === 'io') {
      this.serve(w, m).catch((e: unknown) => this.fail(e instanceof Error ? e : new IllegalStateError(String(e))));
      return;
    }
    const slot = this.slots.get(m.seq);
    if (!slot) return;
    if (m.type === 'batch') slot.batches.push(m);
    else if (m.type === 'error') slot.error = errorFromJson(m.error);
    if (m.type !== 'batch' || m.last) {
      slot.done = true;
      w.tasks--;
      this.assign(w);
    }
    this.notify();
  }

  /** A worker's read, done here; the bytes are copied into a buffer of their own and transferred. */
  private async serve(w: PoolWorker, m: Extract<FromDecodeWorker, { type: 'io' }>): Promise<void> {
    let reply: ToDecodeWorker;
    const transfer: ArrayBuffer[] = [];
    try {
      if (m.op === 'stat') reply = { type: 'io', id: m.id, info: await this.io.stat(m.path) };
      else if (m.op === 'exists') reply = { type: 'io', id: m.id, info: await this.io.exists(m.path) };
      else {
        const got = m.op === 'read' ? await this.io.read(m.path) : await this.io.readRange(m.path, m.start!, m.end!);
        const bytes = got.slice();
        transfer.push(bytes.buffer);
        reply = { type: 'io', id: m.id, bytes };
      }
    } catch (e) {
      reply = { type: 'io', id: m.id, error: errorToJson(e) };
    }
    if (!this.closed) w.thread.postMessage(reply, transfer);
  }

  private fail(e: Error): void {
    if (this.closed) return;
    this.failure ??= e;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
