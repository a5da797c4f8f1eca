/**
 * Row filter expressions (Iceberg's `expressions` package, in small): the `--where` language,
 * parsed to an unbound expression over names, then bound to a schema's columns (typed literals,
 * evaluated on rows, here) or to a table's columns and partition fields (evaluated on partitions,
 * file metrics and manifest summaries: projections.ts).
 *
 *   expr    := and ('or' and)*
 *   and     := unary ('and' unary)*
 *   unary   := 'not' unary | '(' expr ')' | name cmp literal | name ['not'] 'in' '(' literal, … ')'
 *            | name 'is' ['not'] 'null'
 *   cmp     := = | != | <> | < | <= | > | >=
 *   literal := number | 'string' ('' escapes a quote) | true | false | null
 *
 * Keywords are case-insensitive; a name may be double-quoted ("a.b" names a nested column). As
 * in SQL a null value satisfies no comparison; `= null` and `!= null` mean `is [not] null`.
 */
import { InvalidArgumentError, ValidationError } from '../errors.js';
import { fromJsonValue } from './json-single-value.js';
import { isPrimitive, primitiveToString, type IcebergType, type PrimitiveType, type StructType } from './types.js';
import type { IcebergValue, Row } from './values.js';

export type Literal =
  | { readonly kind: 'number'; readonly text: string }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'boolean'; readonly value: boolean }
  | { readonly kind: 'null' };

export type ComparisonOp = '=' | '!=' | '<' | '<=' | '>' | '>=';

/** An expression over names, before they are resolved. */
export type UnboundExpression =
  | { readonly type: 'and' | 'or'; readonly left: UnboundExpression; readonly right: UnboundExpression }
  | { readonly type: 'not'; readonly inner: UnboundExpression }
  | { readonly type: 'cmp'; readonly term: string; readonly op: ComparisonOp; readonly literal: Literal }
  | { readonly type: 'in'; readonly term: string; readonly literals: readonly Literal[]; readonly negated: boolean }
  | { readonly type: 'null'; readonly term: string; readonly negated: boolean };

export interface ParseOptions {
  /** What the text is, for messages: `filter` (default). */
  readonly label?: string;
  /** What a name denotes, for messages: `column name` (default), `partition field name`. */
  readonly termNoun?: string;
  /** The table the filter is about. */
  readonly path?: string;
}

/** A parsed filter: its text and root, and how to word errors about it. */
export interface Expression {
  readonly text: string;
  readonly root: UnboundExpression;
  readonly label: string;
  readonly path: string | undefined;
}

const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'is', 'null', 'true', 'false']);
const COMPARISONS = new Set(['=', '!=', '<>', '<', '<=', '>', '>=']);

type Token =
  | { kind: 'ident'; text: string; pos: number; quoted: boolean }
  | { kind: 'number'; text: string; pos: number }
  | { kind: 'string'; text: string; pos: number }
  | { kind: 'op'; text: string; pos: number }
  | { kind: 'end'; text: string; pos: number };

export function failer(text: string, label: string, path: string | undefined): (message: string, pos?: number) => never {
  return (message, pos) => {
    const where = pos === undefined || pos >= text.length ? '' : ` at position ${pos + 1}`;
    throw new ValidationError(`${label} "${text}": ${message}${where}`, path !== undefined ? { path } : {});
  };
}

