/**
 * PackiceCompaction: the compaction state machine of DESIGN.md "Serverless shape" —
 * Plan → (no groups? done, or Commit to drop dangling deletes) → Map: Rewrite(group) → Commit — with its three Lambda functions,
 * least-privilege S3 access to the configured table locations, and alarms on failed, timed-out
 * and throttled executions.
 * Triggers and schedules are not part of it yet.
 */
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotations, Aws, Duration, Size, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as cxapi from 'aws-cdk-lib/cx-api';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { CommitConflictError, IoError } from '../lib/errors.js';
import { PLAN_HEADER_FIELDS } from '../lib/pipeline/rewrite-request.js';
import { PLANS_FOLDER, WORK_LOCATION_ENV } from '../lib/pipeline/plan-payload.js';

export interface PackiceCompactionProps {
  /**
   * The tables this deployment maintains, as S3 URIs of their locations
   * (`s3://bucket/warehouse/db/table`; `s3a://` and `s3n://` are read as `s3://`).
   * The functions may read, write and delete objects under these prefixes and nowhere else.
   */
  readonly tableLocations: readonly string[];
  /**
   * Memory of each function, in MiB (Lambda gives CPU in proportion).
   * @default 2048
   */
  readonly memorySize?: number;
  /**
   * Timeout of each function: one group's rewrite must finish within it.
   * @default Duration.minutes(15)
   */
  readonly timeout?: Duration;
  /**
   * Groups rewritten at once by the Map state.
   * @default 10
   */
  readonly maxConcurrency?: number;
  /**
   * Where plans too large for the 256 KB state payload, and the Distributed Map's results, are
   * written (under `packice/`).
   * @default a new private bucket, objects under `packice/` expiring after 30 days
   */
  readonly workBucket?: s3.IBucket;
}

/** A configured table location split into the parts IAM scopes by. */
export interface TableLocationScope {
  readonly bucket: string;
  /** Key prefix without leading or trailing `/`; empty for a whole bucket. */
  readonly prefix: string;
}

export const PACKICE_DEFAULTS = {
  memorySize: 2048,
  timeout: Duration.minutes(15),
  maxConcurrency: 10,
} as const;

/** Where in the work bucket plans too large for the state, and the Distributed Map's results, are written. */
export const WORK_PREFIX = 'packice';
export const MAP_RESULTS_FOLDER = 'map-results';


/** Lambda refusing invocations beyond its concurrency: wait and try again, at length. */
const THROTTLING_RETRY: sfn.RetryProps = {
  errors: ['Lambda.TooManyRequestsException'],
  interval: Duration.seconds(2),
  backoffRate: 2,
  maxAttempts: 8,
  maxDelay: Duration.minutes(1),
  jitterStrategy: sfn.JitterType.FULL,
};

/** Errors the Commit state retries: the ones lib/errors marks retryable (the names Lambda reports). */
export const COMMIT_RETRY_ERRORS: readonly string[] = [CommitConflictError.name, IoError.name];

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const requireHere = createRequire(import.meta.url);

/**
 * The `.wasm` files the bundled code reads from its own folder at load: esbuild (platform node)
 * picks parquet-wasm's CommonJS `node` build, which reads `${__dirname}/parquet_wasm_bg.wasm`,
 * and roaring-wasm's CommonJS build, which reads `${__dirname}/index.wasm`.
 */
// The rewrite reads Parquet and deletion vectors; the commit does only when it rebases a writer's
// deletes (loaded lazily then). The other functions' bundles hold no wasm.
export const WASM_FILES: readonly { readonly module: string; readonly fileName: string }[] = [
  { module: 'parquet-wasm/node/parquet_wasm_bg.wasm', fileName: 'parquet_wasm_bg.wasm' },
  { module: 'roaring-wasm/index.wasm', fileName: 'index.wasm' },
];

