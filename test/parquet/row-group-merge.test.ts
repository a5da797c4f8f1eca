/**
 * Row-group merge (lib/parquet/row-group-merge.ts) on files laid out as pyarrow writes them
 * (interop/python/parquet_variants.py): data page v1 and v2, ZSTD, GZIP, uncompressed, every column
 * with a dictionary or none, nulls, a list column, small row groups. The merged file must read in
 * pyarrow as its sources concatenated, whether pages are coalesced, copied or re-indexed, and
 * whether dictionaries merge or fall back to PLAIN; the proof's re-read must agree with the
 * digests taken from the sources, and must not once the output is damaged.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MergePool } from '../../lib/compaction/merge-pool.js';
import { InvalidFileError } from '../../lib/errors.js';
import type { StructType } from '../../lib/iceberg/types.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { openCopySource, type CopySource, type CopyTemplate } from '../../lib/parquet/chunk-copy.js';
import { zstdCodec } from '../../lib/parquet/compression-codec.js';
import { leafColumns, readFooter, schemaTree } from '../../lib/parquet/footer.js';
import {
  deleteProblem, mergedDigests, mergeProblem, writeMergedFile, type MergedFile, type MergeOptions, type MergePart, type PageKeyProbe,
} from '../../lib/parquet/row-group-merge.js';
import { typedField, typedItems } from '../../lib/parquet/thrift.js';
import { CountingIO } from '../support/counting-io.js';
import { REPO_ROOT, tempDir } from '../support/fixtures.js';
import { PY_VENV } from '../support/pyiceberg.js';

const io = new LocalFileIO();
const PYTHON = join(PY_VENV, 'bin', 'python');
const SCRIPT = join(REPO_ROOT, 'interop', 'python', 'parquet_variants.py');
const zstd = zstdCodec();

const SCHEMA: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'category', required: false, type: { type: 'string' } },
    { id: 3, name: 'amount', required: false, type: { type: 'decimal', precision: 10, scale: 2 } },
    { id: 4, name: 'score', required: false, type: { type: 'double' } },
    { id: 5, name: 'flag', required: false, type: { type: 'boolean' } },
    { id: 6, name: 'tags', required: false, type: { type: 'list', elementId: 7, element: { type: 'string' }, elementRequired: false } },
    { id: 8, name: 'note', required: false, type: { type: 'string' } },
    { id: 9, name: 'day', required: false, type: { type: 'date' } },
  ],
};

function variant(name: string, files: number, rows: number): string[] {
  const dir = tempDir('packice-merge-');
  execFileSync(PYTHON, [SCRIPT, 'write', dir, name, String(files), String(rows)], { stdio: 'pipe' });
  return readdirSync(dir).sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).map((f) => join(dir, f));
}

function pyEqual(merged: string, sources: readonly string[]): { equal: boolean; rows: number; want: number } {
  return JSON.parse(execFileSync(PYTHON, [SCRIPT, 'compare', merged, ...sources], { encoding: 'utf8' })) as { equal: boolean; rows: number; want: number };
}

/** The sources' own schema as the output's (pyarrow's layout is not ParquetWriter's). */
function templateOf(source: CopySource): CopyTemplate {
  return {
    schema: typedItems(typedField(source.typed, 2)),
    signature: source.signature,
    keyValueMetadata: typedField(source.typed, 5),
    leafPaths: leafColumns(schemaTree(source.footer)).map((l) => l.path),
  };
}

const OPTIONS: MergeOptions = { writeSchema: SCHEMA, dictionaryBytes: 2 * 1024 * 1024, zstd, level: 3, pageBytes: 1024 * 1024, pageRows: 20_000 };

