/**
 * Bad input gets a clear error naming the file, and nothing is written. Each case relocates a
 * fixture table into a fresh folder, breaks one of its files, and runs `scan`, `info` and
 * `relocate` on it through the CLI: the command that must read the broken file fails with a
 * PackiceError whose message names it (and `main` prints `packice: <file>: …` and exits 1), the
 * table folder stays byte for byte as it was, and a failed relocation leaves no loadable table.
 */
import { existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isLosslessNumber, parse } from 'lossless-json';
import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidFileError, PackiceError, UnsupportedError } from '../../lib/errors.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { readPuffinFooter } from '../../lib/iceberg/puffin.js';
import { relocateTable } from '../../lib/table/relocate.js';
import { parseJsonLines } from '../support/canonical-rows.js';
import { runCli, runMain } from '../support/cli.js';
import { copyFixture, FIXTURE_TABLES, tempDir } from '../support/fixtures.js';
import { editAvroFile, hashTree, readAvroFile } from '../support/table-files.js';

type FixtureTable = (typeof FIXTURE_TABLES)[number];
type Command = 'scan' | 'info' | 'relocate';
type ErrorClass = typeof InvalidFileError | typeof UnsupportedError;

const sources = new Map<FixtureTable, string>();

beforeAll(() => {
  for (const name of FIXTURE_TABLES) sources.set(name, copyFixture(name));
});

/** A fresh, working copy of a fixture table, relocated into its own folder. */
async function freshTable(name: FixtureTable): Promise<string> {
  const table = join(tempDir('packice-bad-'), name);
  await relocateTable(sources.get(name)!, table);
  return table;
}

function currentMetadataFile(table: string): string {
  const version = readFileSync(join(table, 'metadata', 'version-hint.text'), 'utf8').trim();
  return join(table, 'metadata', `v${version}.metadata.json`);
}

function currentManifestList(table: string): string {
  const m = parse(readFileSync(currentMetadataFile(table), 'utf8')) as Record<string, unknown>;
  const id = String(m['current-snapshot-id']);
  const snapshots = m.snapshots as Record<string, unknown>[];
  const s = snapshots.find((x) => isLosslessNumber(x['snapshot-id']) && String(x['snapshot-id']) === id);
  return String(s!['manifest-list']);
}

interface ListedManifest {
  readonly path: string;
  readonly content: number;
}

async function manifestsOf(table: string): Promise<ListedManifest[]> {
  const list = await readAvroFile(currentManifestList(table));
  return list.records.map((r) => ({ path: String(r.manifest_path), content: Number(r.content) }));
}

interface FileEntry {
  readonly manifest: string;
  readonly filePath: string;
  readonly content: number;
  readonly format: string;
  readonly contentOffset: number | undefined;
  readonly contentSize: number | undefined;
}

/** The data and delete file entries of the current snapshot. */
async function filesOf(table: string): Promise<FileEntry[]> {
  const out: FileEntry[] = [];
  for (const m of await manifestsOf(table)) {
    for (const r of (await readAvroFile(m.path)).records) {
      const df = r.data_file as Record<string, unknown>;
      out.push({
        manifest: m.path,
        filePath: String(df.file_path),
        content: Number(df.content),
        format: String(df.file_format),
        contentOffset: df.content_offset === null || df.content_offset === undefined ? undefined : Number(df.content_offset),
        contentSize:
          df.content_size_in_bytes === null || df.content_size_in_bytes === undefined ? undefined : Number(df.content_size_in_bytes),
      });
    }
  }
  return out;
}

function cutShort(path: string, keep: number): void {
  expect(keep).toBeLessThan(statSync(path).size);
  truncateSync(path, keep);
}

function flipByte(path: string, at: number): void {
  const b = readFileSync(path);
  b[at] ^= 0xff;
  writeFileSync(path, b);
}

