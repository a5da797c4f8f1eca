/**
 * The Report state (served by the commit function) on a local table: the run's figures, a failed
 * group reported as aborted while the other committed, GB-seconds and dollars from the prices
 * table, the JSON written under the work location.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { handler as commitHandler } from '../../functions/commit.js';
import { handler as planHandler } from '../../functions/plan.js';
import { handler as rewriteHandler } from '../../functions/rewrite.js';
import type { Plan } from '../../lib/compaction/messages.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { PRICES_SOURCE, pricesFor, REGION_PRICES } from '../../lib/pipeline/prices.js';
import type { RewriteOutcome } from '../../lib/pipeline/group-outcome.js';
import { FUNCTION_MEMORY_ENV, type ReportRequest } from '../../lib/pipeline/report-step.js';
import { planHeaderOf, rewriteRequestOf } from '../../lib/pipeline/rewrite-request.js';
import { WORK_LOCATION_ENV } from '../../lib/pipeline/plan-payload.js';
import { tempDir } from '../support/fixtures.js';
import { smallTable } from '../support/small-table.js';

const hop = <T>(m: T): T => JSON.parse(JSON.stringify(m)) as T;

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('report', () => {
  it('counts the committed group, reports the failed one as aborted, and prices the run', async () => {
    // Prepare: a plan of two groups, one rewritten, one failed as the Map's Catch leaves it.
    const location = join(tempDir(), 'events');
    await smallTable(new LocalFileIO(), location, 2);
    const work = join(tempDir(), 'work');
    vi.stubEnv(WORK_LOCATION_ENV, work);
    vi.stubEnv(FUNCTION_MEMORY_ENV, JSON.stringify({ plan: 1024, rewrite: 4096, commit: 2048 }));
    vi.stubEnv('AWS_REGION', 'ap-south-2');
    const plan = hop((await planHandler({ table: { location }, policy: { minInputFiles: 2 } })) as Plan);
    const [first, second] = plan.groups;
    const rewritten = hop(await rewriteHandler(hop(rewriteRequestOf(plan, first.id))));
    const results: RewriteOutcome[] = [rewritten, { groupId: second.id, error: { Error: 'States.Timeout' } }];
    const commit = hop(await commitHandler(hop({ plan, results })));
    const startTime = new Date(plan.createdAtMs - 2000).toISOString();

    // Act
    const request: ReportRequest = { plan, results, commit, execution: { name: 'run-1', startTime } };
    const report = await commitHandler(request);

    // Assess
    expect(report).toMatchObject({
      table: location,
      execution: 'run-1',
      snapshotId: commit.snapshotId,
      filesIn: first.inputs.length,
      filesOut: rewritten.outputs.length,
      bytesRead: rewritten.bytesRead,
      bytesWritten: rewritten.bytesWritten,
      rowsIn: Number(rewritten.checksums.rowsIn),
      rowsOut: Number(rewritten.checksums.rowsOut),
      groups: { planned: 2, committed: 1, aborted: 1 },
      committedGroups: [first.id],
      abortedGroups: [{ groupId: second.id, reason: 'rewrite failed: States.Timeout' }],
      lambda: { invocations: 5 },
      // Plan, Choice, Map, two Rewrites and a Pass for the failed one, one commit attempt, Report, Succeed.
      stateTransitions: 9,
      cost: { region: 'ap-south-2', pricedAs: 'us-east-1', pricesFrom: PRICES_SOURCE },
    });
    // Plan: from the execution's start to the plan (2 s at 1 GiB); the rewrite that answered at 4 GiB; the commit at 2 GiB.
    const gbSeconds = (1 * 2000 + 4 * rewritten.durationMs + 2 * commit.durationMs) / 1000;
    expect(report.lambda.gbSeconds).toBeCloseTo(gbSeconds, 3);
    const p = REGION_PRICES['us-east-1'];
    expect(report.cost.lambdaUsd).toBeCloseTo(gbSeconds * p.lambdaGbSecondUsd + 5 * p.lambdaRequestUsd, 6);
    expect(report.cost.stateTransitionsUsd).toBeCloseTo(9 * 0.000025, 9);
    expect(report.cost.totalUsd).toBeCloseTo(report.cost.lambdaUsd + report.cost.stateTransitionsUsd, 6);
    expect(report.location).toBe(join(work, 'reports', location.replace(/^\//, ''), 'run-1.json'));
    expect(JSON.parse(readFileSync(report.location!, 'utf8'))).toEqual(report);
    expect(pricesFor('eu-west-1').pricedAs).toBe('eu-west-1');
  });

  it('bills the groups of a batch, done or failed, their share of its invocation: one request, one Rewrite transition, the batch\'s duration once', async () => {
    // Prepare: both groups rewritten in one batch (a 10,240 MB function's).
    const location = join(tempDir(), 'events');
    await smallTable(new LocalFileIO(), location, 2);
    vi.stubEnv(WORK_LOCATION_ENV, join(tempDir(), 'work'));
    vi.stubEnv(FUNCTION_MEMORY_ENV, JSON.stringify({ plan: 1024, rewrite: 10240, commit: 2048 }));
    const plan = hop((await planHandler({ table: { location }, policy: { minInputFiles: 2 } })) as Plan);
    const [done, other] = hop(await rewriteHandler(hop({ BatchInput: planHeaderOf(plan), Items: plan.groups })));
    // The batch's second group failed inside it: it still bills its share, and no Pass ran for it.
    const results: RewriteOutcome[] = [done, { groupId: other.groupId, error: { Error: 'InvalidFileError', Cause: 'not Parquet' }, batch: other.batch }];
    const commit = hop(await commitHandler(hop({ plan, results })));

    // Act
    const report = await commitHandler({ plan, results, commit, execution: { name: 'run-b', startTime: new Date(plan.createdAtMs).toISOString() } });

    // Assess
    const shares = results.map((r) => ('batch' in r ? r.batch : undefined));
    expect(shares[0]).toEqual({ groups: 2, durationMs: expect.any(Number) });
    expect(shares[1]).toEqual(shares[0]);
    expect(report).toMatchObject({ groups: { planned: 2, committed: 1, aborted: 1 }, lambda: { invocations: 4 }, stateTransitions: 3 + 1 + 1 + 2 });
    expect(report.lambda.gbSeconds).toBeCloseTo((10 * shares[0]!.durationMs + 2 * commit.durationMs) / 1000, 3);
  });
});
