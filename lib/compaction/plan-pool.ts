/**
 * Decoding a plan's data manifests on worker threads (issue 11, "Planning"): this thread reads
 * each manifest's bytes and pairs files with deletes; a worker inflates the Avro blocks and
 * decodes the live data files into columns (lib/iceberg/manifest-columns.ts), transferred back.
 * With no worker the same decode runs on this thread, so a plan is the same bytes either way.
 * Errors thrown in a worker arrive as the same class with the same message and path; a worker
 * that dies fails the plan. `close` gives the workers back for the next plan in the process
 * (terminated after a failure).
 */
import { Worker } from 'node:worker_threads';
import { errorFromJson, IllegalStateError, InvalidArgumentError, type ErrorJson } from '../errors.js';
import { decodeManifestColumns, type ManifestColumns, type PackedColumns, unpackColumns } from '../iceberg/manifest-columns.js';
import type { ManifestFile } from '../iceberg/manifest-list.js';
import type { DecodeColumns } from '../iceberg/scan-planning.js';
import { currentSchema, specsById, type TableMetadata } from '../iceberg/table-metadata.js';
import { workersAsked } from './decode-pool.js';
import { vcpus } from './vcpus.js';
import { prestartThreads, terminateWhenIdle, workerStart } from './worker-start.js';

/** Table property: worker threads decoding a plan's data manifests (0: on the planner's own thread). */
export const PLAN_DECODE_WORKERS_PROPERTY = 'packice.plan.decode-workers';
/**
 * At most this many by default. One per vCPU from 2 vCPUs: the planner's own thread (reading,
 * pairing deletes, keeping candidates) is busy a third of a 1M-file scan and waits on the decode
 * the rest (BENCHMARKS.md, "Planning at scale, session 21"); Java plans on a pool of one thread per core.
 */
export const MAX_DEFAULT_PLAN_WORKERS = 5;
/**
 * Below this many bytes of data manifests, the default is no pool: starting a worker (its module
 * graph loaded again) cost more than it saved on 100,000 files in 12.5-19 MiB (BENCHMARKS.md,
 * "Planning on decode workers"), and with workers kept across plans, warm ones still spent more
 * CPU than they saved there ("Planning at scale, session 22"); on 1,000,000 files in 118-124 MiB
 * they pay for themselves.
 */
export const MIN_POOL_MANIFEST_BYTES = 32 * 1024 * 1024;

/** What a plan worker is started with. */
export interface PlanWorkerData {
  readonly module: string;
}

/** A plan's context (sent when a pool takes the thread), then that plan's manifests. */
export type ToPlanWorker =
  | { readonly plan: { readonly metadata: TableMetadata; readonly pathDeletes: readonly string[] } }
  | { readonly id: number; readonly manifest: ManifestFile; readonly bytes: Uint8Array };
export type FromPlanWorker =
  | { readonly ready: true }
  | { readonly id: number; readonly columns: PackedColumns }
  | { readonly id: number; readonly error: ErrorJson };

/**
 * Plan decode workers: `explicit` (an option, else the table property) when given, else one per
 * vCPU (on Lambda: its memory ÷ 1,769 MB) from 2 vCPUs, none on 1, at most 5, none for less than
 * 32 MiB of data manifests. Never more than the manifests.
 */
export function planDecodeWorkerCount(explicit: number | undefined, metadata: TableMetadata, manifests: number, manifestBytes: number): number {
  const asked = workersAsked(explicit, metadata, PLAN_DECODE_WORKERS_PROPERTY);
  if (asked !== undefined) return Math.min(asked, manifests);
  if (manifestBytes < MIN_POOL_MANIFEST_BYTES) return 0;
  const cpus = vcpus();
  return cpus < 2 ? 0 : Math.min(cpus, MAX_DEFAULT_PLAN_WORKERS, manifests);
}

type Pending = { resolve: (c: ManifestColumns) => void; reject: (e: Error) => void };

/**
 * A started worker thread, kept across plans (as Java's planFiles keeps its worker pool): a
 * plan's pool takes it and gives it back when done, so a later plan in the process pays neither
 * the thread's start (its module graph loaded again) nor its JIT warm-up. Idle, it is unref'd:
 * it never keeps the process alive.
 */
class PlanThread {
  readonly thread: Worker;
  readonly pending = new Map<number, Pending>();
  /** Manifests sent and not yet answered (a failed plan forgets `pending`, the thread still decodes them). */
  inHand = 0;
  /** Its module loaded: it takes manifests from now on. */
  ready = false;
  /** Resolves when ready, rejects if it dies first. */
  readonly started: Promise<void>;
  private settle: { resolve: () => void; reject: (e: Error) => void } | undefined;
  /** The pool using it; undefined while idle. */
  owner: ManifestDecodePool | undefined;
  dead = false;