/** Parses the `--where` language (see the top of this file); a syntax error names the position. */
export function parseExpression(text: string, options: ParseOptions = {}): Expression {
  const label = options.label ?? 'filter';
  const noun = options.termNoun ?? 'column name';
  const fail = failer(text, label, options.path);
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

  const literal = (): Literal => {
    const t = next();
    if (t.kind === 'number') return { kind: 'number', text: t.text };
    if (t.kind === 'string') return { kind: 'string', value: t.text };
    if (isWord(t, 'true') || isWord(t, 'false')) return { kind: 'boolean', value: t.text.toLowerCase() === 'true' };
    if (isWord(t, 'null')) return { kind: 'null' };
    return fail(`expected a number, a 'string', true, false or null, found ${describe(t)}`, t.pos);
  };

  const term = (): string => {
    const t = next();
    if (t.kind !== 'ident' || (!t.quoted && KEYWORDS.has(t.text.toLowerCase()))) return fail(`expected a ${noun}, found ${describe(t)}`, t.pos);
    return t.text;
  };

  const unary = (): UnboundExpression => {
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
    const name = term();
    const o = next();
    if (isWord(o, 'is')) {
      const negated = isWord(peek(), 'not');
      if (negated) next();
      const n = next();
      if (!isWord(n, 'null')) fail(`expected null, found ${describe(n)}`, n.pos);
      return { type: 'null', term: name, negated };
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
      return { type: 'in', term: name, literals, negated };
    }
    if (o.kind !== 'op' || !COMPARISONS.has(o.text)) fail(`expected a comparison (=, !=, <, <=, >, >=, in, is), found ${describe(o)}`, o.pos);
    const lit = literal();
    const op = (o.text === '<>' ? '!=' : o.text) as ComparisonOp;
    if (lit.kind === 'null') {
      if (op !== '=' && op !== '!=') fail(`null can only be compared with = or !=`, o.pos);
      return { type: 'null', term: name, negated: op === '!=' };
    }
    return { type: 'cmp', term: name, op, literal: lit };
  };

  // `operand (word operand)*`, left-associative: and binds tighter than or.
  const chain = (word: 'and' | 'or', operand: () => UnboundExpression): UnboundExpression => {
    let left = operand();
    while (isWord(peek(), word)) {
      next();
      left = { type: word, left, right: operand() };
    }
    return left;
  };
  const and = (): UnboundExpression => chain('and', unary);
  const or = (): UnboundExpression => chain('or', and);

  if (peek().kind === 'end') fail('the filter is empty');
  const root = or();
  if (peek().kind !== 'end') fail(`unexpected ${describe(peek())}`, peek().pos);
  return { text, root, label, path: options.path };
}

/** Every name the expression refers to, in order of first use. */
export function termsOf(e: UnboundExpression): string[] {
  const out = new Set<string>();
  const visit = (n: UnboundExpression): void => {
    switch (n.type) {
      case 'and':
      case 'or':
        visit(n.left);
        visit(n.right);
        break;
      case 'not':
        visit(n.inner);
        break;
      default:
        out.add(n.term);
    }
  };
  visit(e);
  return [...out];
}

const NEGATED: Readonly<Record<ComparisonOp, ComparisonOp>> = { '=': '!=', '!=': '=', '<': '>=', '<=': '>', '>': '<=', '>=': '<' };

/**
 * Pushes every `not` down to the predicates (Java's RewriteNot): `not (a < 1)` is `a >= 1`,
 * `not (x and y)` is `not x or not y`. Evaluators that answer "may match" need it: the
 * negation of "may match" is not "may not match". A null satisfies neither `a < 1` nor
 * `a >= 1`, as in SQL, where `not (null < 1)` is unknown too.
 */
export function rewriteNot(e: UnboundExpression, negate = false): UnboundExpression {
  switch (e.type) {
    case 'and':
    case 'or': {
      const type = negate ? (e.type === 'and' ? 'or' : 'and') : e.type;
      return { type, left: rewriteNot(e.left, negate), right: rewriteNot(e.right, negate) };
    }
    case 'not':
      return rewriteNot(e.inner, !negate);
    case 'cmp':
      return negate ? { ...e, op: NEGATED[e.op] } : e;
    case 'in':
    case 'null':
      return negate ? { ...e, negated: !e.negated } : e;
  }
}

function describe(t: Token): string {
  if (t.kind === 'end') return 'the end of the filter';
  if (t.kind === 'string') return `'${t.text}'`;
  return `"${t.text}"`;
}

