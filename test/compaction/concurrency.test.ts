/**
 * Writers keep committing while a compaction runs, on a real S3-compatible server (moto):
 * equality deletes committed meanwhile still apply after the rewrite commits (sequence
 * numbers); a position delete or deletion vector committed meanwhile is rebased onto the
 * rewritten files in the same snapshot, and never lost.
 */
import { describe, expect, it } from 'vitest';
import { loadTable } from '../../lib/catalog/table.js';
import { fileIOFor } from '../../lib/io/index.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import type { Row } from '../../lib/iceberg/values.js';
import { commitStep, planStep, rewriteStep } from '../../lib/pipeline/steps.js';
import { appendRows, createNewTable, deleteByEquality, deleteRows } from '../../lib/table/operations.js';
import { scanRows } from '../../lib/table/scan.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';

const SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'category', required: true, type: { type: 'string' as const } },
  ],
};

async function s3Table(formatVersion: 2 | 3): Promise<{ location: string; s3Endpoint: string }> {
  const s3Endpoint = testS3Endpoint();
  const location = `s3://${await freshBucket()}/warehouse/events`;
  const io = fileIOFor(location, { s3Endpoint });
  let t = await createNewTable(io, location, {
    formatVersion,
    schema: SCHEMA,
    partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
  });
  for (let c = 0; c < 4; c++) {
    const rows: Row[] = [];
    for (let i = 0; i < 6; i++) rows.push({ id: BigInt(c * 6 + i), category: i % 2 === 0 ? 'a' : 'b' });
    t = await appendRows(t, rows);
  }
  return { location, s3Endpoint };
}

async function ids(location: string, s3Endpoint: string): Promise<number[]> {
  const t = await loadTable(location, { s3Endpoint });
  const out: number[] = [];
  for await (const r of scanRows(t.io, t.metadata)) out.push(Number(r.id));
  return out.sort((a, b) => a - b);
}

const POLICY = { minInputFiles: 2 };
const ALL = Array.from({ length: 24 }, (_, i) => i);

describe('compaction meets concurrent writers on S3', () => {
  it('an equality delete committed while the rewrite runs still applies after the commit', async () => {
    const { location, s3Endpoint } = await s3Table(2);
    const plan = await planStep({ table: { location, s3Endpoint }, policy: POLICY });
    expect(plan.groups.length).toBe(2);
    const results = await Promise.all(plan.groups.map((g) => rewriteStep({ plan, groupId: g.id })));

    // A writer deletes ids 4 (category a) and 7 (category b) by equality while the rewrite runs.
    await deleteByEquality(await loadTable(location, { s3Endpoint }), [1], [
      { id: 4n, category: 'a' },
      { id: 7n, category: 'b' },
    ]);
    const commit = await commitStep({ plan, results });
    expect(commit.abortedGroups).toEqual([]);
    expect([...commit.committedGroups].sort()).toEqual(plan.groups.map((g) => g.id).sort());
    expect(commit.attempts).toBeGreaterThanOrEqual(1);

    // The rewritten files carry the starting sequence number, below the delete's: still deleted.
    expect(await ids(location, s3Endpoint)).toEqual(ALL.filter((i) => i !== 4 && i !== 7));
    const t = await loadTable(location, { s3Endpoint });
    const p = await planFiles(t.io, t.metadata);
    expect(p.tasks.length).toBe(2);
    for (const task of p.tasks) {
      expect(task.dataSequenceNumber).toBe(BigInt(plan.startingSequenceNumber));
      expect(task.deletes.equalityDeletes.length).toBe(1);
    }
    expect(t.metadata.snapshots.at(-1)!.summary.operation).toBe('replace');
  });

  it('a position delete committed meanwhile is rebased onto the rewritten files; every group commits', async () => {
    const { location, s3Endpoint } = await s3Table(2);
    const plan = await planStep({ table: { location, s3Endpoint }, policy: POLICY });
    const results = await Promise.all(plan.groups.map((g) => rewriteStep({ plan, groupId: g.id })));
    await deleteRows(await loadTable(location, { s3Endpoint }), (r) => r.id === 9n); // category b
    const commit = await commitStep({ plan, results });
    expect(commit.abortedGroups).toEqual([]);
    expect([...commit.committedGroups].sort()).toEqual(plan.groups.map((g) => g.id).sort());
    expect(commit.deletesRebased).toBe(1);
    expect(await ids(location, s3Endpoint)).toEqual(ALL.filter((i) => i !== 9));
  });

  it('v3: a deletion vector committed meanwhile is rebased onto the rewritten file; the row stays deleted', async () => {
    const { location, s3Endpoint } = await s3Table(3);
    const plan = await planStep({ table: { location, s3Endpoint }, policy: POLICY });
    const results = await Promise.all(plan.groups.map((g) => rewriteStep({ plan, groupId: g.id })));
    await deleteRows(await loadTable(location, { s3Endpoint }), (r) => r.id === 2n); // category a
    const commit = await commitStep({ plan, results });
    expect(commit.abortedGroups).toEqual([]);
    expect(commit.committedGroups.length).toBe(2);
    expect(commit.deletesRebased).toBe(1);
    expect(await ids(location, s3Endpoint)).toEqual(ALL.filter((i) => i !== 2));
    const t = await loadTable(location, { s3Endpoint });
    const p = await planFiles(t.io, t.metadata);
    expect(p.tasks.length).toBe(2);
    expect(p.deleteFiles.length).toBe(1);
    expect(p.tasks.filter((task) => task.deletes.deletionVector !== undefined).length).toBe(1);
  });
});
