/**
 * Differential property of the merge paths (lib/compaction/chunk-copy.ts, lib/parquet/row-group-merge.ts):
 * random flat tables (v2 or v3, unpartitioned or identity-partitioned on an int, string or double
 * holding -0.0 and 0.0; columns of the types the merge handles and some it must hand to the
 * decoder: boolean, list, map, struct), random writer settings per append (row-group, page and
 * dictionary sizes, codec, and on parquet-wasm's builder DATA_PAGE_V2, small write batches,
 * statistics off), random deletes (position deletes and deletion vectors: sparse, dense, a whole
 * file, its first or last row; equality deletes on one or two columns, nulls among the keys, keys
 * matching nothing), then every group rewritten (major, or minor as the planner plans it) and
 * committed. Checked against a model of the live rows the test keeps itself (not the reader):
 * the rows before and after (exact values: -0.0, NaN, bytes), the proof's counts and hashes, the
 * same group rewritten with every merge and copy off (the decoder alone) and, merged, on two merge
 * workers (the same bytes), each group's outputs
 * against its inputs' live rows, the compaction map, each file's partition against its rows,
 * v3 row lineage, and the outputs' metrics (counts; bounds hold every value, and equal the
 * extreme values unless truncated).
 *
 * PROP_RUNS (default 20), PROP_SEED and PROP_SHRINK=0 (stop at the first failure) steer the run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import * as pw from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import {
  COPY_MIN_ROW_GROUP_BYTES_PROPERTY, MERGE_DELETES_PROPERTY, MERGE_MIN_ROW_GROUP_BYTES_PROPERTY,
} from '../../lib/compaction/chunk-copy.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import type { DataFileJson, GroupResult } from '../../lib/compaction/messages.js';
import { planCompaction } from '../../lib/compaction/planner.js';
import { rewriteGroup } from '../../lib/compaction/rewriter.js';
import { compareValues, fromBytes, truncateLowerBound, truncateUpperBound } from '../../lib/iceberg/bounds.js';
import { stringifyJson } from '../../lib/iceberg/json.js';
import { metricsModesById, metricsConfigFromProperties } from '../../lib/iceberg/metrics-config.js';
import { valueToJson } from '../../lib/iceberg/row-json.js';
import { currentSchema } from '../../lib/iceberg/table-metadata.js';
import type { IcebergType, NestedField, PrimitiveType, StructType } from '../../lib/iceberg/types.js';
import type { IcebergValue, Row } from '../../lib/iceberg/values.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { readRows } from '../../lib/table/data-reader.js';
import { scanRows } from '../../lib/table/scan.js';
import { writeDataFiles } from '../../lib/table/data-writer.js';
import { commitChanges, createNewTable, deleteByEquality, deleteRows } from '../../lib/table/operations.js';
import { checkMap, withProperties } from '../support/chunk-copy-table.js';
import { planAll } from '../support/compaction.js';
import { tempDir } from '../support/fixtures.js';
import { seededRandom } from '../support/seeded-random.js';

const io = new LocalFileIO();

/** The settings of the files being written by an append (none: the writer's own). */
let tweak: Tweak | undefined;
// parquet-wasm's writer properties are built once a file's first rows arrive (lib/parquet/writer.ts):
// an append's tweaks go in there.
const buildProperties = pw.WriterPropertiesBuilder.prototype.build;
pw.WriterPropertiesBuilder.prototype.build = function tweaked(this: pw.WriterPropertiesBuilder): pw.WriterProperties {
  let b = tweak?.v2 ? this.setWriterVersion(pw.WriterVersion.V2) : this;
  if (tweak?.batch !== undefined) b = b.setWriteBatchSize(tweak.batch);
  if (tweak?.statistics !== undefined) {
    b = b.setStatisticsEnabled({ none: pw.EnabledStatistics.None, chunk: pw.EnabledStatistics.Chunk, page: pw.EnabledStatistics.Page }[tweak.statistics]);
  }
  return buildProperties.call(b);
};

// ---------------------------------------------------------------------------------------------
// Cases

const KINDS = [
  'int', 'long', 'float', 'double', 'string', 'binary', 'date', 'timestamp', 'timestamptz',
  'decimal', 'uuid', 'fixed', 'time', 'boolean', 'list', 'map', 'struct',
] as const;
type Kind = (typeof KINDS)[number];

interface ColumnCase {
  readonly kind: Kind;
  readonly precision: number;
  readonly required: boolean;
  /** Share of nulls (optional columns only). */
  readonly nullRate: number;
  /** A few distinct values (dictionary-friendly) or many. */
  readonly lowCardinality: boolean;
}

type Op =
  | { readonly op: 'pos'; readonly pattern: 'sparse' | 'dense' | 'all-of-file' | 'first' | 'last' | 'first-last' | 'none'; readonly seed: number }
  | { readonly op: 'eq'; readonly columns: readonly number[]; readonly matching: number; readonly misses: number; readonly nullKey: boolean; readonly seed: number }
  | { readonly op: 'append'; readonly append: Append };

/** An append: its rows, and the writer settings of its files when not the table's (one partition then holds files of several writers). */
interface Append {
  readonly rows: number;
  readonly codec?: 'zstd' | 'gzip' | 'uncompressed';
  readonly rowGroupBytes?: number;
  readonly pageBytes?: number;
  readonly dictBytes?: number;
  /** Writer settings no table property reaches (set on parquet-wasm's builder for this append's files). */
  readonly tweak?: Tweak;
}

interface Tweak {
  /** DATA_PAGE_V2 pages. */
  readonly v2?: boolean;
  /** Rows the writer takes at a time (it checks page limits between them: small pages). */
  readonly batch?: number;
  /** Statistics written: none, per chunk, per page. */
  readonly statistics?: 'none' | 'chunk' | 'page';
}

