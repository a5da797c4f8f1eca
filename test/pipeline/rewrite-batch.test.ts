/**
 * A rewrite function's batch (lib/pipeline/rewrite-step.ts rewriteBatchStep): its groups side by
 * side on threads or one after another, an outcome per group in the batch's order, a failed group
 * failing alone, and an IoError retried for its group only.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { GroupResult, Plan } from '../../lib/compaction/messages.js';
import { planCompaction } from '../../lib/compaction/planner.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { LocalFileIO } from '../../lib/io/local.js';
import type { FailedGroup, RewriteOutcome } from '../../lib/pipeline/group-outcome.js';
import { planStep } from '../../lib/pipeline/plan-step.js';
import { planHeaderOf, type RewriteBatch } from '../../lib/pipeline/rewrite-request.js';
import { createNewTable } from '../../lib/table/operations.js';
import { rewriteBatchStep } from '../../lib/pipeline/rewrite-step.js';
import { tempDir } from '../support/fixtures.js';
import { decodedByWorkers, fillSmallTable, SMALL_TABLE_SPEC, smallTable } from '../support/small-table.js';

const POLICY = { minInputFiles: 2 } as const;
/** What every outcome of a batch of the small table's two groups carries. */
const BATCH_OF_TWO = { groups: 2, durationMs: expect.any(Number) as number };

async function plannedBatch(): Promise<{ plan: Plan; batch: RewriteBatch }> {
  const location = `${tempDir('packice-batch-')}/table`;
  await smallTable(new LocalFileIO(), location, 2);
  const plan = await planStep({ table: { location }, policy: POLICY });
  return { plan, batch: { BatchInput: planHeaderOf(plan), Items: plan.groups } };
}

const localPath = (p: string): string => (p.startsWith('file:') ? fileURLToPath(p) : p);
const results = (outcomes: readonly RewriteOutcome[]): GroupResult[] => outcomes.filter((o): o is GroupResult => !('error' in o));

