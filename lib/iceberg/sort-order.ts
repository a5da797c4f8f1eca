import { InvalidArgumentError } from '../errors.js';
import { jsonNumber } from './json.js';
import { findFieldByName, type Schema } from './schema.js';
import { parseTransform, transformToString, type Transform } from './transform.js';

export interface SortField {
  readonly sourceId: number;
  readonly transform: Transform;
  readonly direction: 'asc' | 'desc';
  readonly nullOrder: 'nulls-first' | 'nulls-last';
}

export interface SortOrder {
  readonly orderId: number;
  readonly fields: readonly SortField[];
}

export const UNSORTED_ORDER: SortOrder = { orderId: 0, fields: [] };

export function sortOrderFromJson(json: Record<string, unknown>): SortOrder {
  const fields = Array.isArray(json.fields) ? json.fields : [];
  return {
    orderId: jsonNumber(json['order-id'], 'order-id'),
    fields: fields.map((f: Record<string, unknown>) => ({
      sourceId: jsonNumber(f['source-id'], 'source-id'),
      transform: parseTransform(String(f.transform)),
      direction: f.direction === 'desc' ? 'desc' : 'asc',
      nullOrder: f['null-order'] === 'nulls-last' ? 'nulls-last' : 'nulls-first',
    })),
  };
}

export function sortOrderToJson(order: SortOrder): Record<string, unknown> {
  return {
    'order-id': order.orderId,
    fields: order.fields.map((f) => ({
      transform: transformToString(f.transform),
      'source-id': f.sourceId,
      direction: f.direction,
      'null-order': f.nullOrder,
    })),
  };
}

/**
 * A sort order written as Spark's `rewrite_data_files` takes its `sort_order`:
 * `"col1 ASC NULLS LAST, col2 DESC"`. Direction defaults to ASC; nulls default to first for ASC
 * and last for DESC, as in Spark SQL. Columns are identity-sorted; the order takes the id of the
 * table order with the same fields, else 0 (files written in it are not in a table order).
 */
export function parseSortOrder(text: string, schema: Schema, tableOrders: readonly SortOrder[] = []): SortOrder {
  const bad = (why: string): never => {
    throw new InvalidArgumentError(`sort order "${text}": ${why} (e.g. "ts ASC NULLS LAST, id DESC")`);
  };
  const fields: SortField[] = [];
  for (const part of text.split(',')) {
    const m = /^\s*([A-Za-z_][\w.]*)(?:\s+(ASC|DESC))?(?:\s+NULLS\s+(FIRST|LAST))?\s*$/i.exec(part);
    if (!m) bad(`"${part.trim()}" is not a column with an optional ASC|DESC and NULLS FIRST|LAST`);
    const field = findFieldByName(schema, m![1]);
    if (!field) bad(`no column ${m![1]} in the table's schema`);
    const direction = (m![2] ?? 'ASC').toLowerCase() === 'desc' ? 'desc' : 'asc';
    const nulls = m![3]?.toLowerCase() ?? (direction === 'asc' ? 'first' : 'last');
    fields.push({ sourceId: field!.id, transform: { kind: 'identity' }, direction, nullOrder: nulls === 'first' ? 'nulls-first' : 'nulls-last' });
  }
  const same = tableOrders.find(
    (o) => o.fields.length === fields.length && o.fields.every((f, i) => f.sourceId === fields[i].sourceId && f.transform.kind === 'identity' && f.direction === fields[i].direction && f.nullOrder === fields[i].nullOrder),
  );
  return { orderId: same?.orderId ?? 0, fields };
}