interface Case {
  readonly formatVersion: 2 | 3;
  readonly partitions: number; // 0: unpartitioned
  /** The identity partition column's type (int unless said): a double's partitions include -0.0 and 0.0 (not NaN: no JSON form in messages). */
  readonly partitionType?: 'double' | 'string';
  readonly columns: readonly ColumnCase[];
  readonly appends: readonly Append[];
  readonly rowGroupBytes?: number;
  readonly pageBytes?: number;
  readonly dictBytes?: number;
  /** write.parquet.page-row-limit: what coalesced pages grow to (the merge's, not the writer's). */
  readonly pageRows?: number;
  /** The plan's target file size: small ones split a group's merged rows over several outputs. */
  readonly targetBytes?: number;
  readonly codec: 'zstd' | 'gzip' | 'uncompressed' | 'snappy';
  readonly metrics?: 'full' | 'truncate(4)' | 'counts';
  /** packice.rewrite.copy-min-row-group-bytes and merge-min-row-group-bytes: inputs without deletes copied, small row groups decoded. */
  readonly copyFloor?: number;
  readonly mergeFloor?: number;
  /** The last compaction in minor mode (planned by the planner): equality deletes are not applied, they stay. */
  readonly minor?: boolean;
  /** Compact once before the deletes (v3: the lineage columns are then in the files). */
  readonly precompact: boolean;
  readonly ops: readonly Op[];
  readonly seed: number;
}

const columnArb: fc.Arbitrary<ColumnCase> = fc.record({
  // Mostly kinds the merge drops rows from; now and then one it must hand to the decoder.
  kind: fc.oneof(
    { arbitrary: fc.constantFrom(...KINDS.filter((k) => !['boolean', 'list', 'map', 'struct'].includes(k))), weight: 12 },
    { arbitrary: fc.constantFrom<Kind>('boolean', 'list', 'map', 'struct'), weight: 1 },
  ),
  precision: fc.constantFrom(4, 9, 10, 18, 19, 38),
  required: fc.boolean(),
  nullRate: fc.constantFrom(0, 0.1, 0.5, 0.95, 1),
  lowCardinality: fc.boolean(),
});

const appendArb = (max: number): fc.Arbitrary<Append> => fc.record(
  {
    // Now and then a file of pages over the writer's 1,024-row batches.
    rows: fc.oneof({ arbitrary: fc.integer({ min: 1, max }), weight: 12 }, { arbitrary: fc.integer({ min: 1000, max: 2500 }), weight: 1 }),
    codec: fc.constantFrom('zstd' as const, 'gzip' as const, 'uncompressed' as const),
    rowGroupBytes: fc.constantFrom(512, 2048, 16384),
    pageBytes: fc.constantFrom(64, 256, 1024, 8192),
    dictBytes: fc.constantFrom(16, 128, 4096),
    tweak: fc.record(
      { v2: fc.boolean(), batch: fc.constantFrom(1, 7, 50), statistics: fc.constantFrom('none' as const, 'chunk' as const, 'page' as const) },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['rows'] },
);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({
    op: fc.constant('pos' as const),
    pattern: fc.constantFrom('sparse' as const, 'dense' as const, 'all-of-file' as const, 'first' as const, 'last' as const, 'first-last' as const, 'none' as const),
    seed: fc.nat(),
  }), weight: 4 },
  { arbitrary: fc.record({
    op: fc.constant('eq' as const),
    columns: fc.uniqueArray(fc.nat({ max: 7 }), { minLength: 1, maxLength: 2 }),
    matching: fc.nat({ max: 12 }),
    misses: fc.nat({ max: 3 }),
    nullKey: fc.boolean(),
    seed: fc.nat(),
  }), weight: 3 },
  // Rarely: files appended later have no row lineage on v3 (their partition is then decoded whole).
  { arbitrary: fc.record({ op: fc.constant('append' as const), append: appendArb(40) }), weight: 1 },
);

const caseArb: fc.Arbitrary<Case> = fc.record(
  {
    formatVersion: fc.constantFrom(2 as const, 3 as const),
    partitions: fc.nat({ max: 2 }),
    partitionType: fc.constantFrom('double' as const, 'string' as const),
    columns: fc.array(columnArb, { minLength: 1, maxLength: 6 }),
    appends: fc.array(appendArb(90), { minLength: 1, maxLength: 4 }),
    rowGroupBytes: fc.constantFrom(512, 2048, 16384),
    pageBytes: fc.constantFrom(64, 256, 1024, 8192),
    dictBytes: fc.constantFrom(16, 128, 4096),
    pageRows: fc.constantFrom(1, 3, 17, 1000),
    targetBytes: fc.constantFrom(1, 1500, 6000),
    codec: fc.oneof(
      { arbitrary: fc.constantFrom('zstd' as const, 'gzip' as const, 'uncompressed' as const), weight: 8 },
      { arbitrary: fc.constant('snappy' as const), weight: 1 },
    ),
    metrics: fc.constantFrom('full' as const, 'truncate(4)' as const, 'counts' as const),
    precompact: fc.boolean(),
    minor: fc.boolean(),
    copyFloor: fc.constantFrom(1, 4096),
    mergeFloor: fc.constantFrom(1, 300),
    ops: fc.array(opArb, { minLength: 0, maxLength: 4 }),
    seed: fc.nat(),
  },
  { requiredKeys: ['formatVersion', 'partitions', 'columns', 'appends', 'codec', 'precompact', 'ops', 'seed'] },
);

// ---------------------------------------------------------------------------------------------
// Schema and values

interface Built {
  readonly schema: StructType;
  /** Generates a column's value for row `id`. */
  readonly gens: readonly ((id: number, rnd: () => number) => IcebergValue)[];
  /** Columns an equality delete may key on: field ids (id, the partition column, eligible generated columns). */
  readonly keyIds: readonly number[];
}

