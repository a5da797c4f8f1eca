/**
 * Random bin-pack groups for compaction map properties: inputs with random deletes and a
 * random output partition per row, written batch by batch into per-partition outputs that roll
 * after a random number of rows, as the rewriter writes them (GroupWriter.write groups a
 * batch's rows by partition). The model says where each surviving row went.
 */
import fc from 'fast-check';
import { CompactionMapBuilder, type CompactionMap } from '../../lib/compaction/compaction-map.js';

export const groupArb = fc.record({
  inputs: fc.array(
    fc.array(fc.record({ deleted: fc.boolean(), partition: fc.integer({ min: 0, max: 2 }) }), { maxLength: 40 }),
    { minLength: 1, maxLength: 5 },
  ),
  rollAfter: fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 3, maxLength: 3 }),
  batchSize: fc.integer({ min: 1, max: 16 }),
});
export type RandomGroup = typeof groupArb extends fc.Arbitrary<infer T> ? T : never;

/** `${source}#${pos}` → where that row went, for every surviving row. */
export type RowModel = Map<string, { targetFile: string; pos: number }>;

export function buildGroup(
  { inputs, rollAfter, batchSize }: RandomGroup,
  sourceName: (input: number) => string,
  targetName: (partition: number, file: number) => string,
): { map: CompactionMap; model: RowModel; sources: string[] } {
  const sources = inputs.map((_, i) => sourceName(i));
  const builder = new CompactionMapBuilder('g', sources);
  const model: RowModel = new Map();
  const outputs = [0, 1, 2].map(() => ({ file: 0, pos: 0 }));
  inputs.forEach((rows, i) => {
    for (let start = 0; start < rows.length; start += batchSize) {
      for (const p of [0, 1, 2]) {
        for (let pos = start; pos < Math.min(rows.length, start + batchSize); pos++) {
          const r = rows[pos];
          if (r.deleted || r.partition !== p) continue;
          const o = outputs[p];
          const target = { targetFile: targetName(p, o.file), pos: o.pos };
          model.set(`${sources[i]}#${pos}`, target);
          builder.add(sources[i], pos, target.targetFile, target.pos);
          if (++o.pos === rollAfter[p]) {
            o.file++;
            o.pos = 0;
          }
        }
      }
    }
  });
  return { map: builder.build(), model, sources };
}