/** Merges `paths` into two output row groups; `deleted` (file positions per source) are dropped, and the rows `keys` hold. */
async function merge(
  paths: readonly string[], options: Partial<MergeOptions> = {}, deleted?: readonly (readonly number[])[], keys?: readonly PageKeyProbe[],
): Promise<{ file: MergedFile; out: string; sources: CopySource[] }> {
  const sources = await Promise.all(paths.map((p) => openCopySource(io, p)));
  const parts: MergePart[] = sources.flatMap((source, i) => source.rowGroups.map((rg) => {
    const gone = (deleted?.[i] ?? []).filter((p) => p >= rg.firstRow && p < rg.firstRow + rg.numRows).map((p) => p - rg.firstRow);
    return { source, rowGroup: rg.index, ...(gone.length > 0 ? { deleted: Int32Array.from(gone) } : {}), ...(keys ? { keys } : {}) };
  }));
  // Two output row groups, to walk segments across row groups too.
  const half = Math.ceil(parts.length / 2);
  const out = join(tempDir('packice-merged-'), 'merged.parquet');
  const file = await writeMergedFile(io, out, templateOf(sources[0]), [parts.slice(0, half), parts.slice(half)], { ...OPTIONS, ...options });
  return { file, out, sources };
}

/**
 * The proof's re-read: chunks checked against those written, digests from the writer's walk of its
 * pages before compression; then the deep re-read, which decompresses and walks every page, must agree.
 */
async function reread(file: MergedFile): Promise<string[]> {
  const files = [{ path: file.path, length: file.fileSizeInBytes, rowGroups: file.rowGroups }];
  const out: string[] = [];
  const counted = new CountingIO(io);
  for await (const s of mergedDigests(counted, files, OPTIONS)) out.push(`${s.rows}:${s.digest.join(':')}`);
  // The footer, then every row group in one request (these files are far under 8 MiB).
  expect(counted.ranges).toHaveLength(file.rowGroups.length === 0 ? 1 : 2);
  const deep: string[] = [];
  for await (const s of mergedDigests(io, files, { ...OPTIONS, deep: true })) deep.push(`${s.rows}:${s.digest.join(':')}`);
  expect(deep.sort()).toEqual(out.sort());
  return out;
}

/** `paths`, the second's first row group damaged in the middle of its second column. */
async function withDamagedPage(paths: string[]): Promise<string[]> {
  const { footer } = await readFooter(io.newInputFile(paths[1]));
  const chunk = footer.rowGroups[0].columns[1];
  const at = (chunk.dictionaryPageOffset ?? chunk.dataPageOffset) + Math.floor(chunk.totalCompressedSize / 2);
  const bytes = readFileSync(paths[1]);
  for (let i = at; i < at + 8; i++) bytes[i] ^= 0x5a;
  writeFileSync(paths[1], bytes);
  return paths;
}

/** Each page compressed with its last byte flipped: the writer walked the page as it was. */
const FAULTY = {
  ...zstd!,
  compress: (data: Uint8Array, level: number): Uint8Array => {
    const bent = Uint8Array.from(data);
    bent[bent.length - 1] ^= 0x01;
    return zstd!.compress(bent, level);
  },
};

const written = (file: MergedFile): string[] => file.rowGroups.flat().map((s) => `${s.rows}:${s.digest.join(':')}`).sort();

