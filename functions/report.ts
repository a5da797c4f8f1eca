/**
 * The Report state, served by the commit function (it reads the same plan and results, and the
 * work bucket): the run's report as JSON beside the work files, one log line, and CloudWatch
 * metrics in the embedded metric format through Powertools for AWS Lambda's Metrics.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { WORK_LOCATION_ENV } from '../lib/pipeline/plan-payload.js';
import { FUNCTION_MEMORY_ENV, REPORT_METRICS as M, reportStep, type CompactionReport, type FunctionMemory } from '../lib/pipeline/report-step.js';
import { parseReportEvent } from './event.js';
import { logStep, type LambdaContext } from './log-step.js';

const metrics = new Metrics({ namespace: M.namespace, serviceName: M.service });

/** A Report event carries the commit's answer; a Commit event does not. */
export function isReportEvent(event: unknown): boolean {
  return typeof event === 'object' && event !== null && 'commit' in event && 'execution' in event;
}

export async function report(event: unknown, context?: LambdaContext): Promise<CompactionReport> {
  return logStep('report', context, async () => {
    const request = parseReportEvent(event);
    const workLocation = process.env[WORK_LOCATION_ENV] || undefined;
    const result = await reportStep(request, {
      ...(workLocation !== undefined ? { workLocation } : {}),
      memoryMiB: functionMemory(),
      region: process.env.AWS_REGION ?? 'us-east-1',
    });
    metrics.addMetric(M.groupsCommitted, MetricUnit.Count, result.groups.committed);
    metrics.addMetric(M.groupsAborted, MetricUnit.Count, result.groups.aborted);
    metrics.addMetric(M.filesRewritten, MetricUnit.Count, result.filesIn);
    metrics.addMetric(M.filesWritten, MetricUnit.Count, result.filesOut);
    metrics.addMetric(M.bytesRead, MetricUnit.Bytes, result.bytesRead);
    metrics.addMetric(M.bytesWritten, MetricUnit.Bytes, result.bytesWritten);
    metrics.addMetric(M.deletesRebased, MetricUnit.Count, result.deletesRebased);
    metrics.addMetric(M.runDuration, MetricUnit.Milliseconds, result.durationMs);
    metrics.addMetric(M.lambdaGbSeconds, MetricUnit.Count, result.lambda.gbSeconds);
    metrics.addMetric(M.runCostUsd, MetricUnit.NoUnit, result.cost.totalUsd);
    metrics.publishStoredMetrics();
    return {
      result,
      log: {
        table: result.table,
        execution: result.execution,
        committed: result.groups.committed,
        aborted: result.groups.aborted,
        costUsd: result.cost.totalUsd,
        report: result.location ?? null,
      },
    };
  });
}

/** The memory of plan, rewrite and commit as the construct configured them; this function's own when not told. */
function functionMemory(): FunctionMemory {
  const own = Number(process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? 0);
  const told = process.env[FUNCTION_MEMORY_ENV];
  if (told) return JSON.parse(told) as FunctionMemory;
  return { plan: own, rewrite: own, commit: own };
}