const pick = <T>(rnd: () => number, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];

const STRINGS = ['', 'a', 'b', 'é', '日本語', '😀', 'z😀z', 'abcdefghijklmnopqrstuvwxyz', '😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀', '\u{10FFFF}\u{10FFFF}\u{10FFFF}\u{10FFFF}\u{10FFFF}', 'x\u0000y', '\uFFFF'];
const CODEPOINTS = ['a', 'Z', '0', ' ', 'é', 'ß', '日', '😀', '\u{10FFFF}', '\uFFFF', '\u0000', '~'];

function randomString(rnd: () => number): string {
  const n = Math.floor(rnd() * 24);
  let s = '';
  for (let i = 0; i < n; i++) s += rnd() < 0.7 ? String.fromCharCode(97 + Math.floor(rnd() * 26)) : pick(rnd, CODEPOINTS);
  return s;
}

function randomBytes(rnd: () => number, max: number): Uint8Array {
  const n = Math.floor(rnd() * (max + 1));
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = rnd() < 0.2 ? pick(rnd, [0, 0x7f, 0x80, 0xff]) : Math.floor(rnd() * 256);
  return out;
}

function randomBigInt(rnd: () => number, bits: number): bigint {
  let v = 0n;
  for (let i = 0; i < bits; i += 16) v = (v << 16n) | BigInt(Math.floor(rnd() * 65536));
  return BigInt.asIntN(bits, v);
}

