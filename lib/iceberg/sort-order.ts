import { jsonNumber } from './json.js';
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
