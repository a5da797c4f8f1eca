/**
 * A table schema with every nesting other engines must read back (list, map, struct) and the
 * column kinds Parquet writes differently (decimal, timestamptz, boolean, strings), and its rows.
 */
export const NESTED_SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 's', required: false, type: { type: 'string' as const } },
    { id: 3, name: 'amount', required: false, type: { type: 'decimal' as const, precision: 18, scale: 2 } },
    { id: 4, name: 'ts', required: false, type: { type: 'timestamptz' as const } },
    { id: 5, name: 'tags', required: false, type: { type: 'list' as const, elementId: 6, elementRequired: false, element: { type: 'string' as const } } },
    {
      id: 7, name: 'attrs', required: false,
      type: { type: 'map' as const, keyId: 8, key: { type: 'string' as const }, valueId: 9, valueRequired: false, value: { type: 'int' as const } },
    },
    { id: 10, name: 'st', required: false, type: { type: 'struct' as const, fields: [{ id: 11, name: 'x', required: false, type: { type: 'double' as const } }] } },
    { id: 12, name: 'flag', required: false, type: { type: 'boolean' as const } },
  ],
};

/** Rows `from` .. `from + n - 1`; column `s` takes `distinct` values. */
export function nestedRows(from: number, n: number, distinct = 3001): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return {
      id: BigInt(i),
      s: i % 11 === 0 ? null : `name-${(i * 7919) % distinct}`,
      amount: i % 13 === 0 ? null : BigInt((i * 7907) % 1_000_000),
      ts: 1_767_225_600_000_000n + BigInt(i) * 1_000_003n,
      tags: i % 5 === 0 ? null : Array.from({ length: i % 4 }, (_, j) => (j === 1 ? null : `t${(i + j) % 17}`)),
      attrs: i % 7 === 0 ? null : [[`k${i % 3}`, i % 9 === 0 ? null : i]],
      st: i % 6 === 0 ? null : { x: i % 10 === 0 ? null : i / 8 },
      flag: i % 3 === 0 ? null : i % 2 === 0,
    };
  });
}
