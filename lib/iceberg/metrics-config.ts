/**
 * Which column metrics a writer keeps (Java MetricsConfig.java, MetricsModes.java):
 * table property `write.metadata.metrics.default` (truncate(16) unless set), per-column
 * `write.metadata.metrics.column.<dotted name>`, no metrics beyond
 * `write.metadata.metrics.max-inferred-column-defaults` (100) columns, and at least
 * truncate(16) for sort columns.
 */
import { InvalidArgumentError } from '../errors.js';
import { indexById } from './schema.js';
import type { IcebergType, StructType } from './types.js';
import { isPrimitive } from './types.js';

export type MetricsMode =
  | { readonly kind: 'none' }
  | { readonly kind: 'counts' }
  | { readonly kind: 'truncate'; readonly length: number }
  | { readonly kind: 'full' };

export const METRICS_MODE_NONE: MetricsMode = { kind: 'none' };
export const METRICS_MODE_COUNTS: MetricsMode = { kind: 'counts' };
export const METRICS_MODE_FULL: MetricsMode = { kind: 'full' };
export const DEFAULT_METRICS_MODE: MetricsMode = { kind: 'truncate', length: 16 };

export const METRICS_DEFAULT_PROPERTY = 'write.metadata.metrics.default';
export const METRICS_COLUMN_PROPERTY_PREFIX = 'write.metadata.metrics.column.';
export const METRICS_MAX_INFERRED_COLUMNS_PROPERTY = 'write.metadata.metrics.max-inferred-column-defaults';
export const METRICS_MAX_INFERRED_COLUMNS_DEFAULT = 100;

/** Parses `none`, `counts`, `full` or `truncate(N)` (N > 0), case-insensitively. */
export function parseMetricsMode(s: string): MetricsMode {
  const m = s.trim().toLowerCase();
  if (m === 'none') return METRICS_MODE_NONE;
  if (m === 'counts') return METRICS_MODE_COUNTS;
  if (m === 'full') return METRICS_MODE_FULL;
  const t = /^truncate\((\d+)\)$/.exec(m);
  if (t) {
    const length = Number(t[1]);
    if (length > 0 && Number.isSafeInteger(length)) return { kind: 'truncate', length };
  }
  throw new InvalidArgumentError(`invalid metrics mode "${s}" (expected none, counts, full or truncate(N) with N > 0)`);
}

export function metricsModeToString(m: MetricsMode): string {
  return m.kind === 'truncate' ? `truncate(${m.length})` : m.kind;
}

/** Whether the mode keeps lower/upper bounds. */
export function hasBounds(m: MetricsMode): boolean {
  return m.kind === 'truncate' || m.kind === 'full';
}

export interface MetricsConfig {
  /** Mode of every column not named in `columnModes`. */
  readonly defaultMode: MetricsMode;
  /** Modes by dotted column name (`a.b`, `l.element`, `m.key`, `m.value`). */
  readonly columnModes: ReadonlyMap<string, MetricsMode>;
}

export const DEFAULT_METRICS_CONFIG: MetricsConfig = { defaultMode: DEFAULT_METRICS_MODE, columnModes: new Map() };

/** Position delete files keep full metrics on file_path and pos only (MetricsConfig.forPositionDelete). */
export const POSITION_DELETE_METRICS_CONFIG: MetricsConfig = {
  defaultMode: METRICS_MODE_NONE,
  columnModes: new Map([
    ['file_path', METRICS_MODE_FULL],
    ['pos', METRICS_MODE_FULL],
  ]),
};

type Properties = Readonly<Record<string, string>> | ReadonlyMap<string, string>;

function entries(p: Properties): [string, string][] {
  return p instanceof Map ? [...p.entries()] : Object.entries(p as Record<string, string>);
}

/** Ids Java counts against the inferred-columns limit (TypeUtil.getProjectedIds: leaves and structs). */
function projectedIdCount(struct: StructType): number {
  let n = 0;
  const visit = (t: IcebergType): boolean => {
    // Returns true when `t` is a primitive (Java's visitor yields null for primitives).
    if (isPrimitive(t)) return true;
    if (t.type === 'struct') {
      for (const f of t.fields) {
        visit(f.type);
        if (isPrimitive(f.type) || f.type.type === 'struct') n++;
      }
    } else if (t.type === 'list') {
      if (visit(t.element)) n++;
    } else {
      visit(t.key);
      if (visit(t.value)) n += 2;
    }
    return false;
  };
  visit(struct);
  return n;
}

