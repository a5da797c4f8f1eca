/**
 * IcebergMaintenance: the whole maintenance service of DESIGN.md "Serverless shape" in the
 * user's account, as one construct.
 *
 * - Compaction state machine: Plan → (no groups? done, or Commit to drop dangling deletes) →
 *   Map: Rewrite(group), inline or Distributed over a stored plan → Commit → Report.
 * - Retention state machine: Map over the tables → Expire → Orphans. Expiry and orphan removal
 *   run in a state machine rather than as two schedule targets so that orphans always follow
 *   their table's expiry (the files expiry unlinks are not orphans yet), each step retries on
 *   throttling and transient S3 errors, and a failure raises one alarm.
 * - Triggers: an EventBridge rule on S3 "Object Created" for `<table>/metadata/*.metadata.json`
 *   invokes `trigger` (a dead-letter queue catches what fails); an EventBridge Scheduler
 *   schedule invokes it nightly for every table; another starts the retention state machine.
 * - Six functions (plan, rewrite, commit, trigger, expire, orphans), arm64, X-Ray on,
 *   least-privilege S3 access to the configured table prefixes, KMS grants when asked;
 *   state machine logs and tracing on; alarms on failed, timed-out and throttled executions,
 *   aborted groups and dead letters.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotations, Aws, CfnOutput, Duration, RemovalPolicy, Size, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventsTargets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import type { CompactionPolicy } from '../lib/compaction/messages.js';
import { CommitConflictError, IoError } from '../lib/errors.js';
import { CATALOGS_ENV, RestProperty, type CatalogProperties } from '../lib/catalog/rest/rest-properties.js';
import { formatTableName, parseTableName, type TableName } from '../lib/catalog/table-name.js';
import { MAINTAINED_TABLES_ENV, type MaintainedTable, type TableRetention } from '../lib/pipeline/maintained-table.js';
import { lambdaVcpus } from '../lib/compaction/vcpus.js';
import { INLINE_BUDGET_BYTES, INLINE_BUDGET_ENV, PLANS_FOLDER, REWRITE_BATCH_ENV, WORK_LOCATION_ENV } from '../lib/pipeline/plan-payload.js';
import { FUNCTION_MEMORY_ENV, REPORT_METRICS, REPORTS_FOLDER } from '../lib/pipeline/report-step.js';
import type { RetentionRequest } from '../lib/pipeline/retention-request.js';
import { PLAN_HEADER_FIELDS } from '../lib/pipeline/rewrite-request.js';

/** Expiry and orphan-removal settings of one table. */
export interface RetentionProps {
  /**
   * Snapshots older than this may expire.
   * @default the table's `history.expire.max-snapshot-age-ms`, else 5 days
   */
  readonly maxSnapshotAge?: Duration;
  /**
   * Snapshots kept per branch, whatever their age.
   * @default the table's `history.expire.min-snapshots-to-keep`, else 1
   */
  readonly retainLast?: number;
  /**
   * Snapshot ids or ref names that never expire.
   * @default none
   */
  readonly pins?: readonly string[];
  /**
   * Audit or replay horizons: nothing younger than the longest one expires.
   * @default none
   */
  readonly horizons?: readonly Duration[];
  /**
   * Orphan removal deletes only unreferenced files older than this (at least 1 hour: a commit
   * still being written must not lose its files).
   * @default Duration.days(3)
   */
  readonly orphanOlderThan?: Duration;
}

/** One maintained table. */
export interface MaintainedTableProps {
  /**
   * The table, as the command line names it:
   * - its location, an S3 URI (`s3://bucket/warehouse/db/table`; `s3a://` and `s3n://` are read
   *   as `s3://`): the functions may read, write and delete objects under it and nowhere else;
   * - `glue://<database>/<table>`, a table of the AWS Glue Data Catalog of this stack's account
   *   and region: `glue:GetTable` (and `glue:UpdateTable` for the functions that commit) on the
   *   catalog, the database and the table, plus S3 access to `storageLocation`, which it needs;
   * - `s3tables://<table-bucket-arn>/<namespace>/<table>`, a table of Amazon S3 Tables: the
   *   `s3tables:` actions the functions need (`GetTableMetadataLocation`,
   *   `UpdateTableMetadataLocation`, `GetTableData`, `PutTableData`) on that table alone. S3 Tables
   *   expires snapshots and removes unreferenced files itself, and accepts no deletes or listings
   *   from us: such a table is compacted only (no `retention`);
   * - `rest+https://<endpoint>/<namespace>/<table>`, a table of an Iceberg REST catalog, passed to
   *   the functions as it is (S3 access to `storageLocation` when given), with its
   *   `catalogProperties`. Signed with the functions' role (`rest.signing-name`), the catalog calls
   *   are granted as for the catalog behind it: `glue` (Glue's Iceberg REST endpoint) as for
   *   `glue://`, `s3tables` (S3 Tables' endpoint; its `warehouse` is the table bucket ARN) as for
   *   `s3tables://`.
   * For notifications, the bucket of a location (or `storageLocation`) must send events to
   * EventBridge (`eventBridgeEnabled`); S3 Tables has none: its tables are checked on schedule.
   */
  readonly location: string;
  /**
   * Where the files of a `glue://` or `rest+https://` table are, an S3 URI: the table's Iceberg
   * location (for Glue, its `StorageDescriptor.Location`). Its metadata and data must be under it:
   * the functions may read, write and delete objects there and nowhere else. Synthesis cannot ask
   * the catalog, so a Glue table needs it.
   * @default none: required for `glue://`, refused for locations and `s3tables://` names
   */
  readonly storageLocation?: string;
  /**
   * The REST catalog's client properties for a `rest+https://` table, by the names Java's
   * RESTCatalog uses (`warehouse`, `rest.signing-name`, `rest.signing-region`, `header.*`, …).
   * They reach the functions in their environment, so secrets (`token`, `credential`) are refused:
   * sign with the functions' role instead.
   * @default none: the catalog's `/v1/config` alone
   */
  readonly catalogProperties?: Readonly<Record<string, string>>;
  /**
   * Compaction thresholds and targets: `targetFileSizeBytes`, `minFileSizeBytes`,
   * `maxFileSizeBytes`, `minInputFiles`, `deleteFileThreshold`, `deleteRatioThreshold`,
   * `quietMinutes`, `where`, `mode`, `strategy`, `maxGroupBytes`, `maxGroups`.
   * @default the table's properties (`write.target-file-size-bytes` …), else packice's defaults (`packice plan --help`)
   */
  readonly policy?: CompactionPolicy;
  /**
   * Snapshot expiry and orphan removal.
   * @default the table's own properties, orphans older than 3 days
   */
  readonly retention?: RetentionProps;
}

