/**
 * The state machines CDK synthesizes (compaction, and retention as its schedule starts it), run in
 * aws-local-stepfunctions against moto S3, each Lambda task calling the function's bundle from the
 * cloud assembly (test/support/local-sfn.ts says what is local and how; the Distributed Map runs
 * in a stand-in on the same S3 objects, test/support/distributed-map.ts).
 */
import { App, Duration } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAP_RESULTS_FOLDER, WORK_PREFIX } from '../../cdk/iceberg-maintenance.js';
import { PackiceStack } from '../../cdk/packice-stack.js';
import { loadTable } from '../../lib/catalog/table.js';
import type { CompactionCommitResult, Plan } from '../../lib/compaction/messages.js';
import type { FileIO } from '../../lib/io/file-io.js';
import { S3FileIO } from '../../lib/io/s3.js';
import type { Row } from '../../lib/iceberg/values.js';
import { isStoredPlan, loadPlan, inlineSizeEstimate, PLANS_FOLDER, type PlanMessage, type StoredPlan } from '../../lib/pipeline/plan-payload.js';
import type { CompactionReport } from '../../lib/pipeline/report-step.js';
import type { ExpireSummary, OrphanSummary } from '../../lib/pipeline/retention-request.js';
import { appendRows, createNewTable } from '../../lib/table/operations.js';
import { tempDir } from '../support/fixtures.js';
import { LocalDeployment, type Execution, type Invocation, type LocalStateMachine } from '../support/local-sfn.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { retentionTable, type SnapshotName } from '../support/retention-table.js';
import { startS3Interposer, type S3Interposer } from '../support/s3-interposer.js';
import { fileCounts, liveRows, smallTable } from '../support/small-table.js';

const POLICY = { minInputFiles: 2 } as const;
const INLINE_TEST_BUDGET = 24 * 1024;

let s3: S3FileIO;
let tableBucket: string;
/** The tables the stack is configured with: the retention schedule names them. */
let retainedLocation: string;
/** A configured table that does not exist: its retention fails, the other table's still runs. */
let missingLocation: string;
let interposer: S3Interposer;
let stack: PackiceStack;
let deployment: LocalDeployment;
let compaction: LocalStateMachine;

beforeAll(async () => {
  const endpoint = testS3Endpoint();
  s3 = new S3FileIO({ endpoint });
  tableBucket = await freshBucket();
  interposer = await startS3Interposer(endpoint);
  retainedLocation = `s3://${tableBucket}/warehouse/db/retained`;
  missingLocation = `s3://${tableBucket}/warehouse/db/missing`;
  const app = new App({ outdir: tempDir('packice-sfn-') });
  // Compaction runs on any location its input names; retention on the configured tables.
  // Plans above 24 KiB go through the Distributed Map: the wide table's do, the small tables' do not.
  stack = new PackiceStack(app, 'Packice', {
    maintenance: {
      tables: [
        { location: missingLocation, retention: { maxSnapshotAge: Duration.days(1) } },
        { location: retainedLocation, retention: { maxSnapshotAge: Duration.days(1), horizons: [Duration.days(3)] } },
      ],
      inlinePlanBudgetBytes: INLINE_TEST_BUDGET,
    },
  });
  deployment = await LocalDeployment.deploy(stack, { functionS3Endpoint: interposer.endpoint });
  compaction = deployment.stateMachine(stack.maintenance.stateMachine);
});

afterAll(async () => {
  await deployment?.dispose();
  await interposer?.stop();
});

/**
 * A table whose plan goes over the test deployment's inline budget: `partitions` partitions of two
 * files each (one group each), 48 string columns (plans carry no column metrics, so the width
 * only adds to the results' size).
 */
async function wideTable(io: FileIO, location: string, partitions: number): Promise<void> {
  const columns = 48;
  let table = await createNewTable(io, location, {
    formatVersion: 2,
    schema: {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: { type: 'long' } },
        { id: 2, name: 'part', required: true, type: { type: 'string' } },
        ...Array.from({ length: columns }, (_, i) => ({ id: 3 + i, name: `attribute_${i}`, required: false, type: { type: 'string' as const } })),
      ],
    },
    partitionFields: [{ sourceId: 2, name: 'part', transform: { kind: 'identity' } }],
  });
  for (let append = 0; append < 2; append++) {
    const rows: Row[] = [];
    for (let p = 0; p < partitions; p++) {
      const attributes = Array.from({ length: columns }, (_, i) => [`attribute_${i}`, `value ${i} of row ${append}-${p}`]);
      rows.push({ id: BigInt(append * partitions + p), part: `part-${String(p).padStart(3, '0')}`, ...Object.fromEntries(attributes) });
    }
    table = await appendRows(table, rows);
  }
}

