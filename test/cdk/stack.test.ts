/**
 * The CDK construct, synthesized in-process (esbuild runs locally; no Docker, no credentials):
 * the functions, the state machine's shape, IAM scope and the alarm — then each bundle from the
 * cloud assembly is run in a clean Node process on a real table, which proves the `.wasm` files
 * landed beside it and nothing is missing from it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { PackiceCompaction, WASM_FILES } from '../../cdk/packice-construct.js';
import { EXAMPLE_TABLE_LOCATIONS, PackiceStack, tableLocationsFromContext } from '../../cdk/packice-stack.js';
import type { CommitResult, GroupResult, Plan } from '../../lib/compaction/messages.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { REPO_ROOT, tempDir } from '../support/fixtures.js';
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
const STEPS = ['plan', 'rewrite', 'commit'] as const;
type Step = (typeof STEPS)[number];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
interface Resource {
  readonly Type: string;
  readonly Properties: { [k: string]: Json };
}
interface Statement {
  readonly Action: string | string[];
  readonly Resource: Json;
}

let outdir: string;
let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  outdir = tempDir('packice-cdk-');
  const app = new App({ outdir, context: { tableLocations: LOCATIONS.join(',') } });
  const stack = new PackiceStack(app, 'Packice', {
    compaction: { maxConcurrency: 7, memorySize: 1536, timeout: Duration.minutes(10) },
  });
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources as Record<string, Resource>;
});

/** Fn::Join / Ref / GetAtt flattened to a string (`<Id.Arn>` for attributes, `aws` for the partition). */
function flatten(value: Json): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    if ('Fn::Join' in value) {
      const [sep, parts] = value['Fn::Join'] as [string, Json[]];
      return parts.map(flatten).join(sep);
    }
    if ('Ref' in value) return value.Ref === 'AWS::Partition' ? 'aws' : `<${String(value.Ref)}>`;
    if ('Fn::GetAtt' in value) return `<${(value['Fn::GetAtt'] as string[]).join('.')}>`;
  }
  throw new Error(`cannot flatten ${JSON.stringify(value)}`);
}

function statementsOf(policy: Resource): Statement[] {
  return (policy.Properties.PolicyDocument as unknown as { Statement: Statement[] }).Statement;
}

function ofType(type: string): [string, Resource][] {
  return Object.entries(resources).filter(([, r]) => r.Type === type);
}