describe('row-group merge of pyarrow-written files', () => {
  for (const name of ['v1-zstd-dict', 'v2-gzip-dict', 'v2-none-plain', 'v1-zstd-small-groups']) {
    it(`${name}: coalesced, copied or re-indexed, dictionaries merged or PLAIN, the rows are the sources' and the proof agrees`, async () => {
      const paths = variant(name, 4, 1500);
      for (const [mode, options] of [
        ['coalesced', {}],
        ['pages kept', { pageBytes: 0 }],
        ['PLAIN fallback', { dictionaryBytes: 64 }],
        ['PLAIN fallback, pages kept', { dictionaryBytes: 64, pageBytes: 0 }],
      ] as const) {
        const { file, out, sources } = await merge(paths, options);
        for (const s of sources) expect(mergeProblem(s, zstd)).toBeUndefined();
        expect(pyEqual(out, paths), `${name} ${mode}`).toEqual({ equal: true, rows: 6000, want: 6000 });
        expect(file.recordCount).toBe(6000);
        expect(await reread(file), `${name} ${mode}`).toEqual(written(file));
        const modes = new Set(file.rowGroups.flat().flatMap((s) => s.modes));
        const coalesced = modes.has('coalesced') || modes.has('indexed');
        if (mode === 'coalesced') expect(coalesced).toBe(true);
        else if (mode === 'pages kept') expect(coalesced).toBe(false);
        // Dictionary-indexed on both sides: hashed by fingerprints.
        if (name.endsWith('-dict') && mode === 'coalesced') expect(modes.has('indexed')).toBe(true);
        if (name.endsWith('-dict') && mode.startsWith('PLAIN')) expect(file.plainColumns).toBeGreaterThan(0);
      }
    });
  }

  it('merges statistics: null counts summed, the extreme bounds kept, none where a type has no order here', async () => {
    const paths = variant('v1-zstd-dict', 3, 1000);
    const { file } = await merge(paths);
    const sources = await Promise.all(paths.map(async (p) => (await readFooter(io.newInputFile(p))).footer));
    const merged = file.footer.rowGroups;
    const ids = merged.map((rg) => rg.columns[0].statistics!);
    expect(ids.map((s) => new DataView(s.min!.buffer, s.min!.byteOffset).getBigInt64(0, true))).toEqual([0n, 2000n]);
    expect(ids.map((s) => new DataView(s.max!.buffer, s.max!.byteOffset).getBigInt64(0, true))).toEqual([1999n, 2999n]);
    // category: null counts of the sources' row groups in each output row group, summed.
    const nulls = sources.flatMap((f) => f.rowGroups.map((rg) => rg.columns[1].statistics!.nullCount!));
    expect(merged.map((rg) => rg.columns[1].statistics!.nullCount)).toEqual([nulls[0] + nulls[1], nulls[2]]);
  });

  it('leaves a dictionary in a codec it cannot rewrite to the decode path (SNAPPY)', async () => {
    const [path] = variant('v1-snappy-dict', 1, 200);
    expect(mergeProblem(await openCopySource(io, path), zstd)).toMatch(/dictionary and codec 1/);
  });

  it('names the source a damaged page is in, not the first of its output row group', async () => {
    const paths = await withDamagedPage(variant('v1-zstd-dict', 3, 600));
    for (const options of [{}, { pageBytes: 0 }]) {
      const err = await merge(paths, options).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidFileError);
      expect((err as InvalidFileError).path).toBe(paths[1]);
      expect((err as Error).message).toMatch(/row group 0, column 1: /);
    }
  });

  it('a compressor that does not give back what it took: the re-read alone passes it, the deep walk of the row groups it names does not', async () => {
    const paths = variant('v1-zstd-dict', 4, 1500);
    const { file } = await merge(paths, { zstd: FAULTY });
    const files = [{ path: file.path, length: file.fileSizeInBytes, rowGroups: file.rowGroups }];
    const plain: string[] = [];
    for await (const s of mergedDigests(io, files, OPTIONS)) plain.push(`${s.rows}:${s.digest.join(':')}`);
    expect(plain.sort()).toEqual(written(file));
    // What ChunkCopy.prove asks: each output's first row group walked again, decompressed.
    const first = async (): Promise<void> => {
      for await (const s of mergedDigests(io, files, { ...OPTIONS, deep: (_path, rowGroup) => rowGroup === 0 })) void s;
    };
    await expect(first()).rejects.toThrow(InvalidFileError);
    await expect(first()).rejects.toThrow(/row group 0 re-read for the proof/);
  });

  for (const mode of ['coalesced', 'pages kept'] as const) {
    it(`the proof catches a damaged byte (${mode})`, async () => {
      const paths = variant('v2-gzip-dict', 2, 800);
      const { file } = await merge(paths, { fault: 'alter-byte', ...(mode === 'pages kept' ? { pageBytes: 0 } : {}) });
      const got = await reread(file).catch((e: unknown) => [`failed: ${String(e)}`]);
      expect(got).not.toEqual(written(file));
    });
  }
});

