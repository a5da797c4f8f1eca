/**
 * `packice step plan|rewrite|commit`: one step of the compaction flow, taking and printing the
 * messages the Lambda functions take and return (lib/pipeline). How an operator replays a step of
 * a failed execution on a laptop, and how a test puts a writer between a rewrite and its commit.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { ValidationError } from '../errors.js';
import { resolveLocation } from '../io/index.js';
import type { RewriteOutcome } from '../pipeline/group-outcome.js';
import type { PlanMessage } from '../pipeline/plan-payload.js';
import { addPolicyOptions, policyFromOptions } from './policy-flags.js';
import { TABLE_ARGUMENT, type OpenOptionsOf } from './table-argument.js';

async function readJson<T>(path: string, what: string): Promise<T> {
  const text = await readFile(path, 'utf8');
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new ValidationError(`${what} is not JSON: ${(e as Error).message}`, { path, cause: e });
  }
}

/** One GroupResult or FailedGroup a line, as `step rewrite` prints them (blank lines ignored). */
async function readResults(path: string): Promise<RewriteOutcome[]> {
  const out: RewriteOutcome[] = [];
  for (const [i, line] of (await readFile(path, 'utf8')).split('\n').entries()) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as RewriteOutcome);
    } catch (e) {
      throw new ValidationError(`line ${i + 1} is not a JSON GroupResult: ${(e as Error).message}`, { path, cause: e });
    }
  }
  return out;
}

/** The plan file with the CLI's endpoint, when given, in place of the one it names. */
function withEndpoint(plan: PlanMessage, s3Endpoint: string | undefined): PlanMessage {
  return s3Endpoint ? { ...plan, table: { ...plan.table, s3Endpoint } } : plan;
}

export function registerStepCommands(program: Command, out: (s: string) => void, open: OpenOptionsOf): void {
  const s3Endpoint = (): string | undefined => open().s3Endpoint;
  const step = program
    .command('step')
    .description('run one step of the compaction flow and print the message it returns (the same the Lambda functions return)');

  addPolicyOptions(
    step
      .command('plan')
      .description('plan a compaction and print the Plan message (reads metadata only)')
      .argument('<table>', TABLE_ARGUMENT),
  ).action(async (typed: string, o: Record<string, unknown>) => {
    const { planStep } = await import('../pipeline/plan-step.js');
    const { stringifyJson } = await import('../iceberg/json.js');
    const location = resolveLocation(typed);
    const endpoint = s3Endpoint();
    const plan = await planStep({ table: { location, ...(endpoint ? { s3Endpoint: endpoint } : {}) }, policy: policyFromOptions(o) });
    out(`${stringifyJson(plan, 2)}\n`);
  });

  step
    .command('rewrite')
    .description('rewrite the groups of a plan (or one) and print one GroupResult a line (JSONL); a failed group prints {groupId, error}')
    .argument('<plan>', 'a Plan message, as `step plan` prints it')
    .option('--group <id>', 'rewrite this group only')
    .action(async (planFile: string, o: { group?: string }) => {
      const { loadPlan } = await import('../pipeline/plan-payload.js');
      const { rewriteStep } = await import('../pipeline/steps.js');
      const endpoint = s3Endpoint();
      const message = withEndpoint(await readJson<PlanMessage>(planFile, 'the plan'), endpoint);
      const plan = await loadPlan(message, endpoint ? { s3Endpoint: endpoint } : {});
      const ids = o.group === undefined ? plan.groups.map((g) => g.id) : [o.group];
      for (const groupId of ids) {
        let outcome: RewriteOutcome;
        try {
          outcome = await rewriteStep({ plan, groupId });
        } catch (e) {
          if (o.group !== undefined) throw e;
          // As the Map state's Catch does: the group fails, the others still rewrite and commit.
          outcome = { groupId, error: e instanceof Error ? e.message : String(e) };
          process.exitCode = 3;
        }
        out(`${JSON.stringify(outcome)}\n`);
      }
    });

  step
    .command('commit')
    .description('commit the rewritten groups and print the CompactionCommitResult')
    .argument('<plan>', 'the Plan message the groups were rewritten from')
    .argument('<results>', 'the GroupResults, one a line, as `step rewrite` prints them')
    .action(async (planFile: string, resultsFile: string) => {
      const { commitStateStep } = await import('../pipeline/commit-step.js');
      const endpoint = s3Endpoint();
      const plan = withEndpoint(await readJson<PlanMessage>(planFile, 'the plan'), endpoint);
      const result = await commitStateStep({ plan, results: await readResults(resultsFile) }, endpoint ? { s3Endpoint: endpoint } : {});
      out(`${JSON.stringify(result, null, 2)}\n`);
      if (result.abortedGroups.length > 0) process.exitCode = 3;
    });
}
