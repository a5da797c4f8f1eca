/**
 * The Lambda handlers on tables named in a catalog service (moto's Glue and S3 Tables on
 * loopback): each handler resolves the catalog from the name in its event, compacts and expires
 * through it, and every commit swaps the catalog's pointer to a new `<NNNNN>-<uuid>.metadata.json`.
 * The endpoints come from the environment, as the SDK reads them in Lambda.
 */
import { CreateStateMachineCommand, DescribeExecutionCommand, ListExecutionsCommand, SFNClient } from '@aws-sdk/client-sfn';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as commitHandler } from '../../functions/commit.js';
import { handler as expireHandler } from '../../functions/expire.js';
import { handler as orphansHandler } from '../../functions/orphans.js';
import { handler as planHandler } from '../../functions/plan.js';
import { handler as rewriteHandler } from '../../functions/rewrite.js';
import { handler as triggerHandler } from '../../functions/trigger.js';
import type { GroupResult, Plan } from '../../lib/compaction/messages.js';
import { fileIOFor } from '../../lib/io/index.js';
import { MAINTAINED_TABLES_ENV } from '../../lib/pipeline/maintained-table.js';
import { isStoredPlan } from '../../lib/pipeline/plan-payload.js';
import { rewriteRequestOf } from '../../lib/pipeline/rewrite-request.js';
import { glueSmallTable, metadataFileOf, s3TablesSmallTable } from '../support/catalog-tables.js';
import { TEST_AWS_ENV } from '../support/moto.js';
import { testS3Endpoint } from '../support/s3.js';
import { fileCounts, liveRows } from '../support/small-table.js';

const POLICY = { minInputFiles: 2 } as const;

let moto: string;

beforeEach(() => {
  moto = testS3Endpoint();
  for (const service of ['S3', 'GLUE', 'S3TABLES', 'SFN']) vi.stubEnv(`AWS_ENDPOINT_URL_${service}`, moto);
});

afterEach(() => {
  vi.unstubAllEnvs();
});

/** What crosses a state: JSON only. */
function hop<T>(message: T): T {
  return JSON.parse(JSON.stringify(message)) as T;
}

// S3 Tables removes unreferenced files itself and refuses our listings and deletes (moto too: 405).
describe.each([
  ['AWS Glue', glueSmallTable, false],
  ['Amazon S3 Tables', s3TablesSmallTable, true],
] as const)('the handlers on a table in %s (moto)', (_, make, leftToCatalog) => {
  it('plan → rewrite → commit compact 8 data files to 2 through the catalog; expire expires through it; orphans delete nothing', async () => {
    // Prepare: the small table, 5 commits after its first metadata file
    const table = await make(moto);
    const io = fileIOFor(table.location, { s3Endpoint: moto });
    const before = await liveRows(io, table.name);
    const start = await table.pointer();
    expect(start.metadataLocation).toMatch(metadataFileOf(table, 5));

    // Act
    const message = hop(await planHandler(hop({ table: { location: table.name }, policy: POLICY })));
    if (isStoredPlan(message)) throw new Error('expected an inline plan');
    const plan: Plan = message;
    const results: GroupResult[] = [];
    for (const g of plan.groups) results.push(hop(await rewriteHandler(hop(rewriteRequestOf(plan, g.id)))));
    const commit = hop(await commitHandler(hop({ plan, results })));
    const compacted = await table.pointer();
    const retention = { table: { location: table.name }, retention: { olderThanMs: 0, retainLast: 1 } };
    const expired = hop(await expireHandler(hop(retention)));
    const afterExpiry = await table.pointer();
    const orphans = hop(await orphansHandler(hop(retention)));

    // Assess
    expect(plan.table).toEqual({ location: table.name });
    expect(plan.groups).toHaveLength(2);
    expect(commit.committedGroups).toEqual(plan.groups.map((g) => g.id));
    expect(commit.abortedGroups).toEqual([]);
    expect(compacted.metadataLocation).toMatch(metadataFileOf(table, 6));
    if (compacted.previousMetadataLocation !== undefined) expect(compacted.previousMetadataLocation).toBe(start.metadataLocation);
    expect(expired).toMatchObject({ table: table.name, retainedSnapshots: 1, dryRun: false, filesLeftToCatalog: leftToCatalog });
    expect(expired.expiredSnapshots).toBe(5);
    if (leftToCatalog) expect(expired.deleted).toBe(0);
    else expect(expired.deleted).toBeGreaterThan(0);
    expect(afterExpiry.metadataLocation).toMatch(metadataFileOf(table, 7));
    if (afterExpiry.previousMetadataLocation !== undefined) expect(afterExpiry.previousMetadataLocation).toBe(compacted.metadataLocation);
    // Every unreferenced file is younger than the 3-day delay (Glue); S3 Tables lets nothing be listed.
    expect(orphans).toMatchObject({ table: table.name, deleted: 0, filesLeftToCatalog: leftToCatalog });
    if (!leftToCatalog) expect(orphans.listed).toBeGreaterThan(0);
    expect(await fileCounts(io, table.name)).toEqual({ data: 2, deletes: 0 });
    expect(await liveRows(io, table.name)).toEqual(before);
  });
});

describe('the trigger on a Glue table', () => {
  it("an Object Created event for a metadata file under the table's storage location starts its compaction by name", async () => {
    // Prepare: the table configured by name and storage location, a state machine on moto
    const table = await glueSmallTable(moto);
    const sfn = new SFNClient({ endpoint: moto, region: TEST_AWS_ENV.AWS_REGION });
    const { stateMachineArn } = await sfn.send(
      new CreateStateMachineCommand({
        name: `packice-catalog-${crypto.randomUUID()}`,
        definition: JSON.stringify({ StartAt: 'Plan', States: { Plan: { Type: 'Pass', End: true } } }),
        roleArn: 'arn:aws:iam::123456789012:role/packice-compaction',
      }),
    );
    vi.stubEnv(MAINTAINED_TABLES_ENV, JSON.stringify([{ location: table.name, storageLocation: table.location, policy: POLICY }]));
    vi.stubEnv('PACKICE_STATE_MACHINE_ARN', stateMachineArn!);
    const { metadataLocation } = await table.pointer();
    const [, bucket, key] = /^s3:\/\/([^/]+)\/(.*)$/.exec(metadataLocation!)!;

    // Act
    const outcomes = await triggerHandler({ 'detail-type': 'Object Created', source: 'aws.s3', detail: { bucket: { name: bucket }, object: { key } } });

    // Assess
    expect(outcomes).toEqual([expect.objectContaining({ table: table.name, action: 'started', groups: 2 })]);
    const [execution] = (await sfn.send(new ListExecutionsCommand({ stateMachineArn }))).executions ?? [];
    expect(execution.name).toMatch(/^db\d+_\d+_events-[0-9a-f]{10}-\d+$/);
    const input = JSON.parse((await sfn.send(new DescribeExecutionCommand({ executionArn: execution.executionArn }))).input!) as unknown;
    expect(input).toEqual({ table: { location: table.name }, policy: POLICY });
  });
});
