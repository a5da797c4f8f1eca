/**
 * `packice plan` and `packice health`: what a compaction would do, from the manifests alone.
 */
import type { Command } from 'commander';
import { resolveLocation } from '../io/index.js';
import { addPolicyOptions, policyFromOptions } from './policy-flags.js';
import { TABLE_ARGUMENT, type OpenOptionsOf } from './table-argument.js';


/** A read-only command over one table: `<table>`, `--metadata`, `--json` and the policy flags. */
function metadataCommand(program: Command, name: string, description: string, json: string): Command {
  return addPolicyOptions(
    program
      .command(name)
      .description(description)
      .argument('<table>', TABLE_ARGUMENT)
      .option('--metadata <file>', 'read this metadata file instead of the current one')
      .option('--json', json),
  );
}

export function registerPlanCommands(program: Command, out: (s: string) => void, openOptions: OpenOptionsOf): void {
  const plan = 'show which files a compaction would rewrite, in which groups, at what cost (reads metadata only)';
  metadataCommand(program, 'plan', plan, 'print the Plan message').action(async (typed: string, o: Record<string, unknown>) => {
    const { loadTable } = await import('../catalog/table.js');
    const { planCompaction } = await import('../compaction/planner.js');
    const { stringifyJson } = await import('../iceberg/json.js');
    const { formatPlan } = await import('./format.js');
    const location = resolveLocation(typed);
    const open = openOptions(o.metadata as string | undefined);
    const table = await loadTable(location, open);
    const request = { table: { location, ...(open.s3Endpoint ? { s3Endpoint: open.s3Endpoint } : {}) }, policy: policyFromOptions(o) };
    const p = await planCompaction(table.io, table.metadata, request);
    out(o.json ? `${stringifyJson(p, 2)}\n` : formatPlan(p));
  });

  const health = 'file sizes, delete files and deleted rows per partition, and what compaction would fix';
  metadataCommand(program, 'health', health, 'print JSON').action(async (typed: string, o: Record<string, unknown>) => {
    const { loadTable } = await import('../catalog/table.js');
    const { tableHealth } = await import('../compaction/health.js');
    const { stringifyJson } = await import('../iceberg/json.js');
    const { formatHealth } = await import('./format.js');
    const table = await loadTable(resolveLocation(typed), openOptions(o.metadata as string | undefined));
    const h = await tableHealth(table.io, table.metadata, policyFromOptions(o));
    out(o.json ? `${stringifyJson(h, 2)}\n` : formatHealth(h));
  });
}
