/**
 * Rows in the canonical JSON encoding that packice's `scan`, the Java harness (interop/java) and
 * interop/python/read_table.py all print, one object per line:
 * int → number; long → number when |v| ≤ 2^53, else a string; float/double → number, or "NaN",
 * "Infinity", "-Infinity"; decimal → plain string; date "YYYY-MM-DD"; time "HH:MM:SS.ffffff";
 * timestamp "YYYY-MM-DDTHH:MM:SS.ffffff" (tz: UTC with "Z"; _ns: 9 digits); uuid → string;
 * binary/fixed → lowercase hex; struct → object; list → array; map → array of [key, value].
 */
export type CanonicalValue = null | boolean | number | string | CanonicalValue[] | { [name: string]: CanonicalValue };
export type CanonicalRow = { [column: string]: CanonicalValue };

/** Parses JSON lines (blank lines ignored); `source` names the producer in errors. */
export function parseJsonLines(text: string, source: string): CanonicalRow[] {
  const rows: CanonicalRow[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    try {
      rows.push(JSON.parse(line) as CanonicalRow);
    } catch (e) {
      throw new Error(`${source}: line ${i + 1} is not JSON: ${line.slice(0, 200)}`, { cause: e });
    }
  }
  return rows;
}

/**
 * Rows sorted by a numeric or string key column (engines return rows in file order); ties
 * on the key are broken by the whole row, so duplicate keys compare the same in any order.
 */
export function sortRows(rows: CanonicalRow[], key = 'id'): CanonicalRow[] {
  const k = (r: CanonicalRow): string | number => {
    const v = r[key];
    return typeof v === 'number' || typeof v === 'string' ? v : JSON.stringify(v);
  };
  const cmp = (x: string | number, y: string | number): number =>
    typeof x === 'number' && typeof y === 'number' ? x - y : String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0;
  return [...rows].sort((a, b) => cmp(k(a), k(b)) || cmp(JSON.stringify(a), JSON.stringify(b)));
}
