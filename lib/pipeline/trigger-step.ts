/**
 * The trigger (DESIGN.md "Serverless shape"): a cheap check, from the table's metadata and
 * manifests alone, whether a table needs compaction under its policy; if so, one execution of
 * the compaction state machine, named after the table and its current snapshot. Step Functions
 * refuses a second execution of that name, so a burst of notifications for one commit, or the
 * nightly schedule after them, starts it once; a healthy table starts nothing.
 */
import { createHash } from 'node:crypto';
import type { PlanRequest } from '../compaction/messages.js';
import { ErrorKind, PackiceError } from '../errors.js';
import { locationKey, tableRefOf, type MaintainedTable } from './maintained-table.js';
import { planStep } from './plan-step.js';

/** Starts an execution of the compaction state machine; `alreadyStarted` when one of that name exists. */
export type ExecutionStarter = (name: string, input: PlanRequest) => Promise<{ readonly executionArn?: string; readonly alreadyStarted: boolean }>;

export interface TriggerOutcome {
  readonly table: string;
  readonly snapshotId: string | null;
  /** `started`: a new execution; `already-started`: one of this name exists; `healthy`: nothing to do. */
  readonly action: 'started' | 'already-started' | 'healthy';
  readonly groups: number;
  readonly executionName?: string;
  readonly executionArn?: string;
}

/** Step Functions execution names: at most 80 characters of `[A-Za-z0-9_-]`. */
const NAME_LIMIT = 80;

/**
 * `<table's last folders>-<hash of its location>-<snapshot id>`: readable in the console, unique
 * per table (the hash) and per snapshot, the same for every event about one commit.
 */
export function executionName(location: string, snapshotId: string | null): string {
  const key = locationKey(location);
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 10);
  const snapshot = snapshotId ?? 'empty';
  const room = NAME_LIMIT - hash.length - snapshot.length - 2;
  const readable = key.replace(/^s3:\/\//, '').split('/').slice(-2).join('.').replace(/[^A-Za-z0-9_-]/g, '_').slice(-room);
  return `${readable}-${hash}-${snapshot}`;
}

/** Checks one table; starts its compaction when the planner finds work. */
export async function triggerStep(table: MaintainedTable, start: ExecutionStarter): Promise<TriggerOutcome> {
  const request: PlanRequest = { table: tableRefOf(table), ...(table.policy !== undefined ? { policy: table.policy } : {}) };
  const plan = await planStep(request);
  const base = { table: table.location, snapshotId: plan.startingSnapshotId, groups: plan.groups.length };
  if (plan.groups.length === 0 && !plan.danglingDeletes) return { ...base, action: 'healthy' };
  const name = executionName(table.location, plan.startingSnapshotId);
  // The input is the same for every event about this snapshot, so a start racing another is idempotent too.
  const started = await start(name, request);
  return {
    ...base,
    action: started.alreadyStarted ? 'already-started' : 'started',
    executionName: name,
    ...(started.executionArn !== undefined ? { executionArn: started.executionArn } : {}),
  };
}

/**
 * Checks each table in turn; one that cannot be checked does not stop the others, but the call
 * fails afterwards (naming them) so the event is retried or lands in the dead-letter queue.
 */
export async function triggerTables(tables: readonly MaintainedTable[], start: ExecutionStarter): Promise<TriggerOutcome[]> {
  const outcomes: TriggerOutcome[] = [];
  const failures: { table: string; error: unknown }[] = [];
  for (const table of tables) {
    try {
      outcomes.push(await triggerStep(table, start));
    } catch (error) {
      failures.push({ table: table.location, error });
    }
  }
  if (failures.length === 1) throw failures[0].error;
  if (failures.length > 1) {
    const first = failures[0].error;
    throw new PackiceError(
      first instanceof PackiceError ? first.kind : ErrorKind.Io,
      `trigger: ${failures.length} tables could not be checked: ${failures.map((f) => `${f.table} (${f.error instanceof Error ? f.error.message : String(f.error)})`).join('; ')}`,
      { cause: first, retryable: true },
    );
  }
  return outcomes;
}
