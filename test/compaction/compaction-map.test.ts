import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  COMPACTION_MAP_AVRO_SCHEMA,
  COMPACTION_MAP_V2_AVRO_SCHEMA,
  CompactionMapBuilder,
  compactionMapPath,
  encodeCompactionMap,
  readCompactionMap,
  writeCompactionMap,
  type CompactionMap,
  type CompactionMapEntry,
} from '../../lib/compaction/compaction-map.js';
import { remapPosition } from '../../lib/compaction/remap.js';
import { InvalidFileError, UnsupportedError } from '../../lib/errors.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { newTableMetadata } from '../../lib/table/operations.js';
import { tempDir } from '../support/fixtures.js';
import { buildGroup, groupArb } from '../support/map-groups.js';
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
      sources: ['A', 'B'],
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
  // c.parquet: every row was deleted before the rewrite.
  sources: ['s3://bucket/t/data/a.parquet', 's3://bucket/t/data/c.parquet', 's3://bucket/t/data/b.parquet'],
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
  it('round-trip as version 2: one record per source, even one with no surviving row; target paths once', async () => {
    const path = join(tempDir(), 'map.avro');
    const bytes = await writeCompactionMap(io, path, EXAMPLE);
    expect(bytes).toBe(readFileSync(path).length);
    expect(await readCompactionMap(io, path)).toEqual(EXAMPLE);

    const raw = await readAvroFile(path);
    expect(raw.meta.get('packice.compaction-map.version')).toBe('2');
    expect(raw.meta.get('packice.group-id')).toBe('g-7');
    const column = (name: string, id: number, items: string) => ({ name, type: { type: 'array', items, 'element-id': id + 1 }, 'field-id': id });
    expect(raw.schema).toEqual({
      type: 'record',
      name: 'compaction_map',
      fields: [
        { name: 'source_file', type: 'string', 'field-id': 1 },
        column('new_target_files', 2, 'string'),
        column('source_gaps', 4, 'long'),
        column('lengths', 6, 'long'),
        column('targets', 8, 'int'),
        column('target_gaps', 10, 'long'),
      ],
    });
    expect(COMPACTION_MAP_V2_AVRO_SCHEMA).toEqual(raw.schema);
    const none = { new_target_files: [], source_gaps: [], lengths: [], targets: [], target_gaps: [] };
    expect(raw.records).toEqual([
      {
        source_file: 's3://bucket/t/data/a.parquet',
        new_target_files: ['s3://bucket/t/data/x.parquet', 's3://bucket/t/data/y.parquet'],
        // a 0-2 → x 0-2, a 3 → y 0, (a 4 deleted), a 5-6 → x 3-4
        source_gaps: [0n, 0n, 1n],
        lengths: [3n, 1n, 2n],
        targets: [0, 1, 0],
        target_gaps: [0n, 0n, 0n],
      },
      { source_file: 's3://bucket/t/data/c.parquet', ...none },
      // b 2^40.. → x 5-14: x continues where a's last run into it ended.
      { source_file: 's3://bucket/t/data/b.parquet', ...none, source_gaps: [2n ** 40n], lengths: [10n], targets: [0], target_gaps: [0n] },
    ]);
  });

  it('round-trip any target order (gaps may be negative) and still read version 1', async () => {
    const dir = tempDir();
    const shuffled: CompactionMap = {
      groupId: 'g',
      sources: ['/t/a', '/t/b'],
      entries: [
        { sourceFile: '/t/a', targetFile: '/t/x', runs: [{ sourcePosition: 0, targetPosition: 5, length: 2 }, { sourcePosition: 2, targetPosition: 0, length: 3 }] },
        { sourceFile: '/t/b', targetFile: '/t/x', runs: [{ sourcePosition: 7, targetPosition: 3, length: 2 }] },
      ],
    };
    await writeCompactionMap(io, join(dir, 'shuffled.avro'), shuffled);
    expect(await readCompactionMap(io, join(dir, 'shuffled.avro'))).toEqual(shuffled);

    const v1 = join(dir, 'v1.avro');
    await writeCompactionMap(io, v1, EXAMPLE, 1);
    const raw = await readAvroFile(v1);
    expect(raw.meta.get('packice.compaction-map.version')).toBe('1');
    expect(raw.schema).toEqual(COMPACTION_MAP_AVRO_SCHEMA);
    expect(raw.records.length).toBe(3);
    // Version 1 cannot list an input with no surviving row.
    expect(await readCompactionMap(io, v1)).toEqual({ ...EXAMPLE, sources: EXAMPLE.sources.filter((f) => !f.endsWith('c.parquet')) });
  });

  it('are smaller in version 2 (10,000 runs of regular deletes: under 1,000 bytes)', () => {
    const b = new CompactionMapBuilder('g', ['s3://bucket/t/data/in.parquet']);
    for (let i = 0; i < 10_000; i++) b.addRun('s3://bucket/t/data/in.parquet', i * 1001, 's3://bucket/t/data/out.parquet', i * 1000, 1000);
    const map = b.build();
    expect(encodeCompactionMap(map, 2).length).toBeLessThan(1000);
    expect(encodeCompactionMap(map, 1).length).toBeGreaterThan(10 * encodeCompactionMap(map, 2).length);
  });

  it('live under the metadata folder, named after the starting snapshot and the group', () => {
    const m = newTableMetadata('s3://bucket/t', { schema: { type: 'struct', fields: [] } });
    expect(compactionMapPath(m, '123', 'p/1')).toMatch(
      /^s3:\/\/bucket\/t\/metadata\/compaction-maps\/123-p_1-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.avro$/,
    );
  });

  it('are refused when of another version, overlapping or not a map, naming the file', async () => {
    const dir = tempDir();
    /** The file with its version "1" or "2" replaced (same length, so the header stays valid). */
    const withVersion = (bytes: Uint8Array, version: string): Buffer => {
      const text = Buffer.from(bytes);
      const at = text.indexOf(Buffer.from('packice.compaction-map.version')) + 'packice.compaction-map.version'.length;
      const value = Math.min(...['1', '2'].map((v) => text.indexOf(Buffer.from(v), at)).filter((i) => i >= 0));
      text[value] = version.charCodeAt(0);
      return text;
    };
    const v9 = join(dir, 'v9.avro');
    writeFileSync(v9, withVersion(encodeCompactionMap(EXAMPLE), '9'));
    await expect(readCompactionMap(io, v9)).rejects.toThrow(UnsupportedError);
    await expect(readCompactionMap(io, v9)).rejects.toThrow(/v9\.avro: compaction map version 9 is not supported/);

    const mislabelled = join(dir, 'mislabelled.avro');
    writeFileSync(mislabelled, withVersion(encodeCompactionMap(EXAMPLE, 1), '2'));
    await expect(readCompactionMap(io, mislabelled)).rejects.toThrow(/mislabelled\.avro: compaction map version 2: records need the fields/);

    const overlap = join(dir, 'overlap.avro');
    await writeCompactionMap(io, overlap, EXAMPLE, 1);
    await editAvroFile(overlap, (records) => {
      (records[1] as { runs: { source_position: bigint }[] }).runs[0].source_position = 2n;
    });
    await expect(readCompactionMap(io, overlap)).rejects.toThrow(InvalidFileError);
    await expect(readCompactionMap(io, overlap)).rejects.toThrow(/overlap\.avro: .*runs overlap at source position 2/);

    const overlap2 = join(dir, 'overlap2.avro');
    await writeCompactionMap(io, overlap2, EXAMPLE);
    await editAvroFile(overlap2, (records) => {
      (records[2] as { target_gaps: bigint[] }).target_gaps[0] = -1n;
    });
    await expect(readCompactionMap(io, overlap2)).rejects.toThrow(/overlap2\.avro: .*runs overlap at target position 4/);

    const badTarget = join(dir, 'target.avro');
    await writeCompactionMap(io, badTarget, EXAMPLE);
    await editAvroFile(badTarget, (records) => {
      (records[2] as { targets: number[] }).targets[0] = 2;
    });
    await expect(readCompactionMap(io, badTarget)).rejects.toThrow(/target\.avro: compaction map record 2: target 2 is not one of the 2 target files/);

    const ragged = join(dir, 'ragged.avro');
    await writeCompactionMap(io, ragged, EXAMPLE);
    await editAvroFile(ragged, (records) => {
      (records[0] as { lengths: bigint[] }).lengths.pop();
    });
    await expect(readCompactionMap(io, ragged)).rejects.toThrow(/ragged\.avro: compaction map record 0: its run columns differ in length/);

    const notMap = join(dir, 'other.avro');
    writeFileSync(notMap, encodeCompactionMap(EXAMPLE).subarray(0, 3));
    await expect(readCompactionMap(io, notMap)).rejects.toThrow(/other\.avro/);
  });
});