/** The first `limit` metrics-eligible ids, breadth-first per struct (MetricsConfig.limitFieldIds). */
export function limitFieldIds(struct: StructType, limit: number): Set<number> {
  const ids = new Set<number>();
  const more = (): boolean => ids.size < limit;
  const visit = (t: IcebergType): void => {
    if (t.type === 'struct') {
      for (const f of t.fields) {
        if (!more()) break;
        if (isPrimitive(f.type)) ids.add(f.id);
      }
      for (const f of t.fields) {
        if (!more()) break;
        visit(f.type);
      }
    } else if (t.type === 'list') {
      if (more() && isPrimitive(t.element)) ids.add(t.elementId);
      visit(t.element);
    } else if (t.type === 'map') {
      if (more() && isPrimitive(t.key)) ids.add(t.keyId);
      if (more() && isPrimitive(t.value)) ids.add(t.valueId);
      visit(t.key);
      visit(t.value);
    }
  };
  visit(struct);
  return ids;
}

function parseOr(s: string, fallback: MetricsMode): MetricsMode {
  try {
    return parseMetricsMode(s);
  } catch {
    // Java logs and falls back; a bad property must not stop writes.
    return fallback;
  }
}

/**
 * The metrics config of a table (MetricsConfig.from). `sortOrderFieldIds` are the source
 * columns of the sort order's order-preserving fields (identity, truncate, …).
 */
export function metricsConfigFromProperties(
  properties: Properties,
  schema: StructType,
  sortOrderFieldIds: readonly number[] = [],
): MetricsConfig {
  const props = new Map(entries(properties));
  const columnModes = new Map<string, MetricsMode>();
  let maxInferred = Number.parseInt(props.get(METRICS_MAX_INFERRED_COLUMNS_PROPERTY) ?? '', 10);
  if (!Number.isFinite(maxInferred) || maxInferred < 0) maxInferred = METRICS_MAX_INFERRED_COLUMNS_DEFAULT;
  const index = indexById(schema);

  let defaultMode: MetricsMode;
  const configured = props.get(METRICS_DEFAULT_PROPERTY);
  if (configured !== undefined) {
    defaultMode = parseOr(configured, DEFAULT_METRICS_MODE);
  } else if (projectedIdCount(schema) <= maxInferred) {
    defaultMode = DEFAULT_METRICS_MODE;
  } else {
    for (const id of limitFieldIds(schema, maxInferred)) {
      const path = index.get(id)?.path;
      if (path !== undefined) columnModes.set(path, DEFAULT_METRICS_MODE);
    }
    defaultMode = METRICS_MODE_NONE;
  }

  const sortedMode = defaultMode.kind === 'none' || defaultMode.kind === 'counts' ? DEFAULT_METRICS_MODE : defaultMode;
  for (const id of sortOrderFieldIds) {
    const path = index.get(id)?.path;
    if (path !== undefined) columnModes.set(path, sortedMode);
  }

  for (const [key, value] of props) {
    if (key.startsWith(METRICS_COLUMN_PROPERTY_PREFIX)) {
      columnModes.set(key.slice(METRICS_COLUMN_PROPERTY_PREFIX.length), parseOr(value, defaultMode));
    }
  }
  return { defaultMode, columnModes };
}

/** The mode of one field, looked up by its dotted name (MetricsUtil.metricsMode). */
export function metricsModeFor(config: MetricsConfig, schema: StructType, fieldId: number): MetricsMode {
  const path = indexById(schema).get(fieldId)?.path;
  return (path !== undefined ? config.columnModes.get(path) : undefined) ?? config.defaultMode;
}

/** Modes of every field id of the schema at once (one index walk). */
export function metricsModesById(config: MetricsConfig, schema: StructType): Map<number, MetricsMode> {
  const out = new Map<number, MetricsMode>();
  for (const [id, { path }] of indexById(schema)) out.set(id, config.columnModes.get(path) ?? config.defaultMode);
  return out;
}