function functionOf(step: Step): [string, Resource] {
  const found = ofType('AWS::Lambda::Function').filter(([, r]) => r.Properties.Description === `packice compaction: ${step}`);
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

function definition(): { States: Record<string, Record<string, Json>> } {
  const [[, sm]] = ofType('AWS::StepFunctions::StateMachine');
  return JSON.parse(flatten(sm.Properties.DefinitionString)) as { States: Record<string, Record<string, Json>> };
}

describe('PackiceCompaction template', () => {
  it('has three arm64 Node functions, one per step, with the given memory and timeout', () => {
    template.resourceCountIs('AWS::Lambda::Function', 3);
    for (const step of STEPS) {
      const [, fn] = functionOf(step);
      expect(fn.Properties).toMatchObject({
        Handler: 'index.handler',
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        MemorySize: 1536,
        Timeout: 600,
      });
    }
    expect(functionOf('rewrite')[1].Properties.EphemeralStorage).toEqual({ Size: 4096 });
  });

  it('runs Plan → Choice → Map(Rewrite, caught per item) → Commit (retried) → Succeed', () => {
    const d = definition();
    expect(Object.keys(d.States).sort()).toEqual(['Any groups?', 'Commit', 'Compacted', 'Nothing to compact', 'Plan', 'Rewrite groups']);
    expect(d.States.Plan).toMatchObject({ Type: 'Task', Next: 'Any groups?', ResultSelector: { 'plan.$': '$.Payload' } });
    expect(d.States['Any groups?']).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.plan.groups[0]', IsPresent: true, Next: 'Rewrite groups' }],
      Default: 'Nothing to compact',
    });
    expect(d.States['Nothing to compact']).toEqual({ Type: 'Succeed' });

    const map = d.States['Rewrite groups'];
    expect(map).toMatchObject({
      Type: 'Map',
      MaxConcurrency: 7,
      ItemsPath: '$.plan.groups',
      ItemSelector: { 'plan.$': '$.plan', 'groupId.$': '$$.Map.Item.Value.id' },
      ResultPath: '$.results',
      Next: 'Commit',
    });
    const inner = (map.ItemProcessor as { States: Record<string, Record<string, Json>> }).States;
    expect(inner.Rewrite.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'Group failed' }]);
    expect(inner['Group failed']).toEqual({ Type: 'Pass', Parameters: { 'groupId.$': '$.groupId', 'error.$': '$.error' }, End: true });
    expect(flatten((inner.Rewrite.Parameters as Record<string, Json>).FunctionName)).toBe(`<${functionOf('rewrite')[0]}.Arn>`);

    const commit = d.States.Commit;
    expect(commit).toMatchObject({ Type: 'Task', OutputPath: '$.Payload', Next: 'Compacted' });
    expect(flatten((commit.Parameters as Record<string, Json>).FunctionName)).toBe(`<${functionOf('commit')[0]}.Arn>`);
    expect(commit.Retry).toContainEqual({
      ErrorEquals: ['CommitConflictError', 'IoError'],
      IntervalSeconds: 5,
      MaxAttempts: 4,
      BackoffRate: 2,
      JitterStrategy: 'FULL',
    });
    expect(d.States.Compacted).toEqual({ Type: 'Succeed' });
  });

  it('scopes S3 access to the configured buckets and prefixes; plan only reads', () => {
    for (const step of STEPS) {
      const statements = s3StatementsOf(step);
      expect(resourcesOf(statements)).toEqual([...ALLOWED_S3_ARNS].sort());
      // Object actions only ever on `<bucket>/<table prefix>/*`.
      for (const s of statements) {
        const objectActions = [s.Action].flat().filter((a) => /^s3:(Put|Delete|Abort)/.test(a));
        if (objectActions.length > 0) {
          for (const arn of [s.Resource].flat().map(flatten)) expect(ALLOWED_S3_ARNS.filter((a) => a.endsWith('/*'))).toContain(arn);
        }
      }
    }
    expect(actionsOf(s3StatementsOf('plan'))).toEqual(['s3:GetBucket*', 's3:GetObject*', 's3:List*']);
    for (const step of ['rewrite', 'commit'] as const) {
      expect(actionsOf(s3StatementsOf(step))).toEqual([
        's3:Abort*', 's3:DeleteObject*', 's3:GetBucket*', 's3:GetObject*', 's3:List*',
        's3:PutObject', 's3:PutObjectLegalHold', 's3:PutObjectRetention', 's3:PutObjectTagging', 's3:PutObjectVersionTagging',
      ]);
    }
    const everyResource = ofType('AWS::IAM::Policy').flatMap(([, p]) =>
      statementsOf(p).flatMap((s) => [s.Resource].flat().map(flatten)),
    );
    expect(everyResource).not.toContain('*');
  });

  it('alarms on failed executions', () => {
    const [[smId]] = ofType('AWS::StepFunctions::StateMachine');
    const alarms = ofType('AWS::CloudWatch::Alarm');
    expect(alarms).toHaveLength(1);
    expect(alarms[0][1].Properties).toMatchObject({
      Namespace: 'AWS/States',
      MetricName: 'ExecutionsFailed',
      Dimensions: [{ Name: 'StateMachineArn', Value: { Ref: smId } }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });
});

describe('bundles from the cloud assembly', () => {
  function assetDir(step: Step): string {
    const code = functionOf(step)[1].Properties.Code as { S3Key: string };
    return join(outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
  }

  /** Runs the bundle's handler in a fresh `node` with a bare environment, no loader, no node_modules in reach. */
  function invoke<T>(step: Step, event: unknown): { result?: T; error?: { name: string; message: string }; stdout: string } {
    const dir = assetDir(step);
    const resultFile = join(tempDir('packice-invoke-'), 'result.json');
    const script = `
      const { handler } = require('./index.js');
      const event = JSON.parse(require('fs').readFileSync(0, 'utf8'));
      handler(event, { awsRequestId: 'bundle-test' }).then(
        (result) => require('fs').writeFileSync(process.argv[1], JSON.stringify({ result })),
        (e) => { require('fs').writeFileSync(process.argv[1], JSON.stringify({ error: { name: e.name, message: e.message } })); },
      );`;
    const run = spawnSync(process.execPath, ['-e', script, resultFile], {
      cwd: dir,
      input: JSON.stringify(event),
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      timeout: 120_000,
    });
    if (run.status !== 0 || !existsSync(resultFile)) {
      throw new Error(`${step} bundle exited with ${run.status}:\n${run.stderr}\n${run.stdout}`);
    }
    return { ...(JSON.parse(readFileSync(resultFile, 'utf8')) as { result?: T; error?: { name: string; message: string } }), stdout: run.stdout };
  }

  it('hold index.js with the .wasm files beside it, and no node_modules above them', () => {
    for (const step of STEPS) {
      const dir = assetDir(step);
      expect(readdirSync(dir).sort()).toEqual(['index.js', 'index.js.map', 'index.wasm', 'parquet_wasm_bg.wasm']);
      for (const w of WASM_FILES) {
        const source = join(REPO_ROOT, 'node_modules', w.module);
        expect(readFileSync(join(dir, w.fileName)).equals(readFileSync(source))).toBe(true);
      }
      for (let d = dir; d !== dirname(d); d = dirname(d)) expect(existsSync(join(d, 'node_modules'))).toBe(false);
    }
  });

  it('plan → rewrite → commit in clean processes compacts a v3 table and keeps its rows', async () => {
    const io = new LocalFileIO();
    const location = join(tempDir(), 'events');
    await smallTable(io, location, 3);
    const before = await liveRows(io, location);

    const planned = invoke<Plan>('plan', { table: { location }, policy: { minInputFiles: 2 } });
    expect(planned.error).toBeUndefined();
    const plan = planned.result!;
    expect(plan.groups).toHaveLength(2);
    const logged = JSON.parse(planned.stdout.trim()) as Record<string, unknown>;
    expect(logged).toMatchObject({ level: 'INFO', step: 'plan', requestId: 'bundle-test', groups: 2 });

    const results = plan.groups.map((g) => invoke<GroupResult>('rewrite', { plan, groupId: g.id }).result!);
    expect(results.map((r) => r.checksums.rowsOut)).toEqual(['16', '16']);
    const commit = invoke<CommitResult>('commit', { plan, results }).result!;

    expect(commit.committedGroups).toEqual(plan.groups.map((g) => g.id));
    expect(await fileCounts(io, location)).toEqual({ data: 2, deletes: 0 });
    expect(await liveRows(io, location)).toEqual(before);
  });

  it('keep error class names through minification (Step Functions matches on them)', () => {
    const { error } = invoke('commit', { results: [] });
    expect(error).toEqual({ name: 'InvalidEventError', message: 'invalid commit event: missing field "plan" (expected an object)' });
  });
});

describe('props and context', () => {
  it('collects every invalid prop into one error before building anything', () => {
    const stack = new Stack(new App(), 'Bad');
    const build = (): PackiceCompaction =>
      new PackiceCompaction(stack, 'Compaction', {
        tableLocations: ['https://lake/t', 's3://Lake_A/t', 's3://lake-a/db/*', 's3://lake-a//t'],
        memorySize: 64,
        timeout: Duration.minutes(20),
        maxConcurrency: 0,
      });
    expect(build).toThrow(
      [
        'PackiceCompaction Bad/Compaction: invalid props:',
        '  - table location "https://lake/t" is not an S3 URI (expected s3://bucket/prefix)',
        '  - table location "s3://Lake_A/t": "Lake_A" is not a valid bucket name',
        '  - table location "s3://lake-a/db/*" contains a wildcard (* or ?)',
        '  - table location "s3://lake-a//t" has an empty path segment',
        '  - memorySize must be an integer from 128 to 10240 MiB, got 64',
        '  - timeout must be from 1 second to 15 minutes, got 20 minutes',
        '  - maxConcurrency must be a positive integer, got 0',
      ].join('\n'),
    );
    expect(() => new PackiceCompaction(new Stack(new App(), 'Empty'), 'C', { tableLocations: [] })).toThrow(
      'tableLocations must list at least one table location (s3://bucket/prefix)',
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
      .flatMap((s) => [s.Resource].flat().map(flatten));
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
      .flatMap((s) => [s.Resource].flat().map(flatten));
    expect([...new Set(arns)].sort()).toEqual(['arn:aws:s3:::lake-c', 'arn:aws:s3:::lake-c/warehouse/t/*']);
  });
});
