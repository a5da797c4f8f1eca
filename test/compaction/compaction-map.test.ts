import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  COMPACTION_MAP_AVRO_SCHEMA,
  CompactionMapBuilder,
  compactionMapPath,
  encodeCompactionMap,
  readCompactionMap,
  remapPosition,
  writeCompactionMap,
  type CompactionMap,
} from '../../lib/compaction/compaction-map.js';
import { InvalidFileError, UnsupportedError } from '../../lib/errors.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { newTableMetadata } from '../../lib/table/operations.js';
import { tempDir } from '../support/fixtures.js';
import { editAvroFile, readAvroFile } from '../support/table-files.js';

const io = new LocalFileIO();

describe('CompactionMapBuilder', () => {
  it('makes maximal runs; a deleted row, another target or a roll ends a run', () => {
    const b = new CompactionMapBuilder('g1');
    // A: rows 0-2 → X 0-2, row 3 deleted, rows 4-5 → X 3-4, row 6 → Y 0 (other partition), row 7 → X 5.
    for (const [s, t] of [[0, 0], [1, 1], [2, 2], [4, 3], [5, 4]]) b.add('A', s, 'X', t);
    b.add('A', 6, 'Y', 0);
    b.add('A', 7, 'X', 5);
    // B: rows 0-1 → X 6-7, then X rolls: row 2 → Z 0.
    b.addRun('B', 0, 'X', 6, 2);
    b.add('B', 2, 'Z', 0);
    expect(b.rowCount).toBe(10);
    expect(b.build()).toEqual({
      groupId: 'g1',
      entries: [
        {
          sourceFile: 'A',
          targetFile: 'X',
          runs: [
            { sourcePosition: 0, targetPosition: 0, length: 3 },
            { sourcePosition: 4, targetPosition: 3, length: 2 },
            { sourcePosition: 7, targetPosition: 5, length: 1 },
          ],
        },
        { sourceFile: 'A', targetFile: 'Y', runs: [{ sourcePosition: 6, targetPosition: 0, length: 1 }] },
        { sourceFile: 'B', targetFile: 'X', runs: [{ sourcePosition: 0, targetPosition: 6, length: 2 }] },
        { sourceFile: 'B', targetFile: 'Z', runs: [{ sourcePosition: 2, targetPosition: 0, length: 1 }] },
      ],
    });
  });
});

const EXAMPLE: CompactionMap = {
  groupId: 'g-7',
  entries: [
    {
      sourceFile: 's3://bucket/t/data/a.parquet',
      targetFile: 's3://bucket/t/data/x.parquet',
      runs: [
        { sourcePosition: 0, targetPosition: 0, length: 3 },
        { sourcePosition: 5, targetPosition: 3, length: 2 },
      ],
    },
    {
      sourceFile: 's3://bucket/t/data/a.parquet',
      targetFile: 's3://bucket/t/data/y.parquet',
      runs: [{ sourcePosition: 3, targetPosition: 0, length: 1 }],
    },
    {
      sourceFile: 's3://bucket/t/data/b.parquet',
      targetFile: 's3://bucket/t/data/x.parquet',
      runs: [{ sourcePosition: 2 ** 40, targetPosition: 5, length: 10 }],
    },
  ],
};

describe('remapPosition', () => {
  it('finds the run holding a position by binary search', () => {
    const a = 's3://bucket/t/data/a.parquet';
    expect(remapPosition(EXAMPLE, a, 0)).toEqual({ targetFile: 's3://bucket/t/data/x.parquet', pos: 0 });
    expect(remapPosition(EXAMPLE, a, 2n)).toEqual({ targetFile: 's3://bucket/t/data/x.parquet', pos: 2 });
    expect(remapPosition(EXAMPLE, a, 3)).toEqual({ targetFile: 's3://bucket/t/data/y.parquet', pos: 0 });
    expect(remapPosition(EXAMPLE, a, 4)).toBeUndefined(); // deleted before the rewrite
    expect(remapPosition(EXAMPLE, a, 6)).toEqual({ targetFile: 's3://bucket/t/data/x.parquet', pos: 4 });
    expect(remapPosition(EXAMPLE, a, 7)).toBeUndefined();
    expect(remapPosition(EXAMPLE, 's3a://bucket/t/data/b.parquet', 2n ** 40n + 9n)).toEqual({
      targetFile: 's3://bucket/t/data/x.parquet',
      pos: 14,
    });
    expect(remapPosition(EXAMPLE, 's3://bucket/t/data/b.parquet', 2 ** 40 + 10)).toBeUndefined();
    expect(remapPosition(EXAMPLE, 's3://bucket/t/data/c.parquet', 0)).toBeUndefined();
  });
});