/** True when `table` holds something a reader could open as a table. */
function holdsTable(table: string): boolean {
  const folder = join(table, 'metadata');
  if (!existsSync(folder)) return false;
  return readdirSync(folder).some((f) => f === 'version-hint.text' || /^v\d+\.metadata\.json$/.test(f));
}

interface BadInput {
  readonly fixture: FixtureTable;
  /** Breaks one file of the table; returns that file's path. */
  readonly corrupt: (table: string) => Promise<string>;
  readonly error: ErrorClass;
  /** What the message must say besides the path (the rule broken). */
  readonly says: RegExp;
  /** Commands that must fail on this file; the others must still work. */
  readonly fails: readonly Command[];
}

const CASES: Record<string, BadInput> = {
  'metadata JSON cut short': {
    fixture: 'iceberg_v2_partitioned_position_deletes',
    corrupt: async (t) => {
      const f = currentMetadataFile(t);
      cutShort(f, Math.floor(statSync(f).size / 2));
      return f;
    },
    error: InvalidFileError,
    says: /not valid JSON .*truncated/,
    fails: ['scan', 'info', 'relocate'],
  },
  'metadata that is not JSON': {
    fixture: 'iceberg_v2_delete_equality_partitioned',
    corrupt: async (t) => {
      const f = currentMetadataFile(t);
      writeFileSync(f, readFileSync(f, 'utf8').replace('"location"', '"location" "oops"'));
      return f;
    },
    error: InvalidFileError,
    says: /not valid JSON/,
    fails: ['scan', 'info', 'relocate'],
  },
  'metadata of format version 4': {
    fixture: 'iceberg_v3_deletion_vectors',
    corrupt: async (t) => {
      const f = currentMetadataFile(t);
      const text = readFileSync(f, 'utf8');
      expect(text).toMatch(/"format-version"\s*:\s*3/);
      writeFileSync(f, text.replace(/"format-version"\s*:\s*3/, '"format-version":4'));
      return f;
    },
    error: UnsupportedError,
    says: /format-version 4 is not supported/,
    fails: ['scan', 'info', 'relocate'],
  },
  'metadata without a required field': {
    fixture: 'iceberg_v2_partitioned_position_deletes',
    corrupt: async (t) => {
      const f = currentMetadataFile(t);
      const text = readFileSync(f, 'utf8');
      const cut = text.replace(/"last-column-id"\s*:\s*\d+\s*,/, '');
      expect(cut).not.toBe(text);
      writeFileSync(f, cut);
      return f;
    },
    error: InvalidFileError,
    says: /missing required field "last-column-id"/,
    fails: ['scan', 'info', 'relocate'],
  },
  'an older metadata file of the log cut short': {
    fixture: 'iceberg_v2_delete_equality_partitioned',
    corrupt: async (t) => {
      const f = join(t, 'metadata', 'v4.metadata.json');
      expect(currentMetadataFile(t)).toBe(join(t, 'metadata', 'v5.metadata.json'));
      cutShort(f, 100);
      return f;
    },
    error: InvalidFileError,
    says: /not valid JSON/,
    // Only relocate reads the metadata log's files.
    fails: ['relocate'],
  },
  'manifest with bad magic': {
    fixture: 'iceberg_v2_partitioned_position_deletes',
    corrupt: async (t) => {
      const m = (await manifestsOf(t)).find((x) => x.content === 0)!.path;
      const b = readFileSync(m);
      b.write('XYZ!', 0, 'latin1');
      writeFileSync(m, b);
      return m;
    },
    error: InvalidFileError,
    says: /not an Avro container file: bad magic/,
    fails: ['scan', 'info', 'relocate'],
  },
  'manifest with a truncated header': {
    fixture: 'iceberg_v3_deletion_vectors',
    corrupt: async (t) => {
      const m = (await manifestsOf(t)).find((x) => x.content === 1)!.path;
      cutShort(m, 40);
      return m;
    },
    error: InvalidFileError,
    says: /truncated Avro header/,
    fails: ['scan', 'info', 'relocate'],
  },
  'manifest list cut short': {
    fixture: 'iceberg_v2_delete_equality_partitioned',
    corrupt: async (t) => {
      const list = currentManifestList(t);
      cutShort(list, statSync(list).size - 40);
      return list;
    },
    error: InvalidFileError,
    says: /truncated Avro block 0/,
    fails: ['scan', 'info', 'relocate'],
  },
  'Parquet data file cut short': {
    fixture: 'iceberg_v3_deletion_vectors',
    corrupt: async (t) => {
      const f = (await filesOf(t)).find((x) => x.content === 0)!.filePath;
      cutShort(f, Math.floor(statSync(f).size / 2));
      return f;
    },
    error: InvalidFileError,
    says: /truncated/,
    // info reads manifests only; relocate copies data files byte for byte.
    fails: ['scan'],
  },
  'Parquet position delete file cut short': {
    fixture: 'iceberg_v2_partitioned_position_deletes',
    corrupt: async (t) => {
      const f = (await filesOf(t)).find((x) => x.content === 1)!.filePath;
      cutShort(f, statSync(f).size - 100);
      return f;
    },
    error: InvalidFileError,
    says: /Parquet|truncated/,
    fails: ['scan', 'relocate'],
  },
  'deletion vector with bad magic': {
    fixture: 'iceberg_v3_deletion_vectors',
    corrupt: async (t) => {
      const dv = (await filesOf(t)).find((x) => x.format.toUpperCase() === 'PUFFIN')!;
      // Blob layout: 4-byte length, magic d1 d3 39 64, vector, CRC.
      flipByte(dv.filePath, dv.contentOffset! + 4);
      return dv.filePath;
    },
    error: InvalidFileError,
    says: /deletion vector: magic is 2e d3 39 64, expected d1 d3 39 64/,
    // relocate copies blobs as they are.
    fails: ['scan'],
  },
  'deletion vector with a bad CRC': {
    fixture: 'iceberg_v3_deletion_vectors',
    corrupt: async (t) => {
      const dv = (await filesOf(t)).find((x) => x.format.toUpperCase() === 'PUFFIN')!;
      // The last byte of the bitmap, just before the 4-byte CRC.
      flipByte(dv.filePath, dv.contentOffset! + dv.contentSize! - 5);
      return dv.filePath;
    },
    error: InvalidFileError,
    says: /CRC-32 of magic \+ vector is 0x[0-9a-f]+, but the blob stores 0x[0-9a-f]+/,
    fails: ['scan'],
  },
  'Puffin file with a bad footer magic': {
    fixture: 'iceberg_v3_deletion_vectors',
    corrupt: async (t) => {
      const dv = (await filesOf(t)).find((x) => x.format.toUpperCase() === 'PUFFIN')!;
      flipByte(dv.filePath, statSync(dv.filePath).size - 1);
      return dv.filePath;
    },
    error: InvalidFileError,
    says: /magic/i,
    // Scans read DVs by offset (as Java does); relocate reads the footer to rewrite it.
    fails: ['relocate'],
  },
  'ORC data file': {
    fixture: 'iceberg_v3_deletion_vectors',
    corrupt: async (t) => {
      const entry = (await filesOf(t)).find((x) => x.content === 0)!;
      await editAvroFile(entry.manifest, (records) => {
        const r = records.find((x) => (x.data_file as Record<string, unknown>).file_path === entry.filePath)!;
        (r.data_file as Record<string, unknown>).file_format = 'ORC';
      });
      // Keep every manifest list's manifest_length true to the edited manifest.
      const length = BigInt(statSync(entry.manifest).size);
      for (const f of readdirSync(join(t, 'metadata')).filter((x) => x.startsWith('snap-'))) {
        await editAvroFile(join(t, 'metadata', f), (records) => {
          for (const r of records) if (r.manifest_path === entry.manifest) r.manifest_length = length;
        });
      }
      return entry.filePath;
    },
    error: UnsupportedError,
    says: /ORC files are not supported/,
    fails: ['scan'],
  },
};

