/**
 * The run's report (the state machine's last step): what the committed groups did, what was
 * aborted and why, how long the run took, the Lambda GB-seconds and state transitions it used
 * and what they cost at the region's published prices — written as JSON beside the work files.
 */
import type { AbortedGroup, GroupResult, Plan } from '../compaction/messages.js';
import { fileIOFor, joinPath, type FileIOOptions } from '../io/index.js';
import { type CommitStateInput, type CommitStateResult, rewriteOutcomes } from './commit-step.js';
import { isFailedGroup, type RewriteOutcome } from './group-outcome.js';
import { loadPlan } from './plan-payload.js';
import { PRICES_SOURCE, pricesFor, S3_TABLES_COMPACTION } from './prices.js';
import { runTotals, type RunTotals } from './run-totals.js';

/** Under the work location: one report per execution, by table. */
export const REPORTS_FOLDER = 'reports';

/** The functions' environment variable with the memory of plan, rewrite and commit (JSON, MiB). */
export const FUNCTION_MEMORY_ENV = 'PACKICE_FUNCTION_MEMORY';

/**
 * The CloudWatch metrics each report publishes (namespace, names, and the one dimension,
 * `service`, that Powertools adds): the construct's aborted-groups alarm watches GroupsAborted.
 */
export const REPORT_METRICS = {
  namespace: 'packice',
  service: 'packice',
  groupsCommitted: 'GroupsCommitted',
  groupsAborted: 'GroupsAborted',
  filesRewritten: 'FilesRewritten',
  filesWritten: 'FilesWritten',
  bytesRead: 'BytesRead',
  bytesWritten: 'BytesWritten',
  deletesRebased: 'DeletesRebased',
  runDuration: 'RunDuration',
  lambdaGbSeconds: 'LambdaGbSeconds',
  runCostUsd: 'RunCostUsd',
} as const;

export interface FunctionMemory {
  readonly plan: number;
  readonly rewrite: number;
  readonly commit: number;
}

/** The Report state's input: the commit state's, the commit's answer and the execution it belongs to. */
export interface ReportRequest extends CommitStateInput {
  readonly commit: CommitStateResult;
  readonly execution: { readonly name: string; readonly startTime: string };
}

export interface CompactionReport extends RunTotals {
  readonly table: string;
  readonly execution: string;
  readonly startingSnapshotId: string | null;
  /** The snapshot the commit made; null when nothing committed. */
  readonly snapshotId: string | null;
  readonly groups: { readonly planned: number; readonly committed: number; readonly aborted: number };
  readonly committedGroups: readonly string[];
  readonly abortedGroups: readonly AbortedGroup[];
  readonly deletesRebased: number;
  readonly commitAttempts: number;
  /** From the execution's start to this report. */
  readonly durationMs: number;
  readonly lambda: {
    readonly invocations: number;
    /** Memory × duration of plan (from the execution's start to the plan), every rewrite that answered, the commit and this report so far. */
    readonly gbSeconds: number;
  };
  /** One per state entered (the commit's retries included, Lambda retries not). */
  readonly stateTransitions: number;
  readonly cost: {
    readonly region: string;
    readonly pricedAs: string;
    readonly lambdaUsd: number;
    readonly stateTransitionsUsd: number;
    readonly totalUsd: number;
    /** What Amazon S3 Tables' compaction would charge for the same bytes and files. */
    readonly s3TablesCompactionUsd: number;
    readonly pricesFrom: typeof PRICES_SOURCE;
  };
  /** Where the report was written. */
  readonly location?: string;
}

export interface ReportContext {
  readonly nowMs: number;
  readonly memoryMiB: FunctionMemory;
  readonly region: string;
}