const S3_LOCATION = /^s3[an]?:\/\/([^/]+)(?:\/(.*))?$/i;
// Bucket naming rules (general purpose buckets); dots allowed, no uppercase.
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Parses a table location into bucket and prefix, or says what is wrong with it. */
export function tableLocationScope(location: string): TableLocationScope | string {
  if (Token.isUnresolved(location)) return `table location ${location} is a token: give the S3 URI literally`;
  const m = S3_LOCATION.exec(location);
  if (!m) return `table location "${location}" is not an S3 URI (expected s3://bucket/prefix)`;
  const bucket = m[1];
  const prefix = (m[2] ?? '').replace(/\/+$/, '');
  if (!BUCKET_NAME.test(bucket)) return `table location "${location}": "${bucket}" is not a valid bucket name`;
  if (/[*?]/.test(prefix)) return `table location "${location}" contains a wildcard (* or ?)`;
  if (prefix.split('/').some((s) => s === '') && prefix !== '') return `table location "${location}" has an empty path segment`;
  return { bucket, prefix };
}

/** Collects every problem with the props, so one synth reports them all. */
export function validateProps(props: PackiceCompactionProps): string[] {
  const problems: string[] = [];
  if (!Array.isArray(props.tableLocations) || props.tableLocations.length === 0) {
    problems.push('tableLocations must list at least one table location (s3://bucket/prefix)');
  } else {
    for (const location of props.tableLocations) {
      const scope = typeof location === 'string' ? tableLocationScope(location) : `table location ${String(location)} is not a string`;
      if (typeof scope === 'string') problems.push(scope);
    }
  }
  const { memorySize, timeout, maxConcurrency } = props;
  if (memorySize !== undefined && !Token.isUnresolved(memorySize) && !(Number.isInteger(memorySize) && memorySize >= 128 && memorySize <= 10240)) {
    problems.push(`memorySize must be an integer from 128 to 10240 MiB, got ${memorySize}`);
  }
  if (timeout !== undefined && !timeout.isUnresolved()) {
    const seconds = timeout.toSeconds();
    if (seconds < 1 || seconds > 900) problems.push(`timeout must be from 1 second to 15 minutes, got ${timeout.toHumanString()}`);
  }
  if (maxConcurrency !== undefined && !Token.isUnresolved(maxConcurrency) && !(Number.isInteger(maxConcurrency) && maxConcurrency >= 1)) {
    problems.push(`maxConcurrency must be a positive integer, got ${maxConcurrency}`);
  }
  return problems;
}

export class PackiceCompaction extends Construct {
  /** PlanRequest → Plan. */
  public readonly planFunction: NodejsFunction;
  /** RewriteRequest (the plan's header and one group) → GroupResult. */
  public readonly rewriteFunction: NodejsFunction;
  /** `{ plan, results }` → CompactionCommitResult. */
  public readonly commitFunction: NodejsFunction;
  /** Start it with a PlanRequest (`{ table: { location }, policy? }`); it ends with the CompactionCommitResult. */
  public readonly stateMachine: sfn.StateMachine;
  /** In alarm when any execution fails; add actions to be told. */
  public readonly executionsFailedAlarm: cloudwatch.Alarm;
  /** In alarm when any execution times out. */
  public readonly executionsTimedOutAlarm: cloudwatch.Alarm;
  /** In alarm when Step Functions throttles an execution. */
  public readonly executionsThrottledAlarm: cloudwatch.Alarm;
  /** Plans too large for the state payload, and the Distributed Map's results. */
  public readonly workBucket: s3.IBucket;
  /** The buckets and prefixes the functions may touch. */
  public readonly tableScopes: readonly TableLocationScope[];

