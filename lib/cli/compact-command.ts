import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import type { RunReport } from '../pipeline/local-runner.js';
import { runCompaction } from '../pipeline/local-runner.js';
import { formatBytes, formatDuration } from './format.js';
import { addPolicyOptions, policyFromOptions } from './plan-commands.js';

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
    .argument('<table>', 'table location: a folder or s3://bucket/prefix')
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
    out(o.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report, o.dryRun === true));
    if (report.failed.length > 0 || (report.commit?.abortedGroups.length ?? 0) > 0) process.exitCode = 3;
  });
}

export function formatReport(r: RunReport, dryRun: boolean): string {
  const lines: string[] = [];
  const p = r.plan;
  if (p.groups.length === 0) return `nothing to compact: no partition crosses the thresholds (${p.summary.dataFilesBefore} data files)\n`;
  if (dryRun) {
    lines.push(
      `dry run: ${p.groups.length} groups would rewrite ${p.groups.reduce((n, g) => n + g.inputs.length, 0)} files ` +
        `(${formatBytes(p.groups.reduce((n, g) => n + g.estimate.bytesToRead, 0))}); data files ${p.summary.dataFilesBefore} -> ~${p.summary.dataFilesAfter}`,
    );
    return `${lines.join('\n')}\n`;
  }
  const s = r.summary;
  lines.push(`compacted ${r.commit?.committedGroups.length ?? 0} of ${p.groups.length} groups in ${formatDuration(s.durationMs)}`);
  lines.push(`  files     ${s.filesIn} -> ${s.filesOut}`);
  lines.push(`  bytes     ${formatBytes(s.bytesRead)} read, ${formatBytes(s.bytesWritten)} written`);
  lines.push(`  rows      ${s.rowsIn} live rows in, ${s.rowsOut} out (checksums match)`);
  lines.push(`  write amplification ${s.writeAmplification.toFixed(2)} (bytes written / table bytes)`);
  if (r.commit?.snapshotId) lines.push(`  snapshot  ${r.commit.snapshotId} (${r.commit.attempts} attempt${r.commit.attempts === 1 ? '' : 's'})`);
  for (const a of r.commit?.abortedGroups ?? []) lines.push(`  aborted   ${a.groupId}: ${a.reason}`);
  for (const f of r.failed) lines.push(`  failed    ${f.groupId}: ${f.error}`);
  return `${lines.join('\n')}\n`;
}
