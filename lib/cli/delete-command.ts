/**
 * `packice delete <table> --where <predicate> [--snapshot ID]`: row-level deletes by position
 * (position delete files on v2, deletion vectors on v3) for the rows matching a filter over the
 * table's columns, found in the current snapshot or in snapshot ID, then committed on the current
 * snapshot through the compaction maps committed since (lib/compaction/row-delta.ts).
 */
import { CommanderError, type Command } from 'commander';
import type { RowDeltaResult } from '../compaction/row-delta.js';
import { resolveLocation } from '../io/index.js';
import { refuseReadOnly, TABLE_ARGUMENT, type OpenOptionsOf } from './table-argument.js';

/** What `packice delete --json` prints. */
export interface DeleteCommandResult extends Omit<RowDeltaResult, 'table' | 'snapshotId'> {
  readonly formatVersion: number;
  /** The snapshot the matching rows were found in. */
  readonly preparedSnapshotId: string | null;
  /** The snapshot the deletes were committed in. */
  readonly snapshotId: string | null;
  readonly matched: number;
}

function snapshotIdArgument(s: string): bigint {
  if (!/^-?\d+$/.test(s)) throw new CommanderError(2, 'packice.usage', `--snapshot must be a snapshot id, got "${s}"`);
  return BigInt(s);
}

export function registerDeleteCommand(program: Command, out: (s: string) => void, open: OpenOptionsOf): void {
  program
    .command('delete')
    .description(
      'delete the rows matching a filter over columns: position deletes (v2) or deletion vectors (v3), rebased through ' +
        'the compaction maps committed since the snapshot the rows were found in',
    )
    .argument('<table>', TABLE_ARGUMENT)
    .requiredOption('--where <predicate>', "rows to delete, e.g. \"id = 5\", \"name in ('a', 'b') and ts >= '2026-01-01T00:00:00Z'\"")
    .option('--snapshot <id>', 'find the rows in this snapshot (positions in its files), then rebase them onto the current files', snapshotIdArgument)
    .option('--json', 'print JSON')
    .action(async (typed: string, o: { where: string; snapshot?: bigint; json?: boolean }) => {
      const { loadTable } = await import('../catalog/table.js');
      const { deleteWhere } = await import('../compaction/row-delta.js');
      const { bindToSchema, parseExpression } = await import('../iceberg/expression.js');
      const { currentSchema } = await import('../iceberg/table-metadata.js');
      const { formatDeleteResult } = await import('./format.js');
      const location = resolveLocation(typed);
      const table = await loadTable(location, open());
      await refuseReadOnly(table, 'delete');
      const m = table.metadata;
      const predicate = bindToSchema(parseExpression(o.where, { path: location }), currentSchema(m));
      const preparedIn = o.snapshot ?? m.currentSnapshotId;
      const r = await deleteWhere(table, (row) => predicate.evaluate(row), o.snapshot !== undefined ? { snapshotId: o.snapshot } : {});
      const { table: _after, snapshotId, ...counts } = r;
      const result: DeleteCommandResult = {
        ...counts,
        formatVersion: m.formatVersion,
        preparedSnapshotId: preparedIn === null ? null : preparedIn.toString(),
        snapshotId: snapshotId === null ? null : snapshotId.toString(),
      };
      out(o.json ? `${JSON.stringify(result, null, 2)}\n` : formatDeleteResult(result));
    });
}
