/**
 * One structured JSON log line per step invocation, written straight to stdout (as Powertools'
 * Logger does) so the Lambda runtime does not prefix it and CloudWatch Logs Insights reads its
 * fields. Errors are logged and rethrown: Step Functions' Retry and Catch match on their name.
 */
import { Console } from 'node:console';
import type { StepName } from './event.js';

/** The part of the Lambda context we log; tests call handlers without one. */
export interface LambdaContext {
  readonly awsRequestId: string;
}

export type LogFields = Readonly<Record<string, string | number | boolean | null | readonly string[]>>;

const out = new Console({ stdout: process.stdout, stderr: process.stderr });

/** Runs one step; `run` returns the step's message and the fields to log about it. */
export async function logStep<T>(
  step: StepName,
  context: LambdaContext | undefined,
  run: () => Promise<{ readonly result: T; readonly log: LogFields }>,
): Promise<T> {
  const started = performance.now();
  const base = { step, ...(context ? { requestId: context.awsRequestId } : {}) };
  try {
    const { result, log } = await run();
    out.log(line({ level: 'INFO', ...base, outcome: 'ok', ...log, durationMs: elapsed(started) }));
    return result;
  } catch (e) {
    const error = e instanceof Error ? { errorName: e.name, errorMessage: e.message } : { errorName: 'Error', errorMessage: String(e) };
    out.error(line({ level: 'ERROR', ...base, outcome: 'error', ...error, durationMs: elapsed(started) }));
    throw e;
  }
}

function line(fields: Record<string, unknown>): string {
  return JSON.stringify({ timestamp: new Date().toISOString(), service: 'packice', ...fields });
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}