/** The same map with its entries in one order: by source (in the map's order), then by first source position. */
function canonical(map: CompactionMap): CompactionMap {
  const rank = (e: CompactionMapEntry): [number, number] => [map.sources.indexOf(e.sourceFile), e.runs[0]?.sourcePosition ?? -1];
  const entries = [...map.entries].sort((a, b) => rank(a)[0] - rank(b)[0] || rank(a)[1] - rank(b)[1]);
  return { ...map, entries };
}

describe('remapping against a naive model (property)', () => {
  it('maps every surviving row to where it went and every deleted row to nothing', async () => {
    const dir = tempDir();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(groupArb, async (group) => {
        const { inputs } = group;
        const { map: built, model } = buildGroup(group, (i) => `/t/data/in-${i}.parquet`, (p, f) => `out-p${p}-f${f}`);
        const path = join(dir, `map-${run++}.avro`);
        await writeCompactionMap(io, path, built);
        const read = await readCompactionMap(io, path);
        expect(canonical(read)).toEqual(canonical(built));
        const v1Path = join(dir, `map-${run++}-v1.avro`);
        await writeCompactionMap(io, v1Path, built, 1);
        const readV1 = await readCompactionMap(io, v1Path);
        expect(canonical(readV1)).toEqual(canonical({ ...built, sources: built.sources.filter((s) => built.entries.some((e) => e.sourceFile === s)) }));
        for (const map of [built, read, readV1]) {
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