export interface IcebergMaintenanceProps {
  /** The tables this deployment maintains (at least one). */
  readonly tables: readonly MaintainedTableProps[];
  /**
   * When every table is checked and compacted if it needs it, whatever the notifications did.
   * @default scheduler.ScheduleExpression.cron({ hour: '2', minute: '0' }) — nightly, 02:00 UTC
   */
  readonly compactionSchedule?: scheduler.ScheduleExpression;
  /**
   * When snapshots expire and orphan files are removed, for every table.
   * @default scheduler.ScheduleExpression.cron({ hour: '4', minute: '0' }) — daily, 04:00 UTC
   */
  readonly retentionSchedule?: scheduler.ScheduleExpression;
  /**
   * Start a compaction check on every new metadata file (S3 "Object Created" through EventBridge).
   * @default true
   */
  readonly compactOnCommit?: boolean;
  /**
   * Memory of each function, in MiB (Lambda gives CPU in proportion).
   * @default 2048
   */
  readonly memorySize?: number;
  /**
   * Memory of the rewrite function, in MiB. Its default is one vCPU's worth: a group's merge and
   * copy run on one thread, so more memory buys CPU a rewrite leaves idle (a GB compacted costs
   * ~16 % more at 2,048 MB than at 1,769; BENCHMARKS.md, "What a run costs" in the README), and a
   * 700 MiB group peaks under 850 MiB on any path.
   * @default memorySize when that is set, else 1769
   */
  readonly rewriteMemorySize?: number;
  /**
   * Groups one rewrite invocation takes (in batches the plan function makes: lib/pipeline/
   * plan-payload.ts rewriteBatches), rewritten side by side, one thread each. Lambda gives one vCPU per 1,769 MB, and one group's rewrite keeps one
   * busy: at 10,240 MB six groups at once cost per GB what one vCPU does, where one group alone
   * leaves most of the function idle (BENCHMARKS.md). Above 1, every plan goes through the work
   * bucket and the Distributed Map, which batches (within its 256 KiB per batch). More groups than
   * vCPUs run the rest as threads free up, all within one `timeout`.
   * @default the rewrite function's vCPUs: rewriteMemorySize ÷ 1,769, rounded (1 at the default memory: no batching)
   */
  readonly rewriteBatchSize?: number;
  /**
   * Timeout of each function: one group's rewrite (a batch's groups, side by side), one table's
   * expiry, must finish within it.
   * @default Duration.minutes(15)
   */
  readonly timeout?: Duration;
  /**
   * Rewrite invocations at once by one execution's Map state: each rewrites a group, or a batch of
   * `rewriteBatchSize` groups.
   * @default 10
   */
  readonly maxConcurrency?: number;
  /**
   * Concurrent executions reserved for the rewrite function: a cap on all rewrites at once,
   * across executions, so compaction cannot starve the account's other functions.
   * @default no reservation (the account's unreserved pool)
   */
  readonly rewriteReservedConcurrency?: number;
  /**
   * Tables expired and cleaned at once by the retention state machine.
   * @default 2
   */
  readonly retentionConcurrency?: number;
  /**
   * Where every alarm sends its alarm actions.
   * @default no action (the alarms are there to watch or to wire up)
   */
  readonly alarmTopic?: sns.ITopic;
  /**
   * Customer-managed KMS keys the tables' buckets are encrypted with (SSE-KMS): functions that
   * read get `kms:Decrypt`, those that write also `kms:GenerateDataKey*` and `kms:Encrypt`.
   * @default none (SSE-S3 buckets need no grant)
   */
  readonly encryptionKeys?: readonly kms.IKey[];
  /**
   * Where plans too large for the 256 KB state payload, the Distributed Map's results and the
   * run reports are written (under `packice/`).
   * @default a new private bucket; plans and Map results expire after 30 days, reports stay
   */
  readonly workBucket?: s3.IBucket;
  /**
   * Plans whose groups and results are estimated above this many bytes go through the work bucket
   * and a Distributed Map instead of the state. Lower it to send smaller plans that way. With
   * `rewriteBatchSize` above 1 every plan goes that way.
   * @default 196,608 (three quarters of the 256 KiB a state may hold, leaving room for the results)
   */
  readonly inlinePlanBudgetBytes?: number;
  /**
   * How long the state machines' execution logs are kept.
   * @default logs.RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: logs.RetentionDays;
}

/** A configured table location split into the parts IAM scopes by. */
export interface TableLocationScope {
  readonly bucket: string;
  /** Key prefix without leading or trailing `/`; empty for a whole bucket. */
  readonly prefix: string;
}

export const MAINTENANCE_DEFAULTS = {
  memorySize: 2048,
  rewriteMemorySize: 1769,
  timeout: Duration.minutes(15),
  maxConcurrency: 10,
  retentionConcurrency: 2,
  compactionSchedule: 'cron(0 2 * * ? *)',
  retentionSchedule: 'cron(0 4 * * ? *)',
} as const;

/** Where in the work bucket plans too large for the state, the Distributed Map's results and the reports are written. */
export const WORK_PREFIX = 'packice';
export const MAP_RESULTS_FOLDER = 'map-results';

/** The functions, by the step each serves. */
export const STEPS = ['plan', 'rewrite', 'commit', 'trigger', 'expire', 'orphans'] as const;
export type Step = (typeof STEPS)[number];

/** Lambda refusing invocations beyond its concurrency: wait and try again, at length. */
const THROTTLING_RETRY: sfn.RetryProps = {
  errors: ['Lambda.TooManyRequestsException'],
  interval: Duration.seconds(2),
  backoffRate: 2,
  maxAttempts: 8,
  maxDelay: Duration.minutes(1),
  jitterStrategy: sfn.JitterType.FULL,
};

/** Transient S3 errors (lib/io translates them to IoError, retryable). */
const IO_RETRY: sfn.RetryProps = { errors: [IoError.name], interval: Duration.seconds(5), backoffRate: 2, maxAttempts: 2, jitterStrategy: sfn.JitterType.FULL };

/** Errors the Commit state retries: the ones lib/errors marks retryable (the names Lambda reports). */
export const COMMIT_RETRY_ERRORS: readonly string[] = [CommitConflictError.name, IoError.name];

const HERE = dirname(fileURLToPath(import.meta.url));
/** Loaded as compiled JavaScript from `dist/cdk` (the installed package), not as TypeScript from `cdk/`. */
const FROM_DIST = basename(dirname(HERE)) === 'dist';
const PACKAGE_ROOT = FROM_DIST ? join(HERE, '..', '..') : join(HERE, '..');
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

/** The steps whose bundles carry the wasm files. */
export const WASM_STEPS: readonly Step[] = ['rewrite', 'commit'];

/**
 * The rewrite function's exec wrapper (cdk/node-flags.sh, AWS_LAMBDA_EXEC_WRAPPER): beside
 * index.js in its bundle, executable, it starts node with V8 flags NODE_OPTIONS cannot carry.
 */
export const EXEC_WRAPPER = { step: 'rewrite' as Step, source: 'cdk/node-flags.sh', fileName: 'node-flags.sh' } as const;
/** Where Lambda finds a function's bundle. */
const LAMBDA_TASK_ROOT = '/var/task';

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

/** A configured table: how the functions name it, its catalog, and the S3 prefix its files are under. */
export interface TableScope {
  /** Two entries naming the same table have the same key. */
  readonly key: string;
  readonly name: TableName;
  /** Where its files are; undefined for S3 Tables (reached through `s3tables:` actions) and a REST table without `storageLocation`. */
  readonly files?: TableLocationScope;
  /** A REST table's client properties. */
  readonly catalogProperties?: CatalogProperties;
}

/** Properties that would put a secret in the functions' environment. */
const SECRET_PROPERTIES: readonly string[] = [RestProperty.Token, RestProperty.Credential];

/** A table's props checked and resolved, or what is wrong with them. */
export function tableScopeOf(table: MaintainedTableProps): TableScope | string {
  const { location, storageLocation } = table;
  if (Token.isUnresolved(location)) return `table location ${location} is a token: give the S3 URI or table name literally`;
  let name: TableName;
  try {
    name = parseTableName(location);
  } catch (e) {
    // The message names the location.
    return (e as Error).message;
  }
  const { catalogProperties } = table;
  if (catalogProperties !== undefined && name.kind !== 'rest') return `table "${location}": catalogProperties are for rest+https:// tables`;
  const secret = Object.keys(catalogProperties ?? {}).find((k) => SECRET_PROPERTIES.includes(k));
  if (secret !== undefined) {
    return `table "${location}": catalogProperties.${secret} would be stored in the functions' environment: sign with their role instead (rest.signing-name)`;
  }
  const storage = (): TableLocationScope | string | undefined => {
    if (storageLocation === undefined) return undefined;
    const scope = tableLocationScope(storageLocation);
    return typeof scope === 'string' ? `table "${location}": storageLocation: ${scope}` : scope;
  };
  switch (name.kind) {
    case 'location': {
      if (storageLocation !== undefined) return `table "${location}": storageLocation is for catalog tables; a location names where the files are already`;
      const files = tableLocationScope(location);
      return typeof files === 'string' ? files : { key: `${files.bucket}/${files.prefix}`, name, files };
    }
    case 'glue': {
      const files = storage();
      if (files === undefined) {
        return `table "${location}": a Glue table needs storageLocation, the S3 URI its files are under (its Iceberg location, the Glue table's StorageDescriptor.Location)`;
      }
      return typeof files === 'string' ? files : { key: formatTableName(name), name, files };
    }
    case 's3tables':
      if (storageLocation !== undefined) return `table "${location}": an S3 Tables table needs no storageLocation: its files are reached through s3tables:GetTableData and PutTableData`;
      if (table.retention !== undefined) {
        return `table "${location}": S3 Tables expires snapshots and removes unreferenced files itself (its table maintenance settings), and refuses our deletes: no retention for it`;
      }
      return { key: formatTableName(name), name };
    case 'rest': {
      const files = storage();
      if (typeof files === 'string') return files;
      const signed = restSigned(name, catalogProperties ?? {});
      if (typeof signed === 'string') return `table "${location}": ${signed}`;
      if (signed?.kind === 's3tables' && table.retention !== undefined) {
        return `table "${location}": S3 Tables expires snapshots and removes unreferenced files itself, and refuses our deletes: no retention for it`;
      }
      return {
        key: formatTableName(name),
        name,
        ...(files !== undefined ? { files } : {}),
        ...(catalogProperties !== undefined ? { catalogProperties } : {}),
      };
    }
  }
}

/** The catalog that authorizes a table's calls: Glue or S3 Tables behind a REST table signed for them, else its own. */
function catalogBehind(table: TableScope): TableName {
  const signed = table.name.kind === 'rest' ? restSigned(table.name, table.catalogProperties ?? {}) : undefined;
  return typeof signed === 'object' ? signed : table.name;
}

/** `$PACKICE_REST_CATALOGS` for the functions: each REST catalog's properties by its URI. */
function restCatalogProperties(tables: readonly TableScope[]): string | undefined {
  const byUri: Record<string, Record<string, string>> = {};
  for (const { name, catalogProperties } of tables) {
    if (name.kind !== 'rest' || catalogProperties === undefined) continue;
    byUri[name.uri] = { ...byUri[name.uri], ...catalogProperties };
  }
  return Object.keys(byUri).length === 0 ? undefined : JSON.stringify(byUri);
}

/** The catalog a REST table's SigV4 signing name says is behind it, as a glue:// or s3tables:// name; or what is wrong. */
function restSigned(name: Extract<TableName, { kind: 'rest' }>, properties: CatalogProperties): TableName | undefined | string {
  const service = properties[RestProperty.SigningName];
  if (service === undefined) return undefined;
  if (service !== 'glue' && service !== 's3tables') return `rest.signing-name ${service}: the construct grants the calls of glue or s3tables only`;
  if (name.namespace.length !== 1) return `a ${service} REST catalog has one-level namespaces, not ${name.namespace.join('.')}`;
  const [namespace] = name.namespace;
  if (service === 'glue') return { kind: 'glue', database: namespace, table: name.table };
  const bucket = properties[RestProperty.Warehouse];
  if (bucket === undefined || !/^arn:[^:]+:s3tables:[^:]*:[^:]*:bucket\/[^/]+$/.test(bucket)) {
    return `an s3tables REST catalog's warehouse is its table bucket ARN (arn:aws:s3tables:<region>:<account>:bucket/<name>), got ${bucket ?? 'none'}`;
  }
  return { kind: 's3tables', tableBucketArn: bucket, namespace, table: name.table };
}

const positiveInteger = (value: number | undefined): boolean => value === undefined || Token.isUnresolved(value) || (Number.isInteger(value) && value >= 1);

/** Collects every problem with the props, so one synth reports them all. */
export function validateProps(props: IcebergMaintenanceProps): string[] {
  const problems: string[] = [];
  if (!Array.isArray(props.tables) || props.tables.length === 0) {
    problems.push('tables must list at least one table ({ location: "s3://bucket/prefix" })');
  } else {
    const seen = new Set<string>();
    for (const table of props.tables) {
      const location: unknown = table?.location;
      const found = typeof location === 'string' ? tableScopeOf(table) : `table location ${String(location)} is not a string`;
      if (typeof found === 'string') {
        problems.push(found);
        continue;
      }
      if (seen.has(found.key)) problems.push(`table location "${String(location)}" is listed twice`);
      seen.add(found.key);
      const orphanDelay = table.retention?.orphanOlderThan;
      if (orphanDelay !== undefined && !orphanDelay.isUnresolved() && orphanDelay.toSeconds() < 3600) {
        problems.push(`table "${String(location)}": retention.orphanOlderThan must be at least 1 hour, got ${orphanDelay.toHumanString()}`);
      }
      if (!positiveInteger(table.retention?.retainLast)) problems.push(`table "${String(location)}": retention.retainLast must be a positive integer`);
    }
  }
  for (const [name, memorySize] of [['memorySize', props.memorySize], ['rewriteMemorySize', props.rewriteMemorySize]] as const) {
    if (memorySize !== undefined && !Token.isUnresolved(memorySize) && !(Number.isInteger(memorySize) && memorySize >= 128 && memorySize <= 10240)) {
      problems.push(`${name} must be an integer from 128 to 10240 MiB, got ${memorySize}`);
    }
  }
  const { timeout } = props;
  if (timeout !== undefined && !timeout.isUnresolved()) {
    const seconds = timeout.toSeconds();
    if (seconds < 1 || seconds > 900) problems.push(`timeout must be from 1 second to 15 minutes, got ${timeout.toHumanString()}`);
  }
  for (const name of ['maxConcurrency', 'retentionConcurrency', 'rewriteReservedConcurrency', 'rewriteBatchSize'] as const) {
    if (!positiveInteger(props[name])) problems.push(`${name} must be a positive integer, got ${props[name]}`);
  }
  const rewriteMemory = rewriteMemoryOf(props);
  if (props.rewriteBatchSize !== undefined && positiveInteger(props.rewriteBatchSize) && !Token.isUnresolved(rewriteMemory) && props.rewriteBatchSize > lambdaVcpus(rewriteMemory)) {
    problems.push(
      `rewriteBatchSize must be at most the rewrite function's vCPUs (${lambdaVcpus(rewriteMemory)} at ${rewriteMemory} MiB: one per 1,769), got ${props.rewriteBatchSize}: a batch's groups run side by side within one timeout`,
    );
  }
  const budget = props.inlinePlanBudgetBytes;
  if (budget !== undefined && !(Number.isInteger(budget) && budget >= 1 && budget <= INLINE_BUDGET_BYTES)) {
    problems.push(`inlinePlanBudgetBytes must be an integer from 1 to ${INLINE_BUDGET_BYTES}, got ${budget}`);
  }
  return problems;
}

/** The rewrite function's memory: its own, else every function's, else one vCPU's. */
function rewriteMemoryOf(props: IcebergMaintenanceProps): number {
  return props.rewriteMemorySize ?? props.memorySize ?? MAINTENANCE_DEFAULTS.rewriteMemorySize;
}

/** What the functions get for a table: its location, policy and retention in milliseconds. */
export function maintainedTable(table: MaintainedTableProps): MaintainedTable {
  return {
    location: table.location,
    ...(table.storageLocation !== undefined ? { storageLocation: table.storageLocation } : {}),
    ...(table.policy !== undefined ? { policy: table.policy } : {}),
    ...(table.retention !== undefined ? { retention: tableRetention(table.retention) } : {}),
  };
}

function tableRetention(r: RetentionProps): TableRetention {
  return {
    ...(r.maxSnapshotAge !== undefined ? { olderThanMs: r.maxSnapshotAge.toMilliseconds() } : {}),
    ...(r.retainLast !== undefined ? { retainLast: r.retainLast } : {}),
    ...(r.pins !== undefined ? { pins: r.pins } : {}),
    ...(r.horizons !== undefined ? { horizonsMs: r.horizons.map((h) => h.toMilliseconds()) } : {}),
    ...(r.orphanOlderThan !== undefined ? { orphanOlderThanMs: r.orphanOlderThan.toMilliseconds() } : {}),
  };
}

export class IcebergMaintenance extends Construct {
  /** PlanRequest → Plan. */
  public readonly planFunction: lambda.Function;
  /** RewriteRequest (the plan's header and one group) → GroupResult. */
  public readonly rewriteFunction: lambda.Function;
  /** Groups one rewrite invocation takes (`rewriteBatchSize`). */
  public readonly rewriteBatchSize: number;
  /** `{ plan, results }` → the commit's result; also serves the Report state. */
  public readonly commitFunction: lambda.Function;
  /** S3 Object Created event or `{"tables":"all"}` → compaction executions started. */
  public readonly triggerFunction: lambda.Function;
  /** RetentionRequest → ExpireSummary. */
  public readonly expireFunction: lambda.Function;
  /** RetentionRequest → OrphanSummary. */
  public readonly orphansFunction: lambda.Function;
  /** Start it with a PlanRequest (`{ table: { location }, policy? }`); it ends with the run's report. */
  public readonly stateMachine: sfn.StateMachine;
  /** Start it with `{ tables: RetentionRequest[] }`; the retention schedule does, for every table. */
  public readonly retentionStateMachine: sfn.StateMachine;
  /** S3 "Object Created" events for the tables' metadata files → trigger; undefined when compactOnCommit is false. */
  public readonly commitRule?: events.Rule;
  /** Nightly: trigger with `{"tables":"all"}`. */
  public readonly compactionSchedule: scheduler.Schedule;
  /** Starts the retention state machine for every table. */
  public readonly retentionSchedule: scheduler.Schedule;
  /** Trigger events that could not be delivered or handled. */
  public readonly deadLetterQueue: sqs.Queue;
  /** In alarm when any compaction execution fails; add actions to be told (or give alarmTopic). */
  public readonly executionsFailedAlarm: cloudwatch.Alarm;
  /** In alarm when any compaction execution times out. */
  public readonly executionsTimedOutAlarm: cloudwatch.Alarm;
  /** In alarm when Step Functions throttles a compaction execution. */
  public readonly executionsThrottledAlarm: cloudwatch.Alarm;
  /** In alarm when a run's report counts aborted groups (failed rewrites, conflicts the commit could not rebase). */
  public readonly abortedGroupsAlarm: cloudwatch.Alarm;
  /** In alarm when a retention execution fails. */
  public readonly retentionFailedAlarm: cloudwatch.Alarm;
  /** In alarm when a trigger event lands in the dead-letter queue. */
  public readonly deadLettersAlarm: cloudwatch.Alarm;
  /** Plans too large for the state payload, the Distributed Map's results, and the reports. */
  public readonly workBucket: s3.IBucket;
  /** `s3://<work bucket>/packice/reports/`: one JSON report per compaction run, by table. */
  public readonly reportLocation: string;
  /** The buckets and prefixes the functions may touch: the tables' locations and storage locations. */
  public readonly tableScopes: readonly TableLocationScope[];
  /** Each configured table: its name and where its files are. */
  public readonly tables: readonly TableScope[];

