import { LosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors.js';
import { parsePartitionFilter } from '../../lib/compaction/partition-filter.js';

const FIELDS = ['action', 'ts_hour', 'day', 'amount', 'id', 'flag'];
/** One partition in JSON single-value form: int, date, decimal, long beyond 2^53, boolean. */
const P = {
  action: 'click',
  ts_hour: 10,
  day: '2024-03-01',
  amount: '12.50',
  id: new LosslessNumber('9007199254740993'),
  flag: true,
};

const matches = (text: string, p: Record<string, unknown> = P): boolean => parsePartitionFilter(text, FIELDS).matches(p);

describe('partition filter', () => {
  it('compares each kind of partition value', () => {
    expect(matches("action = 'click' and ts_hour >= 10")).toBe(true);
    expect(matches("action = 'click' and ts_hour > 10")).toBe(false);
    expect(matches('ts_hour < 11 and ts_hour <= 10 and ts_hour <> 9 and ts_hour != 11')).toBe(true);
    expect(matches("day >= '2024-03-01' and day < '2024-04-01'")).toBe(true);
    expect(matches("day > '2024-03-01'")).toBe(false);
    expect(matches('amount > 12.4 and amount = 12.5')).toBe(true);
    expect(matches('id = 9007199254740993 and id > 9007199254740992')).toBe(true);
    expect(matches('id = 9007199254740992')).toBe(false);
    expect(matches("id = '9007199254740993'")).toBe(true);
    expect(matches('flag = true and not flag = false')).toBe(true);
    expect(matches('ts_hour >= -1.5e1')).toBe(true);
  });

  it('has in, not in, is null, and SQL null semantics', () => {
    expect(matches("action in ('view', 'click')")).toBe(true);
    expect(matches("action not in ('click')")).toBe(false);
    expect(matches('ts_hour in (9, 10)')).toBe(true);
    expect(matches('ts_hour is null')).toBe(false);
    expect(matches('ts_hour is not null')).toBe(true);
    const nulls = { ...P, ts_hour: null };
    expect(matches('ts_hour = 5', nulls)).toBe(false);
    expect(matches('ts_hour != 5', nulls)).toBe(false);
    expect(matches('ts_hour in (5)', nulls)).toBe(false);
    expect(matches('ts_hour not in (5)', nulls)).toBe(false);
    expect(matches('ts_hour is null', nulls)).toBe(true);
    expect(matches('ts_hour = null', nulls)).toBe(true);
    expect(matches('ts_hour != null', nulls)).toBe(false);
    // A file of an older spec that lacks the field.
    expect(matches('ts_hour >= 0', { action: 'click' })).toBe(false);
  });

  it('binds and tighter than or; keywords are case-insensitive; strings and names may be quoted', () => {
    expect(matches("action = 'x' or action = 'click' and ts_hour = 11")).toBe(false);
    expect(matches("(action = 'x' or action = 'click') and ts_hour = 10")).toBe(true);
    expect(matches("action = 'x' OR action = 'click'")).toBe(true);
    expect(matches("NOT action IN ('x') AND ts_hour IS NOT NULL")).toBe(true);
    expect(matches("action = 'it''s'", { action: "it's" })).toBe(true);
    expect(matches('"ts_hour" = 10')).toBe(true);
  });

  it('rejects bad filters with the rule broken', () => {
    const error = (text: string, fields = FIELDS): string => {
      try {
        parsePartitionFilter(text, fields, '/tables/t');
      } catch (e) {
        expect(e).toBeInstanceOf(ValidationError);
        return (e as Error).message;
      }
      throw new Error(`"${text}" parsed`);
    };
    expect(error("category = 'a'")).toBe(
      `/tables/t: partition filter "category = 'a'": unknown partition field "category"; partition fields: action, ts_hour, day, amount, id, flag`,
    );
    expect(error('x = 1', [])).toBe('/tables/t: partition filter "x = 1": unknown partition field "x": the table is not partitioned');
    expect(error('')).toBe('/tables/t: partition filter "": the filter is empty');
    expect(error('action = ')).toBe(`/tables/t: partition filter "action = ": expected a number, a 'string', true, false or null, found the end of the filter`);
    expect(error("action == 'x'")).toBe(`/tables/t: partition filter "action == 'x'": expected a number, a 'string', true, false or null, found "=" at position 9`);
    expect(error("action = 'x")).toBe(`/tables/t: partition filter "action = 'x": unterminated string at position 10`);
    expect(error("action = 'x' ts_hour")).toBe(`/tables/t: partition filter "action = 'x' ts_hour": unexpected "ts_hour" at position 14`);
    expect(error("(action = 'x'")).toBe(`/tables/t: partition filter "(action = 'x'": expected ), found the end of the filter`);
    expect(error('ts_hour < null')).toBe('/tables/t: partition filter "ts_hour < null": null can only be compared with = or != at position 9');
    expect(error('ts_hour ~ 1')).toBe('/tables/t: partition filter "ts_hour ~ 1": unexpected character "~" at position 9');
  });
});
