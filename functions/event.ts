/**
 * The Lambda events of the compaction state machine, checked at the door: Step Functions hands
 * handlers whatever JSON the previous state produced, so a wrong path in the definition or a
 * hand-started execution must fail with the field it lacks, not deep inside lib/.
 * Only the fields the steps navigate by are checked; lib/ validates the rest as it reads them.
 */
import type { GroupResult, Plan, PlanRequest } from '../lib/compaction/messages.js';
import { ErrorKind, PackiceError } from '../lib/errors.js';
import type { RewriteRequest } from '../lib/pipeline/steps.js';

export type StepName = 'plan' | 'rewrite' | 'commit';

/** An event that is not the message its step expects. */
export class InvalidEventError extends PackiceError {
  constructor(message: string) {
    super(ErrorKind.InvalidInput, message);
  }
}

/** What the Map state's Catch leaves for a group whose rewrite failed: `{groupId, error}`. */
export interface FailedGroup {
  readonly groupId: string;
  /** Step Functions' error output (`{Error, Cause}`), or a message a caller put there. */
  readonly error: StepFunctionsError | string;
}

export interface StepFunctionsError {
  readonly Error?: string;
  readonly Cause?: string;
}

export type RewriteEvent = RewriteRequest;

export interface CommitEvent {
  readonly plan: Plan;
  readonly results: readonly (GroupResult | FailedGroup)[];
}

export function isFailedGroup(entry: GroupResult | FailedGroup): entry is FailedGroup {
  return 'error' in entry;
}

type Expected =
  | 'an object'
  | 'an array'
  | 'a string'
  | 'a non-empty string'
  | 'a number'
  | 'a string or null';

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

  plan(value: unknown, path: string): Plan {
    const plan = this.object(value, path);
    this.table(plan.table, `${path}.table`);
    this.object(plan.policy, `${path}.policy`);
    if (plan.startingSnapshotId !== null && typeof plan.startingSnapshotId !== 'string') {
      this.fail(`${path}.startingSnapshotId`, 'a string or null', plan.startingSnapshotId);
    }
    this.string(plan.startingSequenceNumber, `${path}.startingSequenceNumber`, true);
    this.number(plan.formatVersion, `${path}.formatVersion`);
    this.array(plan.groups, `${path}.groups`).forEach((g, i) => {
      const group = this.object(g, `${path}.groups[${i}]`);
      this.string(group.id, `${path}.groups[${i}].id`, true);
      this.array(group.inputs, `${path}.groups[${i}].inputs`);
    });
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

/** The rewrite handler's event: `{ plan, groupId }`, one item of the Map state. */
export function parseRewriteEvent(event: unknown): RewriteEvent {
  const r = new EventReader('rewrite');
  const request = r.object(event, '');
  r.plan(request.plan, 'plan');
  r.string(request.groupId, 'groupId', true);
  return event as RewriteEvent;
}

/** The commit handler's event: `{ plan, results }`, results holding GroupResults and failed groups. */
export function parseCommitEvent(event: unknown): CommitEvent {
  const r = new EventReader('commit');
  const request = r.object(event, '');
  r.plan(request.plan, 'plan');
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

/** The failed groups of a commit event, split from the results to commit. */
export function splitResults(event: CommitEvent): { results: GroupResult[]; failed: FailedGroup[] } {
  const results: GroupResult[] = [];
  const failed: FailedGroup[] = [];
  for (const entry of event.results) {
    if (isFailedGroup(entry)) failed.push(entry);
    else results.push(entry);
  }
  return { results, failed };
}

/** A one-line reason for a failed group: the Lambda error's type and message when Step Functions gives them. */
export function failureReason(error: FailedGroup['error']): string {
  if (typeof error === 'string') return `rewrite failed: ${error}`;
  let message = error.Cause ?? '';
  try {
    // Lambda puts `{"errorType","errorMessage","trace"}` in Cause.
    const cause: unknown = JSON.parse(message);
    if (typeof cause === 'object' && cause !== null && 'errorMessage' in cause && typeof cause.errorMessage === 'string') {
      message = cause.errorMessage;
    }
  } catch {
    // Cause is plain text.
  }
  return `rewrite failed: ${error.Error ?? 'Error'}${message ? `: ${message}` : ''}`;
}
