/** The events table of the `--where` tests: an id, an action, a time and a number. */
import type { StructType } from '../../lib/iceberg/types.js';

export const EVENTS_SCHEMA: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'action', required: false, type: { type: 'string' } },
    { id: 3, name: 'ts', required: false, type: { type: 'timestamptz' } },
    { id: 4, name: 'n', required: false, type: { type: 'int' } },
  ],
};

export const MINUTE = 60_000_000n;
/** 2026-01-01T03:00:00Z in µs. */
export const T3 = 1_767_236_400_000_000n;