  constructor(scope: Construct, id: string, props: IcebergMaintenanceProps) {
    super(scope, id);
    const problems = validateProps(props);
    if (problems.length > 0) {
      throw new Error(`IcebergMaintenance ${this.node.path}: invalid props:\n  - ${problems.join('\n  - ')}`);
    }
    const memorySize = props.memorySize ?? MAINTENANCE_DEFAULTS.memorySize;
    const rewriteMemorySize = rewriteMemoryOf(props);
    this.rewriteBatchSize = props.rewriteBatchSize ?? (Token.isUnresolved(rewriteMemorySize) ? 1 : lambdaVcpus(rewriteMemorySize));
    const timeout = props.timeout ?? MAINTENANCE_DEFAULTS.timeout;
    const tables = props.tables.map(maintainedTable);
    this.tables = props.tables.map((t) => tableScopeOf(t) as TableScope);
    this.tableScopes = dedupe(this.tables.flatMap((t) => (t.files !== undefined ? [t.files] : [])));

    this.workBucket =
      props.workBucket ??
      new s3.Bucket(this, 'WorkBucket', {
        blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
        encryption: s3.BucketEncryption.S3_MANAGED,
        enforceSSL: true,
        removalPolicy: RemovalPolicy.RETAIN,
        lifecycleRules: [
          { prefix: `${WORK_PREFIX}/${PLANS_FOLDER}/`, expiration: Duration.days(30) },
          { prefix: `${WORK_PREFIX}/${MAP_RESULTS_FOLDER}/`, expiration: Duration.days(30) },
        ],
      });
    const workLocation = `s3://${this.workBucket.bucketName}/${WORK_PREFIX}`;
    this.reportLocation = `${workLocation}/${REPORTS_FOLDER}/`;

    const fn = (name: string, step: Step, extra: Partial<lambda.FunctionOptions> = {}): lambda.Function =>
      maintenanceFunction(this, name, step, {
        description: `packice maintenance: ${step}`,
        runtime: lambda.Runtime.NODEJS_22_X,
        architecture: lambda.Architecture.ARM_64,
        memorySize,
        timeout,
        tracing: lambda.Tracing.ACTIVE,
        ...extra,
        // A function's own variables join the ones every function has.
        environment: { NODE_OPTIONS: '--enable-source-maps', POWERTOOLS_SERVICE_NAME: REPORT_METRICS.service, ...extra.environment },
      });
    this.planFunction = fn('PlanFunction', 'plan');
    this.planFunction.addEnvironment(WORK_LOCATION_ENV, workLocation);
    if (props.inlinePlanBudgetBytes !== undefined) this.planFunction.addEnvironment(INLINE_BUDGET_ENV, String(props.inlinePlanBudgetBytes));
    // Only the Distributed Map batches: the plan function stores every plan, with its groups in batches too.
    if (this.rewriteBatchSize > 1) this.planFunction.addEnvironment(REWRITE_BATCH_ENV, String(this.rewriteBatchSize));
    // Sort rewrites spill sorted runs to /tmp (lib/compaction/external-sort.ts).
    this.rewriteFunction = fn('RewriteFunction', 'rewrite', {
      memorySize: rewriteMemorySize,
      environment: { AWS_LAMBDA_EXEC_WRAPPER: `${LAMBDA_TASK_ROOT}/${EXEC_WRAPPER.fileName}` },
      // 4 GiB for a group's sort runs; a batch's groups spill side by side (Lambda's limit: 10 GiB).
      ephemeralStorageSize: Size.gibibytes(Math.min(10, 4 * this.rewriteBatchSize)),
      ...(props.rewriteReservedConcurrency !== undefined ? { reservedConcurrentExecutions: props.rewriteReservedConcurrency } : {}),
    });
    this.commitFunction = fn('CommitFunction', 'commit');
    this.commitFunction.addEnvironment(WORK_LOCATION_ENV, workLocation);
    this.commitFunction.addEnvironment(FUNCTION_MEMORY_ENV, JSON.stringify({ plan: memorySize, rewrite: rewriteMemorySize, commit: memorySize }));
    this.deadLetterQueue = new sqs.Queue(this, 'TriggerDeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    // The trigger only reads metadata and starts executions: a minute is plenty.
    this.triggerFunction = fn('TriggerFunction', 'trigger', {
      timeout: Duration.minutes(2),
      deadLetterQueue: this.deadLetterQueue,
      environment: { [MAINTAINED_TABLES_ENV]: JSON.stringify(tables) },
    });
    this.expireFunction = fn('ExpireFunction', 'expire');
    this.orphansFunction = fn('OrphansFunction', 'orphans');
    this.grantAccess(props.encryptionKeys ?? []);
    const catalogs = restCatalogProperties(this.tables);
    if (catalogs !== undefined) {
      for (const f of [this.planFunction, this.rewriteFunction, this.commitFunction, this.triggerFunction, this.expireFunction, this.orphansFunction]) {
        f.addEnvironment(CATALOGS_ENV, catalogs);
      }
    }

    const logGroup = (name: string): logs.LogGroup =>
      new logs.LogGroup(this, name, { retention: props.logRetention ?? logs.RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.DESTROY });
    // Execution data stays out of the logs: plans name every file of the table.
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      definitionBody: sfn.DefinitionBody.fromChainable(this.compactionDefinition(props.maxConcurrency ?? MAINTENANCE_DEFAULTS.maxConcurrency)),
      stateMachineType: sfn.StateMachineType.STANDARD,
      tracingEnabled: true,
      logs: { destination: logGroup('StateMachineLogs'), level: sfn.LogLevel.ALL, includeExecutionData: false },
    });
    this.retentionStateMachine = new sfn.StateMachine(this, 'RetentionStateMachine', {
      definitionBody: sfn.DefinitionBody.fromChainable(this.retentionDefinition(props.retentionConcurrency ?? MAINTENANCE_DEFAULTS.retentionConcurrency)),
      stateMachineType: sfn.StateMachineType.STANDARD,
      tracingEnabled: true,
      logs: { destination: logGroup('RetentionStateMachineLogs'), level: sfn.LogLevel.ALL, includeExecutionData: false },
    });
    this.stateMachine.grantStartExecution(this.triggerFunction);
    this.triggerFunction.addEnvironment('PACKICE_STATE_MACHINE_ARN', this.stateMachine.stateMachineArn);