/** The report of a run, from its plan, its rewrite outcomes and its commit. */
export function compactionReport(
  plan: Plan,
  outcomes: readonly RewriteOutcome[],
  request: Pick<ReportRequest, 'commit' | 'execution'>,
  context: ReportContext,
): CompactionReport {
  const { commit, execution } = request;
  const results = outcomes.filter((o): o is GroupResult => !isFailedGroup(o));
  const totals = runTotals(plan, results, commit);
  const startMs = Date.parse(execution.startTime);
  const durationMs = Number.isFinite(startMs) ? Math.max(0, context.nowMs - startMs) : 0;
  const planMs = Number.isFinite(startMs) ? Math.max(0, plan.createdAtMs - startMs) : 0;
  const gb = (mib: number): number => mib / 1024;
  // A group rewritten in a batch, done or failed, bills its share of the batch's invocation (time,
  // request, transition); a failed group without one, as the Map's Catch leaves it, its own
  // invocation and Pass but no time (unknown: a batch its Catch failed whole counts so too).
  const billedMs = (o: RewriteOutcome): number => (o.batch ? o.batch.durationMs / o.batch.groups : isFailedGroup(o) ? 0 : o.durationMs);
  const rewrites = Math.round(outcomes.reduce((n, o) => n + (o.batch ? 1 / o.batch.groups : 1), 0));
  const gbSeconds =
    (gb(context.memoryMiB.plan) * planMs +
      gb(context.memoryMiB.rewrite) * outcomes.reduce((n, o) => n + billedMs(o), 0) +
      gb(context.memoryMiB.commit) * commit.durationMs) /
    1000;
  const invocations = 1 + rewrites + 2;
  const caught = outcomes.filter((o) => isFailedGroup(o) && !o.batch).length;
  // Plan, Choice, Map, a Rewrite per group or batch (and a Pass per group its Catch took), Commit and its retries, Report, Succeed.
  const stateTransitions = 3 + rewrites + caught + commit.attempts + 2;
  const { pricedAs, prices } = pricesFor(context.region);
  const lambdaUsd = gbSeconds * prices.lambdaGbSecondUsd + invocations * prices.lambdaRequestUsd;
  const stateTransitionsUsd = stateTransitions * prices.stateTransitionUsd;
  const s3TablesCompactionUsd =
    (totals.bytesRead / 1e9) * S3_TABLES_COMPACTION.perGbUsd + ((totals.filesIn + totals.filesOut) / 1000) * S3_TABLES_COMPACTION.perThousandObjectsUsd;
  return {
    table: plan.table.location,
    execution: execution.name,
    startingSnapshotId: plan.startingSnapshotId,
    snapshotId: commit.snapshotId,
    ...totals,
    groups: { planned: plan.groups.length, committed: commit.committedGroups.length, aborted: commit.abortedGroups.length },
    committedGroups: commit.committedGroups,
    abortedGroups: commit.abortedGroups,
    deletesRebased: commit.deletesRebased,
    commitAttempts: commit.attempts,
    durationMs,
    lambda: { invocations, gbSeconds: round(gbSeconds, 3) },
    stateTransitions,
    cost: {
      region: context.region,
      pricedAs,
      lambdaUsd: round(lambdaUsd, 6),
      stateTransitionsUsd: round(stateTransitionsUsd, 6),
      totalUsd: round(lambdaUsd + stateTransitionsUsd, 6),
      s3TablesCompactionUsd: round(s3TablesCompactionUsd, 6),
      pricesFrom: PRICES_SOURCE,
    },
  };
}

export interface ReportStepOptions extends FileIOOptions {
  /** Where reports go (`s3://bucket/prefix` or a folder): `<it>/reports/<table>/<execution>.json`. */
  readonly workLocation?: string;
  readonly memoryMiB: FunctionMemory;
  readonly region: string;
  readonly nowMs?: number;
}

/** Reads back what travelled by reference, builds the report and writes it (when a work location is given). */
export async function reportStep(request: ReportRequest, options: ReportStepOptions): Promise<CompactionReport> {
  const plan = await loadPlan(request.plan, options);
  const outcomes = await rewriteOutcomes(request.results, options);
  const report = compactionReport(plan, outcomes, request, { nowMs: options.nowMs ?? Date.now(), memoryMiB: options.memoryMiB, region: options.region });
  if (options.workLocation === undefined) return report;
  const location = joinPath(options.workLocation, REPORTS_FOLDER, tableFolder(plan.table.location), `${request.execution.name}.json`);
  const written = { ...report, location };
  await fileIOFor(location, options).write(location, new TextEncoder().encode(`${JSON.stringify(written, null, 2)}\n`));
  return written;
}

function tableFolder(location: string): string {
  return location.replace(/^[a-z0-9]+:\/\//i, '').replace(/\/+$/, '').replace(/[^A-Za-z0-9._/-]/g, '_');
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
