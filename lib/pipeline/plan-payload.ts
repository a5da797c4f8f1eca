/**
 * How a plan travels between states. Step Functions caps a state's input and output at 256 KiB:
 * a plan that fits, with the results its groups will add, travels inline; a larger one is written
 * to the work location as a JSON array of its groups (what a Distributed Map's ItemReader reads),
 * and only its header and counts travel.
 */
import { DECODE_REASON_MAX_CHARS, DECODE_REASONS_SHOWN, type FileGroup, type Plan, type TableSummary } from '../compaction/messages.js';
import { ValidationError } from '../errors.js';
import { fileIOFor, joinPath, parseS3Location, type FileIOOptions } from '../io/index.js';
import { planHeaderOf, type PlanHeader } from './rewrite-request.js';

/** The plan Lambda's environment variable naming the work location (`s3://bucket/prefix`); the CDK construct sets it. */
export const WORK_LOCATION_ENV = 'PACKICE_WORK_LOCATION';

/** Step Functions' limit on a state's input or output, UTF-8 bytes. */
export const STATE_PAYLOAD_LIMIT_BYTES = 256 * 1024;
/** The part of the limit a plan and its results may take: the rest is left for what Step Functions wraps around them. */
export const INLINE_BUDGET_BYTES = Math.floor(STATE_PAYLOAD_LIMIT_BYTES * 0.75);
/** The plan function's environment variable that lowers the inline budget (IcebergMaintenance's `inlinePlanBudgetBytes`). */
export const INLINE_BUDGET_ENV = 'PACKICE_INLINE_BUDGET_BYTES';
/** The plan function's environment variable: groups per rewrite invocation (IcebergMaintenance's `rewriteBatchSize`). */
export const REWRITE_BATCH_ENV = 'PACKICE_REWRITE_BATCH_SIZE';
/** A GroupResult's fields besides its output and delete files. */
const RESULT_OVERHEAD_BYTES = 512;
/** Under the work location: one folder per stored plan. */
export const PLANS_FOLDER = 'plans';
/** Skipped files a stored plan still names in the state (their count is always there). */
const SKIPPED_KEPT = 20;

/** An object of the work location: its URI, and its bucket and key on S3 (what an ItemReader takes). */
export interface WorkObject {
  readonly location: string;
  readonly bucket?: string;
  readonly key?: string;
}

/** A plan whose groups were written to the work location. */
export interface StoredPlan extends PlanHeader {
  readonly summary: TableSummary;
  readonly groupCount: number;
  readonly skippedCount: number;
  /** The first skipped files; all of them when few. */
  readonly skipped: Plan['skipped'];
  /** A JSON array of the plan's groups, in plan order. */
  readonly groupsFile: WorkObject;
  /**
   * Where groups are rewritten in batches: a JSON array of `{groups}` objects, one per batch
   * (rewriteBatches), what the Distributed Map reads instead (an item is an object, as the
   * service's JSON reader documents them).
   */
  readonly batchesFile?: WorkObject;
  readonly batchCount?: number;
}

export type PlanMessage = Plan | StoredPlan;

export function isStoredPlan(plan: PlanMessage): plan is StoredPlan {
  return 'groupsFile' in plan;
}

const utf8Length = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

/**
 * The bytes the state holds once every group's result joins the plan: the plan itself, and per
 * group its output files (each about as large as its largest input's entry, with the same
 * column metrics) and the delete files it may make obsolete.
 */
export function inlineSizeEstimate(plan: Plan): number {
  let bytes = utf8Length(plan);
  for (const group of plan.groups) bytes += resultSizeEstimate(group);
  return bytes;
}

/**
 * A plan's groups in batches of at most `size`, one rewrite invocation each: groups of like size
 * together (an invocation is billed until its slowest group ends), and each batch's groups and
 * their estimated results within `budgetBytes`, so that a child's input and its answer fit the
 * 256 KiB a state may hold (a group alone over it goes alone, as it would unbatched).
 */
