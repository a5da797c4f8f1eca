/**
 * A decode worker of decode-pool.ts: takes inputs of a group one at a time, reads each with its
 * deletes applied (readTaskBatches, as the rewriter's own thread does), hashes the live rows for
 * the proof, and sends the batches with their buffers transferred, never more than the window
 * ahead of what the rewriter has taken. Its reads go to the rewriter's thread (PortFileIO).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { errorFromJson, errorToJson, IllegalStateError } from '../errors.js';
import type { FileInfo, FileIO, InputFile } from '../io/file-io.js';
import { rangeInputFile } from '../io/input-file.js';
import { currentSchema } from '../iceberg/table-metadata.js';
import { packBatch } from '../parquet/batch-transfer.js';
import { DeleteFileCache } from '../table/delete-filter.js';
import { readTaskBatches, tableNameMapping } from '../table/scan.js';
import { proofBatchHasher, proofHasher, RowSetChecksum } from './checksum.js';
import type { DecodeWorkerData, FromDecodeWorker, Preload, ToDecodeWorker } from './decode-pool.js';
import type { GroupInput } from './messages.js';
import { scanTaskOf } from './rewriter.js';

const port = parentPort!;
const { metadata, mode, lineage, batchSize, windowBytes } = workerData as DecodeWorkerData;

/** Reads through the rewriter's thread; a decode worker never writes. */
class PortFileIO implements FileIO {
  private nextId = 0;
  readonly pending = new Map<number, { resolve: (m: Extract<ToDecodeWorker, { type: 'io' }>) => void }>();
  /** Bytes the rewriter sent with each task, by path. */
  readonly preloaded = new Map<string, Preload>();

  private ask(op: 'read' | 'readRange' | 'stat' | 'exists', path: string, start?: number, end?: number): Promise<Extract<ToDecodeWorker, { type: 'io' }>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, {
        resolve: (m) => (m.error ? reject(errorFromJson(m.error)) : resolve(m)),
      });
      port.postMessage({ type: 'io', id, op, path, ...(start !== undefined ? { start, end } : {}) } satisfies FromDecodeWorker);
    });
  }

  answer(m: Extract<ToDecodeWorker, { type: 'io' }>): void {
    const p = this.pending.get(m.id);
    this.pending.delete(m.id);
    p?.resolve(m);
  }

  async read(path: string): Promise<Uint8Array> {
    return (await this.ask('read', path)).bytes!;
  }

  async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    const p = this.preloaded.get(path);
    // Served when the bytes hold the range; a short preload (a cut-short file) is read again for its error.
    if (p && start >= p.start && end - p.start <= p.bytes.length) return p.bytes.subarray(start - p.start, end - p.start);
    return (await this.ask('readRange', path, start, end)).bytes!;
  }

  newInputFile(path: string, knownLength?: number): InputFile {
    return rangeInputFile(this, path, knownLength);
  }

  async stat(path: string): Promise<FileInfo> {
    return (await this.ask('stat', path)).info as FileInfo;
  }

  async exists(path: string): Promise<boolean> {
    return (await this.ask('exists', path)).info as boolean;
  }

  write(path: string): Promise<void> {
    return Promise.reject(new IllegalStateError('a decode worker does not write', { path }));
  }

  createIfAbsent(path: string): Promise<void> {
    return this.write(path);
  }

  list(prefix: string): AsyncIterable<FileInfo> {
    throw new IllegalStateError('a decode worker does not list', { path: prefix });
  }

  deleteMany(): Promise<void> {
    return Promise.reject(new IllegalStateError('a decode worker does not delete'));
  }
}

const io = new PortFileIO();
const schema = currentSchema(metadata);
const mapping = tableNameMapping(metadata);
const deleteCache = new DeleteFileCache();
const hashBatch = proofBatchHasher(schema, lineage);
const rowHash = proofHasher(schema, lineage);

/** Bytes sent and not yet taken by the rewriter. */
let unacked = 0;
let onAck: (() => void) | undefined;
const tasks: { seq: number; input: GroupInput; preload?: Preload }[] = [];
let running = false;

async function decode(seq: number, input: GroupInput): Promise<void> {
  const task = scanTaskOf(metadata, input, mode);
  // Each batch goes once the next exists (or the input ends), marked when it is the last.
  let held: { message: Extract<FromDecodeWorker, { type: 'batch' }>; bytes: number } | undefined;
  const send = async (last: boolean): Promise<void> => {
    if (!held) return;
    const { message, bytes } = held;
    held = undefined;
    while (unacked > 0 && unacked + bytes > windowBytes) await new Promise<void>((resolve) => (onAck = resolve));
    unacked += bytes;
    port.postMessage({ ...message, last }, [message.batch.buffer]);
  };
  for await (const live of readTaskBatches(io, metadata, task, schema, {
    ...(mapping ? { mapping } : {}),
    deleteCache,
    rowLineage: lineage,
    batchSize,
  })) {
    const sum = new RowSetChecksum(rowHash);
    hashBatch(live.batch, sum);
    const packed = packBatch(live.batch, [live.runs.starts, live.runs.lengths]);
    await send(false);
    const s = sum.sum;
    held = {
      message: {
        type: 'batch', seq, batch: packed, runs: { count: live.runs.count, rows: live.runs.rows },
        hash: [Number(s >> 32n), Number(s & 0xffffffffn), sum.count], last: false,
      },
      bytes: packed.buffer.byteLength,
    };
  }
  if (held) await send(true);
  else port.postMessage({ type: 'done', seq } satisfies FromDecodeWorker);
}

async function run(): Promise<void> {
  if (running) return;
  running = true;
  for (let t = tasks.shift(); t !== undefined; t = tasks.shift()) {
    if (t.preload) io.preloaded.set(t.input.file.filePath, t.preload);
    try {
      await decode(t.seq, t.input);
    } catch (e) {
      port.postMessage({ type: 'error', seq: t.seq, error: errorToJson(e) } satisfies FromDecodeWorker);
    } finally {
      io.preloaded.delete(t.input.file.filePath);
    }
  }
  running = false;
}

port.on('message', (m: ToDecodeWorker) => {
  if (m.type === 'io') io.answer(m);
  else if (m.type === 'ack') {
    unacked -= m.bytes;
    const wake = onAck;
    onAck = undefined;
    wake?.();
  } else {
    tasks.push({ seq: m.seq, input: m.input, ...(m.preload ? { preload: m.preload } : {}) });
    void run();
  }
});
