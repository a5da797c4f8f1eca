/**
 * The rewrite's decode workers from a Lambda bundle: the rewrite function and its worker bundled
 * as the construct and `npm run build` bundle them (ESBUILD_OPTIONS, WORKER_BUNDLES), copied
 * alone into an empty folder, and run in a bare `node` on a table whose property asks for two
 * decode workers; and on one it merges, where the bundle has node:zlib's ZSTD. The workers start from `decode-worker.js` beside `index.js` and the result
 * equals the rewrite's on this thread. The plan function likewise, with `plan-worker.js`.
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { copyFileSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { ESBUILD_OPTIONS, WASM_FILES, WORKER_BUNDLES } from '../../cdk/iceberg-maintenance.js';
import { DECODE_WORKERS_PROPERTY } from '../../lib/compaction/decode-pool.js';
import type { GroupResult, Plan } from '../../lib/compaction/messages.js';
import { PLAN_DECODE_WORKERS_PROPERTY } from '../../lib/compaction/plan-pool.js';
import { planCompaction } from '../../lib/compaction/planner.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { zstdCodec } from '../../lib/parquet/compression-codec.js';
import { planHeaderOf, rewriteRequestOf } from '../../lib/pipeline/rewrite-request.js';
import { createNewTable } from '../../lib/table/operations.js';
import { REPO_ROOT, tempDir } from '../support/fixtures.js';
import { decodedByWorkers, fillSmallTable, SMALL_TABLE_SPEC } from '../support/small-table.js';

const io = new LocalFileIO();
const require = createRequire(import.meta.url);

/** A step's function and its worker bundled as the construct bundles them, alone in a new folder (the rewrite's with its wasm). */
function bundle(step: 'rewrite' | 'plan', ...worker: string[]): string {
  const dir = join(tempDir(`packice-${step}-worker-bundle-`), 'function');
  const common = { ...ESBUILD_OPTIONS, bundle: true, logLevel: 'warning', sourcemap: false } as const;
  buildSync({ ...common, entryPoints: [join(REPO_ROOT, 'functions', `${step}.ts`)], outfile: join(dir, 'index.js') });
  const workers = WORKER_BUNDLES.filter((w) => w.step === step);
  expect(workers.map((w) => w.fileName)).toEqual(worker);
  for (const w of workers) buildSync({ ...common, entryPoints: [join(REPO_ROOT, w.entry)], outfile: join(dir, w.fileName) });
  if (step === 'rewrite') for (const w of WASM_FILES) copyFileSync(require.resolve(w.module), join(dir, w.fileName));
  return dir;
}

