/**
 * A `--where` filter bound to a table (Java's Binder and Projections.inclusive, in small). A name
 * is a partition field (compared with the file's partition value, typed as the field's result
 * type, a literal in the human form of its transform: `ts_hour >= '2026-01-01-04'`) or a source
 * column (`ts >= '2026-01-01T04:00:00Z'`), projected onto every partition field built from that
 * column through the transform's inclusive projection (Java's `Transform.project`): a file whose
 * partition fails the projection holds no matching row. Column predicates also keep their typed
 * literal for the file's column metrics (inclusive-metrics-evaluator.ts).
 *
 * Partition field names are distinct from column names in Iceberg except for identity fields,
 * which may repeat their source column's name; such a name binds to the column, whose identity
 * projection is exact and which file metrics can prune further. Any other name that is both is
 * refused as ambiguous.
 */
import { ValidationError } from '../errors.js';
import {
  failer,
  literalKind,
  literalToString,
  literalValue,
  rewriteNot,
  type ComparisonOp,
  type Expression,
  type Literal,
  type UnboundExpression,
} from './expression.js';
import { type PartitionSpec } from './partition.js';
import { currentSchema, type TableMetadata } from './table-metadata.js';
import { applyTransform, fromHumanString, transformResultType, transformToString, type Transform } from './transform.js';
import { isPrimitive, primitiveToString, type IcebergType, type PrimitiveType, type StructType } from './types.js';
import type { IcebergValue } from './values.js';

export type PredicateOp = ComparisonOp | 'in' | 'not in' | 'is null' | 'not null';

/** A predicate on one value of `type`, its literals typed (values.ts); none for the null tests. */
export interface TypedPredicate {
  readonly op: PredicateOp;
  readonly type: PrimitiveType;
  readonly values: readonly IcebergValue[];
}

/** A predicate on one partition field, by name (the key of DataFile.partition) and position in its spec. */
export interface PartitionPredicate extends TypedPredicate {
  readonly field: string;
  readonly position: number;
}

/**
 * One predicate of the filter, for every spec: the partition predicates that must all hold
 * (none: no constraint), or a constant where the spec lacks the named partition field (its
 * value is null in such files). A column predicate also has its column's id and literal.
 */
export interface BoundLeaf {
  readonly name: string;
  readonly partitions: ReadonlyMap<number, readonly PartitionPredicate[] | boolean>;
  readonly column?: { readonly fieldId: number; readonly predicate: TypedPredicate };
}

export type BoundTree =
  | { readonly type: 'and' | 'or'; readonly left: BoundTree; readonly right: BoundTree }
  | { readonly type: 'leaf'; readonly leaf: BoundLeaf };

export interface TableFilter {
  readonly text: string;
  /** Without `not`: each leaf answers "may match" (rewriteNot). */
  readonly root: BoundTree;
  /** Field ids of the columns it names: a scan must read their metrics. */
  readonly columnIds: ReadonlySet<number>;
}

interface PartitionFieldRef {
  readonly spec: PartitionSpec;
  readonly position: number;
  readonly transform: Transform;
  readonly sourceId: number;
  readonly sourceName: string | undefined;
  readonly sourceType: PrimitiveType;
  readonly resultType: PrimitiveType;
}