    // S3 Tables sends no object events: with only such tables, the schedule alone checks them.
    if ((props.compactOnCommit ?? true) && this.tableScopes.length > 0) this.commitRule = this.notificationRule();
    this.compactionSchedule = new scheduler.Schedule(this, 'CompactionSchedule', {
      description: 'packice: nightly compaction check of every table',
      schedule: props.compactionSchedule ?? scheduler.ScheduleExpression.expression(MAINTENANCE_DEFAULTS.compactionSchedule),
      target: new schedulerTargets.LambdaInvoke(this.triggerFunction, {
        input: scheduler.ScheduleTargetInput.fromObject({ tables: 'all' }),
        deadLetterQueue: this.deadLetterQueue,
        retryAttempts: 3,
      }),
    });
    // S3 Tables expires and removes files itself (see MaintainedTableProps.location).
    const retentionInput: { tables: RetentionRequest[] } = {
      tables: tables
        .filter((_, i) => catalogBehind(this.tables[i]).kind !== 's3tables')
        .map((t) => ({ table: { location: t.location }, ...(t.retention !== undefined ? { retention: t.retention } : {}) })),
    };
    this.retentionSchedule = new scheduler.Schedule(this, 'RetentionSchedule', {
      description: 'packice: snapshot expiry and orphan removal of every table',
      schedule: props.retentionSchedule ?? scheduler.ScheduleExpression.expression(MAINTENANCE_DEFAULTS.retentionSchedule),
      target: new schedulerTargets.StepFunctionsStartExecution(this.retentionStateMachine, {
        input: scheduler.ScheduleTargetInput.fromObject(retentionInput),
        deadLetterQueue: this.deadLetterQueue,
        retryAttempts: 3,
      }),
    });

