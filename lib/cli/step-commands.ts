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
import { refuseReadOnly, TABLE_ARGUMENT, type OpenOptionsOf } from './table-argument.js';

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'EACCES') {
      throw new ValidationError(`cannot read ${what}: ${code === 'ENOENT' ? 'no such file' : code}`, { path, cause: e });
    }
    throw e;
  }
}

/** A Plan message as `step plan` prints it: checked for the fields every step reads. */
async function readPlan(path: string): Promise<PlanMessage> {
  let plan: unknown;
  try {
    plan = JSON.parse(await readText(path, 'the plan'));
  } catch (e) {
    if (e instanceof ValidationError) throw e;
    throw new ValidationError(`the plan is not JSON: ${(e as Error).message}`, { path, cause: e });
  }
  const p = plan as Partial<Record<string, unknown>> | null;
  const table = p?.table as Partial<Record<string, unknown>> | undefined;
  if (typeof p !== 'object' || p === null || typeof table?.location !== 'string' || (!Array.isArray(p.groups) && typeof p.groupsFile !== 'object')) {
    throw new ValidationError('not a Plan message (as `packice step plan` prints it): it needs table.location and groups', { path });
  }
  return plan as PlanMessage;
}

/** One GroupResult or FailedGroup a line, as `step rewrite` prints them (blank lines ignored). */
async function readResults(path: string): Promise<RewriteOutcome[]> {
  const out: RewriteOutcome[] = [];
  for (const [i, line] of (await readText(path, 'the results')).split('\n').entries()) {
    if (line.trim() === '') continue;
    let outcome: unknown;
    try {
      outcome = JSON.parse(line);
    } catch (e) {
      throw new ValidationError(`line ${i + 1} is not a JSON GroupResult: ${(e as Error).message}`, { path, cause: e });
    }
    if (typeof (outcome as { groupId?: unknown } | null)?.groupId !== 'string') {
      throw new ValidationError(`line ${i + 1} is not a GroupResult (as \`packice step rewrite\` prints them): it has no groupId`, { path });
    }
    out.push(outcome as RewriteOutcome);
  }
  return out;
}

/**
 * Rewritten files land in the table's location and the commit writes its metadata: refused, with
 * nothing written, for a table no commit can reach (a catalog service's folder).
 */
async function refuseReadOnlyPlan(plan: PlanMessage, command: string): Promise<void> {
  const { openTable } = await import('../pipeline/open-table.js');
  await refuseReadOnly(await openTable(plan.table), command);
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
      const message = withEndpoint(await readPlan(planFile), endpoint);
      await refuseReadOnlyPlan(message, 'step rewrite');
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
      const plan = withEndpoint(await readPlan(planFile), endpoint);
      const results = await readResults(resultsFile);
      await refuseReadOnlyPlan(plan, 'step commit');
      const result = await commitStateStep({ plan, results }, endpoint ? { s3Endpoint: endpoint } : {});
      out(`${JSON.stringify(result, null, 2)}\n`);
      if (result.abortedGroups.length > 0) process.exitCode = 3;
    });
}