describe('the rewrite bundle', () => {
  it('merges small row groups page by page where it has a native ZSTD (node:zlib: Node 22, the Lambda\'s), on merge workers started from merge-worker.js, as this thread does', async () => {
    const dir = bundle('rewrite', 'decode-worker.js', 'merge-worker.js', 'rewrite-worker.js');
    const location = join(tempDir(), 'bundle-merge');
    const t = await fillSmallTable(await createNewTable(io, location, { formatVersion: 2, ...SMALL_TABLE_SPEC, properties: { [DECODE_WORKERS_PROPERTY]: '2' } }));
    const plan = await planCompaction(io, t.metadata, { table: { location }, policy: { minInputFiles: 2 } });
    const events = plan.groups.map((g) => JSON.parse(JSON.stringify(rewriteRequestOf(plan, g.id))) as unknown);
    const zstd = zstdCodec('zlib') ? 'zlib' : 'wasm';
    const { started, results } = JSON.parse(runHandler(dir, events, { PACKICE_ZSTD: zstd })) as { started: string[]; results: GroupResult[] };
    // Without node:zlib the bundle has parquet-wasm's ZSTD only, which the merge does not use: every input decoded.
    for (const r of results) expect(r.inputPaths?.merged ?? 0, zstd).toSatisfy((n: number) => (zstd === 'zlib' ? n > 0 : n === 0));
    // Merging: two workers, kept from the first group for the next (as a Lambda container keeps them); else two decode workers per group.
    expect(plan.groups.length).toBe(2);
    expect(started).toEqual(zstd === 'zlib' ? ['merge-worker.js', 'merge-worker.js'] : Array.from({ length: 4 }, () => 'decode-worker.js'));
    const previous = process.env.PACKICE_ZSTD;
    process.env.PACKICE_ZSTD = zstd;
    try {
      for (const [i, g] of plan.groups.entries()) {
        const here = await rewriteGroup(io, t.metadata, plan, g, { decodeWorkers: 0 });
        expect(results[i].inputPaths).toEqual(here.inputPaths);
        expect(results[i].checksums).toEqual(here.checksums);
        expect(results[i].outputs.map((o, k) => readFileSync(o.filePath).equals(readFileSync(here.outputs[k].filePath)))).toEqual(here.outputs.map(() => true));
      }
    } finally {
      if (previous === undefined) delete process.env.PACKICE_ZSTD;
      else process.env.PACKICE_ZSTD = previous;
    }
  });

  it('starts its decode workers from decode-worker.js beside index.js, and rewrites as this thread does', async () => {
    const dir = bundle('rewrite', 'decode-worker.js', 'merge-worker.js', 'rewrite-worker.js');

    const location = join(tempDir(), 'bundle-workers');
    // Every input decoded: where the bundle has a native ZSTD (node:zlib on Node 22, the Lambda's) its small
    // row groups would be merged page by page instead, and no worker would start.
    const t = await fillSmallTable(await createNewTable(io, location, { formatVersion: 2, ...SMALL_TABLE_SPEC, properties: decodedByWorkers(2) }));
    const plan = await planCompaction(io, t.metadata, { table: { location }, policy: { minInputFiles: 2 } });
    expect(plan.groups.length).toBe(2);
    const events = plan.groups.map((g) => JSON.parse(JSON.stringify(rewriteRequestOf(plan, g.id))) as unknown);

    // The bundle, copied out alone, has node:zlib's zstd (Node >= 22.15, the Lambda's) or else parquet-wasm's, never zstd-napi
    // (no node_modules beside it): this thread writes with the same one, so the bytes can be compared.
    const zstd = zstdCodec('zlib') ? 'zlib' : 'wasm';
    const last = runHandler(dir, events, { PACKICE_ZSTD: zstd });
    const { started, results } = JSON.parse(last) as { started: string[]; results: GroupResult[] };
    // Two workers per group, each from the worker bundle.
    expect(started).toEqual(Array.from({ length: 4 }, () => 'decode-worker.js'));

    const previous = process.env.PACKICE_ZSTD;
    process.env.PACKICE_ZSTD = zstd;
    try {
      for (const [i, g] of plan.groups.entries()) {
        const here = await rewriteGroup(io, t.metadata, plan, g, { decodeWorkers: 0 });
        expect(results[i].checksums).toEqual(here.checksums);
        expect(results[i].outputs.map((o) => readFileSync(o.filePath).equals(readFileSync(here.outputs[0].filePath)))).toEqual([true]);
      }
    } finally {
      if (previous === undefined) delete process.env.PACKICE_ZSTD;
      else process.env.PACKICE_ZSTD = previous;
    }
  });
});