    const alarm = (name: string, description: string, metric: cloudwatch.IMetric): cloudwatch.Alarm => {
      const a = new cloudwatch.Alarm(this, name, {
        alarmDescription: description,
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      if (props.alarmTopic) a.addAlarmAction(new cloudwatchActions.SnsAction(props.alarmTopic));
      return a;
    };
    const every5Minutes = { period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM };
    this.executionsFailedAlarm = alarm(
      'ExecutionsFailedAlarm',
      'A packice compaction execution failed (a failed group alone does not fail it: see the aborted-groups alarm).',
      this.stateMachine.metricFailed(every5Minutes),
    );
    this.executionsTimedOutAlarm = alarm('ExecutionsTimedOutAlarm', 'A packice compaction execution timed out.', this.stateMachine.metricTimedOut(every5Minutes));
    this.executionsThrottledAlarm = alarm(
      'ExecutionsThrottledAlarm',
      'Step Functions throttled a packice compaction execution.',
      this.stateMachine.metricThrottled(every5Minutes),
    );
    this.abortedGroupsAlarm = alarm(
      'AbortedGroupsAlarm',
      `A packice compaction run aborted groups (failed rewrites or conflicts it could not rebase): see its report under ${WORK_PREFIX}/${REPORTS_FOLDER}/.`,
      new cloudwatch.Metric({
        namespace: REPORT_METRICS.namespace,
        metricName: REPORT_METRICS.groupsAborted,
        dimensionsMap: { service: REPORT_METRICS.service },
        ...every5Minutes,
      }),
    );
    this.retentionFailedAlarm = alarm('RetentionFailedAlarm', 'A packice expiry and orphan-removal execution failed.', this.retentionStateMachine.metricFailed(every5Minutes));
    this.deadLettersAlarm = alarm(
      'DeadLettersAlarm',
      'A packice trigger event or schedule could not be handled: it is in the dead-letter queue.',
      this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM }),
    );