/** The message of the error `run` rejects with; fails the test if it resolves. */
async function errorOf(run: Promise<unknown>): Promise<PackiceError> {
  const e = await run.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e, 'the command succeeded').toBeInstanceOf(PackiceError);
  return e as PackiceError;
}

function args(command: Command, table: string, target: string): string[] {
  return command === 'relocate' ? ['relocate', table, target] : command === 'info' ? ['info', '--json', table] : ['scan', table];
}

describe.each(Object.entries(CASES))('%s', (_, c) => {
  const ALL: readonly Command[] = ['scan', 'info', 'relocate'];

  it.each(c.fails.map((cmd) => [cmd]))('%s fails naming the file, and writes nothing', async (command) => {
    const table = await freshTable(c.fixture);
    const file = await c.corrupt(table);
    const before = hashTree(table);
    const target = join(tempDir('packice-bad-target-'), 'moved');

    const e = await errorOf(runCli(args(command, table, target)));
    expect(e).toBeInstanceOf(c.error);
    expect(e.message).toContain(file);
    expect(e.message).toMatch(c.says);

    expect(hashTree(table)).toEqual(before);
    if (command === 'relocate') {
      expect(holdsTable(target), `${target} holds a table`).toBe(false);
    }
  });

  it.each(c.fails.map((cmd) => [cmd]))('main prints "packice: <file>: …" for %s and exits 1', async (command) => {
    const table = await freshTable(c.fixture);
    const file = await c.corrupt(table);
    const target = join(tempDir('packice-bad-target-'), 'moved');

    const r = await runMain(args(command, table, target));
    expect(r.exitCode).toBe(1);
    expect(r.stderr.startsWith(`packice: ${file}: `), r.stderr).toBe(true);
    expect(r.stderr).toMatch(c.says);
    // One line, no stack trace.
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  const works = ALL.filter((cmd) => !c.fails.includes(cmd));
  if (works.length > 0) {
    it.each(works.map((cmd) => [cmd]))('%s still works (it does not read that file)', async (command) => {
      const table = await freshTable(c.fixture);
      await c.corrupt(table);
      const target = join(tempDir('packice-bad-target-'), 'moved');
      await runCli(args(command, table, target));
      if (command === 'relocate') expect(holdsTable(target)).toBe(true);
    });
  }
});

describe('an ORC data file', () => {
  it('is counted by info, which reads manifests only', async () => {
    const table = await freshTable('iceberg_v3_deletion_vectors');
    await CASES['ORC data file'].corrupt(table);
    const info = JSON.parse(await runCli(['info', '--json', table])) as { fileFormats: Record<string, number> };
    expect(info.fileFormats).toEqual({ ORC: 1, PARQUET: 4 });
  });
});

describe('the corruptions hit what they aim at', () => {
  it('a fresh table scans to its live rows before it is broken', async () => {
    const table = await freshTable('iceberg_v3_deletion_vectors');
    const rows = parseJsonLines(await runCli(['scan', table]), table);
    expect(rows.map((r) => r.i).sort()).toEqual([1, 3, 5]);
  });

  it('the DV cases change bytes inside a deletion-vector blob, not the Puffin footer', async () => {
    const table = await freshTable('iceberg_v3_deletion_vectors');
    const dv = (await filesOf(table)).find((x) => x.format.toUpperCase() === 'PUFFIN')!;
    const footer = await readPuffinFooter(new LocalFileIO(), dv.filePath);
    const blob = footer.blobs.find((b) => b.offset === dv.contentOffset)!;
    expect(blob.type).toBe('deletion-vector-v1');
    expect(blob.length).toBe(dv.contentSize);
    expect(dv.contentOffset! + dv.contentSize!).toBeLessThanOrEqual(footer.fileLength - footer.footerSize);
  });
});