export function rewriteBatches(groups: readonly FileGroup[], size: number, budgetBytes = INLINE_BUDGET_BYTES): FileGroup[][] {
  const bySize = [...groups].sort((a, b) => b.estimate.bytesToRead - a.estimate.bytesToRead);
  const batches: FileGroup[][] = [];
  let batch: FileGroup[] = [];
  let input = 0;
  let results = 0;
  for (const group of bySize) {
    const groupBytes = utf8Length(group);
    const resultBytes = resultSizeEstimate(group);
    if (batch.length > 0 && (batch.length >= size || input + groupBytes > budgetBytes || results + resultBytes > budgetBytes)) {
      batches.push(batch);
      batch = [];
      input = 0;
      results = 0;
    }
    batch.push(group);
    input += groupBytes;
    results += resultBytes;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

function resultSizeEstimate(group: FileGroup): number {
  let largestInput = 0;
  let longestPath = 0;
  const deletes = new Map<string, number>();
  for (const input of group.inputs) {
    largestInput = Math.max(largestInput, utf8Length(input.file));
    longestPath = Math.max(longestPath, utf8Length(input.file.filePath));
    for (const d of input.deletes) deletes.set(d.file.filePath, utf8Length(d.file));
  }
  const outputs = Math.max(1, group.estimate.filesOut);
  // inputPaths.decodedBecause: a reason is printable ASCII, two bytes a character in JSON at most ('"', '\\').
  const reasons = Math.min(group.inputs.length, DECODE_REASONS_SHOWN) * (longestPath + 2 * DECODE_REASON_MAX_CHARS + 32);
  return RESULT_OVERHEAD_BYTES + outputs * largestInput + [...deletes.values()].reduce((a, b) => a + b, 0) + reasons;
}

export interface PlacePlanOptions extends FileIOOptions {
  /** Where plans too large for the state go (`s3://bucket/prefix` or a folder); without one every plan travels inline. */
  readonly workLocation?: string;
  /** @default INLINE_BUDGET_BYTES */
  readonly inlineBudgetBytes?: number;
  /** Groups per rewrite invocation; above 1 every plan is stored, its groups also in batches (rewriteBatches). @default 1 */
  readonly batchSize?: number;
}

/** The plan itself when it fits the state, otherwise a StoredPlan after writing its groups. */
export async function placePlan(plan: Plan, options: PlacePlanOptions = {}): Promise<PlanMessage> {
  const budget = options.inlineBudgetBytes ?? INLINE_BUDGET_BYTES;
  const batchSize = options.batchSize ?? 1;
  if (options.workLocation === undefined || plan.groups.length === 0 || (batchSize <= 1 && inlineSizeEstimate(plan) <= budget)) return plan;
  const folder = joinPath(options.workLocation, PLANS_FOLDER, planFolderName(plan));
  const write = async (name: string, value: unknown): Promise<WorkObject> => {
    const location = joinPath(folder, name);
    await fileIOFor(location, options).write(location, new TextEncoder().encode(JSON.stringify(value)));
    return workObject(location);
  };
  const batches = batchSize > 1 ? rewriteBatches(plan.groups, batchSize) : undefined;
  return {
    ...planHeaderOf(plan),
    summary: plan.summary,
    groupCount: plan.groups.length,
    skippedCount: plan.skipped.length,
    skipped: plan.skipped.slice(0, SKIPPED_KEPT),
    groupsFile: await write('groups.json', plan.groups),
    ...(batches ? { batchesFile: await write('batches.json', batches.map((groups) => ({ groups }))), batchCount: batches.length } : {}),
  };
}

/** The whole plan again: a stored plan's groups read back from the work location. */
export async function loadPlan(plan: PlanMessage, options: FileIOOptions = {}): Promise<Plan> {
  if (!isStoredPlan(plan)) return plan;
  const { location } = plan.groupsFile;
  const groups: unknown = JSON.parse(new TextDecoder().decode(await fileIOFor(location, options).read(location)));
  if (!Array.isArray(groups) || groups.length !== plan.groupCount) {
    throw new ValidationError(`stored plan ${location}: expected a JSON array of ${plan.groupCount} groups`, { path: location });
  }
  return { ...planHeaderOf(plan), summary: plan.summary, skipped: plan.skipped, groups: groups as FileGroup[] };
}

/** One folder per plan: the table's last path segments, its snapshot and when it was planned. */
function planFolderName(plan: Plan): string {
  const table = plan.table.location.replace(/\/+$/, '').split('/').slice(-2).join('.').replace(/[^A-Za-z0-9._-]/g, '_');
  return `${table}-${plan.startingSnapshotId ?? 'empty'}-${plan.createdAtMs}`;
}

function workObject(location: string): WorkObject {
  if (!location.startsWith('s3')) return { location };
  const { bucket, key } = parseS3Location(location);
  return { location, bucket, key };
}
