import { loadTable } from '../../lib/catalog/table.js';
import { stringifyJson } from '../../lib/iceberg/json.js';
import { rowToJson } from '../../lib/iceberg/row-json.js';
import { currentSchema } from '../../lib/iceberg/table-metadata.js';
import { scanRows } from '../../lib/table/scan.js';
import { parseJsonLines, sortRows, type CanonicalRow } from './canonical-rows.js';

/** Our scan of a table's current snapshot, printed the way `packice scan` prints it and parsed back, sorted. */
export async function ourRows(location: string): Promise<CanonicalRow[]> {
  const t = await loadTable(location);
  const schema = currentSchema(t.metadata);
  const lines: string[] = [];
  for await (const r of scanRows(t.io, t.metadata)) lines.push(stringifyJson(rowToJson(r, schema)));
  return sortRows(parseJsonLines(lines.join('\n'), location));
}
