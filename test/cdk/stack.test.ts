/**
 * The CDK construct, synthesized in-process (esbuild runs locally; no Docker, no credentials):
 * the functions, the state machine's shape, IAM scope and the alarm — then each bundle from the
 * cloud assembly is copied alone into an empty folder and run in a clean Node process on a real
 * table in moto S3, which proves the `.wasm` files landed beside it and nothing is missing from it.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { PackiceCompaction, WASM_FILES } from '../../cdk/packice-construct.js';
import { EXAMPLE_TABLE_LOCATIONS, PackiceStack, tableLocationsFromContext } from '../../cdk/packice-stack.js';
import type { CompactionCommitResult, GroupResult, Plan } from '../../lib/compaction/messages.js';
import { S3FileIO } from '../../lib/io/s3.js';
import { rewriteRequestOf } from '../../lib/pipeline/rewrite-request.js';
import { REPO_ROOT, tempDir } from '../support/fixtures.js';
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
  readonly Condition?: Json;
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

  it('runs Plan → Choice → inline Map or Distributed Map over the stored plan (Rewrite, caught per item) → Commit (retried) → Succeed', () => {
    const d = definition();
    expect(Object.keys(d.States).sort()).toEqual([
      'Any groups?', 'Commit', 'Compacted', 'Drop dangling deletes', 'Nothing to compact', 'Plan', 'Rewrite groups', 'Rewrite stored groups',
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
    const itemSelector = {
      'table.$': '$.plan.table',
      'policy.$': '$.plan.policy',
      'startingSnapshotId.$': '$.plan.startingSnapshotId',
      'startingSequenceNumber.$': '$.plan.startingSequenceNumber',
      'formatVersion.$': '$.plan.formatVersion',
      'createdAtMs.$': '$.plan.createdAtMs',
      'group.$': '$$.Map.Item.Value',
    };
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

  it('scopes table access to the configured prefixes: objects under them, ListBucket only with an s3:prefix condition; plan only reads', () => {
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
      expect(objectActions).toEqual(step === 'plan' ? ['s3:GetObject'] : ['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:PutObject']);
    }
    // The work bucket: plan writes stored plans, commit reads them and the Map's results, rewrite never touches it.
    const workBucket = ofType('AWS::S3::Bucket')[0][0];
    const work = (step: Step): string[] =>
      s3StatementsOf(step).flatMap((s) => [s.Resource].flat().map(flatten)).filter((arn) => arn.startsWith('<'));
    expect(work('plan')).toEqual([`<${workBucket}.Arn>/packice/plans/*`]);
    expect(work('commit')).toEqual([`<${workBucket}.Arn>/packice/plans/*`, `<${workBucket}.Arn>/packice/map-results/*`]);
    expect(work('rewrite')).toEqual([]);
  });

  it('alarms on failed, timed-out and throttled executions', () => {
    const [[smId]] = ofType('AWS::StepFunctions::StateMachine');
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    expect(alarms.map((a) => a.MetricName).sort()).toEqual(['ExecutionThrottled', 'ExecutionsFailed', 'ExecutionsTimedOut']);
    for (const alarm of alarms) {
      expect(alarm).toMatchObject({
        Namespace: 'AWS/States',
        Dimensions: [{ Name: 'StateMachineArn', Value: { Ref: smId } }],
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        EvaluationPeriods: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
    }
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
    readonly stdout: string;
  }

  /**
   * Copies the bundle alone into an empty folder and runs its handler on `events`, one after
   * another, in a fresh `node` with a bare environment: no loader, no node_modules in reach.
   */
  function invoke<T>(step: Step, events: unknown[], s3Endpoint?: string): Invocation<T> {
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
        fs.writeFileSync(process.argv[1], JSON.stringify({ results, wasmReads: { atImport, afterEvents } }));
      })();`;
    const run = spawnSync(process.execPath, ['-e', script, resultFile], {
      cwd: dir,
      input: JSON.stringify(events),
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...TEST_AWS_ENV,
        ...(s3Endpoint ? { AWS_ENDPOINT_URL_S3: s3Endpoint } : {}),
      },
      timeout: 120_000,
    });
    if (run.status !== 0 || !existsSync(resultFile)) {
      throw new Error(`${step} bundle exited with ${run.status}:\n${run.stderr}\n${run.stdout}`);
    }
    return { ...(JSON.parse(readFileSync(resultFile, 'utf8')) as Omit<Invocation<T>, 'stdout'>), stdout: run.stdout };
  }

  it('hold index.js, and the .wasm files beside it only for the rewrite and the commit (which rebases deletes); no node_modules above them', () => {
    for (const step of STEPS) {
      const dir = assetDir(step);
      const readsWasm = step === 'rewrite' || step === 'commit';
      const wasm = readsWasm ? ['index.wasm', 'parquet_wasm_bg.wasm'] : [];
      expect(readdirSync(dir).sort()).toEqual(['index.js', 'index.js.map', ...wasm]);
      for (const w of readsWasm ? WASM_FILES : []) {
        const source = join(REPO_ROOT, 'node_modules', w.module);
        expect(readFileSync(join(dir, w.fileName)).equals(readFileSync(source))).toBe(true);
      }
      if (!readsWasm) expect(readFileSync(join(dir, 'index.js'), 'utf8')).not.toContain('parquet_wasm_bg.wasm');
      for (let d = dir; d !== dirname(d); d = dirname(d)) expect(existsSync(join(d, 'node_modules'))).toBe(false);
    }
  });

  it('plan → rewrite → commit in clean processes compact a v3 table on S3 and keep its rows; only the rewrite loads wasm, once, at its first event (a commit with nothing to rebase loads none)', async () => {
    // Prepare
    const endpoint = testS3Endpoint();
    const s3 = new S3FileIO({ endpoint });
    const location = `s3://${await freshBucket()}/warehouse/db/events`;
    await smallTable(s3, location, 3);
    const before = await liveRows(s3, location);

    // Act
    const planned = invoke<Plan>('plan', [{ table: { location }, policy: { minInputFiles: 2 } }], endpoint);
    const plan = planned.results[0].result!;
    const rewritten = invoke<GroupResult>('rewrite', plan.groups.map((g) => rewriteRequestOf(plan, g.id)), endpoint);
    const results = rewritten.results.map((r) => r.result!);
    const committed = invoke<CompactionCommitResult>('commit', [{ plan, results }], endpoint);
    const commit = committed.results[0].result!;

    // Assess
    expect(planned.results[0].error).toBeUndefined();
    expect(plan.groups).toHaveLength(2);
    expect(JSON.parse(planned.stdout.trim())).toMatchObject({ level: 'INFO', step: 'plan', requestId: 'bundle-test', groups: 2 });
    expect(results.map((r) => r.checksums.rowsOut)).toEqual(['16', '16']);
    expect(commit.committedGroups).toEqual(plan.groups.map((g) => g.id));
    expect(await fileCounts(s3, location)).toEqual({ data: 2, deletes: 0 });
    expect(await liveRows(s3, location)).toEqual(before);

    expect(planned.wasmReads).toEqual({ atImport: [], afterEvents: [[]] });
    expect(committed.wasmReads).toEqual({ atImport: [], afterEvents: [[]] });
    expect(rewritten.wasmReads.atImport).toEqual([]);
    const [first, second] = rewritten.wasmReads.afterEvents;
    expect(first).toContain('parquet_wasm_bg.wasm');
    expect(new Set(first).size).toBe(first.length);
    expect(second).toEqual(first);
  });

  it('keep error class names through minification (Step Functions matches on them)', () => {
    const { results } = invoke('commit', [{ results: [] }]);
    expect(results[0].error).toEqual({ name: 'InvalidEventError', message: 'invalid commit event: missing field "plan" (expected an object)' });
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
