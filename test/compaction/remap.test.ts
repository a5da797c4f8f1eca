import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CompactionMapBuilder } from '../../lib/compaction/compaction-map.js';
import {
  ascendingDistinct,
  chooseStrategy,
  CompactionMapIndex,
  mergeWithDeletionVector,
  translateThroughMaps,
  type RemapStrategy,
  type Translation,
} from '../../lib/compaction/remap.js';
import { ValidationError } from '../../lib/errors.js';
import { PositionDeleteIndex } from '../../lib/iceberg/deletion-vector.js';
import { buildGroup, groupArb, type RowModel } from '../support/map-groups.js';

/** The model's answer for positions of one file, grouped per file and ascending. */
function modelTranslation(models: readonly { model: RowModel; covers: (f: string) => boolean }[], file: string, positions: readonly number[]): Translation {
  let current = [...new Set(positions)].map((pos) => ({ file, pos }));
  let dropped = 0;
  for (const { model, covers } of models) {
    const next: { file: string; pos: number }[] = [];
    for (const p of current) {
      if (!covers(p.file)) {
        next.push(p);
        continue;
      }
      const to = model.get(`${p.file}#${p.pos}`);
      if (to) next.push({ file: to.targetFile, pos: to.pos });
      else dropped++;
    }
    current = next;
  }
  const byFile = new Map<string, number[]>();
  for (const p of current) {
    let list = byFile.get(p.file);
    if (!list) byFile.set(p.file, (list = []));
    list.push(p.pos);
  }
  return { byFile: new Map([...byFile].map(([f, ps]) => [f, Float64Array.from(ps).sort()])), dropped };
}

function plain(t: Translation | undefined): { byFile: Record<string, number[]>; dropped: number } | undefined {
  if (!t) return undefined;
  const byFile: Record<string, number[]> = {};
  for (const [f, ps] of t.byFile) byFile[f] = [...ps];
  return { byFile, dropped: t.dropped };
}

/** Positions to delete: any rows of the file (surviving or not), past its end too, in any order, repeated. */
const positionsArb = fc.array(fc.integer({ min: 0, max: 45 }), { maxLength: 60 });

describe('translating positions through one map (property, against a naive per-row model)', () => {
  it('sends each position where its row went and drops rows the rewrite removed, by either strategy', () => {
    fc.assert(
      fc.property(groupArb, fc.array(positionsArb, { minLength: 5, maxLength: 5 }), (group, deletes) => {
        const { map, model, sources } = buildGroup(group, (i) => `s3://b/t/data/in-${i}.parquet`, (p, f) => `s3://b/t/data/out-p${p}-${f}.parquet`);
        const index = CompactionMapIndex.of(map);
        const covers = (f: string): boolean => sources.includes(f);
        sources.forEach((source, i) => {
          expect(index.covers(source)).toBe(true);
          const expected = plain(modelTranslation([{ model, covers }], source, deletes[i]));
          for (const strategy of ['lookup', 'merge', undefined] as (RemapStrategy | undefined)[]) {
            // The same file under another spelling of its path.
            expect(plain(index.translate(source.replace('s3://', 's3a://'), deletes[i], strategy))).toEqual(expected);
          }
        });
        expect(index.translate('s3://b/t/data/other.parquet', [0])).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });

  it('covers an input none of whose rows survived: all its positions drop', () => {
    const b = new CompactionMapBuilder('g', ['/t/a', '/t/b']);
    b.addRun('/t/b', 0, '/t/x', 0, 3);
    const index = CompactionMapIndex.of(b.build());
    expect(index.covers('/t/a')).toBe(true);
    expect(index.runCount('/t/a')).toBe(0);
    expect(plain(index.translate('/t/a', [0, 1, 7]))).toEqual({ byFile: {}, dropped: 3 });
    expect(plain(index.translate('file:///t/b', [2, 0, 2, 3]))).toEqual({ byFile: { '/t/x': [0, 2] }, dropped: 1 });
  });

  it('refuses a negative or fractional position', () => {
    expect(() => ascendingDistinct([1, -1])).toThrow(ValidationError);
    expect(() => ascendingDistinct([0.5])).toThrow(/integer >= 0, found 0.5/);
  });
});

describe('choosing the strategy by size', () => {
  it('searches for few positions among many runs and merges many positions through few runs', () => {
    expect(chooseStrategy(10, 10_000)).toBe('lookup');
    expect(chooseStrategy(1_000_000, 10)).toBe('merge');
    expect(chooseStrategy(1_000_000, 10_000)).toBe('merge');
    expect(chooseStrategy(1000, 1_000_000)).toBe('lookup');
    expect(chooseStrategy(5, 1)).toBe('merge');
  });
});

describe('translating through a chain of maps (property)', () => {
  it('equals translating through each map in turn with the per-row model; untouched files pass through', () => {
    fc.assert(
      fc.property(groupArb, groupArb, fc.array(positionsArb, { minLength: 5, maxLength: 5 }), (g1, g2, deletes) => {
        const first = buildGroup(g1, (i) => `/t/in-${i}`, (p, f) => `/t/mid-p${p}-${f}`);
        // The second compaction rewrites files named like the first's outputs (those that exist are
        // rewritten; a first output it does not name passes through) and an untouched file /t/in-0.
        const second = buildGroup(g2, (i) => `/t/mid-p${i % 3}-${Math.floor(i / 3)}`, (p, f) => `/t/out-p${p}-${f}`);
        const levels = [
          { model: first.model, covers: (f: string) => first.sources.includes(f) },
          { model: second.model, covers: (f: string) => second.sources.includes(f) },
        ];
        first.sources.forEach((source, i) => {
          const expected = plain(modelTranslation(levels, source, deletes[i]));
          expect(plain(translateThroughMaps([first.map, second.map], source, deletes[i]))).toEqual(expected);
        });
        // No map covers the file: its positions stay, sorted and distinct.
        expect(plain(translateThroughMaps([first.map, second.map], '/t/elsewhere', [3, 1, 3]))).toEqual({
          byFile: { '/t/elsewhere': [1, 3] },
          dropped: 0,
        });
      }),
      { numRuns: 200 },
    );
  });
});

describe('merging with the deletion vector an output already has (property)', () => {
  it('is the union; `added` counts only new positions; the existing vector is unchanged', () => {
    fc.assert(
      fc.property(
        fc.option(fc.uniqueArray(fc.integer({ min: 0, max: 2 ** 33 }), { maxLength: 30 }), { nil: undefined }),
        fc.uniqueArray(fc.integer({ min: 0, max: 2 ** 33 }), { maxLength: 30 }),
        (existing, positions) => {
          const before = existing ? new PositionDeleteIndex(existing) : undefined;
          const sorted = ascendingDistinct(positions);
          const { index, added } = mergeWithDeletionVector(before, sorted);
          const union = new Set([...(existing ?? []), ...positions]);
          expect([...index.positions()]).toEqual([...union].sort((a, b) => a - b));
          expect(added).toBe(union.size - (existing?.length ?? 0));
          if (before) expect([...before.positions()]).toEqual([...existing!].sort((a, b) => a - b));
        },
      ),
      { numRuns: 100 },
    );
  });
});