  constructor(scope: Construct, id: string, props: PackiceCompactionProps) {
    super(scope, id);
    const problems = validateProps(props);
    if (problems.length > 0) {
      throw new Error(`PackiceCompaction ${this.node.path}: invalid props:\n  - ${problems.join('\n  - ')}`);
    }
    const memorySize = props.memorySize ?? PACKICE_DEFAULTS.memorySize;
    const timeout = props.timeout ?? PACKICE_DEFAULTS.timeout;
    const maxConcurrency = props.maxConcurrency ?? PACKICE_DEFAULTS.maxConcurrency;
    this.tableScopes = dedupe(props.tableLocations.map((l) => tableLocationScope(l) as TableLocationScope));

    const fn = (name: string, step: 'plan' | 'rewrite' | 'commit', extra: Partial<lambda.FunctionOptions> = {}): NodejsFunction =>
      new NodejsFunction(this, name, {
        description: `packice compaction: ${step}`,
        entry: join(REPO_ROOT, 'functions', `${step}.ts`),
        handler: 'handler',
        projectRoot: REPO_ROOT,
        depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
        runtime: lambda.Runtime.NODEJS_22_X,
        architecture: lambda.Architecture.ARM_64,
        memorySize,
        timeout,
        environment: { NODE_OPTIONS: '--enable-source-maps' },
        bundling: bundlingOptions(step === 'rewrite' || step === 'commit' ? WASM_FILES : []),
        ...extra,
      });
    this.workBucket =
      props.workBucket ??
      new s3.Bucket(this, 'WorkBucket', {
        blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
        encryption: s3.BucketEncryption.S3_MANAGED,
        enforceSSL: true,
        lifecycleRules: [{ prefix: `${WORK_PREFIX}/`, expiration: Duration.days(30) }],
      });
    this.planFunction = fn('PlanFunction', 'plan');
    this.planFunction.addEnvironment(WORK_LOCATION_ENV, `s3://${this.workBucket.bucketName}/${WORK_PREFIX}`);
    // Sort rewrites spill sorted runs to /tmp (lib/compaction/external-sort.ts).
    this.rewriteFunction = fn('RewriteFunction', 'rewrite', { ephemeralStorageSize: Size.gibibytes(4) });
    this.commitFunction = fn('CommitFunction', 'commit');
    this.grantAccess();

    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      definitionBody: sfn.DefinitionBody.fromChainable(this.definition(maxConcurrency)),
      stateMachineType: sfn.StateMachineType.STANDARD,
    });

    const anyIn5Minutes = (name: string, description: string, metric: cloudwatch.Metric): cloudwatch.Alarm =>
      new cloudwatch.Alarm(this, name, {
        alarmDescription: description,
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    const every5Minutes = { period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM };
    this.executionsFailedAlarm = anyIn5Minutes(
      'ExecutionsFailedAlarm',
      'A packice compaction execution failed (a failed group alone does not fail it).',
      this.stateMachine.metricFailed(every5Minutes),
    );
    this.executionsTimedOutAlarm = anyIn5Minutes(
      'ExecutionsTimedOutAlarm',
      'A packice compaction execution timed out.',
      this.stateMachine.metricTimedOut(every5Minutes),
    );
    this.executionsThrottledAlarm = anyIn5Minutes(
      'ExecutionsThrottledAlarm',
      'Step Functions throttled a packice compaction execution.',
      this.stateMachine.metricThrottled(every5Minutes),
    );
  }

  /**
   * Least privilege, written out rather than through `grantRead` & co. (which add `s3:List*` on
   * the whole bucket): object actions on the table prefixes only, `s3:ListBucket` limited to them
   * by an `s3:prefix` condition. Plan reads tables; rewrite and commit also write and delete
   * (outputs, manifests, failed outputs). Plan writes stored plans; commit reads them and the
   * Distributed Map's results.
   */
  private grantAccess(): void {
    const byBucket = new Map<string, string[]>();
    for (const { bucket, prefix } of this.tableScopes) byBucket.set(bucket, [...(byBucket.get(bucket) ?? []), prefix]);
    const read = ['s3:GetObject'];
    const write = ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'];
    for (const [bucket, prefixes] of byBucket) {
      const objects = prefixes.map((p) => objectArn(bucket, p === '' ? '*' : `${p}/*`));
      const list = listStatement(bucketArn(bucket), prefixes);
      this.planFunction.addToRolePolicy(list);
      this.planFunction.addToRolePolicy(new iam.PolicyStatement({ actions: read, resources: objects }));
      for (const f of [this.rewriteFunction, this.commitFunction]) {
        f.addToRolePolicy(list);
        f.addToRolePolicy(new iam.PolicyStatement({ actions: write, resources: objects }));
      }
    }
    const work = this.workBucket;
    this.planFunction.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:PutObject', 's3:AbortMultipartUpload'], resources: [work.arnForObjects(`${WORK_PREFIX}/${PLANS_FOLDER}/*`)] }));
    this.commitFunction.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['s3:GetObject'],
        resources: [work.arnForObjects(`${WORK_PREFIX}/${PLANS_FOLDER}/*`), work.arnForObjects(`${WORK_PREFIX}/${MAP_RESULTS_FOLDER}/*`)],
      }),
    );
    if (work.encryptionKey) {
      work.encryptionKey.grantEncryptDecrypt(this.planFunction);
      work.encryptionKey.grantDecrypt(this.commitFunction);
    }
  }

  private definition(maxConcurrency: number): sfn.IChainable {
    const plan = new tasks.LambdaInvoke(this, 'Plan', {
      lambdaFunction: this.planFunction,
      resultSelector: { 'plan.$': '$.Payload' },
    });
    plan.addRetry(THROTTLING_RETRY);

    // A RewriteRequest: the plan's header and the item's group, never the whole plan.
    const itemSelector = {
      ...Object.fromEntries(PLAN_HEADER_FIELDS.map((f) => [`${f}.$`, `$.plan.${f}`])),
      'group.$': '$$.Map.Item.Value',
    };

    const rewriteGroups = new sfn.Map(this, 'Rewrite groups', {
      itemsPath: '$.plan.groups',
      itemSelector,
      maxConcurrency,
      resultPath: '$.results',
    });
    rewriteGroups.itemProcessor(this.rewriteAndCatch(''));

    // A plan too large for the state: its groups are read from the work bucket, one child
    // execution each, and the results written back there for the commit to read.
    // ResultWriterV2 is behind a feature flag: set it for this state alone rather than ask it of the user's app.
    const storedMapScope = new Construct(this, 'StoredPlanMap');
    storedMapScope.node.setContext(cxapi.STEPFUNCTIONS_USE_DISTRIBUTED_MAP_RESULT_WRITER_V2, true);
    const rewriteStoredGroups = new sfn.DistributedMap(storedMapScope, 'Rewrite stored groups', {
      itemReader: new sfn.S3JsonItemReader({ bucket: this.workBucket, key: sfn.JsonPath.stringAt('$.plan.groupsFile.key') }),
      itemSelector,
      maxConcurrency,
      resultWriterV2: new sfn.ResultWriterV2({ bucket: this.workBucket, prefix: `${WORK_PREFIX}/${MAP_RESULTS_FOLDER}` }),
      // Failed groups are caught inside their child; a child that fails anyway is reported by the commit.
      toleratedFailurePercentage: 100,
      mapExecutionType: sfn.StateMachineType.STANDARD,
      resultPath: '$.results',
    });
    rewriteStoredGroups.itemProcessor(this.rewriteAndCatch(' (stored plan)'), {
      mode: sfn.ProcessorMode.DISTRIBUTED,
      executionType: sfn.ProcessorType.STANDARD,
    });
    // aws-cdk-lib validation requires executionType above, then warns that mapExecutionType wins: they agree.
    Annotations.of(rewriteStoredGroups).acknowledgeWarning('@aws-cdk/aws-stepfunctions:propertyIgnored', 'both say STANDARD');

    const commit = new tasks.LambdaInvoke(this, 'Commit', {
      lambdaFunction: this.commitFunction,
      outputPath: '$.Payload',
    });
    // Commits are idempotent (lib/compaction/commit.ts recognises groups already committed).
    commit.addRetry({
      errors: [...COMMIT_RETRY_ERRORS],
      interval: Duration.seconds(5),
      backoffRate: 2,
      maxAttempts: 4,
      jitterStrategy: sfn.JitterType.FULL,
    });

    commit.addRetry(THROTTLING_RETRY);
    commit.next(new sfn.Succeed(this, 'Compacted'));

    const anyGroups = new sfn.Choice(this, 'Any groups?')
      .when(sfn.Condition.isPresent('$.plan.groupsFile'), rewriteStoredGroups.next(commit))
      .when(sfn.Condition.isPresent('$.plan.groups[0]'), rewriteGroups.next(commit))
      // No group, but delete files no live data file needs: the commit drops them on their own.
      .when(
        sfn.Condition.isPresent('$.plan.danglingDeletes'),
        new sfn.Pass(this, 'Drop dangling deletes', { result: sfn.Result.fromArray([]), resultPath: '$.results' }).next(commit),
      )
      .otherwise(new sfn.Succeed(this, 'Nothing to compact'));
    return plan.next(anyGroups);
  }

  /** One group's rewrite; any failure becomes `{groupId, error}`, which the commit reports. */
  private rewriteAndCatch(suffix: string): sfn.IChainable {
    const rewrite = new tasks.LambdaInvoke(this, `Rewrite${suffix}`, {
      lambdaFunction: this.rewriteFunction,
      outputPath: '$.Payload',
    });
    rewrite.addRetry({ errors: [IoError.name], interval: Duration.seconds(5), backoffRate: 2, maxAttempts: 2 });
    rewrite.addRetry(THROTTLING_RETRY);
    // Only `{groupId, error}`: keeping the input would copy the group's file list into the results.
    const groupFailed = new sfn.Pass(this, `Group failed${suffix}`, {
      parameters: { 'groupId.$': '$.group.id', 'error.$': '$.error' },
    });
    rewrite.addCatch(groupFailed, { errors: [sfn.Errors.ALL], resultPath: '$.error' });
    return rewrite;
  }
}

