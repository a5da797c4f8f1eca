/**
 * Decoding a plan's data manifests on worker threads (issue 11, "Planning"): this thread reads
 * each manifest's bytes and pairs files with deletes; a worker inflates the Avro blocks and
 * decodes the live data files into columns (lib/iceberg/manifest-columns.ts), transferred back.
 * With no worker the same decode runs on this thread, so a plan is the same bytes either way.
 * Errors thrown in a worker arrive as the same class with the same message and path; a worker
 * that dies fails the plan. `close` terminates every worker.
 */
import { Worker } from 'node:worker_threads';
import { errorFromJson, IllegalStateError, InvalidArgumentError, type ErrorJson } from '../errors.js';
import { decodeManifestColumns, type ManifestColumns } from '../iceberg/manifest-columns.js';
import type { ManifestFile } from '../iceberg/manifest-list.js';
import type { DecodeColumns } from '../iceberg/scan-planning.js';
import { currentSchema, specsById, type TableMetadata } from '../iceberg/table-metadata.js';
import { vcpus, workersAsked } from './decode-pool.js';
import { workerStart } from './worker-start.js';

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
 * "Planning on decode workers"); on 1,000,000 files in 118-124 MiB it pays for itself.
 */
export const MIN_POOL_MANIFEST_BYTES = 32 * 1024 * 1024;

/** What a plan worker is started with. */
export interface PlanWorkerData {
  readonly module: string;
  readonly metadata: TableMetadata;
  /** DeleteFileIndex.pathKeys() of the scan. */
  readonly pathDeletes: readonly string[];
}

export type ToPlanWorker = { readonly id: number; readonly manifest: ManifestFile; readonly bytes: Uint8Array };
export type FromPlanWorker =
  | { readonly id: number; readonly columns: ManifestColumns }
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

interface PlanWorker {
  readonly thread: Worker;
  readonly pending: Map<number, { resolve: (c: ManifestColumns) => void; reject: (e: Error) => void }>;
}

export class ManifestDecodePool {
  private readonly workers: PlanWorker[] = [];
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
   * Starts `count` workers; with 0, `decode` runs on this thread. `pathDeletes`: the scan's
   * DeleteFileIndex.pathKeys(), to flag the files no path-scoped delete names.
   */
  static start(count: number, metadata: TableMetadata, pathDeletes: readonly string[]): ManifestDecodePool {
    if (!Number.isSafeInteger(count) || count < 0) throw new InvalidArgumentError(`plan decode workers must be a whole number >= 0, got ${count}`);
    const pool = new ManifestDecodePool(metadata, pathDeletes);
    const { url, module } = workerStart('plan-worker');
    const workerData: PlanWorkerData = { module, metadata, pathDeletes };
    for (let i = 0; i < count; i++) {
      const w: PlanWorker = { thread: new Worker(url, { workerData }), pending: new Map() };
      w.thread.on('message', (m: FromPlanWorker) => {
        const p = w.pending.get(m.id);
        w.pending.delete(m.id);
        if ('error' in m) p?.reject(errorFromJson(m.error));
        else p?.resolve(m.columns);
      });
      w.thread.on('error', (e) => pool.fail(e));
      w.thread.on('exit', (code) => pool.fail(new IllegalStateError(`a plan decode worker stopped (exit code ${code})`)));
      pool.workers.push(w);
    }
    return pool;
  }

  /** Workers started (0: decoding on this thread). */
  get size(): number {
    return this.workers.length;
  }

  readonly decode: DecodeColumns = (manifest, bytes) => {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new IllegalStateError('the plan decode pool is closed'));
    if (this.workers.length === 0) {
      return decodeManifestColumns(bytes, manifest, this.specs.get(manifest.partitionSpecId)!, this.schema, this.pathDeletes);
    }
    // The worker with the fewest manifests in hand.
    const w = this.workers.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const id = this.nextId++;
    // Only a buffer of its own is transferred (a Buffer may be a slice of a shared pool).
    const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
    return new Promise<ManifestColumns>((resolve, reject) => {
      w.pending.set(id, { resolve, reject });
      w.thread.postMessage({ id, manifest, bytes: own } satisfies ToPlanWorker, [own.buffer as ArrayBuffer]);
    });
  };

  /** Terminates every worker; safe to call more than once. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.thread.terminate().catch(() => undefined)));
  }

  private fail(e: Error): void {
    if (this.closed) return;
    this.failure ??= e;
    for (const w of this.workers) {
      for (const p of w.pending.values()) p.reject(e);
      w.pending.clear();
    }
  }
}
