/**
 * Issue 11: a copy of a bench table with position deletes, for measuring the merge with deletes
 * (BENCHMARKS.md "Merge with deletes"): `<to>` is `<from>` relocated, then one position delete
 * file per partition deleting every `every`-th row of every data file (from position 7), written
 * straight from the positions (no data file read).
 *
 *   npx tsx bench/with-deletes.ts <abs from> <abs to> [every=1000]
 *
 * Builds `.cache/bench/t3m-del`, `m700-del` and `m2g-del` from `t3m`, `m700` and `m2g`; refuses
 * a `<to>` that exists (relocate does).
 */
import { loadTable } from '../lib/catalog/table.js';
import { ensureRoaring, PositionDeleteIndex } from '../lib/iceberg/deletion-vector.js';
import { planFiles } from '../lib/iceberg/scan-planning.js';
import { writePositionDeletes } from '../lib/table/delete-writer.js';
import { commitChanges } from '../lib/table/operations.js';
import { relocateTable } from '../lib/table/relocate.js';

const [from, to, everyArg] = process.argv.slice(2);
if (!from || !to) throw new Error('usage: npx tsx bench/with-deletes.ts <abs from> <abs to> [every=1000]');
const every = BigInt(everyArg ?? '1000');
await relocateTable(from, to, { concurrency: 8 });
const table = await loadTable(to);
await ensureRoaring();
const tasks = (await planFiles(table.io, table.metadata)).tasks;
const targets = tasks.map((task) => {
  const positions = new PositionDeleteIndex();
  for (let p = 7n; p < task.dataFile.recordCount; p += every) positions.add(p);
  return { dataFile: task.dataFile, positions };
});
const added = await writePositionDeletes(table.io, table.metadata, targets);
await commitChanges(table, { addedDeleteFiles: added, operation: 'delete' });
console.log(`${to}: ${tasks.length} data files, ${added.length} delete files, every ${every}th row deleted`);
