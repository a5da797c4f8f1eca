/**
 * The compaction state machine CDK synthesizes, run in aws-local-stepfunctions against moto S3,
 * each Lambda task calling the function's bundle from the cloud assembly (test/support/local-sfn.ts
 * says what is local and how; the Distributed Map runs in a stand-in on the same S3 objects,
 * test/support/distributed-map.ts).
 */
import { App } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PackiceStack } from '../../cdk/packice-stack.js';
import type { CompactionCommitResult } from '../../lib/compaction/messages.js';
import { S3FileIO } from '../../lib/io/s3.js';
import { tempDir } from '../support/fixtures.js';
import { LocalDeployment, type Execution, type LocalStateMachine } from '../support/local-sfn.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { startS3Interposer, type S3Interposer } from '../support/s3-interposer.js';
import { fileCounts, liveRows, smallTable } from '../support/small-table.js';

const POLICY = { minInputFiles: 2 } as const;

let s3: S3FileIO;
let tableBucket: string;
let interposer: S3Interposer;
let stack: PackiceStack;
let deployment: LocalDeployment;
let compaction: LocalStateMachine;

beforeAll(async () => {
  const endpoint = testS3Endpoint();
  s3 = new S3FileIO({ endpoint });
  tableBucket = await freshBucket();
  interposer = await startS3Interposer(endpoint);
  const app = new App({ outdir: tempDir('packice-sfn-'), context: { tableLocations: `s3://${tableBucket}/warehouse` } });
  stack = new PackiceStack(app, 'Packice');
  deployment = await LocalDeployment.deploy(stack, { functionS3Endpoint: interposer.endpoint });
  compaction = deployment.stateMachine(stack.compaction.stateMachine);
});

afterAll(async () => {
  deployment?.dispose();
  await interposer?.stop();
});

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
    const result = execution.output as unknown as CompactionCommitResult;
    expect(result.committedGroups).toHaveLength(2);
    expect(result.abortedGroups).toEqual([]);
    expect(statesEntered(execution).filter((s) => !s.startsWith('Rewrite'))).toEqual(['Plan', 'Any groups?', 'Commit', 'Compacted']);
    expect(statesEntered(execution).filter((s) => s === 'Rewrite')).toHaveLength(2);
    expect(execution.invocations.map((i) => i.state).sort()).toEqual(['Commit', 'Plan', 'Rewrite', 'Rewrite']);
    expect(await fileCounts(s3, location)).toEqual({ data: 2, deletes: 0 });
    expect(await liveRows(s3, location)).toEqual(before);
  });
});