function invocationsOf(execution: Execution, state: string): Invocation[] {
  return execution.invocations.filter((i) => i.state === state);
}

/** The commit's result (its last invocation's), the run's report, and the table after them: its live files and rows. */
async function afterRun(
  execution: Execution,
  location: string,
): Promise<{ result: CompactionCommitResult; report: CompactionReport; files: { data: number; deletes: number }; rows: Row[] }> {
  const result = invocationsOf(execution, 'Commit').at(-1)?.result as unknown as CompactionCommitResult;
  return { result, report: execution.output as unknown as CompactionReport, files: await fileCounts(s3, location), rows: await liveRows(s3, location) };
}

/** The states the execution entered, top level and inside Map iterations, in order. */
function statesEntered(execution: Execution): string[] {
  return execution.events.filter((e) => e.type === 'StateEntered').map((e) => e.state?.name ?? '');
}

describe('the synthesized compaction state machine, run locally', () => {
  it('compacts a small-file table end to end: Plan, the inline Map rewriting each group, Commit', async () => {
    // Prepare
    const location = `s3://${tableBucket}/warehouse/db/events`;
    await smallTable(s3, location, 3);
    const before = await liveRows(s3, location);

    // Act
    const execution = await compaction.run({ table: { location }, policy: POLICY });

    // Assess
    expect(execution).toMatchObject({ status: 'SUCCEEDED' });
    const after = await afterRun(execution, location);
    expect(after.result.committedGroups).toHaveLength(2);
    expect(after.result.abortedGroups).toEqual([]);
    expect(statesEntered(execution).filter((s) => !s.startsWith('Rewrite'))).toEqual(['Plan', 'Any groups?', 'Commit', 'Report', 'Compacted']);
    expect(statesEntered(execution).filter((s) => s === 'Rewrite')).toHaveLength(2);
    expect(execution.invocations.map((i) => i.state).sort()).toEqual(['Commit', 'Plan', 'Report', 'Rewrite', 'Rewrite']);
    // The report, the execution's output, is also written to the work bucket.
    expect(after.report.groups).toEqual({ planned: 2, committed: 2, aborted: 0 });
    expect(after.report.location).toMatch(new RegExp(`^s3://${deployment.physicalName(stack.maintenance.workBucket)}/`));
    expect(JSON.parse(new TextDecoder().decode(await s3.read(after.report.location!)))).toEqual(after.report);
    // Each rewrite gets the plan's header and its one group, never the whole plan.
    for (const rewrite of invocationsOf(execution, 'Rewrite')) {
      expect(rewrite.payload).toMatchObject({ table: { location }, group: { id: expect.any(String) } });
      expect(rewrite.payload).not.toHaveProperty('groups');
    }
    expect(after.files).toEqual({ data: 2, deletes: 0 });
    expect(after.rows).toEqual(before);
  });

  it('sends a plan too large for the state through the Distributed Map: groups read from the stored plan, results from the files the map wrote', async () => {
    // Prepare: 18 groups whose plan and results come to more than the deployment's inline budget.
    const location = `s3://${tableBucket}/warehouse/db/wide`;
    await wideTable(s3, location, 18);
    const before = await liveRows(s3, location);
    const workBucket = deployment.physicalName(stack.maintenance.workBucket);

    // Act
    const execution = await compaction.run({ table: { location }, policy: POLICY });

    // Assess: the plan went to the work bucket, each group through a child execution, the results through S3.
    expect(execution).toMatchObject({ status: 'SUCCEEDED' });
    const [planned] = invocationsOf(execution, 'Plan');
    const message = planned.result as unknown as PlanMessage;
    expect(isStoredPlan(message)).toBe(true);
    const plan = await loadPlan(message, { s3Endpoint: testS3Endpoint() });
    expect(plan.groups).toHaveLength(18);
    expect(inlineSizeEstimate(plan)).toBeGreaterThan(INLINE_TEST_BUDGET);
    expect(isStoredPlan(message) && message.groupsFile).toMatchObject({ bucket: workBucket, key: expect.stringMatching(new RegExp(`^${WORK_PREFIX}/${PLANS_FOLDER}/`)) });
    const entered = statesEntered(execution);
    expect(entered).toContain('Rewrite stored groups');
    expect(entered).not.toContain('Rewrite groups');
    const rewrites = invocationsOf(execution, 'Rewrite (stored plan)');
    expect(rewrites.map((r) => (r.payload as { group: { id: string } }).group.id).sort()).toEqual(plan.groups.map((g) => g.id).sort());
    const [committed] = invocationsOf(execution, 'Commit');
    const results = (committed.payload as { results: { ResultWriterDetails: { Bucket: string; Key: string } } }).results;
    expect(results.ResultWriterDetails).toMatchObject({ Bucket: workBucket, Key: expect.stringMatching(new RegExp(`^${WORK_PREFIX}/${MAP_RESULTS_FOLDER}/[^/]+/manifest\\.json$`)) });
    const manifest = JSON.parse(new TextDecoder().decode(await s3.read(`s3://${workBucket}/${results.ResultWriterDetails.Key}`))) as {
      ResultFiles: Record<string, { Key: string }[]>;
    };
    expect(manifest.ResultFiles.FAILED).toEqual([]);
    expect(manifest.ResultFiles.SUCCEEDED).toHaveLength(1);
    const after = await afterRun(execution, location);
    expect([...after.result.committedGroups].sort()).toEqual(plan.groups.map((g) => g.id).sort());
    expect(after.result.abortedGroups).toEqual([]);
    expect(after.files).toEqual({ data: 18, deletes: 0 });
    expect(after.rows).toEqual(before);
  });

  it('catches a group whose input was corrupted after planning: it is reported, the other group commits', async () => {
    // Prepare: after Plan, one data file of the second group is overwritten with bytes that are not Parquet.
    const location = `s3://${tableBucket}/warehouse/db/corrupted`;
    await smallTable(s3, location, 2);
    const before = await liveRows(s3, location);
    let victim: { groupId: string; path: string; bytes: Uint8Array } | undefined;
    const hooks = {
      async afterInvoke(call: { state: string }, outcome: { result?: unknown }) {
        if (call.state !== 'Plan') return;
        const group = (outcome.result as Plan).groups[1];
        const path = group.inputs[0].file.filePath;
        victim = { groupId: group.id, path, bytes: await s3.read(path) };
        await s3.write(path, new Uint8Array(victim.bytes.byteLength).fill(0x2a));
      },
    };

    // Act
    const execution = await compaction.run({ table: { location }, policy: POLICY }, { hooks });
    // The file is put back so the table can be read whole again.
    await s3.write(victim!.path, victim!.bytes);

    // Assess
    expect(execution).toMatchObject({ status: 'SUCCEEDED' });
    const failed = invocationsOf(execution, 'Rewrite').filter((r) => r.error);
    expect(failed).toHaveLength(1);
    expect(failed[0].error?.name).toBe('InvalidFileError');
    expect((failed[0].payload as { group: { id: string } }).group.id).toBe(victim!.groupId);
    expect(statesEntered(execution)).toContain('Group failed');
    const after = await afterRun(execution, location);
    expect(after.result.committedGroups).toHaveLength(1);
    expect(after.result.committedGroups).not.toContain(victim!.groupId);
    expect(after.result.abortedGroups).toEqual([{ groupId: victim!.groupId, reason: expect.stringMatching(new RegExp(`^rewrite failed: ${failed[0].error!.name}: `)) }]);
    expect(after.report.groups).toEqual({ planned: 2, committed: 1, aborted: 1 });
    // One partition compacted (4 files and their deletes into 1), the other untouched.
    expect(after.files).toEqual({ data: 5, deletes: 1 });
    expect(after.rows).toEqual(before);
  });

  it('retries the commit when concurrent appends win every attempt of its first invocation; the second commits over them', async () => {
    // Prepare: while the first Commit runs, each time it tries to create the next metadata
    // version, another writer appends a row and takes that version first.
    const location = `s3://${tableBucket}/warehouse/db/contended`;
    await smallTable(s3, location, 2);
    const before = await liveRows(s3, location);
    const appended: Row[] = [];
    const concurrentAppend = async (_bucket: string, key: string): Promise<void> => {
      if (!key.includes('/db/contended/metadata/')) return;
      const row = { id: BigInt(1000 + appended.length), category: 'a', amount: 100n };
      await appendRows(await loadTable(location, { io: s3 }), [row]);
      appended.push(row);
    };
    let commits = 0;
    const hooks = {
      beforeInvoke(call: { state: string }) {
        if (call.state === 'Commit' && ++commits === 1) interposer.onConditionalCreate(concurrentAppend);
      },
      afterInvoke() {
        interposer.onConditionalCreate(undefined);
      },
    };

    // Act
    const execution = await compaction.run({ table: { location }, policy: POLICY }, { hooks });

    // Assess
    interposer.onConditionalCreate(undefined);
    expect(execution).toMatchObject({ status: 'SUCCEEDED' });
    const attempts = invocationsOf(execution, 'Commit');
    expect(attempts).toHaveLength(2);
    expect(attempts[0].error?.name).toBe('CommitConflictError');
    expect(attempts[1].error).toBeUndefined();
    expect(execution.events.filter((e) => e.type === 'StateRetried').map((e) => e.state?.name)).toEqual(['Commit']);
    // The function's own retries (the table's commit.retry.num-retries, 4) each met an append.
    expect(appended).toHaveLength(5);
    const after = await afterRun(execution, location);
    expect(after.result.committedGroups).toHaveLength(2);
    expect(after.result.abortedGroups).toEqual([]);
    expect(after.rows).toEqual([...before, ...appended].sort((a, b) => ((a.id as bigint) < (b.id as bigint) ? -1 : 1)));
    // Both partitions compacted; the five appended files stay as they are.
    expect(after.files).toEqual({ data: 2 + appended.length, deletes: 0 });
  });
});

