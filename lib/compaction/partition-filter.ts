/**
 * The planner's `--where` filter: a small expression language over PARTITION field names,
 * evaluated against partition values in their JSON single-value form (spec Appendix D), so a
 * `day` partition compares as 'YYYY-MM-DD', an `hour` partition as hours since the epoch.
 *
 *   expr    := and ('or' and)*
 *   and     := unary ('and' unary)*
 *   unary   := 'not' unary | '(' expr ')' | field cmp literal | field ['not'] 'in' '(' literal, … ')'
 *            | field 'is' ['not'] 'null'
 *   cmp     := = | != | <> | < | <= | > | >=
 *   literal := number | 'string' ('' escapes a quote) | true | false | null
 *
 * Keywords are case-insensitive; a field name may be double-quoted. As in SQL a null value (or a
 * field the file's spec lacks) satisfies no comparison; `= null` and `!= null` mean `is [not] null`.
 */
import { isLosslessNumber } from 'lossless-json';
import { ValidationError } from '../errors.js';
import type { TableMetadata } from '../iceberg/table-metadata.js';

export interface PartitionFilter {
  readonly text: string;
  /** Whether a partition (field name → JSON single value) satisfies the filter. */
  matches(partition: Readonly<Record<string, unknown>>): boolean;
}

/** Partition field names of every spec, the default spec's first. */
export function partitionFieldNames(metadata: TableMetadata): string[] {
  const specs = [...metadata.partitionSpecs].sort(
    (a, b) => Number(b.specId === metadata.defaultSpecId) - Number(a.specId === metadata.defaultSpecId) || a.specId - b.specId,
  );
  return [...new Set(specs.flatMap((s) => s.fields.map((f) => f.name)))];
}

type Literal = { kind: 'number'; text: string } | { kind: 'string'; value: string } | { kind: 'boolean'; value: boolean } | { kind: 'null' };
type Op = '=' | '!=' | '<' | '<=' | '>' | '>=';
type Node =
  | { type: 'and' | 'or'; left: Node; right: Node }
  | { type: 'not'; inner: Node }
  | { type: 'cmp'; field: string; op: Op; literal: Literal }
  | { type: 'in'; field: string; literals: Literal[]; negated: boolean }
  | { type: 'null'; field: string; negated: boolean };

type Token =
  | { kind: 'ident'; text: string; pos: number; quoted: boolean }
  | { kind: 'number'; text: string; pos: number }
  | { kind: 'string'; text: string; pos: number }
  | { kind: 'op'; text: string; pos: number }
  | { kind: 'end'; text: string; pos: number };

export function parsePartitionFilter(text: string, fieldNames: readonly string[], path?: string): PartitionFilter {
  const fail = (message: string, pos?: number): never => {
    const where = pos === undefined || pos >= text.length ? '' : ` at position ${pos + 1}`;
    throw new ValidationError(`partition filter "${text}": ${message}${where}`, path !== undefined ? { path } : {});
  };
  const tokens = tokenize(text, fail);
  let i = 0;
  const peek = (): Token => tokens[i];
  const next = (): Token => tokens[i++];
  const isWord = (t: Token, w: string): boolean => t.kind === 'ident' && !t.quoted && t.text.toLowerCase() === w;
  const expect = (kind: Token['kind'], text?: string): Token => {
    const t = next();
    if (t.kind !== kind || (text !== undefined && t.text !== text)) fail(`expected ${text ?? kind}, found ${describe(t)}`, t.pos);
    return t;
  };
  const known = new Set(fieldNames);

  const literal = (): Literal => {
    const t = next();
    if (t.kind === 'number') return { kind: 'number', text: t.text };
    if (t.kind === 'string') return { kind: 'string', value: t.text };
    if (isWord(t, 'true') || isWord(t, 'false')) return { kind: 'boolean', value: t.text.toLowerCase() === 'true' };
    if (isWord(t, 'null')) return { kind: 'null' };
    return fail(`expected a number, a 'string', true, false or null, found ${describe(t)}`, t.pos);
  };

  const field = (): string => {
    const t = next();
    if (t.kind !== 'ident' || (!t.quoted && KEYWORDS.has(t.text.toLowerCase()))) {
      return fail(`expected a partition field name, found ${describe(t)}`, t.pos);
    }
    if (!known.has(t.text)) {
      fail(
        fieldNames.length === 0
          ? `unknown partition field "${t.text}": the table is not partitioned`
          : `unknown partition field "${t.text}"; partition fields: ${fieldNames.join(', ')}`,
      );
    }
    return t.text;
  };

  const unary = (): Node => {
    const t = peek();
    if (isWord(t, 'not')) {
      next();
      return { type: 'not', inner: unary() };
    }
    if (t.kind === 'op' && t.text === '(') {
      next();
      const inner = or();
      expect('op', ')');
      return inner;
    }
    const name = field();
    const o = next();
    if (isWord(o, 'is')) {
      const negated = isWord(peek(), 'not');
      if (negated) next();
      const n = next();
      if (!isWord(n, 'null')) fail(`expected null, found ${describe(n)}`, n.pos);
      return { type: 'null', field: name, negated };
    }
    if (isWord(o, 'in') || (isWord(o, 'not') && isWord(peek(), 'in'))) {
      const negated = isWord(o, 'not');
      if (negated) next();
      expect('op', '(');
      const literals = [literal()];
      while (peek().kind === 'op' && peek().text === ',') {
        next();
        literals.push(literal());
      }
      expect('op', ')');
      return { type: 'in', field: name, literals, negated };
    }
    if (o.kind !== 'op' || !COMPARISONS.has(o.text)) fail(`expected a comparison (=, !=, <, <=, >, >=, in, is), found ${describe(o)}`, o.pos);
    const lit = literal();
    const op = (o.text === '<>' ? '!=' : o.text) as Op;
    if (lit.kind === 'null') {
      if (op !== '=' && op !== '!=') fail(`null can only be compared with = or !=`, o.pos);
      return { type: 'null', field: name, negated: op === '!=' };
    }
    return { type: 'cmp', field: name, op, literal: lit };
  };

  // `operand (word operand)*`, left-associative: and binds tighter than or.
  const chain = (word: 'and' | 'or', operand: () => Node): Node => {
    let left = operand();
    while (isWord(peek(), word)) {
      next();
      left = { type: word, left, right: operand() };
    }
    return left;
  };
  const and = (): Node => chain('and', unary);
  const or = (): Node => chain('or', and);

  if (peek().kind === 'end') fail('the filter is empty');
  const root = or();
  if (peek().kind !== 'end') fail(`unexpected ${describe(peek())}`, peek().pos);
  return { text, matches: (partition) => evaluate(root, partition) };
}

