/**
 * The CDK construct, synthesized in-process (esbuild runs locally; no Docker, no credentials):
 * the six functions, the state machines' shape, the rule, schedules, queue, IAM scope and the
 * alarms — then each bundle from the
 * cloud assembly is copied alone into an empty folder and run in a clean Node process on a real
 * table in moto S3, which proves the `.wasm` files landed beside it and nothing is missing from it.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXEC_WRAPPER, IcebergMaintenance, LAZY_MODULES, lazyModuleFile, STEPS, WASM_FILES, WASM_STEPS, WORKER_BUNDLES, type IcebergMaintenanceProps, type Step } from '../../cdk/iceberg-maintenance.js';
import { EXAMPLE_TABLE_LOCATIONS, PackiceStack, tableLocationsFromContext } from '../../cdk/packice-stack.js';
import { randomUUID } from 'node:crypto';
import { CreateStateMachineCommand, DescribeExecutionCommand, ListExecutionsCommand, SFNClient } from '@aws-sdk/client-sfn';
import type { GroupResult, Plan, PlanRequest } from '../../lib/compaction/messages.js';
import type { CommitStateResult } from '../../lib/pipeline/commit-step.js';
import type { CompactionReport } from '../../lib/pipeline/report-step.js';
import type { ExpireSummary, OrphanSummary } from '../../lib/pipeline/retention-request.js';
import type { TriggerOutcome } from '../../lib/pipeline/trigger-step.js';
import { REPORT_METRICS } from '../../lib/pipeline/report-step.js';
import { S3FileIO } from '../../lib/io/s3.js';
import { rewriteRequestOf } from '../../lib/pipeline/rewrite-request.js';
import { REPO_ROOT, tempDir } from '../support/fixtures.js';
import { glueSmallTable } from '../support/catalog-tables.js';
import { flatten } from '../support/cfn-template.js';
import { TEST_AWS_ENV } from '../support/moto.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { fileCounts, liveRows, smallTable } from '../support/small-table.js';

const LOCATIONS = ['s3://lake-a/warehouse/db/events', 's3a://lake-a/warehouse/db/clicks/', 's3://lake-b/t'];
/** Every S3 ARN the policies may name: the buckets (for List) and the objects under each table. */
const ALLOWED_S3_ARNS = [
  'arn:aws:s3:::lake-a',
  'arn:aws:s3:::lake-a/warehouse/db/events/*',
  'arn:aws:s3:::lake-a/warehouse/db/clicks/*',
  'arn:aws:s3:::lake-b',
  'arn:aws:s3:::lake-b/t/*',
];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
interface Resource {
  readonly Type: string;
  readonly Properties: { [k: string]: Json };
}
interface Statement {
  readonly Action: string | string[];
  readonly Resource: Json;
  readonly Condition?: Json;
}

let outdir: string;
let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  outdir = tempDir('packice-cdk-');
  const app = new App({ outdir, context: { tableLocations: LOCATIONS.join(',') } });
  const stack = new PackiceStack(app, 'Packice', {
    maintenance: { maxConcurrency: 7, memorySize: 1536, timeout: Duration.minutes(10) },
  });
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources as Record<string, Resource>;
});

function statementsOf(policy: Resource): Statement[] {
  return (policy.Properties.PolicyDocument as unknown as { Statement: Statement[] }).Statement;
}

function ofType(type: string): [string, Resource][] {
  return Object.entries(resources).filter(([, r]) => r.Type === type);
}

function functionOf(step: Step): [string, Resource] {
  const found = ofType('AWS::Lambda::Function').filter(([, r]) => r.Properties.Description === `packice maintenance: ${step}`);
  expect(found).toHaveLength(1);
  return found[0];
}

/** The S3 statements in the policies attached to a function's role. */
function s3StatementsOf(step: Step): Statement[] {
  const [, fn] = functionOf(step);
  const role = (fn.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
  return ofType('AWS::IAM::Policy')
    .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role))
    .flatMap(([, p]) => statementsOf(p))
    .filter((s) => [s.Action].flat().some((a) => a.startsWith('s3:')));
}

function actionsOf(statements: Statement[]): string[] {
  return [...new Set(statements.flatMap((s) => [s.Action].flat()))].sort();
}

function resourcesOf(statements: Statement[]): string[] {
  return [...new Set(statements.flatMap((s) => [s.Resource].flat().map(flatten)))].sort();
}

type Definition = { StartAt: string; States: Record<string, Record<string, Json>> };

/** The plan's header, as a RewriteRequest's or a batch's BatchInput takes it from the state. */
const HEADER_PATHS = {
  'table.$': '$.plan.table',
  'policy.$': '$.plan.policy',
  'startingSnapshotId.$': '$.plan.startingSnapshotId',
  'startingSequenceNumber.$': '$.plan.startingSequenceNumber',
  'formatVersion.$': '$.plan.formatVersion',
  'createdAtMs.$': '$.plan.createdAtMs',
} as const;

/** The compaction state machine (`StateMachine…`) or the retention one (`RetentionStateMachine…`). */
function stateMachineOf(which: 'compaction' | 'retention'): [string, Resource] {
  const named = ofType('AWS::StepFunctions::StateMachine').filter(([id]) => /RetentionStateMachine/.test(id) === (which === 'retention'));
  expect(named).toHaveLength(1);
  return named[0];
}

function definition(which: 'compaction' | 'retention' = 'compaction'): Definition {
  const [, sm] = stateMachineOf(which);
  return JSON.parse(flatten(sm.Properties.DefinitionString)) as Definition;
}

