/**
 * One structured JSON log line per step invocation, through Powertools for AWS Lambda's Logger
 * (JSON straight to stdout, so the Lambda runtime does not prefix it and CloudWatch Logs
 * Insights reads its fields; the X-Ray trace id joins each line when tracing is on).
 * Errors are logged and rethrown: Step Functions' Retry and Catch match on their name.
 */
import { Logger } from '@aws-lambda-powertools/logger';

export type StepName = 'plan' | 'rewrite' | 'commit' | 'report' | 'trigger' | 'expire' | 'orphans';

/** The part of the Lambda context we log; tests call handlers without one. */
export interface LambdaContext {
  readonly awsRequestId: string;
  /** Milliseconds before Lambda stops the invocation. */
  getRemainingTimeInMillis?(): number;
}

export type LogFields = Readonly<Record<string, string | number | boolean | null | readonly string[] | object>>;

export const SERVICE_NAME = 'packice';

const logger = new Logger({ serviceName: SERVICE_NAME });

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
    logger.info(`${step} ok`, { ...base, outcome: 'ok', ...log, durationMs: elapsed(started) });
    return result;
  } catch (e) {
    const error = e instanceof Error ? { errorName: e.name, errorMessage: e.message } : { errorName: 'Error', errorMessage: String(e) };
    logger.error(`${step} failed`, { ...base, outcome: 'error', ...error, durationMs: elapsed(started) });
    throw e;
  }
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}