describe('rewriteBatchStep', () => {
  it('rewrites a batch on two threads as it does on one: the same outcomes in the batch\'s order', async () => {
    // Prepare
    const { plan, batch } = await plannedBatch();
    expect(plan.groups.length).toBeGreaterThanOrEqual(2);

    // Act
    const threads = await rewriteBatchStep(batch, { vcpus: 2 });
    const inline = await rewriteBatchStep(batch, { vcpus: 1 });

    // Assess
    for (const outcomes of [threads, inline]) {
      expect(outcomes.map((o) => o.groupId)).toEqual(plan.groups.map((g) => g.id));
      expect(results(outcomes)).toHaveLength(plan.groups.length);
    }
    expect(results(threads).map((r) => r.checksums)).toEqual(results(inline).map((r) => r.checksums));
  });

  it('fails only the group whose input is corrupt; the others stand', async () => {
    // Prepare
    const { plan, batch } = await plannedBatch();
    const victim = plan.groups[1];
    writeFileSync(localPath(victim.inputs[0].file.filePath), Buffer.alloc(200, 0x2a));

    // Act
    const outcomes = await rewriteBatchStep(batch, { vcpus: 2 });

    // Assess
    expect(outcomes.map((o) => o.groupId)).toEqual(plan.groups.map((g) => g.id));
    const failed = outcomes.filter((o): o is FailedGroup => 'error' in o);
    expect(failed).toEqual([{ groupId: victim.id, error: { Error: 'InvalidFileError', Cause: expect.stringContaining(victim.inputs[0].file.filePath.replace(/^file:\/\//, '')) }, batch: BATCH_OF_TWO }]);
    expect(results(outcomes)).toHaveLength(plan.groups.length - 1);
  });

  it.each([1, 2])('rewrites again, after a wait, a group that failed with an IoError, and only that group (%i vCPUs)', async (vcpus) => {
    // Prepare: one input of the second group is a directory while the first attempt runs (IoError: "it is a directory").
    const { plan, batch } = await plannedBatch();
    const victim = plan.groups[1];
    const path = localPath(victim.inputs[0].file.filePath);
    const bytes = readFileSync(path);
    renameSync(path, `${path}.away`);
    mkdirSync(path);
    const retried: (readonly string[])[] = [];

    // Act: before the retry, the file is put back.
    const outcomes = await rewriteBatchStep(batch, {
      vcpus,
      retryWaitMs: 1,
      onRetry: (ids) => {
        retried.push(ids);
        rmSync(path, { recursive: true });
        writeFileSync(path, bytes);
      },
    });

    // Assess
    expect(retried).toEqual([[victim.id]]);
    expect(outcomes.map((o) => o.groupId)).toEqual(plan.groups.map((g) => g.id));
    expect(results(outcomes)).toHaveLength(plan.groups.length);
  });

  it('gives up after two retries: the group fails with its IoError', async () => {
    // Prepare
    const { plan, batch } = await plannedBatch();
    const victim = plan.groups[0];
    const path = localPath(victim.inputs[0].file.filePath);
    rmSync(path);
    mkdirSync(path);
    const retried: (readonly string[])[] = [];

    // Act
    const outcomes = await rewriteBatchStep(batch, { vcpus: 1, retryWaitMs: 1, onRetry: (ids) => void retried.push(ids) });

    // Assess
    expect(retried).toEqual([[victim.id], [victim.id]]);
    expect(outcomes[0]).toEqual({ groupId: victim.id, error: { Error: 'IoError', Cause: expect.stringContaining('directory') }, batch: BATCH_OF_TWO });
    expect(results(outcomes)).toHaveLength(plan.groups.length - 1);
  });

  it('fails the groups whose threads died, and rewrites the next batch on new threads', async () => {
    // Prepare
    const { plan, batch } = await plannedBatch();

    // Act
    const died = await rewriteBatchStep(batch, { vcpus: 2, faults: { exitThread: 3 } });
    const after = await rewriteBatchStep(batch, { vcpus: 2 });

    // Assess
    expect(died).toEqual(plan.groups.map((g) => ({ groupId: g.id, error: { Error: 'Error', Cause: 'the rewrite thread died: the thread exited with code 3' }, batch: BATCH_OF_TWO })));
    expect(results(after).map((r) => r.groupId)).toEqual(plan.groups.map((g) => g.id));
  });

  it('does not retry when the invocation has no time left for another attempt', async () => {
    // Prepare
    const { plan, batch } = await plannedBatch();
    const path = localPath(plan.groups[0].inputs[0].file.filePath);
    rmSync(path);
    mkdirSync(path);
    const retried: (readonly string[])[] = [];

    // Act: 20 s left, under the 30 s margin.
    const outcomes = await rewriteBatchStep(batch, { vcpus: 1, retryWaitMs: 1, remainingMs: () => 20_000, onRetry: (ids) => void retried.push(ids) });

    // Assess
    expect(retried).toEqual([]);
    expect(outcomes[0]).toMatchObject({ groupId: plan.groups[0].id, error: { Error: 'IoError' } });
  });

  it('holds a group to its worker cap whatever the table property asks (a batch\'s group on a thread: its share of the vCPUs)', async () => {
    // Prepare: a table asking for two decode workers, every input decoded.
    const io = new LocalFileIO();
    const location = `${tempDir('packice-batch-')}/table`;
    const t = await fillSmallTable(await createNewTable(io, location, { formatVersion: 2, ...SMALL_TABLE_SPEC, properties: decodedByWorkers(2) }));
    const plan = await planCompaction(io, t.metadata, { table: { location }, policy: POLICY });
    const started: number[] = [];
    const count = (w: Worker): void => void started.push(w.threadId);

    // Act: the threads each rewrite starts, capped at 0, at 1, and not capped.
    process.on('worker', count);
    const counts: number[] = [];
    try {
      for (const cap of [0, 1, undefined]) {
        const before = started.length;
        await rewriteGroup(io, t.metadata, plan, plan.groups[0], cap === undefined ? {} : { workerCap: cap });
        counts.push(started.length - before);
      }
    } finally {
      process.off('worker', count);
    }

    // Assess
    expect(counts).toEqual([0, 1, 2]);
  });
});