describe('the rewrite bundle, given a batch', () => {
  it('rewrites the batch\'s groups side by side on threads started from rewrite-worker.js beside index.js and kept for the next batch, as this thread does', async () => {
    const dir = bundle('rewrite', 'decode-worker.js', 'merge-worker.js', 'rewrite-worker.js');
    const location = join(tempDir(), 'bundle-batch');
    const t = await fillSmallTable(await createNewTable(io, location, { formatVersion: 2, ...SMALL_TABLE_SPEC }));
    const plan = await planCompaction(io, t.metadata, { table: { location }, policy: { minInputFiles: 2 } });
    expect(plan.groups.length).toBe(2);
    const batch = JSON.parse(JSON.stringify({ BatchInput: planHeaderOf(plan), Items: plan.groups })) as unknown;

    const zstd = zstdCodec('zlib') ? 'zlib' : 'wasm';
    const { started, results } = JSON.parse(runHandler(dir, [batch, batch], { PACKICE_ZSTD: zstd, AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '10240' })) as {
      started: string[];
      results: GroupResult[][];
    };
    // One thread per group where this machine has the vCPUs (a 10,240 MB Lambda has six), kept for the
    // next invocation as the container keeps them; else one after another on this thread.
    expect(started).toEqual(availableParallelism() >= 2 ? ['rewrite-worker.js', 'rewrite-worker.js'] : []);
    const [outcomes, again] = results;
    expect(again.map((r) => r.checksums)).toEqual(outcomes.map((r) => r.checksums));
    expect(outcomes.map((r) => r.groupId)).toEqual(plan.groups.map((g) => g.id));
    const previous = process.env.PACKICE_ZSTD;
    process.env.PACKICE_ZSTD = zstd;
    try {
      for (const [i, g] of plan.groups.entries()) {
        const here = await rewriteGroup(io, t.metadata, plan, g, { decodeWorkers: 0 });
        expect(outcomes[i].checksums).toEqual(here.checksums);
        expect(outcomes[i].outputs.map((o, k) => readFileSync(o.filePath).equals(readFileSync(here.outputs[k].filePath)))).toEqual(here.outputs.map(() => true));
      }
    } finally {
      if (previous === undefined) delete process.env.PACKICE_ZSTD;
      else process.env.PACKICE_ZSTD = previous;
    }
  });
});

describe('the plan bundle', () => {
  it('starts its decode workers from plan-worker.js beside index.js, and plans as this thread does', async () => {
    const dir = bundle('plan', 'plan-worker.js');

    const location = join(tempDir(), 'bundle-plan-workers');
    const t = await fillSmallTable(await createNewTable(io, location, { formatVersion: 2, ...SMALL_TABLE_SPEC, properties: { [PLAN_DECODE_WORKERS_PROPERTY]: '2' } }));
    const request = { table: { location }, policy: { minInputFiles: 2 } };
    const { started, results } = JSON.parse(runHandler(dir, [request], {})) as { started: string[]; results: Plan[] };
    const plan = results[0];
    expect(started).toEqual(['plan-worker.js', 'plan-worker.js']);
    const here = await planCompaction(io, t.metadata, request, { nowMs: plan.createdAtMs, decodeWorkers: 0 });
    expect(plan.groups.length).toBeGreaterThan(0);
    expect(JSON.stringify(plan)).toBe(JSON.stringify(here));
  });
});

/**
 * Runs the bundle's handler in `dir` in a bare `node` on each event, the worker files it starts
 * recorded; returns its last line, `{ started, results }`.
 */
function runHandler(dir: string, events: readonly unknown[], env: Record<string, string>): string {
  const script = `
    const threads = require('node:worker_threads');
    const started = [];
    const Worker = threads.Worker;
    threads.Worker = class extends Worker {
      constructor(file, options) {
        started.push(require('path').basename(String(file)));
        super(file, options);
      }
    };
    const { handler } = require('./index.js');
    const events = JSON.parse(require('fs').readFileSync(0, 'utf8'));
    (async () => {
      const results = [];
      for (const e of events) results.push(await handler(e, { awsRequestId: 'bundle-test' }));
      require('fs').writeFileSync(1, '\\n' + JSON.stringify({ started, results }) + '\\n');
    })().catch((e) => { console.error(e); process.exit(1); });`;
  const run = spawnSync(process.execPath, ['-e', script], {
    cwd: dir,
    input: JSON.stringify(events),
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1', ...env },
    timeout: 120_000,
  });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.trim().split('\n').pop()!;
}
