/**
 * `--where` on source columns selects the data files Java Iceberg 1.12 selects for the same
 * filter (`table.newScan().filter(expr).planFiles()`: the inclusive projection onto the
 * partitions, ManifestEvaluator and InclusiveMetricsEvaluator), on a table partitioned by
 * hour(ts), bucket[4](id) and truncate[10](n), with files whose bounds differ within a partition.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Table } from '../../lib/catalog/table.js';
import { parsePartitionFilter } from '../../lib/compaction/partition-filter.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { literalValue, parseExpression, type UnboundExpression } from '../../lib/iceberg/expression.js';
import { toJsonValue } from '../../lib/iceberg/json-single-value.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { currentSchema } from '../../lib/iceberg/table-metadata.js';
import type { PrimitiveType, StructType } from '../../lib/iceberg/types.js';
import type { Row } from '../../lib/iceberg/values.js';
import { appendRows, createNewTable } from '../../lib/table/operations.js';
import { EVENTS_SCHEMA, MINUTE, T3 } from '../support/events.js';
import { tempDir } from '../support/fixtures.js';
import { ensureJavaHarness, javaPlanFiles } from '../support/java.js';

const io = new LocalFileIO();

/** Our filter text as Iceberg's ExpressionParser JSON, literals in the column's JSON single-value form. */
function icebergJson(e: UnboundExpression, schema: StructType): unknown {
  const typeOf = (name: string): PrimitiveType => schema.fields.find((f) => f.name === name)!.type as PrimitiveType;
  const value = (name: string, l: Parameters<typeof literalValue>[2]): unknown =>
    toJsonValue(typeOf(name), literalValue(name, typeOf(name), l, (m) => {
      throw new Error(m);
    }));
  const ops = { '=': 'eq', '!=': 'not-eq', '<': 'lt', '<=': 'lt-eq', '>': 'gt', '>=': 'gt-eq' } as const;
  switch (e.type) {
    case 'and':
    case 'or':
      return { type: e.type, left: icebergJson(e.left, schema), right: icebergJson(e.right, schema) };
    case 'not':
      return { type: 'not', child: icebergJson(e.inner, schema) };
    case 'null':
      return { type: e.negated ? 'not-null' : 'is-null', term: e.term };
    case 'cmp':
      return { type: ops[e.op], term: e.term, value: value(e.term, e.literal) };
    case 'in':
      return { type: e.negated ? 'not-in' : 'in', term: e.term, values: e.literals.map((l) => value(e.term, l)) };
  }
}

describe('--where selects the files Java selects', () => {
  let t: Table;
  beforeAll(async () => {
    await ensureJavaHarness();
    t = await createNewTable(io, join(tempDir(), 't'), {
      schema: EVENTS_SCHEMA,
      partitionFields: [
        { sourceId: 3, name: 'ts_hour', transform: { kind: 'hour' } },
        { sourceId: 1, name: 'id_bucket', transform: { kind: 'bucket', numBuckets: 4 } },
        { sourceId: 4, name: 'n_trunc', transform: { kind: 'truncate', width: 10 } },
      ],
    });
    // Nine appends over three hours; ids, n and actions spread so files differ in bounds and nulls.
    let id = 0n;
    for (let h = 0; h < 3; h++) {
      for (const band of [0, 20, 40]) {
        const rows: Row[] = Array.from({ length: 8 }, (_, i) => {
          const k = Number(id);
          return {
            id: id++,
            action: k % 7 === 0 ? null : k % 3 === 0 ? 'view' : 'click',
            ts: T3 + BigInt(h) * 60n * MINUTE + BigInt(band + i) * MINUTE,
            n: k % 11 === 0 ? null : (k * 7) % 40,
          };
        });
        t = await appendRows(t, rows);
      }
    }
  }, 120_000);

  const filters = [
    "ts >= '2026-01-01T04:15:00Z'",
    "ts < '2026-01-01T04:00:00Z'",
    "ts <= '2026-01-01T04:00:00Z'",
    "ts > '2026-01-01T05:46:00Z'",
    "ts = '2026-01-01T04:22:00Z'",
    "ts in ('2026-01-01T03:02:00Z', '2026-01-01T05:44:00Z')",
    "ts != '2026-01-01T04:22:00Z'",
    "ts >= '2026-01-01T04:15:00Z' and ts < '2026-01-01T05:25:00Z'",
    'id = 7',
    'id in (1, 2, 3, 50)',
    'id > 60',
    'id not in (5)',
    'n >= 15 and n < 27',
    'n = 33',
    'n is null',
    'n is not null',
    "action = 'view'",
    'action is null',
    "action is not null and action < 'd'",
    "not (ts < '2026-01-01T04:30:00Z') and id < 40",
    "not (ts >= '2026-01-01T04:00:00Z' or n < 20)",
    "ts >= '2026-01-01T05:00:00Z' and (n < 5 or id = 3)",
  ];

  /** Files selected out of all, per filter: most filters must select some files but not all. */
  const selected: [number, number][] = [];
  it.each(filters)('%s', async (where) => {
    const filter = parsePartitionFilter(where, t.metadata);
    const scan = await planFiles(io, t.metadata, undefined, { columnStats: true, mayMatchManifest: filter.mayMatchManifest });
    const ours = scan.tasks.filter((x) => filter.mayMatch(x.dataFile)).map((x) => x.dataFile.filePath).sort();
    const java = [...new Set(await javaPlanFiles(t.location, icebergJson(parseExpression(where).root, currentSchema(t.metadata))))].sort();
    expect(ours).toEqual(java);
    selected.push([ours.length, (await planFiles(io, t.metadata)).tasks.length]);
  });

  it('the filters tell files apart', () => {
    expect(selected).toHaveLength(filters.length);
    expect(selected.filter(([n, all]) => n > 0 && n < all).length).toBeGreaterThanOrEqual(filters.length - 4);
  });
});