const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'is', 'null', 'true', 'false']);
const COMPARISONS = new Set(['=', '!=', '<>', '<', '<=', '>', '>=']);

function describe(t: Token): string {
  if (t.kind === 'end') return 'the end of the filter';
  if (t.kind === 'string') return `'${t.text}'`;
  return `"${t.text}"`;
}

function tokenize(s: string, fail: (message: string, pos?: number) => never): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const start = i;
    if (c === "'") {
      let text = '';
      i++;
      for (;;) {
        if (i >= s.length) fail('unterminated string', start);
        if (s[i] === "'") {
          if (s[i + 1] === "'") {
            text += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        text += s[i++];
      }
      out.push({ kind: 'string', text, pos: start });
    } else if (c === '"') {
      const end = s.indexOf('"', i + 1);
      if (end < 0) fail('unterminated quoted field name', start);
      out.push({ kind: 'ident', text: s.slice(i + 1, end), pos: start, quoted: true });
      i = end + 1;
    } else if (/[0-9]/.test(c) || ((c === '-' || c === '+' || c === '.') && /[0-9.]/.test(s[i + 1] ?? ''))) {
      const m = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(s.slice(i));
      if (!m) fail('malformed number', start);
      out.push({ kind: 'number', text: m[0], pos: start });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(i))!;
      out.push({ kind: 'ident', text: m[0], pos: start, quoted: false });
      i += m[0].length;
    } else {
      const two = s.slice(i, i + 2);
      if (two === '!=' || two === '<>' || two === '<=' || two === '>=') {
        out.push({ kind: 'op', text: two, pos: start });
        i += 2;
      } else if ('=<>(),'.includes(c)) {
        out.push({ kind: 'op', text: c, pos: start });
        i++;
      } else {
        fail(`unexpected character "${c}"`, start);
      }
    }
  }
  out.push({ kind: 'end', text: '', pos: s.length });
  return out;
}

function evaluate(n: Node, p: Readonly<Record<string, unknown>>): boolean {
  switch (n.type) {
    case 'and':
      return evaluate(n.left, p) && evaluate(n.right, p);
    case 'or':
      return evaluate(n.left, p) || evaluate(n.right, p);
    case 'not':
      return !evaluate(n.inner, p);
    case 'null': {
      const v = p[n.field];
      return (v === null || v === undefined) !== n.negated;
    }
    case 'in': {
      const v = p[n.field];
      if (v === null || v === undefined) return false;
      const hit = n.literals.some((l) => compare(v, l) === 0);
      return hit !== n.negated;
    }
    case 'cmp': {
      const v = p[n.field];
      if (v === null || v === undefined) return false;
      const c = compare(v, n.literal);
      if (c === undefined) return n.op === '!=';
      switch (n.op) {
        case '=':
          return c === 0;
        case '!=':
          return c !== 0;
        case '<':
          return c < 0;
        case '<=':
          return c <= 0;
        case '>':
          return c > 0;
        case '>=':
          return c >= 0;
      }
    }
  }
}

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

/** The text of a numeric JSON value (number, bigint or lossless number), else undefined. */
function numberText(v: unknown): string | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : undefined;
  if (typeof v === 'bigint') return v.toString();
  if (isLosslessNumber(v)) return v.value;
  return undefined;
}

function compareNumbers(a: string, b: string): number {
  if (INTEGER.test(a) && INTEGER.test(b)) {
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const x = Number(a);
  const y = Number(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Sign of value − literal. Numbers compare numerically (also a decimal partition's JSON text
 * against a number literal); strings by code unit, so ISO dates and timestamps order correctly;
 * anything else compares as text. undefined when the two cannot be ordered (boolean vs number).
 */
function compare(value: unknown, lit: Literal): number | undefined {
  const vNum = numberText(value) ?? (typeof value === 'string' && NUMERIC.test(value) ? value : undefined);
  if (lit.kind === 'number') {
    if (vNum !== undefined) return compareNumbers(vNum, lit.text);
    if (typeof value === 'string') return cmpText(value, lit.text);
    return undefined;
  }
  if (lit.kind === 'string') {
    if (numberText(value) !== undefined && NUMERIC.test(lit.value)) return compareNumbers(numberText(value)!, lit.value);
    if (typeof value === 'string') return cmpText(value, lit.value);
    if (numberText(value) !== undefined) return cmpText(numberText(value)!, lit.value);
    return undefined;
  }
  if (lit.kind === 'boolean') return typeof value === 'boolean' ? Number(value) - Number(lit.value) : undefined;
  return undefined;
}

function cmpText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