/** esbuild, locally (never Docker), CommonJS with the `.wasm` files it reads copied beside `index.js`. */
function bundlingOptions(wasmFiles: typeof WASM_FILES): BundlingOptions {
  const wasm = wasmFiles.map((w) => ({ from: relative(REPO_ROOT, requireHere.resolve(w.module)), to: w.fileName }));
  return {
    format: OutputFormat.CJS,
    // Node 20 syntax runs on the nodejs22.x runtime, and in the tests on Node 20.
    target: 'node20',
    minify: true,
    // Step Functions Retry/Catch match Lambda's errorType, the error's class name.
    keepNames: true,
    sourceMap: true,
    sourcesContent: false,
    // Bundle the AWS SDK too: the version we test with, not the runtime's.
    externalModules: [],
    forceDockerBundling: false,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (inputDir: string, outputDir: string) =>
        wasm.map((w) => `cp ${shellQuote(join(inputDir, w.from))} ${shellQuote(join(outputDir, w.to))}`),
    },
  };
}

function bucketArn(bucket: string): string {
  return `arn:${Aws.PARTITION}:s3:::${bucket}`;
}

function objectArn(bucket: string, keys: string): string {
  return `${bucketArn(bucket)}/${keys}`;
}

/** `s3:ListBucket` on the bucket, for keys under the table prefixes only (the whole bucket when a table is at its root). */
function listStatement(bucket: string, prefixes: readonly string[]): iam.PolicyStatement {
  const whole = prefixes.includes('');
  return new iam.PolicyStatement({
    actions: ['s3:ListBucket'],
    resources: [bucket],
    ...(whole ? {} : { conditions: { StringLike: { 's3:prefix': prefixes.flatMap((p) => [p, `${p}/*`]) } } }),
  });
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function dedupe(scopes: readonly TableLocationScope[]): TableLocationScope[] {
  const seen = new Map<string, TableLocationScope>();
  for (const s of scopes) seen.set(`${s.bucket}/${s.prefix}`, s);
  return [...seen.values()];
}
