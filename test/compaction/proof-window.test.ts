/**
 * The decode path's proof on S3 (moto): each decoded output's row groups are re-read several at
 * once through a read window (lib/parquet/reader.ts ReadOptions.window) within
 * packice.rewrite.read-ahead-bytes, one GET each, the proof the same as one at a time; a failed
 * ranged GET fails the group naming the output, and leaves nothing behind.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { READ_AHEAD_BYTES_PROPERTY } from '../../lib/compaction/chunk-copy.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { IoError } from '../../lib/errors.js';
import type { TableMetadata } from '../../lib/iceberg/table-metadata.js';
import type { FileIO } from '../../lib/io/file-io.js';
import { ForwardingFileIO } from '../../lib/io/forwarding.js';
import { parseS3Location } from '../../lib/io/index.js';
import { S3FileIO } from '../../lib/io/s3.js';
import { S3RequestCounter } from '../../lib/io/s3-requests.js';
import { readFooter } from '../../lib/parquet/footer.js';
import { appendRows, createNewTable, deleteRows } from '../../lib/table/operations.js';
import { DECODE_ONLY, planAll } from '../support/compaction.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { failOnUnhandledRejections } from '../support/unhandled.js';

const SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'name', required: false, type: { type: 'string' as const } },
  ],
};

/**
 * Watches the proof's re-read of the outputs (reads of files this rewrite wrote, after each one's
 * footer read): how many were in flight at once and their bytes. Each is held back a little so
 * that reads started together overlap; the `fail`-th one fails.
 */
class ProofProbe extends ForwardingFileIO {
  now = 0;
  bytes = 0;
  max = 0;
  maxBytes = 0;
  readonly started: string[] = [];
  private readonly written = new Set<string>();
  private readonly footers = new Set<string>();

  constructor(inner: FileIO, private readonly fail?: number) {
    super(inner);
  }

  override write(path: string, data: Uint8Array | AsyncIterable<Uint8Array>): Promise<void> {
    this.written.add(path);
    return super.write(path, data);
  }

  override async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    if (!this.written.has(path) || !this.footers.has(path)) {
      if (this.written.has(path)) this.footers.add(path);
      return this.inner.readRange(path, start, end);
    }
    const k = this.started.push(path) - 1;
    this.now++;
    this.bytes += end - start;
    this.max = Math.max(this.max, this.now);
    this.maxBytes = Math.max(this.maxBytes, this.bytes);
    try {
      await new Promise((r) => setTimeout(r, 20));
      if (k === this.fail) throw new Error('socket hang up');
      return await this.inner.readRange(path, start, end);
    } finally {
      this.now--;
      this.bytes -= end - start;
    }
  }
}

function withBudget(m: TableMetadata, bytes: number): TableMetadata {
  return { ...m, properties: { ...m.properties, [READ_AHEAD_BYTES_PROPERTY]: String(bytes) } };
}

async function keys(s3: FileIO, location: string): Promise<string[]> {
  const out: string[] = [];
  for await (const f of s3.list(location)) out.push(f.path);
  return out.sort();
}

describe('the decode path proves its outputs with several row groups in flight (moto)', () => {
  let s3: S3FileIO;
  let location: string;
  let t: Table;
  failOnUnhandledRejections();

  beforeAll(async () => {
    location = `s3://${await freshBucket()}/proof-window`;
    s3 = new S3FileIO({ endpoint: testS3Endpoint() });
    // Small row groups, so that the one output has many.
    t = await createNewTable(s3, location, { formatVersion: 2, schema: SCHEMA, properties: { 'write.parquet.row-group-size-bytes': '65536', ...DECODE_ONLY } });
    for (let f = 0; f < 4; f++) {
      t = await appendRows(t, Array.from({ length: 5_000 }, (_, i) => ({ id: BigInt(f * 5_000 + i), name: randomBytes(24).toString('base64') })));
    }
    // A position delete on each input: all of them decoded.
    t = (await deleteRows(t, (r) => (r.id as bigint) % 1000n === 7n)).table;
  });

  it('re-reads an output row groups several at once, one GET each, within the budget; the same proof as one at a time', async () => {
    const plan = await planAll(t.io, t.metadata);
    const group = plan.groups[0];
    const counter = new S3RequestCounter(s3.client, { log: true });
    const probe = new ProofProbe(s3);
    const r = await rewriteGroup(probe, t.metadata, plan, group, { decodeWorkers: 0 });
    expect(r.checksums.hashOut).toBe(r.checksums.hashIn);
    expect(r.checksums.rowsOut).toBe(String(20_000 - 20));
    expect(r.outputs).toHaveLength(1);
    const output = r.outputs[0].filePath;
    // The S3 client sent one footer GET (64 KiB: the last row groups come with it), then one GET per
    // other row group, nothing twice.
    const gets = counter.requests().filter((q) => q.command === 'GetObjectCommand' && q.key === parseS3Location(output).key);
    counter.reset();
    const rowGroups = (await readFooter(s3.newInputFile(output))).footer.rowGroups.length;
    expect(gets.length - 1).toBe(probe.started.length);
    expect(probe.started.length).toBeGreaterThan(4);
    expect(probe.started.length).toBeLessThanOrEqual(rowGroups);
    expect(gets.reduce((n, q) => n + q.bytes, 0)).toBeLessThanOrEqual(Number(r.outputs[0].fileSizeInBytes));
    // The default window: up to 16 reads at once (these row groups are far under its 64 MiB).
    expect(probe.max).toBe(Math.min(16, probe.started.length));

    // Room for three row groups: never more bytes in flight than that; none (0): one at a time.
    const bound = 3 * Math.ceil(probe.maxBytes / probe.max) + 1;
    const tight = new ProofProbe(s3);
    const rt = await rewriteGroup(tight, withBudget(t.metadata, bound), plan, group, { decodeWorkers: 0 });
    expect(tight.max).toBeGreaterThan(1);
    expect(tight.maxBytes).toBeLessThanOrEqual(bound);
    const one = new ProofProbe(s3);
    const r1 = await rewriteGroup(one, withBudget(t.metadata, 0), plan, group, { decodeWorkers: 0 });
    expect(one.max).toBe(1);
    for (const x of [rt, r1]) expect({ ...x.checksums }).toEqual({ ...r.checksums });
    await s3.deleteMany([r, rt, r1].flatMap((x) => [...x.outputs.map((o) => o.filePath), ...(x.compactionMap ? [x.compactionMap] : [])]));
  });

  it('a failed ranged GET of the proof fails the group naming the output, and leaves nothing behind', async () => {
    const plan = await planAll(t.io, t.metadata);
    const files = await keys(s3, location);
    const probe = new ProofProbe(s3, 2);
    const err = await rewriteGroup(probe, t.metadata, plan, plan.groups[0], { decodeWorkers: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IoError);
    const failed = probe.started[2];
    expect((err as IoError).path).toBe(failed);
    expect((err as Error).message).toMatch(new RegExp(`^${failed.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: reading row group \\d+ failed: socket hang up$`));
    // Reads still in flight finish into nothing; the outputs are gone, nothing was committed.
    await new Promise((r) => setTimeout(r, 100));
    expect(await keys(s3, location)).toEqual(files);
    expect((await loadTable(location, { s3Endpoint: testS3Endpoint() })).metadata.currentSnapshotId).toBe(t.metadata.currentSnapshotId);
  });
});
