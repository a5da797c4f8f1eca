/**
 * The Lambda handlers on real tables: plan → rewrite (every group) → commit, each event passed
 * through JSON as Step Functions would, and the table's live rows unchanged afterwards.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { handler as commitHandler } from '../../functions/commit.js';
import { InvalidEventError } from '../../functions/event.js';
import { handler as planHandler } from '../../functions/plan.js';
import { handler as rewriteHandler } from '../../functions/rewrite.js';
import type { GroupResult, Plan, PlanRequest } from '../../lib/compaction/messages.js';
import { ValidationError } from '../../lib/errors.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { S3FileIO } from '../../lib/io/s3.js';
import { isStoredPlan } from '../../lib/pipeline/plan-payload.js';
import { PLAN_HEADER_FIELDS, rewriteRequestOf } from '../../lib/pipeline/rewrite-request.js';
import { tempDir } from '../support/fixtures.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { fileCounts, liveRows, smallTable } from '../support/small-table.js';

const io = new LocalFileIO();
const POLICY = { minInputFiles: 2 } as const;

/** What crosses a state: JSON only (a bigint or undefined-vs-missing slip would show here). */
function hop<T>(message: T): T {
  return JSON.parse(JSON.stringify(message)) as T;
}

/** Captures the JSON lines the handlers log (stdout and stderr) while `run` runs. */
async function logsOf<T>(run: () => Promise<T>): Promise<{ value?: T; error?: unknown; lines: Record<string, unknown>[] }> {
  const written: string[] = [];
  const capture = (chunk: string | Uint8Array): boolean => {
    written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  };
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    return { value: await run(), lines: parseLines(written) };
  } catch (error) {
    return { error, lines: parseLines(written) };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

function parseLines(written: string[]): Record<string, unknown>[] {
  return written
    .join('')
    .split('\n')
    .filter((l) => l.startsWith('{"level"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.service === 'packice');
}

async function runChain(request: PlanRequest): Promise<{ plan: Plan; results: GroupResult[] }> {
  const plan = hop(await inlinePlan(hop(request)));
  const results: GroupResult[] = [];
  for (const g of plan.groups) results.push(hop(await rewriteHandler(hop(rewriteRequestOf(plan, g.id)))));
  return { plan, results };
}

/** The plan handler's answer, which for these small tables is the plan itself (no work location is set). */
async function inlinePlan(event: unknown): Promise<Plan> {
  const message = await planHandler(event);
  if (isStoredPlan(message)) throw new Error(`expected an inline plan, got one stored at ${message.groupsFile.location}`);
  return message;
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('handlers chained on a local table', () => {
  it.each([2, 3] as const)('v%i: compacts 8 data files to 2, drops the deletes, keeps the 32 live rows', async (formatVersion) => {
    // Prepare
    const location = join(tempDir(), 'events');
    await smallTable(io, location, formatVersion);
    const before = await liveRows(io, location);
    expect(before).toHaveLength(32);
    expect(await fileCounts(io, location)).toEqual({ data: 8, deletes: formatVersion === 2 ? 2 : 8 });

    // Act
    const { plan, results } = await runChain({ table: { location }, policy: POLICY });
    const { value: commit, lines } = await logsOf(() => commitHandler(hop({ plan, results }), { awsRequestId: 'req-1' }));

    // Assess
    expect(plan.groups.map((g) => g.partitionPath).sort()).toEqual(['category=a', 'category=b']);
    expect(results.map((r) => r.checksums.rowsOut).sort()).toEqual(['16', '16']);
    expect(commit!.committedGroups).toEqual(plan.groups.map((g) => g.id));
    expect(commit!.abortedGroups).toEqual([]);
    expect(commit!.filesAdded).toBe(2);
    expect(await fileCounts(io, location)).toEqual({ data: 2, deletes: 0 });
    expect(await liveRows(io, location)).toEqual(before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'INFO',
      step: 'commit',
      outcome: 'ok',
      requestId: 'req-1',
      table: location,
      snapshotId: commit!.snapshotId,
      committed: plan.groups.map((g) => g.id),
      aborted: [],
    });
  });

  it('commits the groups that rewrote and reports the one the Map state caught', async () => {
    const location = join(tempDir(), 'events');
    await smallTable(io, location, 2);
    const before = await liveRows(io, location);
    const plan = hop(await inlinePlan({ table: { location }, policy: POLICY }));
    const [first, second] = plan.groups;
    const rewritten = hop(await rewriteHandler(hop(rewriteRequestOf(plan, first.id))));
    // What the Catch + Pass states leave for a failed item.
    const caught = {
      groupId: second.id,
      error: { Error: 'IoError', Cause: JSON.stringify({ errorType: 'IoError', errorMessage: 'read timed out', trace: [] }) },
    };

    const commit = await commitHandler(hop({ plan, results: [rewritten, caught] }));

    expect(commit.committedGroups).toEqual([first.id]);
    expect(commit.abortedGroups).toEqual([{ groupId: second.id, reason: 'rewrite failed: IoError: read timed out' }]);
    // One partition's 4 files became 1; the other's 4 and its delete file stay.
    expect(await fileCounts(io, location)).toEqual({ data: 5, deletes: 1 });
    expect(await liveRows(io, location)).toEqual(before);
  });

  it('when every group failed, commits nothing and reports each', async () => {
    const location = join(tempDir(), 'events');
    await smallTable(io, location, 2);
    const plan = hop(await inlinePlan({ table: { location }, policy: POLICY }));
    const results = plan.groups.map((g) => ({ groupId: g.id, error: { Error: 'States.Timeout' } }));

    const commit = await commitHandler(hop({ plan, results }));

    expect(commit.snapshotId).toBeNull();
    expect(commit.committedGroups).toEqual([]);
    expect(commit.abortedGroups).toEqual(plan.groups.map((g) => ({ groupId: g.id, reason: 'rewrite failed: States.Timeout' })));
    expect(await fileCounts(io, location)).toEqual({ data: 8, deletes: 2 });
  });

  it('a repeated commit event commits nothing twice', async () => {
    const location = join(tempDir(), 'events');
    await smallTable(io, location, 3);
    const { plan, results } = await runChain({ table: { location }, policy: POLICY });
    const first = await commitHandler(hop({ plan, results }));
    const again = await commitHandler(hop({ plan, results }));
    expect(again.snapshotId).toBe(first.snapshotId);
    expect(again.committedGroups).toEqual(first.committedGroups);
    expect(again.filesAdded).toBe(0);
    expect(await fileCounts(io, location)).toEqual({ data: 2, deletes: 0 });
  });

  it('a compacted table plans no groups', async () => {
    const location = join(tempDir(), 'events');
    await smallTable(io, location, 2);
    const { plan, results } = await runChain({ table: { location }, policy: POLICY });
    await commitHandler(hop({ plan, results }));
    const next = await inlinePlan({ table: { location }, policy: POLICY });
    expect(next.groups).toEqual([]);
    expect(next.startingSnapshotId).not.toBe(plan.startingSnapshotId);
  });
});

describe('handlers on S3', () => {
  it('take the endpoint from AWS_ENDPOINT_URL_S3 when the table reference has none', async () => {
    const endpoint = testS3Endpoint();
    const location = `s3://${await freshBucket()}/warehouse/events`;
    const s3 = new S3FileIO({ endpoint });
    await smallTable(s3, location, 3);
    const before = await liveRows(s3, location);
    vi.stubEnv('AWS_ENDPOINT_URL_S3', endpoint);

    const { plan, results } = await runChain({ table: { location }, policy: POLICY });
    const commit = await commitHandler(hop({ plan, results }));

    expect(commit.committedGroups).toHaveLength(2);
    expect(await fileCounts(s3, location)).toEqual({ data: 2, deletes: 0 });
    expect(await liveRows(s3, location)).toEqual(before);
  });
});

describe('malformed events', () => {
  async function planOf(): Promise<Plan> {
    const location = join(tempDir(), 'events');
    await smallTable(io, location, 2);
    return hop(await inlinePlan({ table: { location }, policy: POLICY }));
  }

  it('name the missing field', async () => {
    const plan = await planOf();
    const { group, ...header } = rewriteRequestOf(plan, plan.groups[0].id);
    const cases: [() => Promise<unknown>, string][] = [
      [() => planHandler(undefined), 'invalid plan event: the event is undefined (expected an object)'],
      [() => planHandler({}), 'invalid plan event: missing field "table" (expected an object)'],
      [() => planHandler({ table: { location: '' } }), 'invalid plan event: field "table.location" is an empty string (expected a non-empty string)'],
      [() => planHandler({ table: { location: '/t' }, policy: 'major' }), 'invalid plan event: field "policy" is a string (expected an object)'],
      [() => rewriteHandler({ ...header }), 'invalid rewrite event: missing field "group" (expected an object)'],
      [() => rewriteHandler({ ...header, group: 'g' }), 'invalid rewrite event: field "group" is a string (expected an object)'],
      [() => rewriteHandler({ ...header, group: { id: 'g' } }), 'invalid rewrite event: missing field "group.inputs" (expected an array)'],
      [() => rewriteHandler({ ...header, table: {}, group }), 'invalid rewrite event: missing field "table.location" (expected a non-empty string)'],
      [() => rewriteHandler({ plan, groupId: group.id }), 'invalid rewrite event: missing field "table" (expected an object)'],
      [() => rewriteHandler({ Items: [group] }), 'invalid rewrite event: missing field "BatchInput" (expected an object)'],
      [() => rewriteHandler({ BatchInput: { ...header, table: {} }, Items: [group] }), 'invalid rewrite event: missing field "BatchInput.table.location" (expected a non-empty string)'],
      [() => rewriteHandler({ BatchInput: header, Items: group }), 'invalid rewrite event: field "Items" is an object (expected an array)'],
      [() => rewriteHandler({ BatchInput: header, Items: [group, { id: 'g' }] }), 'invalid rewrite event: missing field "Items[1].inputs" (expected an array)'],
      [() => commitHandler({ plan }), 'invalid commit event: missing field "results" (expected an array)'],
      [() => commitHandler({ plan, results: [{ groupId: 'g' }] }), 'invalid commit event: missing field "results[0].outputs" (expected an array)'],
      [() => commitHandler({ plan, results: [{ groupId: 'g', error: 7 }] }), 'invalid commit event: field "results[0].error" is a number (expected an object)'],
    ];
    for (const [call, message] of cases) {
      const { error, lines } = await logsOf(call);
      expect(error).toBeInstanceOf(InvalidEventError);
      expect((error as Error).message).toBe(message);
      expect((error as Error).name).toBe('InvalidEventError');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 'ERROR', outcome: 'error', errorName: 'InvalidEventError', errorMessage: message });
    }
  });

  it('a group id the plan does not hold is refused, naming it', async () => {
    const plan = await planOf();
    expect(() => rewriteRequestOf(plan, 'nope')).toThrow(new ValidationError('group nope is not in the plan'));
  });
});

describe('the RewriteRequest a Map item carries', () => {
  it("holds the plan's header and its own group, none of the others, and rewrites that group alone", async () => {
    const location = join(tempDir(), 'events');
    await smallTable(io, location, 3);
    const plan = hop(await inlinePlan({ table: { location }, policy: POLICY }));
    const [first, second] = plan.groups;

    const request = rewriteRequestOf(plan, second.id);
    const { group, ...header } = request;

    expect(Object.keys(header).sort()).toEqual([...PLAN_HEADER_FIELDS].sort());
    expect(header).toEqual({
      table: plan.table,
      policy: plan.policy,
      startingSnapshotId: plan.startingSnapshotId,
      startingSequenceNumber: plan.startingSequenceNumber,
      formatVersion: plan.formatVersion,
      createdAtMs: plan.createdAtMs,
    });
    expect(group).toEqual(second);
    expect(JSON.stringify(request)).not.toContain(first.id);
    const result = await rewriteHandler(hop(request));
    expect(result.groupId).toBe(second.id);
    expect(result.checksums.rowsIn).toBe(result.checksums.rowsOut);
  });
});
