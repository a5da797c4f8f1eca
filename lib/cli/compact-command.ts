import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { runCompaction } from '../pipeline/local-runner.js';
import { formatRunReport } from './format.js';
import { TABLE_ARGUMENT } from './plan-commands.js';
import { addPolicyOptions, policyFromOptions } from './policy-flags.js';

export interface CompactCliOptions {
  readonly dryRun?: boolean;
  readonly json?: boolean;
  readonly parallelism?: number;
  readonly commitEvery?: number;
  readonly [flag: string]: unknown;
}

/** `packice compact <table>`: plan, rewrite the groups in worker threads, commit, summarize. */
export function registerCompactCommand(program: Command, out: (s: string) => void, s3Endpoint: () => string | undefined): void {
  const cmd = program
    .command('compact')
    .description('rewrite small and delete-laden files into target-sized ones and commit them')
    .argument('<table>', TABLE_ARGUMENT)
    .option('--dry-run', 'plan only: show what would be rewritten')
    .option('--json', 'print the run report as JSON')
    .option('--parallelism <n>', 'worker threads rewriting groups (default: cores)', (s) => Number(s))
    .option('--commit-every <k>', 'commit every K groups (partial progress)', (s) => Number(s));
  addPolicyOptions(cmd);
  cmd.action(async (location: string, o: CompactCliOptions) => {
    const endpoint = s3Endpoint();
    const policy = policyFromOptions(o);
    let bar: cliProgress.SingleBar | undefined;
    const report = await runCompaction(
      { table: { location, ...(endpoint ? { s3Endpoint: endpoint } : {}) }, policy },
      {
        ...(o.dryRun ? { dryRun: true } : {}),
        ...(o.parallelism !== undefined ? { parallelism: o.parallelism } : {}),
        ...(o.commitEvery !== undefined ? { commit: { groupsPerCommit: o.commitEvery } } : {}),
        onProgress: (e) => {
          if (o.json || !process.stderr.isTTY) return;
          if (e.kind === 'planned' && e.plan.groups.length > 0 && !o.dryRun) {
            bar = new cliProgress.SingleBar(
              { format: '  groups {bar} {value}/{total} | {eta_formatted} left', stream: process.stderr },
              cliProgress.Presets.shades_classic,
            );
            bar.start(e.plan.groups.length, 0);
          } else if (e.kind === 'group-done' || e.kind === 'group-failed') bar?.increment();
          else if (e.kind === 'committed') bar?.stop();
        },
      },
    );
    bar?.stop();
    out(o.json ? `${JSON.stringify(report, null, 2)}\n` : formatRunReport(report, o.dryRun === true));
    if (report.failed.length > 0 || (report.commit?.abortedGroups.length ?? 0) > 0) process.exitCode = 3;
  });
}