describe('the synthesized retention state machine, started as its schedule starts it', () => {
  const RETAINED: readonly SnapshotName[] = ['s10', 's9', 's8', 's2', 'dev'];
  const EXPIRED: readonly SnapshotName[] = ['s1', 's3', 's4', 's5', 's6', 's7'];

  it('expires what the table\'s retention drops, deletes the files only those snapshots reached, then runs orphan removal; a table that fails does not stop it, and fails the execution at the end', async () => {
    // Prepare: ten days of history (test/support/retention-table.ts), and a stray file in the table.
    const otherBucket = await freshBucket();
    const outside = [`s3://${otherBucket}/warehouse/db/retained/data/out-1.parquet`, `s3://${tableBucket}/warehouse/db/out-2.parquet`];
    const rt = await retentionTable(s3, retainedLocation, outside, (p) => p.replace(/^s3:/, 's3a:'));
    const snapshotsBefore = (await loadTable(retainedLocation, { io: s3 })).metadata.snapshots.length;
    const stray = `${retainedLocation}/data/stray.parquet`;
    await s3.write(stray, new TextEncoder().encode('not referenced by anything'));
    const schedule = deployment.scheduleTarget(stack.maintenance.retentionSchedule);
    const retention = deployment.stateMachineWithArn(schedule.arn);

    // Act
    const execution = await retention.run(schedule.input);

    // Assess: the schedule starts the retention state machine for the configured tables; the missing
    // one fails its Expire, the other runs to the end, and the execution fails naming the missing one.
    expect(retention.logicalId).toBe(deployment.logicalId(stack.maintenance.retentionStateMachine));
    expect(schedule.input).toMatchObject({ tables: [{ table: { location: missingLocation } }, { table: { location: retainedLocation } }] });
    expect(execution, execution.cause).toMatchObject({ status: 'FAILED', error: 'RetentionFailed' });
    const failures = JSON.parse(execution.cause ?? '[]') as Array<{ failed: { location: string }; error: string }>;
    expect(failures).toHaveLength(1);
    expect(failures[0].failed.location).toBe(missingLocation);
    expect(failures[0].error).toBe('NotFoundError');
    expect([...statesEntered(execution)].sort()).toEqual(
      ['Each table', 'Expire', 'Expire', 'Orphans', 'Table done', 'Table failed', 'Any table failed?', 'Name failed tables', 'Retention failed'].sort(),
    );
    const t = await loadTable(retainedLocation, { io: s3 });
    const kept = new Set(t.metadata.snapshots.map((s) => s.snapshotId));
    for (const name of RETAINED) expect(kept.has(rt.ids[name]), `${name} retained`).toBe(true);
    for (const name of EXPIRED) expect(kept.has(rt.ids[name]), `${name} expired`).toBe(false);
    const [missing, expired] = invocationsOf(execution, 'Expire').sort((a, b) => Number(a.error === undefined) - Number(b.error === undefined));
    expect(missing.error?.message).toContain(missingLocation);
    expect((expired.result as unknown as ExpireSummary).expiredSnapshots).toBe(snapshotsBefore - kept.size);
    // Cleaned: the data files only expired snapshots reached are gone; what retained ones reach, and files outside the table, stay.
    for (const p of rt.files.f) expect(await s3.exists(p), p).toBe(false);
    for (const p of [...rt.files.a, ...rt.files.b, ...rt.files.c, ...rt.files.e, ...rt.files.g, rt.files.sharedPuffin, ...outside]) {
      expect(await s3.exists(p.replace(/^s3a:/, 's3:')), p).toBe(true);
    }
    // Orphan removal ran after expiry; the stray file is younger than its delay (at least 1 hour), so it stays.
    const [orphans] = invocationsOf(execution, 'Orphans');
    expect(orphans.result as unknown as OrphanSummary).toMatchObject({ deleted: 0, tooNew: 1 });
    expect(await s3.exists(stray)).toBe(true);
  });
});