    new CfnOutput(this, 'CompactionStateMachineName', { description: 'packice compaction state machine', value: this.stateMachine.stateMachineName });
    new CfnOutput(this, 'RetentionStateMachineName', { description: 'packice expiry and orphan-removal state machine', value: this.retentionStateMachine.stateMachineName });
    new CfnOutput(this, 'ReportLocation', { description: 'packice run reports, one JSON per compaction run', value: this.reportLocation });
  }

  /** S3 "Object Created" for `<table>/metadata/*.metadata.json` of every configured table. */
  private notificationRule(): events.Rule {
    const rule = new events.Rule(this, 'MetadataCreatedRule', {
      description: 'packice: a new Iceberg metadata file under a maintained table → compaction check',
      eventPattern: {
        source: ['aws.s3'],
        detailType: ['Object Created'],
        detail: {
          bucket: { name: [...new Set(this.tableScopes.map((t) => t.bucket))] },
          object: { key: this.tableScopes.flatMap((t) => events.Match.wildcard(`${t.prefix === '' ? '' : `${t.prefix}/`}metadata/*.metadata.json`)) },
        },
      },
    });
    rule.addTarget(
      new eventsTargets.LambdaFunction(this.triggerFunction, { deadLetterQueue: this.deadLetterQueue, retryAttempts: 4, maxEventAge: Duration.hours(6) }),
    );
    return rule;
  }

