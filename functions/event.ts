/**
 * The Lambda events of the compaction state machine, checked at the door: Step Functions hands
 * handlers whatever JSON the previous state produced, so a wrong path in the definition or a
 * hand-started execution must fail with the field it lacks, not deep inside lib/.
 * Only the fields the steps navigate by are checked; lib/ validates the rest as it reads them.
 */
import type { Plan, PlanRequest } from '../lib/compaction/messages.js';
import { ErrorKind, PackiceError } from '../lib/errors.js';
import type { CommitStateInput } from '../lib/pipeline/commit-step.js';
import type { ReportRequest } from '../lib/pipeline/report-step.js';
import type { RetentionRequest } from '../lib/pipeline/retention-request.js';
import type { RewriteBatch, RewriteRequest } from '../lib/pipeline/rewrite-request.js';
import type { StepName } from './log-step.js';


/** An event that is not the message its step expects. */
export class InvalidEventError extends PackiceError {
  constructor(message: string) {
    super(ErrorKind.InvalidInput, message);
  }
}

export type RewriteEvent = RewriteRequest | RewriteBatch;

export type CommitEvent = CommitStateInput;

type Expected =
  | 'an object'
  | 'an array'
  | 'a string'
  | 'a non-empty string'
  | 'a number'
  | 'a string or null'
  | 'an S3 "Object Created" event or {"tables":"all"}';

class EventReader {
  constructor(private readonly step: StepName) {}

  fail(path: string, expected: Expected, value: unknown): never {
    const problem =
      path === ''
        ? `the event is ${value === undefined ? 'undefined' : describe(value)}`
        : value === undefined
          ? `missing field "${path}"`
          : `field "${path}" is ${describe(value)}`;
    throw new InvalidEventError(`invalid ${this.step} event: ${problem} (expected ${expected})`);
  }

  object(value: unknown, path: string): Record<string, unknown> {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.fail(path, 'an object', value);
    return value as Record<string, unknown>;
  }

  array(value: unknown, path: string): readonly unknown[] {
    if (!Array.isArray(value)) this.fail(path, 'an array', value);
    return value;
  }

  string(value: unknown, path: string, nonEmpty = false): string {
    if (typeof value !== 'string' || (nonEmpty && value === '')) this.fail(path, nonEmpty ? 'a non-empty string' : 'a string', value);
    return value;
  }

  number(value: unknown, path: string): number {
    if (typeof value !== 'number' || !Number.isFinite(value)) this.fail(path, 'a number', value);
    return value;
  }

  table(value: unknown, path: string): void {
    const table = this.object(value, path);
    this.string(table.location, `${path}.location`, true);
    if (table.s3Endpoint !== undefined) this.string(table.s3Endpoint, `${path}.s3Endpoint`);
  }

  /** The fields a plan and a RewriteRequest share (`path` prefixes the names; '' for the event itself). */
  header(header: Record<string, unknown>, path: string): void {
    const at = (field: string): string => (path === '' ? field : `${path}.${field}`);
    this.table(header.table, at('table'));
    this.object(header.policy, at('policy'));
    if (header.startingSnapshotId !== null && typeof header.startingSnapshotId !== 'string') {
      this.fail(at('startingSnapshotId'), 'a string or null', header.startingSnapshotId);
    }
    this.string(header.startingSequenceNumber, at('startingSequenceNumber'), true);
    this.number(header.formatVersion, at('formatVersion'));
  }

  group(value: unknown, path: string): void {
    const group = this.object(value, path);
    this.string(group.id, `${path}.id`, true);
    this.array(group.inputs, `${path}.inputs`);
  }