describe('the synthesized compaction state machine of a 10,240 MB rewrite function, which batches groups', () => {
  let batching: PackiceStack;
  let batchingDeployment: LocalDeployment;
  let machine: LocalStateMachine;

  beforeAll(async () => {
    const app = new App({ outdir: tempDir('packice-sfn-batch-') });
    batching = new PackiceStack(app, 'PackiceBatching', { maintenance: { tables: [{ location: `s3://${tableBucket}/warehouse/db/batched` }], rewriteMemorySize: 10240 } });
    batchingDeployment = await LocalDeployment.deploy(batching, { functionS3Endpoint: interposer.endpoint });
    machine = batchingDeployment.stateMachine(batching.maintenance.stateMachine);
  });

  afterAll(async () => {
    await batchingDeployment?.dispose();
  });

  /** The rewrite invocations' batches: each `{BatchInput, Items}`, and the ids of its groups. */
  function batchesOf(execution: Execution): { payload: { BatchInput: Record<string, unknown>; Items: { id: string }[] }; ids: string[] }[] {
    return invocationsOf(execution, 'Rewrite (stored plan)').map((r) => {
      const payload = r.payload as { BatchInput: Record<string, unknown>; Items: { id: string }[] };
      return { payload, ids: payload.Items.map((g) => g.id) };
    });
  }

  it('sends every plan through the Distributed Map, six groups to a rewrite (its vCPUs), and commits them all', async () => {
    // Prepare: 8 groups, a plan far under the inline budget.
    const location = `s3://${tableBucket}/warehouse/db/batched`;
    await wideTable(s3, location, 8);
    const before = await liveRows(s3, location);

    // Act
    const execution = await machine.run({ table: { location }, policy: POLICY });

    // Assess
    expect(execution).toMatchObject({ status: 'SUCCEEDED' });
    expect(batching.maintenance.rewriteBatchSize).toBe(6);
    const [planned] = invocationsOf(execution, 'Plan');
    const message = planned.result as unknown as PlanMessage;
    expect(isStoredPlan(message)).toBe(true);
    const plan = await loadPlan(message, { s3Endpoint: testS3Endpoint() });
    expect(plan.groups).toHaveLength(8);
    const batches = batchesOf(execution);
    expect(batches.map((b) => b.ids.length).sort()).toEqual([2, 6]);
    expect(batches.flatMap((b) => b.ids).sort()).toEqual(plan.groups.map((g) => g.id).sort());
    for (const { payload } of batches) {
      expect(payload.BatchInput).toMatchObject({ table: { location }, startingSnapshotId: plan.startingSnapshotId, formatVersion: 2 });
      expect(payload.BatchInput).not.toHaveProperty('groups');
    }
    const after = await afterRun(execution, location);
    expect([...after.result.committedGroups].sort()).toEqual(plan.groups.map((g) => g.id).sort());
    expect(after.result.abortedGroups).toEqual([]);
    expect(after.report.groups).toEqual({ planned: 8, committed: 8, aborted: 0 });
    expect(after.files).toEqual({ data: 8, deletes: 0 });
    expect(after.rows).toEqual(before);
  });

  it('catches a batch whose rewrite fails as a whole: each of its groups is reported, the other batch commits', async () => {
    // Prepare: after Plan, the smaller batch's first group loses its inputs in the batches file (the groups file stays whole).
    const location = `s3://${tableBucket}/warehouse/db/batched-caught`;
    await wideTable(s3, location, 8);
    const before = await liveRows(s3, location);
    let broken: string[] = [];
    const hooks = {
      async afterInvoke(call: { state: string }, outcome: { result?: unknown }) {
        if (call.state !== 'Plan') return;
        const { batchesFile } = outcome.result as StoredPlan;
        const batches = JSON.parse(new TextDecoder().decode(await s3.read(batchesFile!.location))) as { groups: Record<string, unknown>[] }[];
        const small = batches.find((b) => b.groups.length === 2)!.groups;
        broken = small.map((g) => g.id as string);
        delete small[0].inputs;
        await s3.write(batchesFile!.location, new TextEncoder().encode(JSON.stringify(batches)));
      },
    };

    // Act
    const execution = await machine.run({ table: { location }, policy: POLICY }, { hooks });

    // Assess: the batch's invocation refused its event; its Catch failed both its groups.
    expect(execution).toMatchObject({ status: 'SUCCEEDED' });
    expect(statesEntered(execution).filter((s) => s === 'Group failed (stored plan)')).toHaveLength(1);
    const after = await afterRun(execution, location);
    expect(after.result.committedGroups).toHaveLength(6);
    expect([...after.result.abortedGroups].sort((a, b) => a.groupId.localeCompare(b.groupId))).toEqual(
      [...broken].sort().map((groupId) => ({ groupId, reason: expect.stringMatching(/^rewrite failed: InvalidEventError: invalid rewrite event: missing field "Items\[0\]\.inputs"/) })),
    );
    expect(after.files).toEqual({ data: 6 + 2 * 2, deletes: 0 });
    expect(after.rows).toEqual(before);
  });

  it('reports a group of a batch whose input was corrupted after planning; the batch\'s other groups commit', async () => {
    // Prepare: after Plan, one data file of the third group is overwritten with bytes that are not Parquet.
    const location = `s3://${tableBucket}/warehouse/db/batched-corrupted`;
    await wideTable(s3, location, 4);
    const before = await liveRows(s3, location);
    let victim: { groupId: string; path: string; bytes: Uint8Array } | undefined;
    const hooks = {
      async afterInvoke(call: { state: string }, outcome: { result?: unknown }) {
        if (call.state !== 'Plan') return;
        const group = (await loadPlan(outcome.result as PlanMessage, { s3Endpoint: testS3Endpoint() })).groups[2];
        const path = group.inputs[0].file.filePath;
        victim = { groupId: group.id, path, bytes: await s3.read(path) };
        await s3.write(path, new Uint8Array(victim.bytes.byteLength).fill(0x2a));
      },
    };

    // Act
    const execution = await machine.run({ table: { location }, policy: POLICY }, { hooks });
    await s3.write(victim!.path, victim!.bytes);

    // Assess: one rewrite of the four groups; it answers for each, the corrupted one failed.
    expect(execution).toMatchObject({ status: 'SUCCEEDED' });
    const [batch] = batchesOf(execution);
    expect(batchesOf(execution)).toHaveLength(1);
    expect(batch.ids).toHaveLength(4);
    const [rewrite] = invocationsOf(execution, 'Rewrite (stored plan)');
    const outcomes = rewrite.result as unknown as { groupId: string; error?: { Error: string; Cause: string } }[];
    expect(outcomes.map((o) => o.groupId)).toEqual(batch.ids);
    expect(outcomes.filter((o) => o.error).map((o) => [o.groupId, o.error!.Error])).toEqual([[victim!.groupId, 'InvalidFileError']]);
    const after = await afterRun(execution, location);
    expect(after.result.committedGroups).toHaveLength(3);
    expect(after.result.committedGroups).not.toContain(victim!.groupId);
    expect(after.result.abortedGroups).toEqual([{ groupId: victim!.groupId, reason: expect.stringMatching(/^rewrite failed: InvalidFileError: /) }]);
    expect(after.report.groups).toEqual({ planned: 4, committed: 3, aborted: 1 });
    // Three partitions compacted (2 files into 1), the corrupted one's two files untouched.
    expect(after.files).toEqual({ data: 5, deletes: 0 });
    expect(after.rows).toEqual(before);
  });
});