describe('compaction map files', () => {
  it('round-trip with Iceberg field ids on every field and the packice header keys', async () => {
    const path = join(tempDir(), 'map.avro');
    const bytes = await writeCompactionMap(io, path, EXAMPLE);
    expect(bytes).toBe(readFileSync(path).length);
    expect(await readCompactionMap(io, path)).toEqual(EXAMPLE);

    const raw = await readAvroFile(path);
    expect(raw.meta.get('packice.compaction-map.version')).toBe('1');
    expect(raw.meta.get('packice.group-id')).toBe('g-7');
    expect(raw.schema).toEqual({
      type: 'record',
      name: 'compaction_map',
      fields: [
        { name: 'source_file', type: 'string', 'field-id': 1 },
        { name: 'target_file', type: 'string', 'field-id': 2 },
        {
          name: 'runs',
          type: {
            type: 'array',
            items: {
              type: 'record',
              name: 'r7',
              fields: [
                { name: 'source_position', type: 'long', 'field-id': 4 },
                { name: 'target_position', type: 'long', 'field-id': 5 },
                { name: 'length', type: 'long', 'field-id': 6 },
              ],
            },
            'element-id': 7,
          },
          'field-id': 3,
        },
      ],
    });
    expect(COMPACTION_MAP_AVRO_SCHEMA).toEqual(raw.schema);
    expect(raw.records.length).toBe(3);
  });

  it('live under the metadata folder, named after the starting snapshot and the group', () => {
    const m = newTableMetadata('s3://bucket/t', { schema: { type: 'struct', fields: [] } });
    expect(compactionMapPath(m, '123', 'p/1')).toMatch(
      /^s3:\/\/bucket\/t\/metadata\/compaction-maps\/123-p_1-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.avro$/,
    );
  });

  it('are refused when of another version, overlapping or not a map, naming the file', async () => {
    const dir = tempDir();
    const v2 = join(dir, 'v2.avro');
    writeFileSync(v2, encodeCompactionMap(EXAMPLE));
    const text = readFileSync(v2);
    // Same length, so the header stays valid: version "1" → "2".
    const at = text.indexOf(Buffer.from('packice.compaction-map.version'));
    const value = text.indexOf(Buffer.from('1'), at + 'packice.compaction-map.version'.length);
    text[value] = '2'.charCodeAt(0);
    writeFileSync(v2, text);
    await expect(readCompactionMap(io, v2)).rejects.toThrow(UnsupportedError);
    await expect(readCompactionMap(io, v2)).rejects.toThrow(/v2\.avro: compaction map version 2 is not supported/);

    const overlap = join(dir, 'overlap.avro');
    await writeCompactionMap(io, overlap, EXAMPLE);
    await editAvroFile(overlap, (records) => {
      (records[1] as { runs: { source_position: bigint }[] }).runs[0].source_position = 2n;
    });
    await expect(readCompactionMap(io, overlap)).rejects.toThrow(InvalidFileError);
    await expect(readCompactionMap(io, overlap)).rejects.toThrow(/overlap\.avro: .*runs overlap at source position 2/);

    const notMap = join(dir, 'other.avro');
    writeFileSync(notMap, encodeCompactionMap(EXAMPLE).subarray(0, 3));
    await expect(readCompactionMap(io, notMap)).rejects.toThrow(/other\.avro/);
  });
});

/**
 * A random group: inputs with random deletes and a random output partition per row, written
 * into per-partition outputs that roll after a random number of rows, batch by batch as the
 * rewriter does. The model remembers where each row went.
 */
const groupArb = fc.record({
  inputs: fc.array(
    fc.array(fc.record({ deleted: fc.boolean(), partition: fc.integer({ min: 0, max: 2 }) }), { maxLength: 40 }),
    { minLength: 1, maxLength: 6 },
  ),
  rollAfter: fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 3, maxLength: 3 }),
  batchSize: fc.integer({ min: 1, max: 16 }),
});

describe('remapping against a naive model (property)', () => {
  it('maps every surviving row to where it went and every deleted row to nothing', async () => {
    const dir = tempDir();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(groupArb, async ({ inputs, rollAfter, batchSize }) => {
        const builder = new CompactionMapBuilder('g');
        const model = new Map<string, { targetFile: string; pos: number }>();
        const outputs = [0, 1, 2].map((p) => ({ file: 0, pos: 0, name: (f: number) => `out-p${p}-f${f}` }));
        inputs.forEach((rows, i) => {
          const source = `/t/data/in-${i}.parquet`;
          for (let start = 0; start < rows.length; start += batchSize) {
            // One batch, rows grouped by partition in order (as GroupWriter.write does).
            for (const p of [0, 1, 2]) {
              for (let pos = start; pos < Math.min(rows.length, start + batchSize); pos++) {
                const r = rows[pos];
                if (r.deleted || r.partition !== p) continue;
                const o = outputs[p];
                const target = { targetFile: o.name(o.file), pos: o.pos };
                model.set(`${source}#${pos}`, target);
                builder.add(source, pos, target.targetFile, target.pos);
                if (++o.pos === rollAfter[p]) {
                  o.file++;
                  o.pos = 0;
                }
              }
            }
          }
        });
        const built = builder.build();
        const path = join(dir, `map-${run++}.avro`);
        await writeCompactionMap(io, path, built);
        const read = await readCompactionMap(io, path);
        expect(read).toEqual(built);
        for (const map of [built, read]) {
          inputs.forEach((rows, i) => {
            const source = `/t/data/in-${i}.parquet`;
            for (let pos = 0; pos <= rows.length; pos++) {
              // The same file under another spelling of its path.
              expect(remapPosition(map, `file://${source}`, pos)).toEqual(model.get(`${source}#${pos}`));
            }
          });
        }
        // Runs are maximal: no run of a record continues the previous one in both files.
        for (const e of built.entries) {
          for (let k = 1; k < e.runs.length; k++) {
            const a = e.runs[k - 1];
            const b = e.runs[k];
            expect(a.sourcePosition + a.length === b.sourcePosition && a.targetPosition + a.length === b.targetPosition).toBe(false);
          }
        }
        expect(built.entries.reduce((n, e) => n + e.runs.reduce((m, r) => m + r.length, 0), 0)).toBe(model.size);
      }),
      { numRuns: 150 },
    );
  });
});
