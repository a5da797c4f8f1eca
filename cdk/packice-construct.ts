/**
 * PackiceCompaction: the compaction state machine of DESIGN.md "Serverless shape" —
 * Plan → (no groups? done) → Map: Rewrite(group) → Commit — with its three Lambda functions,
 * least-privilege S3 access to the configured table locations, and an alarm on failed executions.
 * Triggers and schedules are not part of it yet.
 */
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, Size, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { CommitConflictError, IoError } from '../lib/errors.js';

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

/** Errors the Commit state retries: the ones lib/errors marks retryable (the names Lambda reports). */
export const COMMIT_RETRY_ERRORS: readonly string[] = [CommitConflictError.name, IoError.name];

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const requireHere = createRequire(import.meta.url);

/**
 * The `.wasm` files the bundled code reads from its own folder at load: esbuild (platform node)
 * picks parquet-wasm's CommonJS `node` build, which reads `${__dirname}/parquet_wasm_bg.wasm`,
 * and roaring-wasm's CommonJS build, which reads `${__dirname}/index.wasm`.
 */
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
  /** `{ plan, groupId }` → GroupResult. */
  public readonly rewriteFunction: NodejsFunction;
  /** `{ plan, results }` → CommitResult. */
  public readonly commitFunction: NodejsFunction;
  /** Start it with a PlanRequest (`{ table: { location }, policy? }`); it ends with the CommitResult. */
  public readonly stateMachine: sfn.StateMachine;
  /** In alarm when any execution fails; add actions to be told. */
  public readonly executionsFailedAlarm: cloudwatch.Alarm;
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
        bundling: bundlingOptions(),
        ...extra,
      });
    this.planFunction = fn('PlanFunction', 'plan');
    // Sort rewrites spill sorted runs to /tmp (lib/compaction/external-sort.ts).
    this.rewriteFunction = fn('RewriteFunction', 'rewrite', { ephemeralStorageSize: Size.gibibytes(4) });
    this.commitFunction = fn('CommitFunction', 'commit');
    this.grantTableAccess();

    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      definitionBody: sfn.DefinitionBody.fromChainable(this.definition(maxConcurrency)),
      stateMachineType: sfn.StateMachineType.STANDARD,
    });

    this.executionsFailedAlarm = new cloudwatch.Alarm(this, 'ExecutionsFailedAlarm', {
      alarmDescription: 'A packice compaction execution failed (a failed group alone does not fail it).',
      metric: this.stateMachine.metricFailed({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /** Plan reads; rewrite and commit read, write and delete (failed outputs, superseded manifests). */
  private grantTableAccess(): void {
    const buckets = new Map<string, s3.IBucket>();
    for (const { bucket, prefix } of this.tableScopes) {
      let b = buckets.get(bucket);
      if (!b) {
        b = s3.Bucket.fromBucketName(this, `TableBucket${buckets.size}`, bucket);
        buckets.set(bucket, b);
      }
      const grants = s3.BucketGrants.fromBucket(b);
      const keys = prefix === '' ? '*' : `${prefix}/*`;
      grants.read(this.planFunction, keys);
      for (const f of [this.rewriteFunction, this.commitFunction]) {
        grants.read(f, keys);
        grants.put(f, keys);
        grants.delete(f, keys);
      }
    }
  }

  private definition(maxConcurrency: number): sfn.IChainable {
    const plan = new tasks.LambdaInvoke(this, 'Plan', {
      lambdaFunction: this.planFunction,
      resultSelector: { 'plan.$': '$.Payload' },
    });

    const rewrite = new tasks.LambdaInvoke(this, 'Rewrite', {
      lambdaFunction: this.rewriteFunction,
      outputPath: '$.Payload',
    });
    rewrite.addRetry({ errors: [IoError.name], interval: Duration.seconds(5), backoffRate: 2, maxAttempts: 2 });
    // A failed group leaves only `{groupId, error}`: keeping its input would copy the plan into the results.
    const groupFailed = new sfn.Pass(this, 'Group failed', {
      parameters: { 'groupId.$': '$.groupId', 'error.$': '$.error' },
    });
    rewrite.addCatch(groupFailed, { errors: [sfn.Errors.ALL], resultPath: '$.error' });

    const rewriteGroups = new sfn.Map(this, 'Rewrite groups', {
      itemsPath: '$.plan.groups',
      itemSelector: { 'plan.$': '$.plan', 'groupId.$': '$$.Map.Item.Value.id' },
      maxConcurrency,
      resultPath: '$.results',
    });
    rewriteGroups.itemProcessor(rewrite);

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

    const anyGroups = new sfn.Choice(this, 'Any groups?')
      .when(sfn.Condition.isPresent('$.plan.groups[0]'), rewriteGroups.next(commit).next(new sfn.Succeed(this, 'Compacted')))
      .otherwise(new sfn.Succeed(this, 'Nothing to compact'));
    return plan.next(anyGroups);
  }
}

/** esbuild, locally (never Docker), CommonJS with the `.wasm` files copied beside `index.js`. */
function bundlingOptions(): BundlingOptions {
  const wasm = WASM_FILES.map((w) => ({ from: relative(REPO_ROOT, requireHere.resolve(w.module)), to: w.fileName }));
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

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function dedupe(scopes: readonly TableLocationScope[]): TableLocationScope[] {
  const seen = new Map<string, TableLocationScope>();
  for (const s of scopes) seen.set(`${s.bucket}/${s.prefix}`, s);
  return [...seen.values()];
}
