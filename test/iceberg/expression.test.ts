import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors.js';
import { bindToSchema, parseExpression, rewriteNot, termsOf } from '../../lib/iceberg/expression.js';
import { isoDateToDays } from '../../lib/iceberg/json-single-value.js';
import type { StructType } from '../../lib/iceberg/types.js';
import type { Row } from '../../lib/iceberg/values.js';

const SCHEMA: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'name', required: false, type: { type: 'string' } },
    { id: 3, name: 'n', required: false, type: { type: 'int' } },
    { id: 4, name: 'amount', required: false, type: { type: 'decimal', precision: 10, scale: 2 } },
    { id: 5, name: 'day', required: false, type: { type: 'date' } },
    { id: 6, name: 'ts', required: false, type: { type: 'timestamptz' } },
    { id: 7, name: 'ok', required: false, type: { type: 'boolean' } },
    { id: 8, name: 'x', required: false, type: { type: 'double' } },
    { id: 9, name: 'b', required: false, type: { type: 'binary' } },
    {
      id: 10,
      name: 'loc',
      required: false,
      type: { type: 'struct', fields: [{ id: 11, name: 'city', required: false, type: { type: 'string' } }] },
    },
    { id: 12, name: 'tags', required: false, type: { type: 'list', elementId: 13, elementRequired: false, element: { type: 'string' } } },
  ],
};

const ROW: Row = {
  id: 9007199254740993n,
  name: 'click',
  n: 10,
  amount: 1250n,
  day: isoDateToDays('2024-03-01'),
  ts: 1_709_251_200_000_000n, // 2024-03-01T00:00:00Z
  ok: true,
  x: 2.5,
  b: Uint8Array.of(0xca, 0xfe),
  loc: { city: 'Oslo' },
  tags: ['a'],
};

const on = (text: string, row: Row = ROW): boolean => bindToSchema(parseExpression(text), SCHEMA).evaluate(row);

function error(text: string): string {
  try {
    bindToSchema(parseExpression(text, { path: '/t' }), SCHEMA);
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as Error).message;
  }
  throw new Error(`"${text}" bound`);
}

describe('expressions bound to a schema', () => {
  it('converts literals to each column type and compares typed values', () => {
    expect(on('id = 9007199254740993 and id > 9007199254740992 and id != 9007199254740992')).toBe(true);
    expect(on("name in ('a', 'click') and name >= 'c' and name < 'd'")).toBe(true);
    expect(on('n = 1')).toBe(false);
    expect(on('n = 10 and n <= 10 and not n < 10')).toBe(true);
    expect(on('amount = 12.5 and amount = 12.50 and amount > 12 and amount < 12.51')).toBe(true);
    expect(on("day = '2024-03-01' and day < '2024-03-02'")).toBe(true);
    expect(on("ts = '2024-03-01T00:00:00Z' and ts > '2024-02-29T23:59:59.999999+00:00'")).toBe(true);
    expect(on('ok = true and ok != false')).toBe(true);
    expect(on('x > 2 and x < 2.6 and x = 2.5')).toBe(true);
    expect(on("b = 'cafe' and b > 'ca'")).toBe(true);
    expect(on("\"loc.city\" = 'Oslo'")).toBe(true);
    expect(on("\"loc.city\" = 'Oslo'", { ...ROW, loc: null })).toBe(false);
  });

  it('has SQL null semantics', () => {
    const nulls = { ...ROW, name: null };
    expect(on("name = 'a'", nulls)).toBe(false);
    expect(on("name != 'a'", nulls)).toBe(false);
    expect(on("name not in ('a')", nulls)).toBe(false);
    expect(on('name is null', nulls)).toBe(true);
    expect(on('name = null', nulls)).toBe(true);
    expect(on('name is not null')).toBe(true);
  });

  it('names the column, the literal and both types on a mismatch', () => {
    expect(error("id = 'a'")).toBe(`/t: filter "id = 'a'": cannot compare column id (long) with 'a' (a string)`);
    expect(error('name = 5')).toBe('/t: filter "name = 5": cannot compare column name (string) with 5 (a number)');
    expect(error('ok = 1')).toBe('/t: filter "ok = 1": cannot compare column ok (boolean) with 1 (a number)');
    expect(error('n = 1.5')).toBe('/t: filter "n = 1.5": cannot compare column n (int) with 1.5 (a number): int holds whole numbers');
    expect(error('n = 3000000000')).toMatch(/cannot compare column n \(int\) with 3000000000 \(a number\): .*out of the int range/);
    expect(error('amount = 1.234')).toMatch(/cannot compare column amount \(decimal\(10, 2\)\) with 1\.234 \(a number\): 1\.234 has more than 2 digits/);
    expect(error("day = '2024-13-01'")).toMatch(/cannot compare column day \(date\) with '2024-13-01' \(a string\): invalid ISO date/);
    expect(error("ts = '2024-03-01T00:00:00'")).toMatch(/cannot compare column ts \(timestamptz\) with .*a zone offset is required/);
    expect(error("tags = 'a'")).toBe(`/t: filter "tags = 'a'": column tags is a list; only primitive columns can be compared`);
    expect(error('nope = 1')).toBe(
      '/t: filter "nope = 1": unknown column "nope"; columns: id, name, n, amount, day, ts, ok, x, b, loc, tags',
    );
  });

  it('reports syntax errors at parse time with the position; lists its terms', () => {
    expect(() => parseExpression('id = = 1')).toThrow(/filter "id = = 1": expected a number, .* found "=" at position 6/);
    expect(() => parseExpression('and = 1')).toThrow(/expected a column name, found "and"/);
    expect(termsOf(parseExpression("id = 1 or (name = 'a' and id > 2) or n is null").root)).toEqual(['id', 'name', 'n']);
  });

  it('pushes not down to the predicates (RewriteNot), as SQL would evaluate them', () => {
    const text = "not (id < 5 and (name in ('a') or n is null)) or not not ok = true";
    const pushed = rewriteNot(parseExpression(text).root);
    expect(JSON.stringify(pushed)).not.toContain('"not"');
    const rows: Row[] = [ROW, { ...ROW, id: 1n, name: 'a', n: null, ok: false }, { ...ROW, id: 1n, name: 'b', n: 3, ok: null }];
    const direct = bindToSchema(parseExpression(text), SCHEMA);
    const rewritten = bindToSchema({ ...parseExpression(text), root: pushed }, SCHEMA);
    expect(rows.map((r) => rewritten.evaluate(r))).toEqual(rows.map((r) => direct.evaluate(r)));
  });
});