function pyEqualDeleted(merged: string, sources: readonly string[], deleted: readonly (readonly number[])[]): { equal: boolean; rows: number; want: number } {
  const list = join(tempDir('packice-deleted-'), 'deleted.json');
  writeFileSync(list, JSON.stringify(deleted));
  return JSON.parse(execFileSync(PYTHON, [SCRIPT, 'compare-deleted', merged, list, ...sources], { encoding: 'utf8' })) as { equal: boolean; rows: number; want: number };
}

/** The merged file's chunk statistics that are not its data's (pyarrow reads both). */
function statsNotData(merged: string): string[] {
  return JSON.parse(execFileSync(PYTHON, [SCRIPT, 'check-stats', merged], { encoding: 'utf8' })) as string[];
}

/** A seeded choice of positions, about one in `every`. */
function scattered(n: number, every: number, seed: number): number[] {
  let x = seed;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    if (x % every === 0) out.push(i);
  }
  return out;
}

describe('row-group merge with deleted rows dropped from the pages', () => {
  const ROWS = 1500;
  // File positions per source: the first and last rows (the id bounds), every row of a category
  // (cat-4: the largest), a run, the rows whose category is null, scattered rows.
  const deleted = [
    [0, ROWS - 1, ...scattered(ROWS, 7, 1)],
    [...Array.from({ length: ROWS }, (_, p) => p).filter((p) => (ROWS + p) % 5 === 4), ...Array.from({ length: 100 }, (_, i) => 1000 + i)],
    Array.from({ length: ROWS }, (_, p) => p).filter((p) => (2 * ROWS + p) % 11 === 0 || p % 31 === 3),
  ].map((ps) => [...new Set(ps)].sort((a, b) => a - b));
  const live = deleted.reduce((n, d) => n + ROWS - d.length, 0);

  for (const name of ['flat-v1-zstd-dict', 'flat-v2-gzip-dict', 'flat-v2-none-plain', 'flat-v1-zstd-small-groups']) {
    it(`${name}: the rows are the sources' less those deleted, statistics are the data's, the proof agrees`, async () => {
      const paths = variant(name, 3, ROWS);
      for (const [mode, options] of [
        ['coalesced', {}],
        ['PLAIN fallback', { dictionaryBytes: 64 }],
        ['a page per source page', { pageBytes: 0 }],
      ] as const) {
        const { file, out, sources } = await merge(paths, options, deleted);
        for (const s of sources) expect(deleteProblem(s, zstd)).toBeUndefined();
        expect(pyEqualDeleted(out, paths, deleted), `${name} ${mode}`).toEqual({ equal: true, rows: live, want: live });
        expect(file.recordCount).toBe(live);
        expect(statsNotData(out), `${name} ${mode}`).toEqual([]);
        expect(await reread(file), `${name} ${mode}`).toEqual(written(file));
        const modes = new Set(file.rowGroups.flat().flatMap((s) => s.modes));
        expect([...modes].every((m) => m === 'coalesced' || m === 'indexed')).toBe(true);
      }
    });
  }

  it('recomputes a float bound whose only zero was deleted (a stored -0.0 minimum is the +0.0 a row held)', async () => {
    const zeros: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: { type: 'long' } },
        { id: 2, name: 'pos', required: false, type: { type: 'double' } },
        { id: 3, name: 'neg', required: false, type: { type: 'double' } },
      ],
    };
    const paths = variant('zeros', 2, 50);
    const { out } = await merge(paths, { writeSchema: zeros }, [[0], [0]]);
    expect(statsNotData(out)).toEqual([]);
  });

  it('equality keys probed from the pages merged: the bytes position deletes of the same rows give, the key column decompressed once', async () => {
    const paths = variant('flat-v1-zstd-dict', 3, ROWS);
    // Row p of file f holds id f * ROWS + p (interop/python/parquet_variants.py).
    const hit = (id: number): boolean => id % 11 === 3 || id % 97 === 0;
    const byPosition = paths.map((_, f) => Array.from({ length: ROWS }, (_, p) => p).filter((p) => hit(f * ROWS + p)));
    let calls = 0;
    const counting = {
      ...zstd!,
      decompress: (d: Uint8Array, n: number): Uint8Array => (calls++, zstd!.decompress(d, n)),
      decompressInto: (d: Uint8Array, dst: Uint8Array): void => (calls++, zstd!.decompressInto(d, dst)),
    };
    const positions = await merge(paths, { zstd: counting }, byPosition);
    const asPositions = calls;
    calls = 0;
    const keys: PageKeyProbe[] = [{ fieldId: 1, keys: { hasLong: (low, high) => high === 0 && hit(low), hasInt: () => false, nulls: false } }];
    const probed = await merge(paths, { zstd: counting }, undefined, keys);
    expect(probed.file.recordCount).toBe(3 * ROWS - byPosition.flat().length);
    expect(readFileSync(probed.out).equals(readFileSync(positions.out))).toBe(true);
    expect(calls).toBe(asPositions);
    expect(await reread(probed.file)).toEqual(written(probed.file));
  });

  it('keys probed from a nullable PLAIN column (values after the levels, not 4-byte aligned): the bytes position deletes give', async () => {
    const paths = variant('flat-v1-zstd-plain', 3, ROWS);
    // `day` (field 9, INT32, optional) of row p of file f is 2024-01-01 + (f * ROWS + p) % 40 days (parquet_variants.py).
    const day = (id: number): number => 19723 + (id % 40);
    const hit = (v: number): boolean => v % 7 === 3;
    const byPosition = paths.map((_, f) => Array.from({ length: ROWS }, (_, p) => p).filter((p) => hit(day(f * ROWS + p))));
    const positions = await merge(paths, {}, byPosition);
    const keys: PageKeyProbe[] = [{ fieldId: 9, keys: { hasLong: () => false, hasInt: hit, nulls: false } }];
    const probed = await merge(paths, {}, undefined, keys);
    expect(probed.file.recordCount).toBe(3 * ROWS - byPosition.flat().length);
    expect(readFileSync(probed.out).equals(readFileSync(positions.out))).toBe(true);
  });

  it('the proof catches a damaged byte of a file with rows dropped', async () => {
    const paths = variant('flat-v2-gzip-dict', 3, ROWS);
    const { file } = await merge(paths, { fault: 'alter-byte' }, deleted);
    const got = await reread(file).catch((e: unknown) => [`failed: ${String(e)}`]);
    expect(got).not.toEqual(written(file));
  });

  it('says why rows cannot be dropped from a file with a list or boolean column, or SNAPPY pages', async () => {
    const [nested] = variant('v1-zstd-dict', 1, 100);
    expect(deleteProblem(await openCopySource(io, nested), zstd)).toMatch(/repeated column/);
    const [snappy] = variant('flat-v1-snappy-dict', 1, 100);
    expect(deleteProblem(await openCopySource(io, snappy), zstd)).toMatch(/codec 1/);
  });

  it('refuses a deleted position past the row group, naming the file', async () => {
    const [path] = variant('flat-v1-zstd-dict', 1, 100);
    const source = await openCopySource(io, path);
    const out = join(tempDir('packice-merged-'), 'merged.parquet');
    const parts = [[{ source, rowGroup: 0, deleted: Int32Array.of(5, 100) }]];
    const err = await writeMergedFile(io, out, templateOf(source), parts, OPTIONS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidFileError);
    expect((err as InvalidFileError).path).toBe(path);
    expect((err as Error).message).toMatch(/deleted position 100 is past/);
  });
});

