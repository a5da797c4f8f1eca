import type { Command } from 'commander';
import { resolveLocation } from '../io/index.js';
import { commanderParser, wholeNumber } from './arguments.js';
import { refuseReadOnly, TABLE_ARGUMENT, type OpenOptionsOf } from './table-argument.js';
import { addPolicyOptions, policyFromOptions, runOptionsOf } from './policy-flags.js';
import { progressBar } from './progress.js';

export interface CompactCliOptions {
  readonly dryRun?: boolean;
  readonly json?: boolean;
  readonly verbose?: boolean;
  readonly parallelism?: number;
  readonly commitEvery?: number;
  readonly [flag: string]: unknown;
}

/** `packice compact <table>`: plan, rewrite the groups in worker threads, commit, summarize. */
export function registerCompactCommand(program: Command, out: (s: string) => void, open: OpenOptionsOf): void {
  const cmd = program
    .command('compact')
    .description('rewrite small and delete-laden files into target-sized ones and commit them')
    .argument('<table>', TABLE_ARGUMENT)
    .option('--dry-run', 'plan only: show what would be rewritten')
    .option('--json', 'print the outcome as JSON: each group, the snapshots committed, the totals')
    .option('--verbose', 'with --json: the whole run report, with the plan and every file of every group')
    .option('--parallelism <n>', 'worker threads rewriting groups, 0 to rewrite in the main thread (default: cores)', commanderParser(wholeNumber(0, 1024)))
    .option('--commit-every <k>', 'commit every K groups as its own snapshot (partial progress)', commanderParser(wholeNumber(1)));
  addPolicyOptions(cmd);
  cmd.action(async (typed: string, o: CompactCliOptions) => {
    const { runCompaction } = await import('../pipeline/local-runner.js');
    const { compactSummary, formatRunReport } = await import('./format.js');
    const location = resolveLocation(typed);
    const { loadTable } = await import('../catalog/table.js');
    await refuseReadOnly(await loadTable(location, open()), 'compact');
    const endpoint = open().s3Endpoint;
    const policy = policyFromOptions(o);
    const iceberg = runOptionsOf(o);
    const progress = progressBar(o.json !== true && o.dryRun !== true);
    let groups = 0;
    let done = 0;
    const report = await runCompaction(
      { table: { location, ...(endpoint ? { s3Endpoint: endpoint } : {}) }, policy },
      {
        ...(o.dryRun ? { dryRun: true } : {}),
        ...(o.parallelism !== undefined ? { parallelism: o.parallelism } : iceberg.parallelism !== undefined ? { parallelism: iceberg.parallelism } : {}),
        ...(o.commitEvery !== undefined ? { commit: { groupsPerCommit: o.commitEvery } } : {}),
        ...(o.commitEvery === undefined && iceberg.maxCommits !== undefined ? { commit: { maxCommits: iceberg.maxCommits } } : {}),
        onProgress: (e) => {
          if (e.kind === 'planned') groups = e.plan.groups.length;
          else if (e.kind === 'group-done' || e.kind === 'group-failed') done++;
          if (groups > 0) progress('groups', done, groups);
        },
      },
    );
    const json = o.verbose ? report : compactSummary(report, o.dryRun === true);
    out(o.json ? `${JSON.stringify(json, null, 2)}\n` : formatRunReport(report, o.dryRun === true));
    if ((report.commit?.abortedGroups.length ?? 0) > 0) process.exitCode = 3;
  });
}
