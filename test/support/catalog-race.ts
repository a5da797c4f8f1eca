/**
 * A commit that lost a race: `ours` was loaded before another writer committed. Sets a property
 * through the retry loop and says what it met; the caller checks the conflict and that both
 * changes are in the table.
 */
import { commitTable, loadTable, type Table, type TableCommitResult } from '../../lib/catalog/table.js';
import type { CommitConflictError } from '../../lib/errors.js';

export const RACE_PROPERTY = 'packice.test';

export async function commitAfterRace(ours: Table): Promise<{ result: TableCommitResult; conflicts: CommitConflictError[] }> {
  const conflicts: CommitConflictError[] = [];
  const result = await commitTable(
    ours,
    () => ({ updates: [{ action: 'set-properties', updates: { [RACE_PROPERTY]: 'yes' } }], requirements: [] }),
    { onRetry: (_, e) => conflicts.push(e) },
  );
  return { result, conflicts };
}

/** The property as the table's catalog holds it now. */
export async function raceProperty(name: string, s3Endpoint: string): Promise<string | undefined> {
  return (await loadTable(name, { s3Endpoint })).metadata.properties[RACE_PROPERTY];
}