describe('row-group merge with its row groups built on worker threads (merge-pool.ts)', () => {
  const ROWS = 1200;
  const deleted = [scattered(ROWS, 5, 2), [], Array.from({ length: 300 }, (_, i) => 600 + i)];

  it('writes the bytes, digests and statistics this thread writes, and has each worker\'s first row group walked again', async () => {
    // Workers ready: until they are, the pool builds on this thread.
    await MergePool.prestart(2);
    const pool = MergePool.start(2);
    try {
      for (const [name, gone] of [['v1-zstd-dict', undefined], ['v2-gzip-dict', undefined], ['flat-v1-zstd-small-groups', deleted], ['flat-v2-none-plain', deleted]] as const) {
        const paths = variant(name, 3, ROWS);
        for (const options of [{}, { pageBytes: 0 }, { dictionaryBytes: 64 }]) {
          const here = await merge(paths, options, gone);
          const there = await merge(paths, { ...options, builder: pool }, gone);
          const at = `${name} ${JSON.stringify(options)}`;
          expect(readFileSync(there.out).equals(readFileSync(here.out)), at).toBe(true);
          expect(there.file.rowGroups.map((g) => g.map((s) => ({ ...s, part: s.part.rowGroup }))), at)
            .toEqual(here.file.rowGroups.map((g) => g.map((s) => ({ ...s, part: s.part.rowGroup }))));
          expect(there.file.plainColumns, at).toBe(here.file.plainColumns);
          // On this thread one codec wrote every row group; there, each of two workers its first.
          expect(here.file.deepRowGroups, at).toEqual([0]);
          expect(there.file.deepRowGroups, at).toEqual([0, 1]);
          expect(await reread(there.file), at).toEqual(written(there.file));
        }
      }
    } finally {
      await pool.close();
    }
    // Kept for the next group, unref'd.
    expect(MergePool.idleThreads).toBe(2);
  });

  it('a pool of more workers than are kept (one starting, built on this thread until it is ready): the same bytes; the threads kept for the next group', async () => {
    const paths = variant('flat-v1-zstd-small-groups', 3, ROWS);
    const here = await merge(paths, {}, deleted);
    for (let round = 0; round < 2; round++) {
      const pool = MergePool.start(3);
      try {
        const there = await merge(paths, { builder: pool }, deleted);
        expect(readFileSync(there.out).equals(readFileSync(here.out))).toBe(true);
        expect(there.file.deepRowGroups[0]).toBe(0);
        expect(await reread(there.file)).toEqual(written(there.file));
        expect(pool.size).toBe(3);
      } finally {
        await pool.close();
      }
    }
    expect(MergePool.idleThreads).toBe(3);
  });

  it('the proof\'s deep walk on the workers: what passes here passes there; a compressor that does not give back what it took fails, naming the row group', async () => {
    await MergePool.prestart(2);
    const pool = MergePool.start(2);
    try {
      const paths = variant('v1-zstd-dict', 4, 1500);
      const good = await merge(paths);
      const files = (f: MergedFile) => [{ path: f.path, length: f.fileSizeInBytes, rowGroups: f.rowGroups }];
      const walked: string[] = [];
      for await (const s of mergedDigests(io, files(good.file), { ...OPTIONS, deep: true, rewalker: pool })) walked.push(`${s.rows}:${s.digest.join(':')}`);
      expect(walked.sort()).toEqual(written(good.file));
      const { file } = await merge(paths, { zstd: FAULTY });
      const deep = async (): Promise<void> => {
        for await (const s of mergedDigests(io, files(file), { ...OPTIONS, deep: (_path, rowGroup) => rowGroup === 1, rewalker: pool })) void s;
      };
      await expect(deep()).rejects.toThrow(InvalidFileError);
      await expect(deep()).rejects.toThrow(/row group 1 re-read for the proof: /);
    } finally {
      await pool.close();
    }
  });

  it('names the source a damaged page is in, as this thread does; a closed pool builds nothing', async () => {
    const paths = await withDamagedPage(variant('v1-zstd-dict', 3, 600));
    const pool = MergePool.start(2);
    try {
      const here = await merge(paths).catch((e: unknown) => e);
      const there = await merge(paths, { builder: pool }).catch((e: unknown) => e);
      expect(there).toBeInstanceOf(InvalidFileError);
      expect((there as InvalidFileError).path).toBe(paths[1]);
      expect((there as Error).message).toBe((here as Error).message);
    } finally {
      await pool.close();
    }
    const closed = await merge(variant('v1-zstd-dict', 2, 100), { builder: pool }).catch((e: unknown) => e);
    expect((closed as Error).message).toMatch(/the merge pool is closed/);
  });
});