/** Binds a parsed filter to the table's current schema and every partition spec. */
export function bindToTable(e: Expression, metadata: TableMetadata): TableFilter {
  const fail = failer(e.text, e.label, e.path);
  const schema = currentSchema(metadata);
  const columns = new Map<string, { id: number; type: IcebergType }>();
  const byId = new Map<number, { name: string; type: IcebergType }>();
  const visit = (struct: StructType, prefix: string): void => {
    for (const f of struct.fields) {
      const name = prefix + f.name;
      columns.set(name, { id: f.id, type: f.type });
      byId.set(f.id, { name, type: f.type });
      if (f.type.type === 'struct') visit(f.type, `${name}.`);
    }
  };
  visit(schema, '');
  const specs = [...metadata.partitionSpecs].sort(
    (a, b) => Number(b.specId === metadata.defaultSpecId) - Number(a.specId === metadata.defaultSpecId) || a.specId - b.specId,
  );
  const fields = new Map<string, PartitionFieldRef[]>();
  for (const spec of specs) {
    spec.fields.forEach((pf, position) => {
      const source = byId.get(pf.sourceId);
      const sourceType: PrimitiveType = source && isPrimitive(source.type) ? source.type : { type: 'unknown' };
      const ref = { spec, position, transform: pf.transform, sourceId: pf.sourceId, sourceName: source?.name, sourceType, resultType: transformResultType(pf.transform, sourceType) };
      const list = fields.get(pf.name);
      if (list) list.push(ref);
      else fields.set(pf.name, [ref]);
    });
  }

  const columnIds = new Set<number>();
  const leaf = (name: string, op: PredicateOp, literals: readonly Literal[]): BoundLeaf => {
    const column = columns.get(name);
    const partition = fields.get(name);
    if (column && partition && partition.some((p) => p.transform.kind !== 'identity' || p.sourceId !== column.id)) {
      const p = partition.find((x) => x.transform.kind !== 'identity' || x.sourceId !== column.id)!;
      fail(`"${name}" names both a column and the partition field ${describeField(name, p)}; rename one of them to filter on it`);
    }
    if (column) {
      if (!isPrimitive(column.type)) fail(`column ${name} is a ${column.type.type}; only primitive columns can be compared`);
      const type = column.type as PrimitiveType;
      columnIds.add(column.id);
      const predicate: TypedPredicate = { op, type, values: literals.map((l) => literalValue(name, type, l, fail)) };
      const partitions = new Map<number, PartitionPredicate[]>();
      for (const spec of specs) {
        const projected: PartitionPredicate[] = [];
        spec.fields.forEach((pf, position) => {
          if (pf.sourceId !== column.id) return;
          const p = projectInclusive(pf.transform, predicate);
          if (p) projected.push({ ...p, field: pf.name, position });
        });
        partitions.set(spec.specId, projected);
      }
      return { name, partitions, column: { fieldId: column.id, predicate } };
    }
    if (!partition) {
      const names = [...fields.keys()];
      const top = schema.fields.map((f) => f.name);
      fail(`unknown partition field or column "${name}"; partition fields: ${names.length === 0 ? '(none: the table is not partitioned)' : names.join(', ')}; columns: ${top.join(', ')}`);
    }
    const partitions = new Map<number, PartitionPredicate[] | boolean>();
    for (const spec of specs) {
      const ref = partition!.find((p) => p.spec === spec);
      if (!ref) {
        // Files of this spec have no such field: its value is null.
        partitions.set(spec.specId, op === 'is null');
        continue;
      }
      const values = literals.map((l) => partitionLiteral(name, ref, l, fail));
      partitions.set(spec.specId, [{ op, type: ref.resultType, values, field: name, position: ref.position }]);
    }
    return { name, partitions };
  };

  const bind = (n: UnboundExpression): BoundTree => {
    switch (n.type) {
      case 'and':
      case 'or':
        return { type: n.type, left: bind(n.left), right: bind(n.right) };
      case 'not':
        throw new ValidationError(`${e.label} "${e.text}": internal: not left after rewriteNot`);
      case 'null':
        return { type: 'leaf', leaf: leaf(n.term, n.negated ? 'not null' : 'is null', []) };
      case 'cmp':
        return { type: 'leaf', leaf: leaf(n.term, n.op, [n.literal]) };
      case 'in':
        return { type: 'leaf', leaf: leaf(n.term, n.negated ? 'not in' : 'in', n.literals.filter((l) => l.kind !== 'null')) };
    }
  };
  const root = bind(rewriteNot(e.root));
  return { text: e.text, root, columnIds };
}

function describeField(name: string, f: PartitionFieldRef): string {
  return `${name} (${transformToString(f.transform)}(${f.sourceName ?? `field ${f.sourceId}`}), ${primitiveToString(f.resultType)})`;
}

const HUMAN_FORMS: Partial<Record<Transform['kind'], string>> = {
  year: `a year 'yyyy' or years since 1970`,
  month: `a month 'yyyy-MM' or months since 1970-01`,
  day: `a day 'yyyy-MM-dd' or days since 1970-01-01`,
  hour: `an hour 'yyyy-MM-dd-HH' or hours since 1970-01-01 00:00`,
};

/** Which literal kinds a partition field's result type takes (strings in their human form). */
function partitionLiteralKinds(f: PartitionFieldRef): ReadonlySet<Literal['kind']> {
  if (f.transform.kind === 'year' || f.transform.kind === 'month' || f.transform.kind === 'day' || f.transform.kind === 'hour') {
    return new Set(['number', 'string']);
  }
  switch (f.resultType.type) {
    case 'int':
    case 'long':
    case 'float':
    case 'double':
      return new Set(['number']);
    case 'decimal':
      return new Set(['number', 'string']);
    case 'boolean':
      return new Set(['boolean']);
    default:
      return new Set(['string']);
  }
}

/**
 * The literal as a value of the partition field's result type: a string in the human form of
 * the transform (`toHumanString`), a number for numeric types and for the ordinal of a year,
 * month, day or hour. Anything else is a type mismatch naming the field, the literal and both types.
 */
