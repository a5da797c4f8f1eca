/**
 * What a group's rewrite comes to: its GroupResult, or a FailedGroup — what the Map state's Catch
 * leaves (`{groupId, error}`) or what the local runner records. A failed group reaches the
 * commit as such: it is reported among the aborted groups with its reason, and the others commit.
 */
import type { GroupResult } from '../compaction/messages.js';
import type { WorkerError } from './group-threads.js';

export interface FailedGroup {
  readonly groupId: string;
  /** Step Functions' error output (`{Error, Cause}`), or a message. */
  readonly error: StepFunctionsError | string;
  /** The batch it failed in, as GroupResult.batch (absent when the batch's Catch failed it whole). */
  readonly batch?: GroupResult['batch'];
}

export interface StepFunctionsError {
  readonly Error?: string;
  readonly Cause?: string;
}

export type RewriteOutcome = GroupResult | FailedGroup;

/** A group whose rewrite threw `error`, in the shape the Map state's Catch gives one. */
export function failedGroup(groupId: string, error: WorkerError): FailedGroup {
  return { groupId, error: { Error: error.name, Cause: error.message } };
}

export function isFailedGroup(outcome: RewriteOutcome): outcome is FailedGroup {
  return 'error' in outcome;
}

/** How every failed group's reason starts, whatever ran the rewrite. */
export const REWRITE_FAILED = 'rewrite failed';

/** A one-line reason for a failed group: the Lambda error's type and message when Step Functions gives them. */
export function failureReason(error: FailedGroup['error']): string {
  if (typeof error === 'string') return `${REWRITE_FAILED}: ${error}`;
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
  return `${REWRITE_FAILED}: ${error.Error ?? 'Error'}${message ? `: ${message}` : ''}`;
}