function primitiveGen(kind: Kind, c: ColumnCase): { type: PrimitiveType; gen: (rnd: () => number) => IcebergValue } {
  const low = c.lowCardinality;
  switch (kind) {
    case 'int': {
      const xs = [0, 1, -1, 7, 2147483647, -2147483648];
      return { type: { type: 'int' }, gen: (r) => (low ? pick(r, xs) : r() < 0.05 ? pick(r, xs) : Math.floor(r() * 2 ** 32) - 2 ** 31) };
    }
    case 'long': {
      const xs = [0n, 1n, -1n, 9007199254740993n, 9223372036854775807n, -9223372036854775808n];
      return { type: { type: 'long' }, gen: (r) => (low ? pick(r, xs) : r() < 0.05 ? pick(r, xs) : randomBigInt(r, 64)) };
    }
    case 'float':
    case 'double': {
      const xs = [0, -0, 1.5, -2.25, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, kind === 'float' ? Math.fround(3.4e38) : 1.7976931348623157e308, 5e-324];
      const f = kind === 'float' ? Math.fround : (x: number): number => x;
      return {
        type: { type: kind },
        gen: (r) => f(low || r() < 0.1 ? pick(r, xs) : (r() - 0.5) * 10 ** Math.floor(r() * 12 - 4)),
      };
    }
    case 'string':
      return { type: { type: 'string' }, gen: (r) => (low || r() < 0.15 ? pick(r, STRINGS) : randomString(r)) };
    case 'binary': {
      const xs = [new Uint8Array(0), new Uint8Array([0]), new Uint8Array([0xff, 0xff]), new Uint8Array([1, 2, 3])];
      return { type: { type: 'binary' }, gen: (r) => (low ? pick(r, xs).slice() : randomBytes(r, 24)) };
    }
    case 'date': {
      const xs = [0, -1, 19000, -719162, 2932896];
      return { type: { type: 'date' }, gen: (r) => (low ? pick(r, xs) : Math.floor(r() * 200000) - 100000) };
    }
    case 'timestamp':
    case 'timestamptz': {
      const xs = [0n, -1n, 1_700_000_000_000_000n, -62135596800000000n, 253402300799999999n];
      return { type: { type: kind }, gen: (r) => (low ? pick(r, xs) : BigInt(Math.floor((r() - 0.3) * 4e15)) * 1000n + BigInt(Math.floor(r() * 1000))) };
    }
    case 'decimal': {
      const p = c.precision;
      const scale = Math.min(2, p - 1);
      const top = 10n ** BigInt(p) - 1n;
      const xs = [0n, 1n, -1n, top, -top, 100n];
      return {
        type: { type: 'decimal', precision: p, scale },
        gen: (r) => {
          if (low || r() < 0.05) return pick(r, xs);
          const v = randomBigInt(r, 128) % (top + 1n);
          return v;
        },
      };
    }
    case 'boolean':
      return { type: { type: 'boolean' }, gen: (r) => (low ? true : r() < 0.5) };
    case 'uuid': {
      const xs = ['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '80000000-0000-0000-8000-000000000000'];
      const hex = (r: () => number): string => Array.from({ length: 32 }, () => '0123456789abcdef'[Math.floor(r() * 16)]).join('');
      return {
        type: { type: 'uuid' },
        gen: (r) => {
          if (low) return pick(r, xs);
          const h = hex(r);
          return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
        },
      };
    }
    case 'fixed': {
      const length = c.precision % 5 === 0 ? 1 : 5;
      const xs = [new Uint8Array(length), new Uint8Array(length).fill(0xff), new Uint8Array(length).fill(0x80)];
      return {
        type: { type: 'fixed', length },
        gen: (r) => (low ? pick(r, xs).slice() : Uint8Array.from({ length }, () => (r() < 0.2 ? pick(r, [0, 0x7f, 0x80, 0xff]) : Math.floor(r() * 256)))),
      };
    }
    case 'time': {
      const xs = [0n, 86_399_999_999n, 43_200_000_000n];
      return { type: { type: 'time' }, gen: (r) => (low ? pick(r, xs) : BigInt(Math.floor(r() * 86_400_000_000))) };
    }
    default:
      throw new Error(`${kind} is not primitive`);
  }
}

function build(c: Case): Built {
  const fields: NestedField[] = [{ id: 1, name: 'id', required: true, type: { type: 'long' } }];
  const gens: ((id: number, rnd: () => number) => IcebergValue)[] = [(id) => BigInt(id)];
  const keyIds = [1];
  if (c.partitions > 0) {
    const values: IcebergValue[] = c.partitionType === 'double' ? [0, -0, 1.5] : c.partitionType === 'string' ? ['', 'a', 'é'] : [0, 1, 2];
    fields.push({ id: 2, name: 'p', required: true, type: { type: c.partitionType ?? 'int' } });
    gens.push((id) => values[id % (c.partitions + 1)]);
    keyIds.push(2);
  }
  let next = 100;
  c.columns.forEach((col, i) => {
    const id = 3 + i;
    const name = `c${i}_${col.kind}`;
    const nullable = !col.required;
    const withNulls = (g: (rnd: () => number) => IcebergValue) => (_: number, rnd: () => number): IcebergValue =>
      nullable && rnd() < col.nullRate ? null : g(rnd);
    let type: IcebergType;
    let gen: (rnd: () => number) => IcebergValue;
    if (col.kind === 'list') {
      type = { type: 'list', elementId: next++, elementRequired: false, element: { type: 'int' } };
      gen = (r) => Array.from({ length: Math.floor(r() * 3) }, () => (r() < 0.2 ? null : Math.floor(r() * 5)));
    } else if (col.kind === 'map') {
      type = { type: 'map', keyId: next++, key: { type: 'string' }, valueId: next++, valueRequired: false, value: { type: 'int' } };
      gen = (r) => (r() < 0.5 ? [] : [['k', r() < 0.3 ? null : Math.floor(r() * 9)]]);
    } else if (col.kind === 'struct') {
      const a = primitiveGen('int', col);
      const b = primitiveGen('string', col);
      type = {
        type: 'struct',
        fields: [{ id: next++, name: 'x', required: false, type: a.type }, { id: next++, name: 'y', required: true, type: b.type }],
      };
      gen = (r) => ({ x: r() < 0.3 ? null : a.gen(r), y: b.gen(r) });
    } else {
      const p = primitiveGen(col.kind, col);
      type = p.type;
      gen = p.gen;
      // The spec allows no float or double equality delete column.
      if (col.kind !== 'float' && col.kind !== 'double') keyIds.push(id);
    }
    fields.push({ id, name, required: col.required, type });
    gens.push(withNulls(gen));
  });
  return { schema: { type: 'struct', fields }, gens, keyIds };
}

// ---------------------------------------------------------------------------------------------
// The model: live rows, exact values

/** A value as text, exact: -0.0 apart from +0.0, NaN named, bytes as hex. */
function exact(v: IcebergValue | undefined, t: IcebergType): unknown {
  if (v === null || v === undefined) return null;
  if ((t.type === 'float' || t.type === 'double') && Object.is(v, -0)) return '-0';
  if (t.type === 'struct') return Object.fromEntries(t.fields.map((f) => [f.name, exact((v as Row)[f.name], f.type)]));
  if (t.type === 'list') return (v as IcebergValue[]).map((x) => exact(x, t.element));
  if (t.type === 'map') return (v as [IcebergValue, IcebergValue][]).map(([k, x]) => [exact(k, t.key), exact(x, t.value)]);
  return valueToJson(v, t);
}

const rowText = (r: Row, s: StructType): string => stringifyJson(exact(r, s));

interface ModelRow {
  readonly row: Row;
  readonly text: string;
}

async function liveRows(t: Table): Promise<string[]> {
  const schema = currentSchema(t.metadata);
  const out: string[] = [];
  for await (const r of scanRows(t.io, t.metadata)) out.push(rowText(r, schema));
  return out.sort();
}

/** v3: each live row's id with its lineage. */
async function lineage(t: Table): Promise<string[]> {
  const out: string[] = [];
  for await (const r of scanRows(t.io, t.metadata, { rowLineage: true })) out.push(`${String(r.id)} ${String(r._row_id)} ${String(r._last_updated_sequence_number)}`);
  return out.sort();
}

/** Every live data file of an identity-partitioned table holds only rows of its partition (exact values: -0.0 is not 0.0). */
async function checkPartitions(t: Table, what: string): Promise<void> {
  const schema = currentSchema(t.metadata);
  const p = schema.fields.find((f) => f.name === 'p');
  if (!p) return;
  const plan = await planFiles(t.io, t.metadata);
  for (const task of plan.tasks) {
    const partition = stringifyJson(exact(task.dataFile.partition.p, p.type));
    for await (const b of readRows(t.io, task.dataFile, schema)) {
      for (const r of b.rows) expect(stringifyJson(exact(r.p, p.type)), `${what}: a row of ${task.dataFile.filePath} in partition p=${partition}`).toBe(partition);
    }
  }
}

/** Each live data file's row ids in position order (deletes not applied). */
async function fileIds(t: Table): Promise<bigint[][]> {
  const plan = await planFiles(t.io, t.metadata);
  const schema = currentSchema(t.metadata);
  const out: bigint[][] = [];
  for (const task of [...plan.tasks].sort((a, b) => (a.dataFile.filePath < b.dataFile.filePath ? -1 : 1))) {
    const ids: bigint[] = [];
    for await (const b of readRows(t.io, task.dataFile, schema)) for (const r of b.rows) ids.push(r.id as bigint);
    out.push(ids);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Metrics of an output file, checked against its rows

const MERGE_OFF = {
  [MERGE_DELETES_PROPERTY]: 'false',
  [MERGE_MIN_ROW_GROUP_BYTES_PROPERTY]: String(2 ** 50),
  [COPY_MIN_ROW_GROUP_BYTES_PROPERTY]: String(2 ** 50),
};

interface Leaf {
  readonly id: number;
  readonly type: PrimitiveType;
  readonly get: (r: Row) => IcebergValue;
}

function metricLeaves(s: StructType, get: (r: Row) => Row | null = (r) => r, out: Leaf[] = []): Leaf[] {
  for (const f of s.fields) {
    if (f.type.type === 'struct') {
      metricLeaves(f.type, (r) => (get(r)?.[f.name] as Row | null) ?? null, out);
    } else if (f.type.type !== 'list' && f.type.type !== 'map') {
      out.push({ id: f.id, type: f.type, get: (r) => get(r)?.[f.name] ?? null });
    }
  }
  return out;
}

async function outputRows(f: DataFileJson, schema: StructType): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const b of readRows(io, { filePath: f.filePath, fileFormat: 'PARQUET' }, schema)) rows.push(...b.rows);
  return rows;
}

/** Parquet writers (parquet-rs) truncate string and binary statistics to this many bytes (is_*_value_exact false). */
const PARQUET_TRUNCATE = 64;
const byteLength = (v: IcebergValue): number =>
  typeof v === 'string' ? Buffer.byteLength(v) : v instanceof Uint8Array ? v.length : 0;

const isNaNValue = (v: IcebergValue): boolean => typeof v === 'number' && Number.isNaN(v);

/**
 * Checks `f`'s metrics against `rows`, the rows it holds. `long`: fields that held (live or
 * deleted) a value longer than Parquet writers keep in statistics.
 */
function checkMetrics(t: Table, f: DataFileJson, rows: readonly Row[], what: string, long: ReadonlySet<number>): void {
  const schema = currentSchema(t.metadata);
  const modes = metricsModesById(metricsConfigFromProperties(t.metadata.properties, schema, []), schema);
  expect(Number(f.recordCount), `${what}: record count`).toBe(rows.length);
  for (const leaf of metricLeaves(schema)) {
    const values = rows.map(leaf.get);
    const name = `${what}: field ${leaf.id} (${leaf.type.type})`;
    const vc = f.valueCounts?.[leaf.id];
    if (vc !== undefined) expect(Number(vc), `${name} value count`).toBe(rows.length);
    const nc = f.nullValueCounts?.[leaf.id];
    if (nc !== undefined) expect(Number(nc), `${name} null count`).toBe(values.filter((v) => v === null).length);
    const nan = f.nanValueCounts?.[leaf.id];
    if (nan !== undefined) expect(Number(nan), `${name} NaN count`).toBe(values.filter(isNaNValue).length);
    const present = values.filter((v) => v !== null && !isNaNValue(v));
    const lo = f.lowerBounds?.[leaf.id];
    const hi = f.upperBounds?.[leaf.id];
    const mode = modes.get(leaf.id);
    if (mode && (mode.kind === 'none' || mode.kind === 'counts')) {
      expect(lo, `${name}: no bounds in mode ${mode.kind}`).toBeUndefined();
      expect(hi, `${name}: no bounds in mode ${mode.kind}`).toBeUndefined();
      continue;
    }
    if (present.length === 0) {
      expect(lo, `${name}: a lower bound over no value`).toBeUndefined();
      expect(hi, `${name}: an upper bound over no value`).toBeUndefined();
      continue;
    }
    const cmp = (a: IcebergValue, b: IcebergValue): number => compareValues(leaf.type, a, b);
    const min = present.reduce((a, b) => (cmp(b, a) < 0 ? b : a));
    const max = present.reduce((a, b) => (cmp(b, a) > 0 ? b : a));
    const length = mode?.kind === 'truncate' ? mode.length : undefined;
    const loose = length !== undefined && long.has(leaf.id);
    const show = (v: IcebergValue): string => stringifyJson(exact(v, leaf.type));
    // Floats: Parquet writes a zero minimum as -0.0 and a zero maximum as +0.0 (either zero a row holds).
    const sameNumber = (a: IcebergValue, b: IcebergValue): boolean =>
      typeof a === 'number' && typeof b === 'number' ? a === b : cmp(a, b) === 0;
    // Lower bound: no value under it, and it is the smallest value (truncated as the mode says); upper alike.
    const sides = [
      { b64: lo, extreme: min, within: (v: IcebergValue, b: IcebergValue) => cmp(b, v) <= 0, tightOf: (x: IcebergValue) => (length === undefined ? x : truncateLowerBound(leaf.type, x, length)), what: ['under the lower', 'lower bound', 'smallest'] },
      { b64: hi, extreme: max, within: (v: IcebergValue, b: IcebergValue) => cmp(v, b) <= 0, tightOf: (x: IcebergValue) => (length === undefined ? x : truncateUpperBound(leaf.type, x, length)), what: ['over the upper', 'upper bound', 'largest'] },
    ];
    for (const { b64, extreme, within, tightOf, what } of sides) {
      if (b64 === undefined) continue;
      const bound = fromBytes(leaf.type, new Uint8Array(Buffer.from(b64, 'base64')));
      for (const v of present) {
        const ok = within(v, bound) || (typeof v === 'number' && v === 0 && bound === 0);
        expect(ok, `${name}: value ${show(v)} ${what[0]} bound ${show(bound)}`).toBe(true);
      }
      const tight = tightOf(extreme);
      // Looser only under truncate(N), where the writer truncated its statistics (parquet-rs: 64 bytes) of a value the column held.
      const truncated = loose && byteLength(bound) <= PARQUET_TRUNCATE;
      if (tight !== undefined) expect(sameNumber(bound, tight) || truncated, `${name}: ${what[1]} ${show(bound)}, ${what[2]} value ${show(extreme)}`).toBe(true);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Running a case

/** What the runs went through (printed at the end: a property that never merges proves nothing). */
const stats = { cases: 0, merged: 0, copied: 0, decoded: 0, mergedWithDeletes: 0 };

async function compactAndCheck(
  t: Table, live: readonly ModelRow[], what: string, long: ReadonlySet<number>, options: {
    readonly targetBytes?: number;
    /** Minor mode: equality deletes are not applied; the rows deleted by position (by id) are. */
    readonly minor?: ReadonlySet<bigint>;
  } = {},
): Promise<Table> {
  const schema = currentSchema(t.metadata);
  const expected = live.map((m) => m.text).sort();
  const liveIds = new Set(live.map((m) => m.row.id as bigint));
  const policy = options.targetBytes === undefined ? {} : { targetFileSizeBytes: options.targetBytes };
  const plan = options.minor
    ? await planCompaction(io, t.metadata, { table: { location: t.location }, policy: { ...policy, mode: 'minor', minInputFiles: 1, minFileSizeBytes: 0, maxFileSizeBytes: 2 ** 50 } })
    : await planAll(io, t.metadata, policy);
  // In minor mode the rows equality deletes match are written too.
  const gone = (row: Row): boolean => (options.minor ? options.minor.has(row.id as bigint) : !liveIds.has(row.id as bigint));
  const lineageBefore = t.metadata.formatVersion >= 3 ? await lineage(t) : undefined;
  const results: GroupResult[] = [];
  for (const group of plan.groups) {
    const r = await rewriteGroup(io, t.metadata, plan, group);
    const at = `${what}, group ${group.id}`;
    expect(r.checksums.rowsOut, `${at}: rows out`).toBe(r.checksums.rowsIn);
    expect(r.checksums.hashOut, `${at}: hash out`).toBe(r.checksums.hashIn);
    stats.merged += r.inputPaths?.merged ?? 0;
    stats.copied += r.inputPaths?.copied ?? 0;
    stats.decoded += r.inputPaths?.decoded ?? 0;
    if ((r.inputPaths?.merged ?? 0) > 0 && group.inputs.some((i) => i.deletes.length > 0)) stats.mergedWithDeletes++;
    if ((r.inputPaths?.merged ?? 0) > 0) {
      // Row groups built on two merge workers: the bytes this thread writes.
      const w = await rewriteGroup(io, t.metadata, plan, group, { decodeWorkers: 2 });
      expect(w.checksums, `${at}: on merge workers`).toEqual(r.checksums);
      expect(w.outputs.map((o) => readFileSync(o.filePath)), `${at}: on merge workers`).toEqual(r.outputs.map((o) => readFileSync(o.filePath)));
    }
    const d = await rewriteGroup(io, withProperties(t.metadata, MERGE_OFF), plan, group);
    expect([d.inputPaths?.merged ?? 0, d.inputPaths?.copied ?? 0], `${at}: the merge and copy off`).toEqual([0, 0]);
    expect(d.checksums.rowsOut).toBe(d.checksums.rowsIn);
    const mergedRows: string[] = [];
    for (const o of r.outputs) {
      const rows = await outputRows(o, schema);
      checkMetrics(t, o, rows, `${at}, output ${o.filePath.split('/').pop()}`, long);
      mergedRows.push(...rows.map((x) => rowText(x, schema)));
    }
    const decodedRows: string[] = [];
    for (const o of d.outputs) {
      const rows = await outputRows(o, schema);
      checkMetrics(t, o, rows, `${at}, decoded output ${o.filePath.split('/').pop()}`, long);
      decodedRows.push(...rows.map((x) => rowText(x, schema)));
    }
    expect(mergedRows.sort(), `${at}: the rows the decoder alone writes`).toEqual(decodedRows.sort());
    if (!options.minor) {
      // Major: the group's outputs hold exactly the live rows of its inputs.
      const inputIds = new Set<bigint>();
      for (const i of group.inputs) for (const row of await outputRows(i.file, schema)) inputIds.add(row.id as bigint);
      expect(mergedRows, `${at}: the live rows of its inputs`).toEqual(live.filter((m) => inputIds.has(m.row.id as bigint)).map((m) => m.text).sort());
    }
    expect(String(mergedRows.length), `${at}: rows out`).toBe(r.checksums.rowsOut);
    // Every live input row where the compaction map says (by id), no deleted row in it.
    if (r.compactionMap) await checkMap(io, t.metadata, plan, r, gone);
    results.push(r);
  }
  await commitCompaction(t, plan, results);
  const after = await loadTable(t.location);
  expect(await liveRows(after), `${what}: the live rows after`).toEqual(expected);
  await checkPartitions(after, what);
  if (lineageBefore) expect(await lineage(after), `${what}: row lineage after`).toEqual(lineageBefore);
  return after;
}

async function runCase(c: Case): Promise<void> {
  stats.cases++;
  const { schema, gens, keyIds } = build(c);
  const rnd = seededRandom(c.seed);
  const properties: Record<string, string> = { 'write.parquet.compression-codec': c.codec };
  if (c.rowGroupBytes !== undefined) properties['write.parquet.row-group-size-bytes'] = String(c.rowGroupBytes);
  if (c.pageBytes !== undefined) properties['write.parquet.page-size-bytes'] = String(c.pageBytes);
  if (c.dictBytes !== undefined) properties['write.parquet.dict-size-bytes'] = String(c.dictBytes);
  if (c.pageRows !== undefined) properties['write.parquet.page-row-limit'] = String(c.pageRows);
  if (c.metrics !== undefined) properties['write.metadata.metrics.default'] = c.metrics;
  if (c.copyFloor !== undefined) properties[COPY_MIN_ROW_GROUP_BYTES_PROPERTY] = String(c.copyFloor);
  if (c.mergeFloor !== undefined) properties[MERGE_MIN_ROW_GROUP_BYTES_PROPERTY] = String(c.mergeFloor);
  let t = await createNewTable(io, join(tempDir('packice-prop-'), 't'), {
    formatVersion: c.formatVersion,
    schema,
    partitionFields: c.partitions > 0 ? [{ sourceId: 2, name: 'p', transform: { kind: 'identity' } }] : [],
    properties,
  });
  let nextId = 1;
  let live: ModelRow[] = [];
  const leaves = metricLeaves(schema);
  const long = new Set<number>();
  /** Ids of the rows deleted by position. */
  const byPosition = new Set<bigint>();
  const append = async (a: Append): Promise<void> => {
    const rows: Row[] = [];
    for (let i = 0; i < a.rows; i++, nextId++) {
      const r: Row = {};
      schema.fields.forEach((f, k) => {
        r[f.name] = gens[k](nextId, rnd);
      });
      rows.push(r);
    }
    const settings: Record<string, string> = {};
    if (a.codec !== undefined) settings['write.parquet.compression-codec'] = a.codec;
    if (a.rowGroupBytes !== undefined) settings['write.parquet.row-group-size-bytes'] = String(a.rowGroupBytes);
    if (a.pageBytes !== undefined) settings['write.parquet.page-size-bytes'] = String(a.pageBytes);
    if (a.dictBytes !== undefined) settings['write.parquet.dict-size-bytes'] = String(a.dictBytes);
    // Written under the settings, committed to the table as it is.
    tweak = a.tweak;
    try {
      t = await commitChanges(t, { addedDataFiles: await writeDataFiles(io, withProperties(t.metadata, settings), rows) });
    } finally {
      tweak = undefined;
    }
    expect(t.metadata.properties).toEqual(properties);
    live.push(...rows.map((row) => ({ row, text: rowText(row, schema) })));
    for (const row of rows) for (const leaf of leaves) if (byteLength(leaf.get(row)) > PARQUET_TRUNCATE) long.add(leaf.id);
  };
  const expected = (): string[] => live.map((m) => m.text).sort();

  for (const n of c.appends) await append(n);
  expect(await liveRows(t), 'the rows appended').toEqual(expected());
  await checkPartitions(t, 'the appends');
  if (c.precompact) t = await compactAndCheck(t, live, 'first compaction', long, { targetBytes: c.targetBytes });

  for (const op of c.ops) {
    const r = seededRandom(op.op === 'append' ? op.append.rows : op.seed);
    if (op.op === 'append') {
      await append(op.append);
      continue;
    }
    let gone: (m: ModelRow) => boolean;
    if (op.op === 'pos') {
      const files = await fileIds(t);
      const ids = new Set<bigint>();
      const file = files.length > 0 ? files[Math.floor(r() * files.length)] : [];
      if (op.pattern === 'sparse') for (const m of live) if (r() < 0.1) ids.add(m.row.id as bigint);
      if (op.pattern === 'dense') for (const m of live) if (r() < 0.85) ids.add(m.row.id as bigint);
      if (op.pattern === 'all-of-file') for (const id of file) ids.add(id);
      if ((op.pattern === 'first' || op.pattern === 'first-last') && file.length > 0) ids.add(file[0]);
      if ((op.pattern === 'last' || op.pattern === 'first-last') && file.length > 0) ids.add(file[file.length - 1]);
      t = (await deleteRows(t, (row) => ids.has(row.id as bigint))).table;
      // Only live rows are deleted by position (a row an equality delete matched is not).
      for (const m of live) if (ids.has(m.row.id as bigint)) byPosition.add(m.row.id as bigint);
      gone = (m) => ids.has(m.row.id as bigint);
    } else {
      const fieldIds = [...new Set(op.columns.map((i) => keyIds[i % keyIds.length]))];
      const fields = fieldIds.map((id) => schema.fields.find((f) => f.id === id)!);
      // Keys: some live rows', one with a null where the column may hold one, some matching nothing.
      const keys: Row[] = [];
      const keyOf = (row: Row): Row => {
        const k: Row = {};
        for (const f of fields) k[f.name] = row[f.name] ?? null;
        if (c.partitions > 0) k.p = row.p;
        return k;
      };
      for (let i = 0; i < op.matching && live.length > 0; i++) keys.push(keyOf(live[Math.floor(r() * live.length)].row));
      const optional = fields.filter((f) => !f.required);
      if (op.nullKey && optional.length > 0 && live.length > 0) {
        const k = keyOf(live[Math.floor(r() * live.length)].row);
        k[optional[0].name] = null;
        keys.push(k);
      }
      for (let i = 0; i < op.misses; i++) {
        const k: Row = {};
        for (const f of fields) k[f.name] = gens[schema.fields.indexOf(f)](1_000_000 + i, r);
        if (fields.some((f) => f.name === 'id')) k.id = BigInt(1_000_000 + i);
        if (c.partitions > 0 && !fields.some((f) => f.name === 'p')) k.p = gens[1](i, r);
        keys.push(k);
      }
      if (keys.length === 0) continue;
      // A key on the double partition column p: a table another engine wrote (the spec forbids it).
      t = await deleteByEquality(t, fieldIds, keys, { allowFloatingKeys: true });
      const texts = new Set(keys.map((k) => stringifyJson(exact(k, { type: 'struct', fields: [...fields, ...(c.partitions > 0 && !fieldIds.includes(2) ? [schema.fields[1]] : [])] }))));
      const keyFields = [...fields, ...(c.partitions > 0 && !fieldIds.includes(2) ? [schema.fields[1]] : [])];
      gone = (m) => texts.has(stringifyJson(exact(keyOf(m.row), { type: 'struct', fields: keyFields })));
    }
    live = live.filter((m) => !gone(m));
    expect(await liveRows(t), `the rows after ${JSON.stringify(op)}`).toEqual(expected());
  }
  await compactAndCheck(t, live, c.minor ? 'minor compaction' : 'compaction', long, { targetBytes: c.targetBytes, ...(c.minor ? { minor: byPosition } : {}) });
}

// ---------------------------------------------------------------------------------------------

describe('merge differential property', () => {
  it('compacting random tables with random deletes keeps exactly the live rows, as the decoder alone does, with true metrics', async () => {
    const started = Date.now();
    await fc.assert(fc.asyncProperty(caseArb, async (c) => {
      await runCase(c);
    }), { numRuns: Number(process.env.PROP_RUNS ?? 20), ...(process.env.PROP_SEED ? { seed: Number(process.env.PROP_SEED) } : {}), endOnFailure: process.env.PROP_SHRINK === '0' });
    console.log(`merge differential: ${JSON.stringify(stats)} in ${Date.now() - started} ms`);
  }, 600_000);
});

describe('merge differential: cases the property found', () => {
  it('full metrics: a merged output gives no bound from a statistic its writer truncated (a string over 64 bytes)', async () => {
    // parquet-rs keeps 64 bytes of a string in the statistics (is_max_value_exact false): "😀"×15 then "😁".
    const long = '😀'.repeat(18);
    const schema: StructType = { type: 'struct', fields: [{ id: 1, name: 's', required: false, type: { type: 'string' } }] };
    let t = await createNewTable(io, join(tempDir('packice-prop-'), 't'), { schema, properties: { 'write.metadata.metrics.default': 'full' } });
    for (let i = 0; i < 2; i++) t = await commitChanges(t, { addedDataFiles: await writeDataFiles(io, t.metadata, [{ s: long }, { s: 'a' }]) });
    const plan = await planAll(io, t.metadata);
    const r = await rewriteGroup(io, t.metadata, plan, plan.groups[0]);
    expect(r.inputPaths).toEqual({ copied: 0, merged: 2, decoded: 0 });
    const [out] = r.outputs;
    // Full bounds are values of the column (Spark answers max(s) from them): the exact value, or none.
    const upper = out.upperBounds?.['1'];
    if (upper !== undefined) expect(Buffer.from(upper, 'base64').toString()).toBe(long);
    const lower = out.lowerBounds?.['1'];
    expect(lower === undefined ? undefined : Buffer.from(lower, 'base64').toString()).toBe('a');
    checkMetrics(t, out, await outputRows(out, schema), 'merged output', new Set());
  });

  it('full metrics, shrunk from the property: one long string, one file', async () => {
    await runCase({
      formatVersion: 2, partitions: 0, columns: [{ kind: 'string', precision: 4, required: false, nullRate: 0, lowCardinality: false }],
      appends: [{ rows: 1 }], codec: 'zstd', metrics: 'full', precompact: false, ops: [], seed: 1120969573,
    });
  });
});

describe('merge differential: an identity partition on a double holding -0.0 and 0.0 (found by the property)', () => {
  it('keeps the two partitions apart on append, in the plan (through JSON, as messages travel) and in the merged outputs', async () => {
    const schema: StructType = {
      type: 'struct',
      fields: [{ id: 1, name: 'id', required: true, type: { type: 'long' } }, { id: 2, name: 'p', required: true, type: { type: 'double' } }],
    };
    let t = await createNewTable(io, join(tempDir('packice-prop-'), 't'), { schema, partitionFields: [{ sourceId: 2, name: 'p', transform: { kind: 'identity' } }] });
    for (let k = 0; k < 2; k++) {
      const rows = [0, -0, -0, 0].map((p, i) => ({ id: BigInt(k * 10 + i), p }));
      t = await commitChanges(t, { addedDataFiles: await writeDataFiles(io, t.metadata, rows) });
    }
    // Java's Double.equals tells -0.0 from 0.0: two partitions, each file holding one.
    await checkPartitions(t, 'the appends');
    expect((await planFiles(io, t.metadata)).tasks).toHaveLength(4);
    const before = await liveRows(t);
    const plan = JSON.parse(JSON.stringify(await planAll(io, t.metadata))) as Awaited<ReturnType<typeof planAll>>;
    expect(plan.groups).toHaveLength(2);
    const results: GroupResult[] = [];
    for (const g of plan.groups) {
      const r = await rewriteGroup(io, t.metadata, plan, g);
      expect(r.inputPaths).toEqual({ copied: 0, merged: 2, decoded: 0 });
      results.push(JSON.parse(JSON.stringify(r)) as GroupResult);
    }
    await commitCompaction(t, plan, results);
    const after = await loadTable(t.location);
    await checkPartitions(after, 'after the compaction');
    expect(await liveRows(after)).toEqual(before);
    expect((await planFiles(io, after.metadata)).tasks).toHaveLength(2);
  });

  it('plans, rewrites and commits NaN and infinite partitions of a double (their names travel in the messages)', async () => {
    const schema: StructType = {
      type: 'struct',
      fields: [{ id: 1, name: 'id', required: true, type: { type: 'long' } }, { id: 2, name: 'p', required: false, type: { type: 'double' } }],
    };
    let t = await createNewTable(io, join(tempDir('packice-prop-'), 't'), { schema, partitionFields: [{ sourceId: 2, name: 'p', transform: { kind: 'identity' } }] });
    const values = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1.5, null];
    for (let k = 0; k < 2; k++) {
      const rows = values.map((p, i) => ({ id: BigInt(k * 10 + i), p }));
      t = await commitChanges(t, { addedDataFiles: await writeDataFiles(io, t.metadata, rows) });
    }
    await checkPartitions(t, 'the appends');
    const before = await liveRows(t);
    const plan = JSON.parse(JSON.stringify(await planAll(io, t.metadata))) as Awaited<ReturnType<typeof planAll>>;
    expect(plan.groups).toHaveLength(values.length);
    const results: GroupResult[] = [];
    for (const g of plan.groups) results.push(JSON.parse(JSON.stringify(await rewriteGroup(io, t.metadata, plan, g))) as GroupResult);
    await commitCompaction(t, plan, results);
    const after = await loadTable(t.location);
    await checkPartitions(after, 'after the compaction');
    expect(await liveRows(after)).toEqual(before);
    expect((await planFiles(io, after.metadata)).tasks).toHaveLength(values.length);
  });
});