export function literalToString(l: Literal): string {
  switch (l.kind) {
    case 'number':
      return l.text;
    case 'string':
      return `'${l.value.replace(/'/g, "''")}'`;
    case 'boolean':
      return String(l.value);
    case 'null':
      return 'null';
  }
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
      if (end < 0) fail('unterminated quoted name', start);
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

/** A predicate with its names resolved: `evaluate` says whether a record satisfies it. */
export interface BoundExpression<R> {
  readonly text: string;
  /** The names it reads, in order of first use. */
  readonly terms: readonly string[];
  evaluate(record: R): boolean;
}

/** Sign of value − literal, or undefined when the two cannot be ordered. */
type Comparator = (value: unknown) => number | undefined;

type Bound =
  | { type: 'and' | 'or'; left: Bound; right: Bound }
  | { type: 'not'; inner: Bound }
  | { type: 'cmp'; get: (r: unknown) => unknown; op: ComparisonOp; compare: Comparator }
  | { type: 'in'; get: (r: unknown) => unknown; compares: Comparator[]; negated: boolean }
  | { type: 'null'; get: (r: unknown) => unknown; negated: boolean };

function bindTree(
  e: UnboundExpression,
  resolve: (term: string) => { get: (r: unknown) => unknown; comparator: (lit: Literal) => Comparator },
): Bound {
  switch (e.type) {
    case 'and':
    case 'or':
      return { type: e.type, left: bindTree(e.left, resolve), right: bindTree(e.right, resolve) };
    case 'not':
      return { type: 'not', inner: bindTree(e.inner, resolve) };
    case 'null':
      return { type: 'null', get: resolve(e.term).get, negated: e.negated };
    case 'cmp': {
      const r = resolve(e.term);
      return { type: 'cmp', get: r.get, op: e.op, compare: r.comparator(e.literal) };
    }
    case 'in': {
      const r = resolve(e.term);
      return { type: 'in', get: r.get, compares: e.literals.filter((l) => l.kind !== 'null').map(r.comparator), negated: e.negated };
    }
  }
}

function evaluate(n: Bound, r: unknown): boolean {
  switch (n.type) {
    case 'and':
      return evaluate(n.left, r) && evaluate(n.right, r);
    case 'or':
      return evaluate(n.left, r) || evaluate(n.right, r);
    case 'not':
      return !evaluate(n.inner, r);
    case 'null': {
      const v = n.get(r);
      return (v === null || v === undefined) !== n.negated;
    }
    case 'in': {
      const v = n.get(r);
      if (v === null || v === undefined) return false;
      return n.compares.some((c) => c(v) === 0) !== n.negated;
    }
    case 'cmp': {
      const v = n.get(r);
      if (v === null || v === undefined) return false;
      const c = n.compare(v);
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

function bound<R>(e: Expression, root: Bound): BoundExpression<R> {
  return { text: e.text, terms: termsOf(e.root), evaluate: (record: R) => evaluate(root, record) };
}

// ---- Binding to a schema: typed literals, evaluated on rows ----

/**
 * Resolves every name to a column of `schema` (top level, or a dotted path through structs) and
 * converts each literal to the column's type: numbers for int, long, float, double and decimal;
 * strings for string, decimal (`'12.50'`), uuid, date (`'2024-03-01'`), time, timestamps (ISO-8601; with an offset for
 * timestamptz) and binary/fixed (hex); true/false for boolean. Anything else is a type mismatch,
 * an error naming the column, the literal and both types.
 */
export function bindToSchema(e: Expression, schema: StructType): BoundExpression<Row> {
  const fail = failer(e.text, e.label, e.path);
  // Columns reachable through structs only: list elements and map entries have no single value.
  const columns = new Map<string, { type: IcebergType; path: string[] }>();
  const visit = (struct: StructType, prefix: string[]): void => {
    for (const f of struct.fields) {
      const path = [...prefix, f.name];
      columns.set(path.join('.'), { type: f.type, path });
      if (f.type.type === 'struct') visit(f.type, path);
    }
  };
  visit(schema, []);
  const top = schema.fields.map((f) => f.name);
  const root = bindTree(e.root, (term) => {
    const c = columns.get(term);
    if (!c) return fail(`unknown column "${term}"; columns: ${top.join(', ')}`);
    const path = c.path;
    const get = path.length === 1 ? (r: unknown) => (r as Row)[path[0]] : (r: unknown) => path.reduce<unknown>((v, p) => (v === null || v === undefined ? null : (v as Row)[p]), r);
    return {
      get,
      comparator: (lit) => {
        if (!isPrimitive(c.type)) return fail(`column ${term} is a ${c.type.type}; only primitive columns can be compared`);
        const value = literalValue(term, c.type, lit, fail);
        return (v) => compareTyped(v as IcebergValue, value);
      },
    };
  });
  return bound<Row>(e, root);
}

const NUMERIC_TYPES = new Set(['int', 'long', 'float', 'double', 'decimal']);
const STRING_TYPES = new Set(['string', 'decimal', 'uuid', 'date', 'time', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns', 'binary', 'fixed']);

export function literalKind(l: Literal): string {
  return l.kind === 'number' ? 'a number' : l.kind === 'string' ? 'a string' : l.kind === 'boolean' ? 'a boolean' : 'null';
}

/** The literal as a value of the column's type (values.ts), or a type-mismatch error. */
export function literalValue(column: string, type: PrimitiveType, lit: Literal, fail: (message: string) => never): IcebergValue {
  const typeName = primitiveToString(type);
  const mismatch = (why?: string): never =>
    fail(`cannot compare column ${column} (${typeName}) with ${literalToString(lit)} (${literalKind(lit)})${why ? `: ${why}` : ''}`);
  const fits =
    (lit.kind === 'number' && NUMERIC_TYPES.has(type.type)) ||
    (lit.kind === 'string' && STRING_TYPES.has(type.type)) ||
    (lit.kind === 'boolean' && type.type === 'boolean');
  if (!fits) return mismatch();
  try {
    if (lit.kind === 'boolean') return lit.value;
    if (lit.kind === 'string') return fromJsonValue(type, lit.value);
    if (lit.kind !== 'number') return mismatch();
    if (type.type === 'decimal') return decimalLiteral(lit.text, type.scale);
    if (type.type === 'int' || type.type === 'long') {
      if (!/^[+-]?\d+$/.test(lit.text)) return mismatch(`${typeName} holds whole numbers`);
      return fromJsonValue(type, BigInt(lit.text));
    }
    return fromJsonValue(type, Number(lit.text));
  } catch (err) {
    if (err instanceof InvalidArgumentError) return mismatch(err.message.replace(/^.*?: /, ''));
    throw err;
  }
}

/** A number literal as a decimal's unscaled value: fewer digits are padded, more must be zeros. */
function decimalLiteral(text: string, scale: number): bigint {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text)!;
  let digits = `${m[2]}${m[3] ?? ''}`.replace(/^0+(?=\d)/, '') || '0';
  let textScale = (m[3] ?? '').length - Number(m[4] ?? '0');
  while (textScale > scale) {
    if (!digits.endsWith('0')) throw new InvalidArgumentError(`${text} has more than ${scale} digits after the point`);
    digits = digits.slice(0, -1) || '0';
    textScale--;
  }
  const unscaled = BigInt(digits) * 10n ** BigInt(scale - textScale);
  return m[1] === '-' ? -unscaled : unscaled;
}

function compareTyped(v: IcebergValue, lit: IcebergValue): number | undefined {
  if (typeof v === 'bigint' || typeof lit === 'bigint') {
    if ((typeof v !== 'bigint' && typeof v !== 'number') || (typeof lit !== 'bigint' && typeof lit !== 'number')) return undefined;
    if (typeof v === 'number' && !Number.isInteger(v)) return v < Number(lit) ? -1 : v > Number(lit) ? 1 : 0;
    const a = BigInt(v);
    const b = BigInt(lit);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof v === 'number' && typeof lit === 'number') {
    if (Number.isNaN(v) || Number.isNaN(lit)) return undefined;
    return v < lit ? -1 : v > lit ? 1 : 0;
  }
  if (typeof v === 'string' && typeof lit === 'string') return v < lit ? -1 : v > lit ? 1 : 0;
  if (typeof v === 'boolean' && typeof lit === 'boolean') return Number(v) - Number(lit);
  if (v instanceof Uint8Array && lit instanceof Uint8Array) {
    const n = Math.min(v.length, lit.length);
    for (let i = 0; i < n; i++) if (v[i] !== lit[i]) return v[i] - lit[i];
    return v.length - lit.length;
  }
  return undefined;
}
