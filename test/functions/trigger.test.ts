/**
 * The trigger on moto (S3 and Step Functions on one loopback server): S3 "Object Created" events
 * as EventBridge delivers them start one compaction execution per table and snapshot, however
 * many arrive, and none for a healthy table or a table nobody configured.
 */
import { CreateStateMachineCommand, ListExecutionsCommand, SFNClient, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { S3FileIO } from '../../lib/io/s3.js';
import { runCompaction } from '../../lib/pipeline/local-runner.js';
import { MAINTAINED_TABLES_ENV, type MaintainedTable } from '../../lib/pipeline/maintained-table.js';
import { executionName, type TriggerOutcome } from '../../lib/pipeline/trigger-step.js';
import { TEST_AWS_ENV } from '../support/moto.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { fileCounts, smallTable } from '../support/small-table.js';

const POLICY = { minInputFiles: 2 } as const;

/** What EventBridge delivers for an S3 object created in a bucket with EventBridge notifications on. */
function objectCreated(bucket: string, key: string): unknown {
  return {
    version: '0',
    id: crypto.randomUUID(),
    'detail-type': 'Object Created',
    source: 'aws.s3',
    account: '123456789012',
    time: new Date().toISOString(),
    region: 'us-east-1',
    resources: [`arn:aws:s3:::${bucket}`],
    detail: { version: '0', bucket: { name: bucket }, object: { key, size: 2048, etag: 'e' }, reason: 'PutObject' },
  };
}

let endpoint: string;
let sfn: SFNClient;
let trigger: (event: unknown) => Promise<TriggerOutcome[]>;

beforeAll(async () => {
  endpoint = testS3Endpoint();
  sfn = new SFNClient({
    endpoint,
    region: TEST_AWS_ENV.AWS_REGION,
    credentials: { accessKeyId: TEST_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: TEST_AWS_ENV.AWS_SECRET_ACCESS_KEY },
  });
});

afterEach(() => {
  vi.unstubAllEnvs();
});

/** A fresh state machine on moto, and the trigger handler configured for `tables` and it. */
async function setUp(tables: MaintainedTable[]): Promise<string> {
  const { stateMachineArn } = await sfn.send(
    new CreateStateMachineCommand({
      name: `packice-compaction-${crypto.randomUUID()}`,
      definition: JSON.stringify({ StartAt: 'Plan', States: { Plan: { Type: 'Pass', End: true } } }),
      roleArn: 'arn:aws:iam::123456789012:role/packice-compaction',
    }),
  );
  vi.stubEnv('AWS_ENDPOINT_URL_S3', endpoint);
  vi.stubEnv('AWS_ENDPOINT_URL_SFN', endpoint);
  vi.stubEnv(MAINTAINED_TABLES_ENV, JSON.stringify(tables));
  vi.stubEnv('PACKICE_STATE_MACHINE_ARN', stateMachineArn!);
  trigger = (await import('../../functions/trigger.js')).handler;
  return stateMachineArn!;
}

async function executions(stateMachineArn: string): Promise<{ name?: string; status?: string }[]> {
  return (await sfn.send(new ListExecutionsCommand({ stateMachineArn }))).executions ?? [];
}

describe('trigger', () => {
  it('a burst of Object Created events for one metadata file starts one execution, named after the table and snapshot', async () => {
    // Prepare: a table of small files, configured with a policy it breaks.
    const bucket = await freshBucket();
    const location = `s3://${bucket}/warehouse/db/events`;
    const table = await smallTable(new S3FileIO({ endpoint }), location, 2);
    const snapshotId = String(table.metadata.currentSnapshotId);
    const stateMachineArn = await setUp([{ location, policy: POLICY }]);
    const key = `warehouse/db/events/metadata/${table.metadataLocation!.split('/').pop()}`;
    expect(key).toMatch(/^warehouse\/db\/events\/metadata\/v\d+\.metadata\.json$/);

    // Act: ten deliveries at once (S3 and EventBridge deliver at least once), then two late ones.
    const burst = await Promise.all(Array.from({ length: 10 }, () => trigger(objectCreated(bucket, key))));
    const late = await trigger(objectCreated(bucket, key));
    const running = await executions(stateMachineArn);
    await sfn.send(new StopExecutionCommand({ executionArn: (await sfn.send(new ListExecutionsCommand({ stateMachineArn }))).executions![0].executionArn! }));
    const afterStop = await trigger(objectCreated(bucket, key));

    // Assess
    const name = executionName(location, snapshotId);
    expect(name).toMatch(/^db_events-[0-9a-f]{10}-\d+$/);
    expect(name.length).toBeLessThanOrEqual(80);
    expect(running).toHaveLength(1);
    expect(running[0]).toMatchObject({ name, status: 'RUNNING' });
    for (const outcomes of [...burst, late]) {
      expect(outcomes).toEqual([expect.objectContaining({ table: location, snapshotId, executionName: name, groups: 2 })]);
      expect(['started', 'already-started']).toContain(outcomes[0].action);
    }
    // A name Step Functions already used is success: that snapshot's compaction was started.
    expect(afterStop).toEqual([expect.objectContaining({ action: 'already-started', executionName: name })]);
    expect(await executions(stateMachineArn)).toHaveLength(1);
  });

  it('events for a healthy table, for a non-metadata object or for a table nobody configured start none; the schedule checks every table', async () => {
    // Prepare: a table compacted under the policy, its new metadata file's event, and a second, unhealthy table.
    const bucket = await freshBucket();
    const s3 = new S3FileIO({ endpoint });
    const healthy = `s3://${bucket}/warehouse/db/compacted`;
    await smallTable(s3, healthy, 3);
    vi.stubEnv('AWS_ENDPOINT_URL_S3', endpoint);
    const run = await runCompaction({ table: { location: healthy }, policy: POLICY }, { parallelism: 0 });
    expect(run.commit?.committedGroups).toHaveLength(2);
    expect(await fileCounts(s3, healthy)).toEqual({ data: 2, deletes: 0 });
    const unhealthy = `s3://${bucket}/warehouse/db/events`;
    await smallTable(s3, unhealthy, 3);
    const unconfigured = `s3://${bucket}/warehouse/db/other`;
    await smallTable(s3, unconfigured, 3);
    const stateMachineArn = await setUp([
      { location: healthy, policy: POLICY },
      { location: unhealthy, policy: POLICY },
    ]);
    const metadataKeys = async (location: string): Promise<string[]> => {
      const keys: string[] = [];
      for await (const f of s3.list(`${location}/metadata`)) if (f.path.endsWith('.metadata.json')) keys.push(f.path.replace(`s3://${bucket}/`, ''));
      return keys;
    };

    // Act
    const healthyOutcomes = await Promise.all((await metadataKeys(healthy)).map((k) => trigger(objectCreated(bucket, k))));
    const otherObject = await trigger(objectCreated(bucket, 'warehouse/db/events/data/category=a/00000-0.parquet'));
    const unconfiguredOutcomes = await Promise.all((await metadataKeys(unconfigured)).map((k) => trigger(objectCreated(bucket, k))));
    const before = await executions(stateMachineArn);
    const nightly = await trigger({ tables: 'all' });

    // Assess
    expect(healthyOutcomes.length).toBeGreaterThan(1);
    for (const outcomes of healthyOutcomes) expect(outcomes).toEqual([expect.objectContaining({ table: healthy, action: 'healthy', groups: 0 })]);
    expect(otherObject).toEqual([]);
    for (const outcomes of unconfiguredOutcomes) expect(outcomes).toEqual([]);
    expect(before).toEqual([]);
    expect(nightly.map((o) => [o.table, o.action])).toEqual([
      [healthy, 'healthy'],
      [unhealthy, 'started'],
    ]);
    expect((await executions(stateMachineArn)).map((e) => e.name)).toEqual([nightly[1].executionName]);
  });

  it('an event that is neither names what it expected', async () => {
    await setUp([]);
    await expect(trigger({ 'detail-type': 'Object Deleted' })).rejects.toThrow(
      'invalid trigger event: the event is an object (expected an S3 "Object Created" event or {"tables":"all"})',
    );
  });
});