  plan(value: unknown, path: string): Plan {
    const plan = this.object(value, path);
    this.header(plan, path);
    this.array(plan.groups, `${path}.groups`).forEach((g, i) => this.group(g, `${path}.groups[${i}]`));
    return value as Plan;
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string';
  return `a ${typeof value}`;
}

/** The plan handler's event: a PlanRequest. */
export function parsePlanEvent(event: unknown): PlanRequest {
  const r = new EventReader('plan');
  const request = r.object(event, '');
  r.table(request.table, 'table');
  if (request.policy !== undefined) r.object(request.policy, 'policy');
  return event as PlanRequest;
}

/**
 * The rewrite handler's event: a RewriteRequest (the plan's header and one group), one item of
 * the Map state; or, from a Distributed Map that batches, a RewriteBatch (`{BatchInput, Items}`).
 */
export function parseRewriteEvent(event: unknown): RewriteEvent {
  const r = new EventReader('rewrite');
  const request = r.object(event, '');
  if ('Items' in request || 'BatchInput' in request) {
    r.header(r.object(request.BatchInput, 'BatchInput'), 'BatchInput');
    r.array(request.Items, 'Items').forEach((g, i) => r.group(g, `Items[${i}]`));
    return event as RewriteBatch;
  }
  r.header(request, '');
  r.group(request.group, 'group');
  return event as RewriteRequest;
}

export function isRewriteBatch(event: RewriteEvent): event is RewriteBatch {
  return 'Items' in event;
}

/**
 * The commit handler's event: `{ plan, results }`. The plan is inline or stored (its groups in a
 * file); the results are the inline Map's GroupResults and failed groups, or the Distributed
 * Map's ResultWriter output naming its result files.
 */
export function parseCommitEvent(event: unknown): CommitEvent {
  return commitInput(new EventReader('commit'), event);
}

function commitInput(r: EventReader, event: unknown): CommitEvent {
  const request = r.object(event, '');
  const plan = r.object(request.plan, 'plan');
  if ('groupsFile' in plan) {
    r.header(plan, 'plan');
    r.string(r.object(plan.groupsFile, 'plan.groupsFile').location, 'plan.groupsFile.location', true);
    r.number(plan.groupCount, 'plan.groupCount');
  } else {
    r.plan(plan, 'plan');
  }
  if (typeof request.results === 'object' && request.results !== null && !Array.isArray(request.results)) {
    const details = r.object((request.results as Record<string, unknown>).ResultWriterDetails, 'results.ResultWriterDetails');
    r.string(details.Bucket, 'results.ResultWriterDetails.Bucket', true);
    r.string(details.Key, 'results.ResultWriterDetails.Key', true);
    return event as CommitEvent;
  }
  r.array(request.results, 'results').forEach((e, i) => {
    const path = `results[${i}]`;
    const entry = r.object(e, path);
    r.string(entry.groupId, `${path}.groupId`, true);
    if ('error' in entry) {
      if (typeof entry.error !== 'string') r.object(entry.error, `${path}.error`);
      return;
    }
    r.array(entry.outputs, `${path}.outputs`);
    r.array(entry.obsoleteDeletes, `${path}.obsoleteDeletes`);
    const checksums = r.object(entry.checksums, `${path}.checksums`);
    for (const k of ['rowsIn', 'rowsOut', 'hashIn', 'hashOut'] as const) r.string(checksums[k], `${path}.checksums.${k}`, true);
  });
  return event as CommitEvent;
}

/** The Report state's event: the commit's input, `commit` (its answer) and `execution` (name and start time). */
export function parseReportEvent(event: unknown): ReportRequest {
  const r = new EventReader('report');
  const request = r.object(event, '');
  commitInput(r, event);
  const commit = r.object(request.commit, 'commit');
  r.array(commit.committedGroups, 'commit.committedGroups');
  r.array(commit.abortedGroups, 'commit.abortedGroups');
  r.number(commit.durationMs, 'commit.durationMs');
  const execution = r.object(request.execution, 'execution');
  r.string(execution.name, 'execution.name', true);
  r.string(execution.startTime, 'execution.startTime', true);
  return event as ReportRequest;
}

/** What the trigger checks: the table an S3 notification is about, or every configured table (the nightly schedule). */
export type TriggerEvent = { readonly kind: 'object-created'; readonly bucket: string; readonly key: string } | { readonly kind: 'all' };

/** EventBridge's S3 "Object Created" event, or the schedule's `{"tables": "all"}`. */
export function parseTriggerEvent(event: unknown): TriggerEvent {
  const r = new EventReader('trigger');
  const request = r.object(event, '');
  if (request.tables === 'all') return { kind: 'all' };
  if (request['detail-type'] !== 'Object Created') r.fail('', 'an S3 "Object Created" event or {"tables":"all"}', event);
  const detail = r.object(request.detail, 'detail');
  const bucket = r.string(r.object(detail.bucket, 'detail.bucket').name, 'detail.bucket.name', true);
  const key = r.string(r.object(detail.object, 'detail.object').key, 'detail.object.key', true);
  return { kind: 'object-created', bucket, key };
}

/** The expire and orphans handlers' event: a table and its retention settings (one item of the retention Map). */
export function parseRetentionEvent(step: 'expire' | 'orphans', event: unknown): RetentionRequest {
  const r = new EventReader(step);
  const request = r.object(event, '');
  r.table(request.table, 'table');
  if (request.retention !== undefined) r.object(request.retention, 'retention');
  return event as RetentionRequest;
}