describe('IcebergMaintenance template', () => {
  it('has six arm64 Node functions, one per step, with the given memory and timeout, X-Ray on', () => {
    template.resourceCountIs('AWS::Lambda::Function', 6);
    expect(STEPS).toEqual(['plan', 'rewrite', 'commit', 'trigger', 'expire', 'orphans']);
    for (const step of STEPS) {
      const [, fn] = functionOf(step);
      expect(fn.Properties).toMatchObject({
        Handler: 'index.handler',
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        MemorySize: 1536,
        Timeout: step === 'trigger' ? 120 : 600,
        TracingConfig: { Mode: 'Active' },
      });
    }
    expect(functionOf('rewrite')[1].Properties.EphemeralStorage).toEqual({ Size: 4096 });
    const env = (step: Step): Record<string, Json> => (functionOf(step)[1].Properties.Environment as { Variables: Record<string, Json> }).Variables;
    expect(JSON.parse(env('trigger').PACKICE_TABLES as string)).toEqual(LOCATIONS.map((location) => ({ location })));
    expect(flatten(env('trigger').PACKICE_STATE_MACHINE_ARN)).toBe(`<${stateMachineOf('compaction')[0]}>`);
    expect(JSON.parse(env('commit').PACKICE_FUNCTION_MEMORY as string)).toEqual({ plan: 1536, rewrite: 1536, commit: 1536 });
  });

  it('has two state machines, each with execution logs and X-Ray tracing on', () => {
    template.resourceCountIs('AWS::StepFunctions::StateMachine', 2);
    for (const which of ['compaction', 'retention'] as const) {
      const [, sm] = stateMachineOf(which);
      expect(sm.Properties.TracingConfiguration).toEqual({ Enabled: true });
      expect(sm.Properties.LoggingConfiguration).toMatchObject({ Level: 'ALL', IncludeExecutionData: false });
    }
    const outputs = template.toJSON().Outputs as Record<string, { Value: Json; Description: string }>;
    const byName = (part: string): Json => Object.entries(outputs).find(([k]) => k.includes(part))![1].Value;
    expect(byName('CompactionStateMachineName')).toEqual({ 'Fn::GetAtt': [stateMachineOf('compaction')[0], 'Name'] });
    expect(byName('RetentionStateMachineName')).toEqual({ 'Fn::GetAtt': [stateMachineOf('retention')[0], 'Name'] });
    const workBucket = ofType('AWS::S3::Bucket')[0][0];
    expect(flatten(byName('ReportLocation'))).toBe(`s3://<${workBucket}>/packice/reports/`);
  });

  it('sends S3 Object Created events for the tables\' metadata files to the trigger, with a dead-letter queue', () => {
    const rules = ofType('AWS::Events::Rule');
    expect(rules).toHaveLength(1);
    const [, rule] = rules[0];
    expect(rule.Properties.EventPattern).toEqual({
      source: ['aws.s3'],
      'detail-type': ['Object Created'],
      detail: {
        bucket: { name: ['lake-a', 'lake-b'] },
        object: {
          key: [
            { wildcard: 'warehouse/db/events/metadata/*.metadata.json' },
            { wildcard: 'warehouse/db/clicks/metadata/*.metadata.json' },
            { wildcard: 't/metadata/*.metadata.json' },
          ],
        },
      },
    });
    const queues = ofType('AWS::SQS::Queue');
    expect(queues).toHaveLength(1);
    const [[queueId]] = queues;
    const [target] = rule.Properties.Targets as Record<string, Json>[];
    expect(flatten(target.Arn)).toBe(`<${functionOf('trigger')[0]}.Arn>`);
    expect(flatten((target.DeadLetterConfig as Record<string, Json>).Arn)).toBe(`<${queueId}.Arn>`);
    // Events the trigger fails on (Lambda's asynchronous retries spent) land there too.
    expect(flatten((functionOf('trigger')[1].Properties.DeadLetterConfig as Record<string, Json>).TargetArn)).toBe(`<${queueId}.Arn>`);
  });

  it('schedules nightly compaction (trigger over every table) and retention (the retention state machine over every table)', () => {
    const schedules = ofType('AWS::Scheduler::Schedule').map(([, r]) => r.Properties);
    expect(schedules).toHaveLength(2);
    const [compaction] = schedules.filter((s) => flatten((s.Target as Record<string, Json>).Arn).includes(functionOf('trigger')[0]));
    const [retention] = schedules.filter((s) => flatten((s.Target as Record<string, Json>).Arn).includes(stateMachineOf('retention')[0]));
    expect(compaction.ScheduleExpression).toBe('cron(0 2 * * ? *)');
    expect(JSON.parse((compaction.Target as Record<string, string>).Input)).toEqual({ tables: 'all' });
    expect(retention.ScheduleExpression).toBe('cron(0 4 * * ? *)');
    expect(JSON.parse((retention.Target as Record<string, string>).Input)).toEqual({ tables: LOCATIONS.map((location) => ({ table: { location } })) });
    const [[queueId]] = ofType('AWS::SQS::Queue');
    for (const s of [compaction, retention]) {
      expect(flatten(((s.Target as Record<string, Json>).DeadLetterConfig as Record<string, Json>).Arn)).toBe(`<${queueId}.Arn>`);
    }
  });

  it('runs Expire then Orphans for each table of the retention state machine, retrying transient errors; a failed table is caught and fails the execution at the end', () => {
    const d = definition('retention');
    expect(d.StartAt).toBe('Each table');
    expect(d.States['Each table']).toMatchObject({
      Type: 'Map', ItemsPath: '$.tables', MaxConcurrency: 2, ResultSelector: { 'failures.$': '$[?(@.failed)]' }, ResultPath: '$.outcome', Next: 'Any table failed?',
    });
    expect(d.States['Any table failed?']).toMatchObject({
      Type: 'Choice', Choices: [{ Variable: '$.outcome.failures[0]', IsPresent: true, Next: 'Name failed tables' }], Default: 'Retained',
    });
    expect(d.States['Name failed tables']).toMatchObject({ Type: 'Pass', Parameters: { 'cause.$': 'States.JsonToString($.outcome.failures)' }, Next: 'Retention failed' });
    expect(d.States['Retention failed']).toEqual({ Type: 'Fail', Error: 'RetentionFailed', CausePath: '$.cause' });
    const inner = (d.States['Each table'].ItemProcessor as unknown as Definition).States;
    expect(inner.Expire).toMatchObject({ Type: 'Task', Next: 'Orphans', ResultPath: '$.expire' });
    expect(inner.Orphans).toMatchObject({ Type: 'Task', Next: 'Table done', ResultPath: '$.orphans' });
    for (const task of [inner.Expire, inner.Orphans]) {
      expect(task.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'Table failed' }]);
    }
    expect(inner['Table failed']).toEqual({ Type: 'Pass', Parameters: { 'failed.$': '$.table', 'error.$': '$.error.Error' }, End: true });
    expect(flatten((inner.Expire.Parameters as Record<string, Json>).FunctionName)).toBe(`<${functionOf('expire')[0]}.Arn>`);
    expect(flatten((inner.Orphans.Parameters as Record<string, Json>).FunctionName)).toBe(`<${functionOf('orphans')[0]}.Arn>`);
    for (const task of [inner.Expire, inner.Orphans]) {
      expect((task.Retry as { ErrorEquals: string[] }[]).map((r) => r.ErrorEquals).slice(1)).toEqual([['IoError'], ['Lambda.TooManyRequestsException'], ['CommitConflictError']]);
    }
  });

  it('runs Plan → Choice → inline Map or Distributed Map over the stored plan (Rewrite, caught per item) → Commit (retried) → Report → Succeed', () => {
    const d = definition();
    expect(Object.keys(d.States).sort()).toEqual([
      'Any groups?', 'Commit', 'Compacted', 'Drop dangling deletes', 'Nothing to compact', 'Plan', 'Report', 'Rewrite groups', 'Rewrite stored groups',
    ]);
    expect(d.States.Plan).toMatchObject({ Type: 'Task', Next: 'Any groups?', ResultSelector: { 'plan.$': '$.Payload' } });
    expect(d.States['Any groups?']).toMatchObject({
      Type: 'Choice',
      Choices: [
        { Variable: '$.plan.groupsFile', IsPresent: true, Next: 'Rewrite stored groups' },
        { Variable: '$.plan.groups[0]', IsPresent: true, Next: 'Rewrite groups' },
        { Variable: '$.plan.danglingDeletes', IsPresent: true, Next: 'Drop dangling deletes' },
      ],
      Default: 'Nothing to compact',
    });
    expect(d.States['Drop dangling deletes']).toEqual({ Type: 'Pass', Result: [], ResultPath: '$.results', Next: 'Commit' });
    expect(d.States['Nothing to compact']).toEqual({ Type: 'Succeed' });

    // Each item is a RewriteRequest: the plan's header and one group, never the whole plan.
    const itemSelector = { ...HEADER_PATHS, 'group.$': '$$.Map.Item.Value' };
    const map = d.States['Rewrite groups'];
    expect(map).toMatchObject({ Type: 'Map', MaxConcurrency: 7, ItemsPath: '$.plan.groups', ItemSelector: itemSelector, ResultPath: '$.results', Next: 'Commit' });
    expect(JSON.stringify(map.ItemSelector)).not.toContain('"$.plan"');
    const stored = d.States['Rewrite stored groups'];
    expect(stored).toMatchObject({
      Type: 'Map',
      MaxConcurrency: 7,
      ItemSelector: itemSelector,
      ResultPath: '$.results',
      ToleratedFailurePercentage: 100,
      Next: 'Commit',
      ItemReader: { ReaderConfig: { InputType: 'JSON' }, Parameters: { 'Key.$': '$.plan.groupsFile.key' } },
      ResultWriter: { Parameters: { Prefix: 'packice/map-results' } },
      ItemProcessor: { ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' } },
    });
    const workBucket = ofType('AWS::S3::Bucket').map(([id]) => id);
    expect(workBucket).toHaveLength(1);
    for (const io of ['ItemReader', 'ResultWriter']) {
      expect(flatten(((stored[io] as Record<string, Json>).Parameters as Record<string, Json>).Bucket)).toBe(`<${workBucket[0]}>`);
    }
    for (const [state, suffix] of [[map, ''], [stored, ' (stored plan)']] as const) {
      const inner = (state.ItemProcessor as { States: Record<string, Record<string, Json>> }).States;
      const rewrite = inner[`Rewrite${suffix}`];
      expect(rewrite.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: `Group failed${suffix}` }]);
      expect(inner[`Group failed${suffix}`]).toEqual({ Type: 'Pass', Parameters: { 'groupId.$': '$.group.id', 'error.$': '$.error' }, End: true });
      expect(flatten((rewrite.Parameters as Record<string, Json>).FunctionName)).toBe(`<${functionOf('rewrite')[0]}.Arn>`);
      expect(rewrite.Retry).toContainEqual(expect.objectContaining({ ErrorEquals: ['Lambda.TooManyRequestsException'], BackoffRate: 2 }));
    }
    const [, planFn] = functionOf('plan');
    expect(flatten((planFn.Properties.Environment as { Variables: Record<string, Json> }).Variables.PACKICE_WORK_LOCATION)).toBe(`s3://<${workBucket[0]}>/packice`);

    const commit = d.States.Commit;
    expect(commit).toMatchObject({ Type: 'Task', ResultSelector: { 'result.$': '$.Payload' }, ResultPath: '$.commit', Next: 'Report' });
    expect(flatten((commit.Parameters as Record<string, Json>).FunctionName)).toBe(`<${functionOf('commit')[0]}.Arn>`);
    expect(commit.Retry).toContainEqual({
      ErrorEquals: ['CommitConflictError', 'IoError'],
      IntervalSeconds: 5,
      MaxAttempts: 4,
      BackoffRate: 2,
      JitterStrategy: 'FULL',
    });
    // The commit function writes the report, from the plan, the results, the commit's answer and the execution.
    const report = d.States.Report;
    expect(report).toMatchObject({
      Type: 'Task',
      OutputPath: '$.Payload',
      Next: 'Compacted',
      Parameters: {
        Payload: {
          'plan.$': '$.plan',
          'results.$': '$.results',
          'commit.$': '$.commit.result',
          execution: { 'name.$': '$$.Execution.Name', 'startTime.$': '$$.Execution.StartTime' },
        },
      },
    });
    expect(flatten((report.Parameters as Record<string, Json>).FunctionName)).toBe(`<${functionOf('commit')[0]}.Arn>`);
    expect(d.States.Compacted).toEqual({ Type: 'Succeed' });
  });

  it('grants no s3:* and no S3 action on *, in any policy of the stack', () => {
    const statements = ofType('AWS::IAM::Policy').flatMap(([, p]) => statementsOf(p));
    expect(statements.length).toBeGreaterThan(0);
    for (const s of statements) {
      const actions = [s.Action].flat();
      expect(actions).not.toContain('*');
      expect(actions).not.toContain('s3:*');
      if (actions.some((a) => a.startsWith('s3:'))) {
        for (const arn of [s.Resource].flat().map(flatten)) {
          expect(arn).not.toBe('*');
          expect(arn).not.toMatch(/^arn:aws:s3:::\*/);
        }
      }
    }
  });

  it('scopes table access to the configured prefixes: objects under them, ListBucket only with an s3:prefix condition; plan and trigger only read', () => {
    const tablePrefixes: Record<string, string[]> = {
      'arn:aws:s3:::lake-a': ['warehouse/db/events', 'warehouse/db/events/*', 'warehouse/db/clicks', 'warehouse/db/clicks/*'],
      'arn:aws:s3:::lake-b': ['t', 't/*'],
    };
    for (const step of STEPS) {
      const statements = s3StatementsOf(step);
      const tables = statements.filter((s) => [s.Resource].flat().map(flatten).every((arn) => !arn.startsWith('<')));
      expect(resourcesOf(tables)).toEqual([...ALLOWED_S3_ARNS].sort());
      for (const s of tables) {
        const arns = [s.Resource].flat().map(flatten);
        if ([s.Action].flat().includes('s3:ListBucket')) {
          expect(s.Action).toBe('s3:ListBucket');
          expect(arns).toHaveLength(1);
          expect(s.Condition).toEqual({ StringLike: { 's3:prefix': tablePrefixes[arns[0]] } });
        } else {
          for (const arn of arns) expect(ALLOWED_S3_ARNS.filter((a) => a.endsWith('/*'))).toContain(arn);
        }
      }
      const objectActions = actionsOf(tables.filter((s) => s.Action !== 's3:ListBucket'));
      const expected: Record<Step, string[]> = {
        plan: ['s3:GetObject'],
        trigger: ['s3:GetObject'],
        orphans: ['s3:DeleteObject', 's3:GetObject'],
        rewrite: ['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:PutObject'],
        commit: ['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:PutObject'],
        expire: ['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:PutObject'],
      };
      expect(objectActions).toEqual(expected[step]);
    }
    // The work bucket: plan writes stored plans, commit reads them and the Map's results and writes reports; no other function touches it.
    const workBucket = ofType('AWS::S3::Bucket')[0][0];
    const work = (step: Step): string[] =>
      s3StatementsOf(step).flatMap((s) => [s.Resource].flat().map(flatten)).filter((arn) => arn.startsWith('<'));
    expect(work('plan')).toEqual([`<${workBucket}.Arn>/packice/plans/*`]);
    expect(work('commit')).toEqual([`<${workBucket}.Arn>/packice/plans/*`, `<${workBucket}.Arn>/packice/map-results/*`, `<${workBucket}.Arn>/packice/reports/*`]);
    for (const step of ['rewrite', 'trigger', 'expire', 'orphans'] as const) expect(work(step)).toEqual([]);
  });

  it('gives the rewrite function one vCPU (1,769 MB) and the others 2,048 MB when no memory is set; a set memorySize reaches the rewrite too', () => {
    const memory = (props: Partial<IcebergMaintenanceProps>): Record<string, number> => {
      const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Memory');
      new IcebergMaintenance(stack, 'Maintenance', { tables: [{ location: 's3://lake-m/t' }], ...props });
      const all = Object.values(Template.fromStack(stack).toJSON().Resources as Record<string, Resource>);
      return Object.fromEntries(
        all.filter((r) => r.Type === 'AWS::Lambda::Function' && String(r.Properties.Description).startsWith('packice maintenance: '))
          .map((r) => [String(r.Properties.Description).slice('packice maintenance: '.length), r.Properties.MemorySize as number]),
      );
    };
    expect(memory({})).toEqual({ plan: 2048, rewrite: 1769, commit: 2048, trigger: 2048, expire: 2048, orphans: 2048 });
    expect(memory({ memorySize: 3008 }).rewrite).toBe(3008);
    expect(memory({ memorySize: 3008, rewriteMemorySize: 1769 })).toMatchObject({ plan: 3008, rewrite: 1769 });
  });

  it('batches groups to a rewrite function of more than one vCPU: every plan stored, with its groups in batches the Distributed Map reads, one group per vCPU; a failed batch fails each of its groups', () => {
    const synth = (props: Partial<IcebergMaintenanceProps>): { maintenance: IcebergMaintenance; d: Definition; planEnv: Record<string, Json>; rewrite: Resource } => {
      const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Batch');
      const maintenance = new IcebergMaintenance(stack, 'Maintenance', { tables: [{ location: 's3://lake-b/t' }], ...props });
      const t = Template.fromStack(stack).toJSON() as { Resources: Record<string, Resource> };
      const machine = Object.values(t.Resources).find((r) => r.Type === 'AWS::StepFunctions::StateMachine' && JSON.stringify(r).includes('Rewrite stored groups'))!;
      const d = JSON.parse(flatten(machine.Properties.DefinitionString as Json)) as Definition;
      const fn = (step: string): Resource => Object.values(t.Resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Description === `packice maintenance: ${step}`)!;
      return { maintenance, d, planEnv: (fn('plan').Properties.Environment as { Variables: Record<string, Json> }).Variables, rewrite: fn('rewrite') };
    };
    for (const [props, size] of [[{ rewriteMemorySize: 10240 }, 6], [{ rewriteMemorySize: 3538 }, 2], [{ rewriteMemorySize: 10240, rewriteBatchSize: 3 }, 3]] as const) {
      const { maintenance, d, planEnv, rewrite } = synth(props);
      expect(maintenance.rewriteBatchSize).toBe(size);
      expect(planEnv.PACKICE_REWRITE_BATCH_SIZE).toBe(String(size));
      const stored = d.States['Rewrite stored groups'];
      expect(stored).toMatchObject({
        ItemReader: { ReaderConfig: { InputType: 'JSON' }, Parameters: { 'Key.$': '$.plan.batchesFile.key' } },
        ItemSelector: { BatchInput: HEADER_PATHS, 'Items.$': '$$.Map.Item.Value.groups' },
      });
      expect(stored).not.toHaveProperty('ItemBatcher');
      const inner = (stored.ItemProcessor as { States: Record<string, Record<string, Json>> }).States;
      expect(inner['Group failed (stored plan)']).toEqual({ Type: 'Pass', Parameters: { 'groupIds.$': '$.Items[*].id', 'error.$': '$.error' }, End: true });
      // 4 GiB of /tmp for each group's sort runs, up to Lambda's 10 GiB.
      expect(rewrite.Properties.EphemeralStorage).toEqual({ Size: Math.min(10, 4 * size) * 1024 });
    }
    for (const props of [{}, { rewriteMemorySize: 2048 }, { rewriteMemorySize: 10240, rewriteBatchSize: 1 }]) {
      const { maintenance, d, planEnv, rewrite } = synth(props);
      expect(maintenance.rewriteBatchSize).toBe(1);
      expect(planEnv).not.toHaveProperty('PACKICE_REWRITE_BATCH_SIZE');
      expect(d.States['Rewrite stored groups']).toMatchObject({ ItemReader: { Parameters: { 'Key.$': '$.plan.groupsFile.key' } }, ItemSelector: { ...HEADER_PATHS, 'group.$': '$$.Map.Item.Value' } });
      expect(rewrite.Properties.EphemeralStorage).toEqual({ Size: 4096 });
    }
    expect(() => synth({ rewriteBatchSize: 0 })).toThrow(/rewriteBatchSize must be a positive integer, got 0/);
    expect(() => synth({ rewriteBatchSize: 3 })).toThrow(/rewriteBatchSize must be at most the rewrite function's vCPUs \(1 at 1769 MiB: one per 1,769\), got 3/);
  });

  it('grants the tables\' KMS keys: decrypt to the readers, encrypt and decrypt to the writers', () => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Kms');
    const key = new kms.Key(stack, 'TableKey');
    new IcebergMaintenance(stack, 'Maintenance', { tables: [{ location: 's3://lake-k/t' }], encryptionKeys: [key] });
    const all = Template.fromStack(stack).toJSON().Resources as Record<string, Resource>;
    const keyId = Object.entries(all).find(([, r]) => r.Type === 'AWS::KMS::Key')![0];
    const kmsActions = (step: Step): string[] => {
      const [fnId, fn] = Object.entries(all).find(([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties.Description === `packice maintenance: ${step}`)!;
      expect(fnId).toBeTruthy();
      const role = (fn.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
      return Object.values(all)
        .filter((r) => r.Type === 'AWS::IAM::Policy' && (r.Properties.Roles as { Ref: string }[]).some((x) => x.Ref === role))
        .flatMap((p) => statementsOf(p))
        .filter((st) => [st.Resource].flat().some((res) => JSON.stringify(res).includes(keyId)))
        .flatMap((st) => [st.Action].flat())
        .sort();
    };
    expect(kmsActions('plan')).toEqual(['kms:Decrypt']);
    expect(kmsActions('trigger')).toEqual(['kms:Decrypt']);
    for (const step of ['rewrite', 'commit', 'expire', 'orphans'] as const) {
      expect(kmsActions(step)).toEqual(['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey*', 'kms:ReEncrypt*']);
    }
  });

  it('alarms on failed, timed-out and throttled executions, aborted groups, failed retention runs and dead letters', () => {
    const [compactionId] = stateMachineOf('compaction');
    const [retentionId] = stateMachineOf('retention');
    const [[queueId]] = ofType('AWS::SQS::Queue');
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    const summary = alarms.map((a) => `${String(a.Namespace)} ${String(a.MetricName)} ${flatten((a.Dimensions as { Value: Json }[])[0].Value)}`).sort();
    expect(summary).toEqual(
      [
        `AWS/SQS ApproximateNumberOfMessagesVisible <${queueId}.QueueName>`,
        `AWS/States ExecutionThrottled <${compactionId}>`,
        `AWS/States ExecutionsFailed <${compactionId}>`,
        `AWS/States ExecutionsFailed <${retentionId}>`,
        `AWS/States ExecutionsTimedOut <${compactionId}>`,
        'packice GroupsAborted packice',
      ].sort(),
    );
    for (const alarm of alarms) {
      expect(alarm).toMatchObject({
        Period: 300,
        Threshold: 1,
        EvaluationPeriods: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
      expect(alarm.AlarmActions).toBeUndefined();
    }
    // The aborted-groups alarm watches what the report publishes (Powertools adds the service dimension).
    const aborted = alarms.find((a) => a.MetricName === 'GroupsAborted')!;
    expect(aborted).toMatchObject({ Namespace: REPORT_METRICS.namespace, Statistic: 'Sum', Dimensions: [{ Name: 'service', Value: REPORT_METRICS.service }] });
  });

  it('sends every alarm to the alarm topic when one is given', () => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Topic');
    const topic = new sns.Topic(stack, 'Alarms');
    new IcebergMaintenance(stack, 'Maintenance', { tables: [{ location: 's3://lake-k/t' }], alarmTopic: topic });
    const alarms = Object.values(Template.fromStack(stack).toJSON().Resources as Record<string, Resource>).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
    expect(alarms).toHaveLength(6);
    const topicId = Object.entries(Template.fromStack(stack).toJSON().Resources as Record<string, Resource>).find(([, r]) => r.Type === 'AWS::SNS::Topic')![0];
    for (const a of alarms) expect(a.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
  });
});

describe('bundles from the cloud assembly, each copied alone into an empty folder', () => {
  function assetDir(step: Step): string {
    const code = functionOf(step)[1].Properties.Code as { S3Key: string };
    return join(outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
  }

  interface Invocation<T> {
    readonly results: { result?: T; error?: { name: string; message: string } }[];
    /** `.wasm` files the process read: when the bundle was imported, and after each event. */
    readonly wasmReads: { readonly atImport: string[]; readonly afterEvents: string[][] };
    /** The lazy modules (node_modules beside index.js) the process loaded, by path under the function's folder. */
    readonly lazyLoaded: string[];
    /** The node flags the process ran with: the exec wrapper's, for the function that has one. */
    readonly execArgv: string[];
    readonly stdout: string;
  }

  /**
   * Copies the bundle alone into an empty folder and runs its handler on `events`, one after
   * another, in a fresh `node` with a bare environment: no loader, no node_modules in reach. The
   * function with an exec wrapper is started through it, as Lambda does (AWS_LAMBDA_EXEC_WRAPPER).
   */
  function invoke<T>(step: Step, events: unknown[], s3Endpoint?: string, env: Record<string, string> = {}): Invocation<T> {
    const dir = join(tempDir(`packice-bundle-${step}-`), 'function');
    cpSync(assetDir(step), dir, { recursive: true });
    const resultFile = join(tempDir('packice-invoke-'), 'result.json');
    const script = `
      const fs = require('fs');
      const wasmReads = [];
      const readFileSync = fs.readFileSync;
      fs.readFileSync = function (file, ...rest) {
        if (String(file).endsWith('.wasm')) wasmReads.push(require('path').basename(String(file)));
        return readFileSync.call(this, file, ...rest);
      };
      const { handler } = require('./index.js');
      const atImport = [...wasmReads];
      const events = JSON.parse(readFileSync(0, 'utf8'));
      (async () => {
        const results = [];
        const afterEvents = [];
        for (const event of events) {
          try {
            results.push({ result: await handler(event, { awsRequestId: 'bundle-test' }) });
          } catch (e) {
            results.push({ error: { name: e.name, message: e.message } });
          }
          afterEvents.push([...wasmReads]);
        }
        const lazyLoaded = Object.keys(require.cache).filter((k) => k.includes('/node_modules/')).map((k) => k.slice(k.indexOf('node_modules/')));
        fs.writeFileSync(process.argv[1], JSON.stringify({ results, wasmReads: { atImport, afterEvents }, lazyLoaded, execArgv: process.execArgv }));
      })();`;
    const command: [string, string[]] = step === EXEC_WRAPPER.step
      ? [join(dir, EXEC_WRAPPER.fileName), [process.execPath, '-e', script, resultFile]]
      : [process.execPath, ['-e', script, resultFile]];
    const run = spawnSync(...command, {
      cwd: dir,
      input: JSON.stringify(events),
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...TEST_AWS_ENV,
        ...(s3Endpoint ? { AWS_ENDPOINT_URL_S3: s3Endpoint } : {}),
        ...env,
      },
      timeout: 120_000,
    });
    if (run.status !== 0 || !existsSync(resultFile)) {
      throw new Error(`${step} bundle exited with ${run.status}:\n${run.stderr}\n${run.stdout}`);
    }
    return { ...(JSON.parse(readFileSync(resultFile, 'utf8')) as Omit<Invocation<T>, 'stdout'>), stdout: run.stdout };
  }

  it('hold index.js, the lazy SDK clients in node_modules beside it, the .wasm files only for the rewrite and the commit (which rebases deletes), the rewrite\'s and the plan\'s decode workers; no node_modules above them', () => {
    expect(WASM_STEPS).toEqual(['rewrite', 'commit']);
    for (const step of STEPS) {
      const dir = assetDir(step);
      const readsWasm = WASM_STEPS.includes(step);
      const wasm = readsWasm ? ['index.wasm', 'parquet_wasm_bg.wasm'] : [];
      const workers = WORKER_BUNDLES.filter((w) => w.step === step).map((w) => w.fileName);
      const wrapper = step === EXEC_WRAPPER.step ? [EXEC_WRAPPER.fileName] : [];
      expect(readdirSync(dir).sort()).toEqual(['index.js', 'index.js.map', ...wasm, ...workers, ...wrapper, 'node_modules'].sort());
      for (const w of wrapper) {
        expect(readFileSync(join(dir, w)).equals(readFileSync(join(REPO_ROOT, EXEC_WRAPPER.source)))).toBe(true);
        // Lambda runs it as a program: the zip keeps the file's mode.
        expect(statSync(join(dir, w)).mode & 0o111).toBe(0o111);
        const env = functionOf(step)[1].Properties.Environment as { Variables: Record<string, string> };
        expect(env.Variables.AWS_LAMBDA_EXEC_WRAPPER).toBe(`/var/task/${w}`);
      }
      expect(readdirSync(join(dir, 'node_modules'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name))).sort()).toEqual(
        LAZY_MODULES.map(lazyModuleFile).sort(),
      );
      const index = readFileSync(join(dir, 'index.js'), 'utf8');
      for (const m of LAZY_MODULES) expect(index).toContain(`require("${m}")`);
      // Not the clients themselves: operations we never call live only in the lazy bundles.
      for (const op of ['UpdateGlueIdentityCenterConfiguration', 'PutTableBucketMaintenanceConfiguration']) {
        expect(index).not.toContain(op);
        expect(LAZY_MODULES.some((m) => readFileSync(join(dir, lazyModuleFile(m)), 'utf8').includes(op))).toBe(true);
      }
      for (const w of readsWasm ? WASM_FILES : []) {
        const source = join(REPO_ROOT, 'node_modules', w.module);
        expect(readFileSync(join(dir, w.fileName)).equals(readFileSync(source))).toBe(true);
      }
      if (!readsWasm) expect(index).not.toContain('parquet_wasm_bg.wasm');
      for (let d = dirname(dir); d !== dirname(d); d = dirname(d)) expect(existsSync(join(d, 'node_modules'))).toBe(false);
    }
  });

  it('trigger → plan → rewrite → commit → report → expire → orphans, each in a clean process, maintain a v3 table on moto (S3 and Step Functions); only the rewrite loads wasm, once, at its first event (a commit with nothing to rebase loads none)', async () => {
    // Prepare: a table of small files, a compaction state machine on moto for the trigger to start.
    const endpoint = testS3Endpoint();
    const s3 = new S3FileIO({ endpoint });
    const bucket = await freshBucket();
    const location = `s3://${bucket}/warehouse/db/events`;
    const table = await smallTable(s3, location, 3);
    const before = await liveRows(s3, location);
    const sfn = new SFNClient({ endpoint, region: TEST_AWS_ENV.AWS_REGION });
    const { stateMachineArn } = await sfn.send(
      new CreateStateMachineCommand({
        name: `packice-bundle-${randomUUID()}`,
        definition: JSON.stringify({ StartAt: 'Plan', States: { Plan: { Type: 'Pass', End: true } } }),
        roleArn: 'arn:aws:iam::123456789012:role/packice',
      }),
    );
    const metadataKey = `warehouse/db/events/metadata/${table.metadataLocation!.split('/').pop()}`;
    const objectCreated = { 'detail-type': 'Object Created', source: 'aws.s3', detail: { bucket: { name: bucket }, object: { key: metadataKey } } };
    const work = `s3://${bucket}/packice`;

    // Act
    const triggered = invoke<TriggerOutcome[]>('trigger', [objectCreated, objectCreated], endpoint, {
      AWS_ENDPOINT_URL_SFN: endpoint,
      PACKICE_TABLES: JSON.stringify([{ location, policy: { minInputFiles: 2 } }]),
      PACKICE_STATE_MACHINE_ARN: stateMachineArn!,
    });
    const [execution] = (await sfn.send(new ListExecutionsCommand({ stateMachineArn }))).executions ?? [];
    const started = JSON.parse((await sfn.send(new DescribeExecutionCommand({ executionArn: execution.executionArn }))).input!) as PlanRequest;
    const planned = invoke<Plan>('plan', [started], endpoint);
    const plan = planned.results[0].result!;
    const rewritten = invoke<GroupResult>('rewrite', plan.groups.map((g) => rewriteRequestOf(plan, g.id)), endpoint);
    const results = rewritten.results.map((r) => r.result!);
    const committed = invoke<CommitStateResult>('commit', [{ plan, results }], endpoint);
    const commit = committed.results[0].result!;
    const reported = invoke<CompactionReport>(
      'commit',
      [{ plan, results, commit, execution: { name: execution.name, startTime: new Date(plan.createdAtMs - 1000).toISOString() } }],
      endpoint,
      { PACKICE_WORK_LOCATION: work, PACKICE_FUNCTION_MEMORY: JSON.stringify({ plan: 2048, rewrite: 2048, commit: 2048 }), AWS_REGION: 'eu-west-1' },
    );
    const report = reported.results[0].result!;
    const retention = { table: { location }, retention: { olderThanMs: 0, retainLast: 1 } };
    const expired = invoke<ExpireSummary>('expire', [retention], endpoint);
    const orphans = invoke<OrphanSummary>('orphans', [retention], endpoint);

    // Assess
    expect(triggered.results.map((r) => r.error)).toEqual([undefined, undefined]);
    expect(triggered.results[0].result).toEqual([expect.objectContaining({ table: location, action: 'started', groups: 2 })]);
    expect((await sfn.send(new ListExecutionsCommand({ stateMachineArn }))).executions).toHaveLength(1);
    expect(started).toEqual({ table: { location }, policy: { minInputFiles: 2 } });
    expect(planned.results[0].error).toBeUndefined();
    expect(plan.groups).toHaveLength(2);
    expect(JSON.parse(planned.stdout.trim())).toMatchObject({ level: 'INFO', service: 'packice', step: 'plan', requestId: 'bundle-test', groups: 2 });
    expect(results.map((r) => r.checksums.rowsOut)).toEqual(['16', '16']);
    expect(commit.committedGroups).toEqual(plan.groups.map((g) => g.id));
    expect(commit.durationMs).toBeGreaterThan(0);
    expect(report).toMatchObject({
      table: location,
      execution: execution.name,
      snapshotId: commit.snapshotId,
      filesIn: 8,
      filesOut: 2,
      rowsIn: 32,
      rowsOut: 32,
      groups: { planned: 2, committed: 2, aborted: 0 },
      lambda: { invocations: 5 },
      cost: { region: 'eu-west-1', pricedAs: 'eu-west-1' },
      location: `${work}/reports/${bucket}/warehouse/db/events/${execution.name}.json`,
    });
    expect(report.cost.totalUsd).toBeGreaterThan(0);
    expect(JSON.parse(new TextDecoder().decode(await s3.read(report.location!)))).toEqual(report);
    // Powertools' metrics, in the embedded metric format, on stdout beside the log line.
    const emf = reported.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => '_aws' in l)!;
    expect(emf).toMatchObject({ service: 'packice', GroupsCommitted: 2, GroupsAborted: 0, FilesRewritten: 8 });
    expect(expired.results[0].result).toMatchObject({ table: location, retainedSnapshots: 1 });
    expect(expired.results[0].result!.expiredSnapshots).toBeGreaterThan(0);
    expect(expired.results[0].result!.deleted).toBeGreaterThan(0);
    // Every unreferenced file is younger than the 3-day delay: nothing to delete.
    expect(orphans.results[0].result).toMatchObject({ table: location, deleted: 0 });
    expect(await fileCounts(s3, location)).toEqual({ data: 2, deletes: 0 });
    expect(await liveRows(s3, location)).toEqual(before);

    for (const step of [triggered, planned, committed, reported, expired, orphans]) expect(step.wasmReads).toEqual({ atImport: [], afterEvents: step.wasmReads.afterEvents.map(() => []) });
    // A folder table loads no catalog SDK.
    for (const step of [triggered, planned, rewritten, committed, reported, expired, orphans]) expect(step.lazyLoaded).toEqual([]);
    expect(rewritten.wasmReads.atImport).toEqual([]);
    // Started through its exec wrapper, with the V8 flag NODE_OPTIONS cannot carry; the others without.
    expect(rewritten.execArgv).toContain('--initial-old-space-size=128');
    for (const step of [triggered, planned, committed]) expect(step.execArgv).not.toContain('--initial-old-space-size=128');
    const [first, second] = rewritten.wasmReads.afterEvents;
    expect(first).toContain('parquet_wasm_bg.wasm');
    expect(new Set(first).size).toBe(first.length);
    expect(second).toEqual(first);
  });

  it('load the Glue SDK from beside index.js for a glue:// table, and only it', async () => {
    const moto = testS3Endpoint();
    const table = await glueSmallTable(moto);
    const planned = invoke<Plan>('plan', [{ table: { location: table.name }, policy: { minInputFiles: 2 } }], moto, { AWS_ENDPOINT_URL_GLUE: moto });
    expect(planned.results[0].error).toBeUndefined();
    expect(planned.results[0].result!.groups).toHaveLength(2);
    expect(planned.lazyLoaded).toEqual([lazyModuleFile('@aws-sdk/client-glue')]);
  });

  it('keep error class names through minification (Step Functions matches on them)', () => {
    const { results } = invoke('commit', [{ results: [] }]);
    expect(results[0].error).toEqual({ name: 'InvalidEventError', message: 'invalid commit event: missing field "plan" (expected an object)' });
  });
});

describe('props and context', () => {
  it('collects every invalid prop into one error before building anything', () => {
    const stack = new Stack(new App(), 'Bad');
    const build = (): IcebergMaintenance =>
      new IcebergMaintenance(stack, 'Maintenance', {
        tables: [
          { location: 'https://lake/t' },
          { location: 's3://Lake_A/t' },
          { location: 's3://lake-a/db/*' },
          { location: 's3://lake-a//t' },
          { location: 's3://lake-a/t', retention: { orphanOlderThan: Duration.minutes(10), retainLast: 0 } },
          { location: 's3a://lake-a/t/' },
        ],
        memorySize: 64,
        rewriteMemorySize: 20_000,
        timeout: Duration.minutes(20),
        maxConcurrency: 0,
        retentionConcurrency: 1.5,
      });
    expect(build).toThrow(
      [
        'IcebergMaintenance Bad/Maintenance: invalid props:',
        '  - table location "https://lake/t" is not an S3 URI (expected s3://bucket/prefix)',
        '  - table location "s3://Lake_A/t": "Lake_A" is not a valid bucket name',
        '  - table location "s3://lake-a/db/*" contains a wildcard (* or ?)',
        '  - table location "s3://lake-a//t" has an empty path segment',
        '  - table "s3://lake-a/t": retention.orphanOlderThan must be at least 1 hour, got 10 minutes',
        '  - table "s3://lake-a/t": retention.retainLast must be a positive integer',
        '  - table location "s3a://lake-a/t/" is listed twice',
        '  - memorySize must be an integer from 128 to 10240 MiB, got 64',
        '  - rewriteMemorySize must be an integer from 128 to 10240 MiB, got 20000',
        '  - timeout must be from 1 second to 15 minutes, got 20 minutes',
        '  - maxConcurrency must be a positive integer, got 0',
        '  - retentionConcurrency must be a positive integer, got 1.5',
      ].join('\n'),
    );
    expect(() => new IcebergMaintenance(new Stack(new App(), 'Empty'), 'C', { tables: [] })).toThrow(
      'tables must list at least one table ({ location: "s3://bucket/prefix" })',
    );
  });

  it('reads table locations from context as a list, a JSON array or comma-separated text', () => {
    const read = (value: unknown): string[] | undefined => tableLocationsFromContext(new App({ context: { tableLocations: value } }).node);
    expect(read(['s3://a/t', 's3://b/u'])).toEqual(['s3://a/t', 's3://b/u']);
    expect(read('["s3://a/t","s3://b/u"]')).toEqual(['s3://a/t', 's3://b/u']);
    expect(read(' s3://a/t , s3://b/u ')).toEqual(['s3://a/t', 's3://b/u']);
    expect(tableLocationsFromContext(new App().node)).toBeUndefined();
  });

  it('without context, the example stack is synthesized for the example location, with a warning saying how to give real ones', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new PackiceStack(app, 'Example');
    const arns = Object.values(Template.fromStack(stack).toJSON().Resources as Record<string, Resource>)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((p) => statementsOf(p))
      .filter((s) => [s.Action].flat().some((a) => a.startsWith('s3:')))
      .flatMap((s) => [s.Resource].flat().map(flatten))
      .filter((arn) => !arn.includes('<'));
    expect(EXAMPLE_TABLE_LOCATIONS).toEqual(['s3://amzn-s3-demo-bucket/warehouse/db/events']);
    expect([...new Set(arns)].sort()).toEqual(['arn:aws:s3:::amzn-s3-demo-bucket', 'arn:aws:s3:::amzn-s3-demo-bucket/warehouse/db/events/*']);
    const warnings = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('no table locations given'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0].entry.data).toContain('-c tableLocations=s3://bucket/warehouse/db/table');
  });

  it('`npx cdk synth` with the aws-cdk CLI of devDependencies works with no context and no AWS account', () => {
    const out = tempDir('packice-cdk-cli-');
    const { AWS_PROFILE: _p, AWS_ACCESS_KEY_ID: _a, AWS_SECRET_ACCESS_KEY: _s, AWS_SESSION_TOKEN: _t, CDK_CONTEXT_JSON: _c, ...env } = process.env;
    const run = spawnSync(join(REPO_ROOT, 'node_modules', '.bin', 'cdk'), ['synth', '--no-notices', '--quiet', '--output', out], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: {
        ...env,
        // No credentials anywhere the SDK looks, and nothing sent over the network.
        AWS_CONFIG_FILE: join(out, 'no-config'),
        AWS_SHARED_CREDENTIALS_FILE: join(out, 'no-credentials'),
        CDK_DISABLE_VERSION_CHECK: 'true',
        CDK_DISABLE_CLI_TELEMETRY: 'true',
      },
      timeout: 170_000,
    });
    expect(run.error).toBeUndefined();
    expect(run.stderr).not.toMatch(/\bError\b/);
    expect(run.status).toBe(0);
    const synthesized = JSON.parse(readFileSync(join(out, 'Packice.template.json'), 'utf8')) as { Resources: Record<string, Resource> };
    expect(Object.values(synthesized.Resources).filter((r) => r.Type === 'AWS::Lambda::Function').length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(synthesized)).toContain('amzn-s3-demo-bucket/warehouse/db/events/*');
  }, 180_000);

  it("cdk.json's app command synthesizes the example stack for the locations given with -c", () => {
    const { app } = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as { app: string };
    const [command, ...args] = app.split(' ');
    const out = tempDir('packice-cdk-app-');
    const run = (context: Record<string, unknown>) =>
      spawnSync(command, args, {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        // Bundling and CDK's built-in template validation ran in the synth above; skipping them
        // here keeps this a quick check of app.ts and cdk.json.
        env: {
          ...process.env,
          CDK_OUTDIR: out,
          CDK_CONTEXT_JSON: JSON.stringify({ ...context, 'aws:cdk:bundling-stacks': [] }),
          CDK_VALIDATION: 'false',
        },
      });

    const ok = run({ tableLocations: 's3://lake-c/warehouse/t' });
    expect(ok.stderr).not.toContain('Error');
    expect(ok.status).toBe(0);
    const synthesized = JSON.parse(readFileSync(join(out, 'Packice.template.json'), 'utf8')) as { Resources: Record<string, Resource> };
    const arns = Object.values(synthesized.Resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((p) => statementsOf(p))
      .filter((s) => [s.Action].flat().some((a) => a.startsWith('s3:')))
      .flatMap((s) => [s.Resource].flat().map(flatten))
      .filter((arn) => !arn.includes('<'));
    expect([...new Set(arns)].sort()).toEqual(['arn:aws:s3:::lake-c', 'arn:aws:s3:::lake-c/warehouse/t/*']);
  });
});
