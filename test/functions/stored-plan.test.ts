/**
 * The Distributed Map path on moto S3, with the real handlers: a plan too large for the state is
 * written to the work bucket as the JSON array an ItemReader reads; each item is the
 * RewriteRequest the ItemSelector builds; the results are the files a ResultWriter writes
 * (manifest.json, SUCCEEDED_0.json, FAILED_0.json); the commit reads them back, commits the group
 * that rewrote and reports the one whose child execution failed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { handler as commitHandler } from '../../functions/commit.js';
import { handler as planHandler } from '../../functions/plan.js';
import { handler as rewriteHandler } from '../../functions/rewrite.js';
import type { Plan } from '../../lib/compaction/messages.js';
import { S3FileIO } from '../../lib/io/s3.js';
import {
  INLINE_BUDGET_BYTES,
  inlineSizeEstimate,
  isStoredPlan,
  loadPlan,
  placePlan,
  rewriteBatches,
  STATE_PAYLOAD_LIMIT_BYTES,
  WORK_LOCATION_ENV,
  type StoredPlan,
} from '../../lib/pipeline/plan-payload.js';
import { readMapResults } from '../../lib/pipeline/map-results.js';
import { PLAN_HEADER_FIELDS, type RewriteRequest } from '../../lib/pipeline/rewrite-request.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { fileCounts, liveRows, smallTable } from '../support/small-table.js';

const POLICY = { minInputFiles: 2 } as const;

function hop<T>(message: T): T {
  return JSON.parse(JSON.stringify(message)) as T;
}

/** What the Map's ItemSelector builds from the state (`$.plan.<header field>`) and one item (`$$.Map.Item.Value`). */
function itemOf(state: { plan: StoredPlan | Plan }, item: unknown): RewriteRequest {
  const header = Object.fromEntries(PLAN_HEADER_FIELDS.map((f) => [f, state.plan[f]]));
  return hop({ ...header, group: item } as RewriteRequest);
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('plans and the state payload', () => {
  it('a small plan travels inline even with a work location; its estimate counts the results its groups will add', async () => {
    const endpoint = testS3Endpoint();
    const s3 = new S3FileIO({ endpoint });
    const bucket = await freshBucket();
    const location = `s3://${bucket}/warehouse/events`;
    await smallTable(s3, location, 3);
    vi.stubEnv('AWS_ENDPOINT_URL_S3', endpoint);
    vi.stubEnv(WORK_LOCATION_ENV, `s3://${bucket}/work`);

    const message = await planHandler({ table: { location }, policy: POLICY });

    expect(isStoredPlan(message)).toBe(false);
    const plan = message as Plan;
    expect(plan.groups).toHaveLength(2);
    expect(inlineSizeEstimate(plan)).toBeGreaterThan(Buffer.byteLength(JSON.stringify(plan)));
    expect(inlineSizeEstimate(plan)).toBeLessThanOrEqual(INLINE_BUDGET_BYTES);
    expect(INLINE_BUDGET_BYTES).toBeLessThan(STATE_PAYLOAD_LIMIT_BYTES);
    const written: string[] = [];
    for await (const f of s3.list(`s3://${bucket}/work`)) written.push(f.path);
    expect(written).toEqual([]);
  });
});

describe('a stored plan through the Distributed Map files', () => {
  it('rewrites each item read from the groups file, commits the one that succeeded and reports the failed child', async () => {
    // Prepare: a table, its plan stored in the work bucket.
    const endpoint = testS3Endpoint();
    const s3 = new S3FileIO({ endpoint });
    const bucket = await freshBucket();
    const location = `s3://${bucket}/warehouse/db/events`;
    await smallTable(s3, location, 2);
    const before = await liveRows(s3, location);
    vi.stubEnv('AWS_ENDPOINT_URL_S3', endpoint);
    const plan = await planHandler({ table: { location }, policy: POLICY });
    const stored = hop(await placePlan(plan as Plan, { workLocation: `s3://${bucket}/packice`, inlineBudgetBytes: 1 })) as StoredPlan;

    // Act: what the Distributed Map does — ItemReader, ItemSelector, one child per item, ResultWriter.
    expect(stored.groupsFile).toMatchObject({ bucket, key: expect.stringMatching(/^packice\/plans\/db\.events-\d+-\d+\/groups\.json$/) });
    const items = JSON.parse(new TextDecoder().decode(await s3.read(stored.groupsFile.location))) as unknown[];
    const [ok, failing] = items.map((item) => itemOf({ plan: stored }, item));
    const result = hop(await rewriteHandler(ok));
    const run = 'packice/map-results/run-1';
    const put = (key: string, value: unknown): Promise<void> => s3.write(`s3://${bucket}/${key}`, new TextEncoder().encode(JSON.stringify(value)));
    await put(`${run}/SUCCEEDED_0.json`, [{ Input: JSON.stringify(ok), Output: JSON.stringify(result), Status: 'SUCCEEDED' }]);
    await put(`${run}/FAILED_0.json`, [
      { Input: JSON.stringify(failing), Status: 'FAILED', Error: 'States.Timeout', Cause: 'the child execution timed out' },
    ]);
    await put(`${run}/manifest.json`, {
      DestinationBucket: bucket,
      MapRunArn: 'arn:aws:states:us-east-1:123456789012:mapRun:packice/run-1:1',
      ResultFiles: { FAILED: [{ Key: `${run}/FAILED_0.json`, Size: 1 }], PENDING: [], SUCCEEDED: [{ Key: `${run}/SUCCEEDED_0.json`, Size: 1 }] },
    });
    const commit = await commitHandler(
      hop({ plan: stored, results: { MapRunArn: 'arn:…', ResultWriterDetails: { Bucket: bucket, Key: `${run}/manifest.json` } } }),
    );

    // Assess
    const full = plan as Plan;
    expect(stored).not.toHaveProperty('groups');
    expect(stored.groupCount).toBe(2);
    expect(items).toEqual(full.groups);
    expect(await loadPlan(stored)).toEqual({ ...full, skipped: full.skipped.slice(0, 20) });
    expect(ok.group.id).toBe(full.groups[0].id);
    expect(commit.committedGroups).toEqual([full.groups[0].id]);
    expect(commit.abortedGroups).toEqual([{ groupId: full.groups[1].id, reason: 'rewrite failed: States.Timeout: the child execution timed out' }]);
    expect(await fileCounts(s3, location)).toEqual({ data: 5, deletes: 1 });
    expect(await liveRows(s3, location)).toEqual(before);
  });

  it('reads a batching Map\'s results: a batch\'s outcomes, a batch its Catch failed whole, a failed child\'s batch, each group once', async () => {
    // Prepare: what the ResultWriter writes for three batches (the child inputs `{BatchInput, Items}`).
    const s3 = new S3FileIO({ endpoint: testS3Endpoint() });
    const bucket = await freshBucket();
    const run = 'packice/map-results/run-b';
    const batch = (...ids: string[]): string => JSON.stringify({ BatchInput: { table: { location: 's3://t/x' } }, Items: ids.map((id) => ({ id, inputs: [] })) });
    const done = { groupId: 'g1', outputs: [], obsoleteDeletes: [], checksums: { rowsIn: '1', rowsOut: '1', hashIn: 'a', hashOut: 'a' } };
    const caught = { groupId: 'g2', error: { Error: 'InvalidFileError', Cause: 'not a Parquet file' } };
    const timeout = { Error: 'States.Timeout', Cause: 'the task timed out' };
    const put = (key: string, value: unknown): Promise<void> => s3.write(`s3://${bucket}/${key}`, new TextEncoder().encode(JSON.stringify(value)));
    await put(`${run}/SUCCEEDED_0.json`, [
      { Input: batch('g1', 'g2'), Output: JSON.stringify([done, caught]), Status: 'SUCCEEDED' },
      { Input: batch('g3', 'g4'), Output: JSON.stringify({ groupIds: ['g3', 'g4'], error: timeout }), Status: 'SUCCEEDED' },
    ]);
    await put(`${run}/FAILED_0.json`, [{ Input: batch('g5', 'g6'), Status: 'FAILED', Error: 'States.Runtime', Cause: 'the child failed' }]);
    await put(`${run}/manifest.json`, {
      DestinationBucket: bucket,
      ResultFiles: { FAILED: [{ Key: `${run}/FAILED_0.json` }], PENDING: [], SUCCEEDED: [{ Key: `${run}/SUCCEEDED_0.json` }] },
    });

    // Act
    const outcomes = await readMapResults({ ResultWriterDetails: { Bucket: bucket, Key: `${run}/manifest.json` } }, { s3Endpoint: testS3Endpoint() });

    // Assess
    expect(outcomes).toEqual([
      done,
      caught,
      { groupId: 'g3', error: timeout },
      { groupId: 'g4', error: timeout },
      { groupId: 'g5', error: { Error: 'States.Runtime', Cause: 'the child failed' } },
      { groupId: 'g6', error: { Error: 'States.Runtime', Cause: 'the child failed' } },
    ]);
  });

  it('stores every plan when groups go in batches, its groups also as batches: like sizes together, at most the batch size, each within the budget', async () => {
    // Prepare: a plan of two groups; and made-up groups of given sizes.
    const s3 = new S3FileIO({ endpoint: testS3Endpoint() });
    const bucket = await freshBucket();
    const location = `s3://${bucket}/warehouse/db/events`;
    await smallTable(s3, location, 2);
    vi.stubEnv('AWS_ENDPOINT_URL_S3', testS3Endpoint());
    const plan = (await planHandler({ table: { location }, policy: POLICY })) as Plan;
    const [g] = plan.groups;
    const sized = (id: string, bytesToRead: number, pad = 0): Plan['groups'][number] => ({ ...g, id, estimate: { ...g.estimate, bytesToRead }, reasons: ['x'.repeat(pad)] });

    // Act
    const stored = hop(await placePlan(plan, { workLocation: `s3://${bucket}/packice`, batchSize: 6 })) as StoredPlan;
    const batches = (JSON.parse(new TextDecoder().decode(await s3.read(stored.batchesFile!.location))) as { groups: Plan['groups'] }[]).map((b) => b.groups);
    const bySize = rewriteBatches([sized('a', 1), sized('b', 5), sized('c', 3), sized('d', 4), sized('e', 2)], 2);
    const byBytes = rewriteBatches([sized('big', 9, 100_000), sized('big2', 8, 100_000), sized('small', 1)], 6);

    // Assess
    expect(stored).toMatchObject({ groupCount: 2, batchCount: 1, batchesFile: { bucket, key: expect.stringMatching(/^packice\/plans\/.+\/batches\.json$/) } });
    expect(batches.map((b) => b.map((x) => x.id))).toEqual([[...plan.groups].sort((x, y) => y.estimate.bytesToRead - x.estimate.bytesToRead).map((x) => x.id)]);
    expect(await loadPlan(stored)).toEqual({ ...plan, skipped: plan.skipped.slice(0, 20) });
    expect(bySize.map((b) => b.map((x) => x.id))).toEqual([['b', 'd'], ['c', 'e'], ['a']]);
    // Two groups of ~100 KB each would take a batch past the 192 KiB budget.
    expect(byBytes.map((b) => b.map((x) => x.id))).toEqual([['big'], ['big2', 'small']]);
  });
});