  /**
   * Least privilege, written out rather than through `grantRead` & co. (which add `s3:List*` on
   * the whole bucket): object actions on the table prefixes only, `s3:ListBucket` limited to them
   * by an `s3:prefix` condition. Plan and trigger read tables; rewrite, commit and expire also
   * write and delete; orphans reads and deletes. Plan writes stored plans; commit reads them and
   * the Distributed Map's results, and writes reports.
   */
  private grantAccess(keys: readonly kms.IKey[]): void {
    const byBucket = new Map<string, string[]>();
    for (const { bucket, prefix } of this.tableScopes) byBucket.set(bucket, [...(byBucket.get(bucket) ?? []), prefix]);
    const read = ['s3:GetObject'];
    const write = ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'];
    const remove = ['s3:GetObject', 's3:DeleteObject'];
    const access: [lambda.Function, string[]][] = [
      [this.planFunction, read],
      [this.triggerFunction, read],
      [this.rewriteFunction, write],
      [this.commitFunction, write],
      [this.expireFunction, write],
      [this.orphansFunction, remove],
    ];
    for (const [bucket, prefixes] of byBucket) {
      const objects = prefixes.map((p) => objectArn(bucket, p === '' ? '*' : `${p}/*`));
      const list = listStatement(bucketArn(bucket), prefixes);
      for (const [f, actions] of access) {
        f.addToRolePolicy(list);
        f.addToRolePolicy(new iam.PolicyStatement({ actions, resources: objects }));
      }
    }
    for (const key of keys) {
      for (const [f, actions] of access) {
        if (actions === read) key.grantDecrypt(f);
        else key.grantEncryptDecrypt(f);
      }
    }
    const work = this.workBucket;
    const plans = work.arnForObjects(`${WORK_PREFIX}/${PLANS_FOLDER}/*`);
    this.planFunction.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:PutObject', 's3:AbortMultipartUpload'], resources: [plans] }));
    this.commitFunction.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [plans, work.arnForObjects(`${WORK_PREFIX}/${MAP_RESULTS_FOLDER}/*`)] }),
    );
    this.commitFunction.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['s3:PutObject', 's3:AbortMultipartUpload'], resources: [work.arnForObjects(`${WORK_PREFIX}/${REPORTS_FOLDER}/*`)] }),
    );
    if (work.encryptionKey) {
      work.encryptionKey.grantEncryptDecrypt(this.planFunction);
      work.encryptionKey.grantEncryptDecrypt(this.commitFunction);
    }
    this.grantCatalogAccess();
  }

  /**
   * The catalog calls of the tables named in a catalog, on those tables only. Every function that
   * opens a table reads its pointer; commit and expire swap it. Glue: `GetTable`/`UpdateTable` on
   * the catalog, the database and the table (the ARNs Glue authorizes them on). S3 Tables: table
   * ARNs carry an id synthesis cannot know, so the table bucket's `table/*` under conditions on the
   * namespace and table name; the data through `GetTableData`/`PutTableData` (S3 Tables authorizes
   * GetObject and PutObject on its warehouse with them). Expire and orphans never touch S3 Tables.
   */
  private grantCatalogAccess(): void {
    const reads: lambda.Function[] = [this.planFunction, this.triggerFunction, this.rewriteFunction, this.orphansFunction];
    const commits: lambda.Function[] = [this.commitFunction, this.expireFunction];
    for (const table of this.tables) {
      const name = catalogBehind(table);
      // Glue's and S3 Tables' REST endpoints also authorize GET /v1/config on the catalog.
      if (name !== table.name && name.kind === 'glue') {
        const f = [...reads, ...commits];
        for (const fn of f) fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['glue:GetCatalog'], resources: [`arn:${Aws.PARTITION}:glue:${Aws.REGION}:${Aws.ACCOUNT_ID}:catalog`] }));
      }
      if (name !== table.name && name.kind === 's3tables') {
        for (const fn of [...reads, ...commits]) fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3tables:GetTableBucket'], resources: [name.tableBucketArn] }));
      }
      if (name.kind === 'glue') {
        const glue = (resource: string): string => `arn:${Aws.PARTITION}:glue:${Aws.REGION}:${Aws.ACCOUNT_ID}:${resource}`;
        const resources = [glue('catalog'), glue(`database/${name.database}`), glue(`table/${name.database}/${name.table}`)];
        for (const f of reads) f.addToRolePolicy(new iam.PolicyStatement({ actions: ['glue:GetTable'], resources }));
        for (const f of commits) f.addToRolePolicy(new iam.PolicyStatement({ actions: ['glue:GetTable', 'glue:UpdateTable'], resources }));
      } else if (name.kind === 's3tables') {
        const statement = (actions: string[]): iam.PolicyStatement =>
          new iam.PolicyStatement({
            actions,
            resources: [`${name.tableBucketArn}/table/*`],
            conditions: { StringEquals: { 's3tables:namespace': name.namespace, 's3tables:tableName': name.table } },
          });
        const read = ['s3tables:GetTableMetadataLocation', 's3tables:GetTableData'];
        for (const f of [this.planFunction, this.triggerFunction]) f.addToRolePolicy(statement(read));
        this.rewriteFunction.addToRolePolicy(statement([...read, 's3tables:PutTableData']));
        this.commitFunction.addToRolePolicy(statement([...read, 's3tables:PutTableData', 's3tables:UpdateTableMetadataLocation']));
      }
    }
  }

  private compactionDefinition(maxConcurrency: number): sfn.IChainable {
    const plan = new tasks.LambdaInvoke(this, 'Plan', {
      lambdaFunction: this.planFunction,
      resultSelector: { 'plan.$': '$.Payload' },
    });
    plan.addRetry(THROTTLING_RETRY);
    plan.addRetry(IO_RETRY);

    // A RewriteRequest: the plan's header and the item's group, never the whole plan.
    const headerPaths = Object.fromEntries(PLAN_HEADER_FIELDS.map((f) => [`${f}.$`, `$.plan.${f}`]));
    const itemSelector = { ...headerPaths, 'group.$': '$$.Map.Item.Value' };

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
    const batched = this.rewriteBatchSize > 1;
    const rewriteStoredGroups = new sfn.DistributedMap(storedMapScope, 'Rewrite stored groups', {
      // Batched: each item a batch of groups the plan function made (lib/pipeline/plan-payload.ts
      // rewriteBatches, sized to the state's limit), handed over as a RewriteBatch {BatchInput, Items}.
      itemReader: new sfn.S3JsonItemReader({ bucket: this.workBucket, key: sfn.JsonPath.stringAt(batched ? '$.plan.batchesFile.key' : '$.plan.groupsFile.key') }),
      itemSelector: batched ? { BatchInput: headerPaths, 'Items.$': '$$.Map.Item.Value.groups' } : itemSelector,
      maxConcurrency,
      resultWriterV2: new sfn.ResultWriterV2({ bucket: this.workBucket, prefix: `${WORK_PREFIX}/${MAP_RESULTS_FOLDER}` }),
      // Failed groups are caught inside their child; a child that fails anyway is reported by the commit.
      toleratedFailurePercentage: 100,
      mapExecutionType: sfn.StateMachineType.STANDARD,
      resultPath: '$.results',
    });
    rewriteStoredGroups.itemProcessor(this.rewriteAndCatch(' (stored plan)', batched), {
      mode: sfn.ProcessorMode.DISTRIBUTED,
      executionType: sfn.ProcessorType.STANDARD,
    });
    // aws-cdk-lib validation requires executionType above, then warns that mapExecutionType wins: they agree.
    Annotations.of(rewriteStoredGroups).acknowledgeWarning('@aws-cdk/aws-stepfunctions:propertyIgnored', 'both say STANDARD');

    // The commit's answer joins the state (the Report reads the plan and results again).
    const commit = new tasks.LambdaInvoke(this, 'Commit', {
      lambdaFunction: this.commitFunction,
      resultSelector: { 'result.$': '$.Payload' },
      resultPath: '$.commit',
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

    // The commit function writes the report: it can read the plan, the results and the work bucket.
    const report = new tasks.LambdaInvoke(this, 'Report', {
      lambdaFunction: this.commitFunction,
      payload: sfn.TaskInput.fromObject({
        'plan.$': '$.plan',
        'results.$': '$.results',
        'commit.$': '$.commit.result',
        execution: { 'name.$': '$$.Execution.Name', 'startTime.$': '$$.Execution.StartTime' },
      }),
      outputPath: '$.Payload',
    });
    report.addRetry(THROTTLING_RETRY);
    report.addRetry(IO_RETRY);
    commit.next(report);
    report.next(new sfn.Succeed(this, 'Compacted'));

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

  /**
   * One group's rewrite; any failure becomes `{groupId, error}`, which the commit reports. A
   * batch's rewrite reports its groups' failures itself; one of its own (a timeout) becomes
   * `{groupIds, error}`, every group of the batch failed.
   */
  private rewriteAndCatch(suffix: string, batched = false): sfn.IChainable {
    const rewrite = new tasks.LambdaInvoke(this, `Rewrite${suffix}`, {
      lambdaFunction: this.rewriteFunction,
      outputPath: '$.Payload',
    });
    rewrite.addRetry(IO_RETRY);
    rewrite.addRetry(THROTTLING_RETRY);
    // Only `{groupId, error}`: keeping the input would copy the group's file list into the results.
    const groupFailed = new sfn.Pass(this, `Group failed${suffix}`, {
      parameters: batched ? { 'groupIds.$': '$.Items[*].id', 'error.$': '$.error' } : { 'groupId.$': '$.group.id', 'error.$': '$.error' },
    });
    rewrite.addCatch(groupFailed, { errors: [sfn.Errors.ALL], resultPath: '$.error' });
    return rewrite;
  }

  /** `{ tables: RetentionRequest[] }` → per table, Expire then Orphans (whose delay keeps in-flight writes safe). */
  private retentionDefinition(concurrency: number): sfn.IChainable {
    const step = (id: string, f: lambda.Function): tasks.LambdaInvoke => {
      const task = new tasks.LambdaInvoke(this, id, { lambdaFunction: f, resultSelector: { 'result.$': '$.Payload' }, resultPath: `$.${id.toLowerCase()}` });
      task.addRetry(IO_RETRY);
      task.addRetry(THROTTLING_RETRY);
      // Expiry commits through the catalog: a concurrent commit is retried (it re-decides from fresh metadata).
      task.addRetry({ errors: [CommitConflictError.name], interval: Duration.seconds(10), backoffRate: 2, maxAttempts: 3, jitterStrategy: sfn.JitterType.FULL });
      return task;
    };
    // One table failing does not stop the others: its error is kept, and the execution fails
    // once every table has run, naming the tables that failed (an alarm on failed executions sees it).
    // The table and the error's name; its message and trace stay in the execution's history (the task's failure).
    const tableFailed = new sfn.Pass(this, 'Table failed', { parameters: { 'failed.$': '$.table', 'error.$': '$.error.Error' } });
    const expire = step('Expire', this.expireFunction);
    const orphans = step('Orphans', this.orphansFunction);
    for (const task of [expire, orphans]) task.addCatch(tableFailed, { errors: [sfn.Errors.ALL], resultPath: '$.error' });
    const tableDone = new sfn.Pass(this, 'Table done', { result: sfn.Result.fromObject({}) });
    const perTable = new sfn.Map(this, 'Each table', {
      itemsPath: '$.tables',
      maxConcurrency: concurrency,
      resultSelector: { 'failures.$': '$[?(@.failed)]' },
      resultPath: '$.outcome',
    });
    perTable.itemProcessor(expire.next(orphans).next(tableDone));
    const anyFailed = new sfn.Choice(this, 'Any table failed?')
      .when(
        sfn.Condition.isPresent('$.outcome.failures[0]'),
        // The cause as a string first: a Fail state's CausePath must name one.
        new sfn.Pass(this, 'Name failed tables', {
          parameters: { cause: sfn.JsonPath.jsonToString(sfn.JsonPath.objectAt('$.outcome.failures')) },
        }).next(new sfn.Fail(this, 'Retention failed', { error: 'RetentionFailed', causePath: '$.cause' })),
      )
      .otherwise(new sfn.Succeed(this, 'Retained'));
    return perTable.next(anyFailed);
  }
}

/**
 * A function of the package. The compiled construct (`dist/cdk`, what the package exports)
 * deploys the prebuilt bundle beside it in `dist/bundles/<step>` (`npm run build`, run before
 * packing), so a user's app needs neither esbuild nor this repository's layout; the TypeScript
 * construct (this repository's app and tests) bundles the handler's source with esbuild.
 */
function maintenanceFunction(scope: Construct, id: string, step: Step, options: lambda.FunctionOptions & { runtime: lambda.Runtime }): lambda.Function {
  const source = join(PACKAGE_ROOT, 'functions', `${step}.ts`);
  if (!FROM_DIST) {
    return new NodejsFunction(scope, id, {
      ...options,
      entry: source,
      handler: 'handler',
      projectRoot: PACKAGE_ROOT,
      depsLockFilePath: join(PACKAGE_ROOT, 'package-lock.json'),
      bundling: bundlingOptions(WASM_STEPS.includes(step) ? WASM_FILES : [], WORKER_BUNDLES.filter((w) => w.step === step), step === EXEC_WRAPPER.step),
    });
  }
  const bundle = join(PACKAGE_ROOT, 'dist', 'bundles', step);
  if (!existsSync(join(bundle, 'index.js'))) {
    throw new Error(`IcebergMaintenance: the prebuilt bundle ${bundle}/index.js is missing (run \`npm run build\` in the package)`);
  }
  return new lambda.Function(scope, id, { ...options, code: lambda.Code.fromAsset(bundle), handler: 'index.handler' });
}

/**
 * SDK clients only tables named in a catalog need (glue://, s3tables://). They stay out of
 * `index.js` (about 365 KB of it, ~25 ms of CPU at every cold import, folder tables or not) and
 * are bundled alone into `node_modules/<name>/index.js` beside it, which Node finds before the
 * runtime's copy; lib/catalog/catalog-for.ts imports the catalog, and so requires its client,
 * the first time such a table is opened.
 */
export const LAZY_MODULES: readonly string[] = ['@aws-sdk/client-glue', '@aws-sdk/client-s3tables'];

/**
 * Native modules the code loads only when Node lacks what they do: zstd-napi when `node:zlib` has
 * no zstd (Node < 22.15; the nodejs22.x runtime has it). Left out of every bundle.
 */
export const NATIVE_MODULES: readonly string[] = ['zstd-napi'];

/** Where a lazy module's bundle goes, relative to the function's folder. */
export function lazyModuleFile(module: string): string {
  return join('node_modules', ...module.split('/'), 'index.js');
}

/**
 * Worker threads a function starts, each bundled alone beside its `index.js`: the rewrite's
 * decode workers (lib/compaction/decode-pool.ts finds `decode-worker.js` beside the bundle),
 * merge workers (merge-pool.ts, `merge-worker.js`) and a batch's group threads
 * (lib/pipeline/group-threads.ts, `rewrite-worker.js`), and the plan's
 * (lib/compaction/plan-pool.ts, `plan-worker.js`).
 */
export const WORKER_BUNDLES: readonly { readonly step: Step; readonly entry: string; readonly fileName: string }[] = [
  { step: 'rewrite', entry: 'lib/compaction/decode-worker.ts', fileName: 'decode-worker.js' },
  { step: 'rewrite', entry: 'lib/compaction/merge-worker.ts', fileName: 'merge-worker.js' },
  { step: 'rewrite', entry: 'lib/pipeline/rewrite-worker.ts', fileName: 'rewrite-worker.js' },
  { step: 'plan', entry: 'lib/compaction/plan-worker.ts', fileName: 'plan-worker.js' },
];

/** In a CommonJS bundle `import.meta.url` is the bundle file's URL (the define below names this variable). */
export const IMPORT_META_URL_BANNER = 'var __packiceImportMetaUrl = require("url").pathToFileURL(__filename).href;';

/** The esbuild options of every bundle: the construct's and `npm run build`'s prebuilt ones. */
export const ESBUILD_OPTIONS = {
  define: { 'import.meta.url': '__packiceImportMetaUrl' },
  banner: { js: IMPORT_META_URL_BANNER },
  format: 'cjs',
  platform: 'node',
  // Node 20 syntax runs on the nodejs22.x runtime, and in the tests on Node 20.
  target: 'node20',
  minify: true,
  // Step Functions Retry/Catch match Lambda's errorType, the error's class name.
  keepNames: true,
  sourcemap: true,
  sourcesContent: false,
} as const;

/** esbuild, locally (never Docker), CommonJS with the `.wasm` files it reads copied beside `index.js`. */
function bundlingOptions(wasmFiles: typeof WASM_FILES, workers: typeof WORKER_BUNDLES = [], execWrapper = false): BundlingOptions {
  const wasm = wasmFiles.map((w) => ({ from: relative(PACKAGE_ROOT, requireHere.resolve(w.module)), to: w.fileName }));
  return {
    format: OutputFormat.CJS,
    target: ESBUILD_OPTIONS.target,
    minify: ESBUILD_OPTIONS.minify,
    keepNames: ESBUILD_OPTIONS.keepNames,
    sourceMap: ESBUILD_OPTIONS.sourcemap,
    sourcesContent: ESBUILD_OPTIONS.sourcesContent,
    define: ESBUILD_OPTIONS.define,
    banner: IMPORT_META_URL_BANNER,
    // Bundle the AWS SDK too: the version we test with, not the runtime's (the lazy ones beside index.js).
    externalModules: [...LAZY_MODULES, ...NATIVE_MODULES],
    forceDockerBundling: false,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (inputDir: string, outputDir: string) => [
        ...wasm.map((w) => `cp ${shellQuote(join(inputDir, w.from))} ${shellQuote(join(outputDir, w.to))}`),
        ...(execWrapper
          ? [`cp ${shellQuote(join(inputDir, EXEC_WRAPPER.source))} ${shellQuote(join(outputDir, EXEC_WRAPPER.fileName))}`, `chmod 755 ${shellQuote(join(outputDir, EXEC_WRAPPER.fileName))}`]
          : []),
        ...LAZY_MODULES.map((m) =>
          [
            shellQuote(join(inputDir, 'node_modules', '.bin', 'esbuild')),
            shellQuote(requireHere.resolve(m)),
            '--bundle --platform=node --format=cjs --log-level=warning',
            `--target=${ESBUILD_OPTIONS.target}`,
            ESBUILD_OPTIONS.minify ? '--minify' : '',
            ESBUILD_OPTIONS.keepNames ? '--keep-names' : '',
            `--outfile=${shellQuote(join(outputDir, lazyModuleFile(m)))}`,
          ].join(' '),
        ),
        ...workers.map((w) =>
          [
            shellQuote(join(inputDir, 'node_modules', '.bin', 'esbuild')),
            shellQuote(join(inputDir, w.entry)),
            '--bundle --platform=node --format=cjs --log-level=warning',
            `--target=${ESBUILD_OPTIONS.target}`,
            ESBUILD_OPTIONS.minify ? '--minify' : '',
            ESBUILD_OPTIONS.keepNames ? '--keep-names' : '',
            shellQuote(`--define:import.meta.url=${ESBUILD_OPTIONS.define['import.meta.url']}`),
            shellQuote(`--banner:js=${IMPORT_META_URL_BANNER}`),
            ...NATIVE_MODULES.map((m) => `--external:${m}`),
            `--outfile=${shellQuote(join(outputDir, w.fileName))}`,
          ].join(' '),
        ),
      ],
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