function partitionLiteral(name: string, f: PartitionFieldRef, lit: Literal, fail: (message: string) => never): IcebergValue {
  const form = HUMAN_FORMS[f.transform.kind];
  const mismatch = (why?: string): never =>
    fail(
      `cannot compare partition field ${describeField(name, f)} with ${literalToString(lit)} (${literalKind(lit)})` +
        `${why ? `: ${why}` : ''}${form ? `; expected ${form}` : ''}`,
    );
  if (!partitionLiteralKinds(f).has(lit.kind)) return mismatch();
  try {
    if (lit.kind === 'string') return fromHumanString(f.transform, f.resultType, lit.value);
    if (lit.kind === 'number' && form) {
      if (!/^[+-]?\d+$/.test(lit.text) || !Number.isSafeInteger(Number(lit.text))) return mismatch('not a whole number');
      return Number(lit.text);
    }
    return literalValue(name, f.resultType, lit, fail);
  } catch (err) {
    if (err instanceof Error && !(err instanceof ValidationError)) return mismatch(err.message.replace(/^.*?: /, ''));
    throw err;
  }
}

// ---- Inclusive projection (Java's Transform.project, ProjectionUtil) ----

/**
 * A predicate on the transform's result that every row satisfying `p` satisfies too; undefined
 * when there is none (the predicate says nothing about the partition). Time transforms also
 * accept the values Java 0.10 and older wrote for times before 1970 (one too large).
 */
export function projectInclusive(t: Transform, p: TypedPredicate): TypedPredicate | undefined {
  const resultType = transformResultType(t, p.type);
  const apply = (v: IcebergValue): IcebergValue => applyTransform(t, p.type, v);
  const to = (op: PredicateOp, values: readonly IcebergValue[]): TypedPredicate => ({ op, type: resultType, values });
  if (t.kind === 'void' || t.kind === 'unknown') return undefined;
  if (p.op === 'is null' || p.op === 'not null') return to(p.op, []);
  if (t.kind === 'identity') return p;
  if (t.kind === 'bucket') {
    if (p.op === '=' || p.op === 'in') return to(p.op, dedupe(p.values.map(apply)));
    return undefined;
  }
  if (p.op === '!=' || p.op === 'not in') return undefined;
  if (p.op === 'in') return fixTime(t, p.type, to('in', dedupe(p.values.map(apply))));
  const v = p.values[0];
  if (t.kind === 'truncate' && (p.type.type === 'string' || p.type.type === 'binary')) {
    // Java's truncateArray: a prefix orders at or below every value that has it.
    const op: PredicateOp = p.op === '<' || p.op === '<=' ? '<=' : p.op === '>' || p.op === '>=' ? '>=' : '=';
    return to(op, [apply(v)]);
  }
  // Java's truncateInteger/truncateLong/truncateDecimal: close the bound, then transform it.
  let projected: TypedPredicate;
  switch (p.op) {
    case '<':
      projected = to('<=', [apply(step(v, -1))]);
      break;
    case '>':
      projected = to('>=', [apply(step(v, 1))]);
      break;
    default:
      projected = to(p.op, [apply(v)]);
  }
  return fixTime(t, p.type, projected);
}

/** The next value of an integer-like type (int and date are numbers; long, decimals and times bigints). */
function step(v: IcebergValue, by: 1 | -1): IcebergValue {
  return typeof v === 'bigint' ? v + BigInt(by) : (v as number) + by;
}

function dedupe(values: readonly IcebergValue[]): IcebergValue[] {
  const seen = new Set<string>();
  return values.filter((v) => {
    const k = typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : JSON.stringify(v);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** ProjectionUtil.fixInclusiveTimeProjection, for year/month/day/hour of timestamps and year/month of dates. */
function fixTime(t: Transform, source: PrimitiveType, p: TypedPredicate): TypedPredicate {
  const time = t.kind === 'year' || t.kind === 'month' || t.kind === 'hour' || (t.kind === 'day' && source.type !== 'date');
  if (!time) return p;
  const n = (v: IcebergValue): number => v as number;
  switch (p.op) {
    case '<=':
      return n(p.values[0]) < 0 ? { ...p, values: [n(p.values[0]) + 1] } : p;
    case '=':
      return n(p.values[0]) < 0 ? { ...p, op: 'in', values: [n(p.values[0]), n(p.values[0]) + 1] } : p;
    case 'in':
      return p.values.some((v) => n(v) < 0) ? { ...p, values: dedupe(p.values.flatMap((v) => (n(v) < 0 ? [n(v), n(v) + 1] : [v]))) } : p;
    default:
      return p;
  }
}
