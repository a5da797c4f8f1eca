/**
 * The rewrite results a Distributed Map wrote with its ResultWriter: a `manifest.json` naming
 * result files per status, each a JSON array of child executions with their input and output
 * as JSON text. A rewrite that failed inside its child was caught there and succeeded as a
 * FailedGroup; a child that failed or never ran is one too (one per group of its batch, where
 * the Map batches), so every group reaches the commit.
 */
import { ValidationError } from '../errors.js';
import { fileIOFor, joinPath, type FileIOOptions } from '../io/index.js';
import type { FailedGroup, RewriteOutcome } from './group-outcome.js';

/** What the Distributed Map state leaves at its ResultPath. */
export interface MapResultWriterOutput {
  readonly ResultWriterDetails: { readonly Bucket: string; readonly Key: string };
}

interface ResultManifest {
  readonly DestinationBucket?: string;
  readonly ResultFiles: Partial<Record<'SUCCEEDED' | 'FAILED' | 'PENDING', readonly { readonly Key: string }[]>>;
}

interface ChildExecution {
  readonly Input?: string;
  readonly Output?: string;
  readonly Error?: string;
  readonly Cause?: string;
  readonly Status?: string;
}

export function isMapResultWriterOutput(value: unknown): value is MapResultWriterOutput {
  return typeof value === 'object' && value !== null && 'ResultWriterDetails' in value;
}

/** Reads every child's outcome, in the manifest's order: succeeded, failed, never run. */
export async function readMapResults(output: MapResultWriterOutput, options: FileIOOptions = {}): Promise<RewriteOutcome[]> {
  const { Bucket, Key } = output.ResultWriterDetails;
  const manifestLocation = `s3://${Bucket}/${Key}`;
  const io = fileIOFor(manifestLocation, options);
  const manifest = parse<ResultManifest>(await io.read(manifestLocation), manifestLocation);
  const bucket = manifest.DestinationBucket ?? Bucket;
  const outcomes: RewriteOutcome[] = [];
  for (const status of ['SUCCEEDED', 'FAILED', 'PENDING'] as const) {
    for (const file of manifest.ResultFiles[status] ?? []) {
      const location = joinPath(`s3://${bucket}`, file.Key);
      const children = parse<ChildExecution[]>(await io.read(location), location);
      for (const child of children) outcomes.push(...outcomesOf(child, status, location));
    }
  }
  return outcomes;
}

/**
 * A child's groups' outcomes. A child ran one group (`{group}` in, a GroupResult or FailedGroup
 * out) or, where the Map batches, several (`{BatchInput, Items}` in, an array out, or
 * `{groupIds, error}` when its Catch took the batch's failure).
 */
function outcomesOf(child: ChildExecution, status: string, location: string): RewriteOutcome[] {
  if (status === 'SUCCEEDED' && child.Output !== undefined) {
    const output = parse<RewriteOutcome | RewriteOutcome[] | BatchFailed>(child.Output, location);
    if (Array.isArray(output)) return output;
    if ('groupIds' in output) return groupIds(output.groupIds, location).map((groupId) => ({ groupId, error: output.error }));
    return [output];
  }
  const input = child.Input === undefined ? undefined : parse<{ group?: { id?: unknown }; Items?: unknown }>(child.Input, location);
  const ids = Array.isArray(input?.Items) ? groupIds(input.Items.map((g: { id?: unknown } | null) => g?.id), location) : groupIds([input?.group?.id], location);
  const error = status === 'PENDING' ? { Error: 'States.NotRun', Cause: 'the Map run ended before this group ran' } : { Error: child.Error, Cause: child.Cause };
  return ids.map((groupId) => ({ groupId, error }));
}

/** What the batch's Catch leaves: every group of the batch failed with the one error. */
interface BatchFailed {
  readonly groupIds: readonly unknown[];
  readonly error: FailedGroup['error'];
}

function groupIds(ids: readonly unknown[], location: string): readonly string[] {
  if (!ids.every((id): id is string => typeof id === 'string')) {
    throw new ValidationError(`map result ${location}: a child execution without its group's id`, { path: location });
  }
  return ids;
}

function parse<T>(bytes: Uint8Array | string, location: string): T {
  try {
    return JSON.parse(typeof bytes === 'string' ? bytes : new TextDecoder().decode(bytes)) as T;
  } catch (e) {
    throw new ValidationError(`map result ${location} is not JSON: ${(e as Error).message}`, { path: location, cause: e });
  }
}
