/**
 * `packice plan` and `packice health`: what a compaction would do, from the manifests alone.
 */
import type { Command } from 'commander';
import { loadTable, type OpenOptions } from '../catalog/table.js';
import { stringifyJson } from '../iceberg/json.js';
import { tableHealth } from '../compaction/health.js';
import { planCompaction } from '../compaction/planner.js';
import { formatHealth, formatPlan } from './format.js';
import { addPolicyOptions, policyFromOptions } from './policy-flags.js';

export const TABLE_ARGUMENT = 'table location: a folder or s3://bucket/prefix';

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

export function registerPlanCommands(program: Command, out: (s: string) => void, openOptions: (metadata?: string) => OpenOptions): void {
  const plan = 'show which files a compaction would rewrite, in which groups, at what cost (reads metadata only)';
  metadataCommand(program, 'plan', plan, 'print the Plan message').action(async (location: string, o: Record<string, unknown>) => {
    const open = openOptions(o.metadata as string | undefined);
    const table = await loadTable(location, open);
    const request = { table: { location, ...(open.s3Endpoint ? { s3Endpoint: open.s3Endpoint } : {}) }, policy: policyFromOptions(o) };
    const p = await planCompaction(table.io, table.metadata, request);
    out(o.json ? `${stringifyJson(p, 2)}\n` : formatPlan(p));
  });

  const health = 'file sizes, delete files and deleted rows per partition, and what compaction would fix';
  metadataCommand(program, 'health', health, 'print JSON').action(async (location: string, o: Record<string, unknown>) => {
    const table = await loadTable(location, openOptions(o.metadata as string | undefined));
    const h = await tableHealth(table.io, table.metadata, policyFromOptions(o));
    out(o.json ? `${stringifyJson(h, 2)}\n` : formatHealth(h));
  });
}