  constructor() {
    this.started = new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    this.started.catch(() => undefined);
    const { url, module } = workerStart('plan-worker');
    this.thread = new Worker(url, { workerData: { module } satisfies PlanWorkerData });
    this.thread.on('message', (m: FromPlanWorker) => {
      if ('ready' in m) {
        this.ready = true;
        this.settle?.resolve();
        return;
      }
      this.inHand--;
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if ('error' in m) p?.reject(errorFromJson(m.error));
      else p?.resolve(unpackColumns(m.columns));
    });
    this.thread.on('error', (e) => this.die(e));
    this.thread.on('exit', (code) => this.die(new IllegalStateError(`a plan decode worker stopped (exit code ${code})`)));
  }

  private die(e: Error): void {
    this.dead = true;
    this.settle?.reject(e);
    const i = idle.indexOf(this);
    if (i >= 0) idle.splice(i, 1);
    this.owner?.fail(e);
  }
}

/** Threads no plan is using, at most MAX_DEFAULT_PLAN_WORKERS. */
const idle: PlanThread[] = [];

export class ManifestDecodePool {
  private readonly workers: PlanThread[] = [];
  private nextId = 0;
  private failure: Error | undefined;
  private closed = false;

  private readonly specs: ReturnType<typeof specsById>;
  private readonly schema: ReturnType<typeof currentSchema>;
  private readonly pathDeletes: ReadonlySet<string>;

  private constructor(metadata: TableMetadata, pathDeletes: readonly string[]) {
    this.specs = specsById(metadata);
    this.schema = currentSchema(metadata);
    this.pathDeletes = new Set(pathDeletes);
  }

  /**
   * Takes `count` worker threads (idle ones first, else started); with 0, `decode` runs on this
   * thread. `pathDeletes`: the scan's DeleteFileIndex.pathKeys(), to flag the files no
   * path-scoped delete names.
   */
  static start(count: number, metadata: TableMetadata, pathDeletes: readonly string[]): ManifestDecodePool {
    if (!Number.isSafeInteger(count) || count < 0) throw new InvalidArgumentError(`plan decode workers must be a whole number >= 0, got ${count}`);
    const pool = new ManifestDecodePool(metadata, pathDeletes);
    for (let i = 0; i < count; i++) {
      const w = idle.pop() ?? new PlanThread();
      w.owner = pool;
      w.thread.ref();
      w.thread.postMessage({ plan: { metadata, pathDeletes } } satisfies ToPlanWorker);
      pool.workers.push(w);
    }
    return pool;
  }

  /**
   * Starts idle worker threads until `count` are kept, and waits until they are ready: a process
   * that will plan (or a test of the workers' decode) pays their start before its first plan.
   */
  static prestart(count: number): Promise<void> {
    return prestartThreads(idle, count, MAX_DEFAULT_PLAN_WORKERS, () => new PlanThread());
  }

  /** Idle worker threads kept from earlier plans. */
  static get idleThreads(): number {
    return idle.length;
  }

  /** Workers taken (0: decoding on this thread). */
  get size(): number {
    return this.workers.length;
  }

  readonly decode: DecodeColumns = (manifest, bytes) => {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new IllegalStateError('the plan decode pool is closed'));
    // The ready worker with the fewest manifests in hand; none ready yet (threads still loading
    // their modules): this thread decodes meanwhile rather than wait.
    let w: PlanThread | undefined;
    for (const x of this.workers) if (x.ready && (w === undefined || x.pending.size < w.pending.size)) w = x;
    if (w === undefined) {
      return decodeManifestColumns(bytes, manifest, this.specs.get(manifest.partitionSpecId)!, this.schema, this.pathDeletes);
    }
    const id = this.nextId++;
    // Only a buffer of its own is transferred (a Buffer may be a slice of a shared pool).
    const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
    const thread = w;
    return new Promise<ManifestColumns>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.inHand++;
      thread.thread.postMessage({ id, manifest, bytes: own } satisfies ToPlanWorker, [own.buffer as ArrayBuffer]);
    });
  };

  /**
   * Gives the workers back for the next plan (a worker with a manifest still in hand, or after a
   * failure, is terminated instead); safe to call more than once.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const stop: PlanThread[] = [];
    for (const w of this.workers) {
      w.owner = undefined;
      if (this.failure === undefined && !w.dead && w.pending.size === 0 && idle.length < MAX_DEFAULT_PLAN_WORKERS) {
        w.thread.unref();
        idle.push(w);
      } else {
        stop.push(w);
      }
    }
    await Promise.all(stop.map((w) => terminateWhenIdle(w.thread, () => !w.dead && w.inHand > 0)));
  }

  /** Fails the plan: every manifest in hand rejects with `e`. */
  fail(e: Error): void {
    if (this.closed) return;
    this.failure ??= e;
    for (const w of this.workers) {
      for (const p of w.pending.values()) p.reject(e);
      w.pending.clear();
    }
  }
}
