import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  commitNext,
  commitFirstVersion,
  loadCurrent,
  metadataFileLocation,
  metadataVersionOf,
  versionHintLocation,
} from '../../lib/catalog/object-store-catalog.js';
import { AlreadyExistsError, CommitConflictError, NotFoundError } from '../../lib/errors.js';
import type { FileIO } from '../../lib/io/file-io.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { S3FileIO } from '../../lib/io/s3.js';
import { FIXTURES } from '../support/fixtures.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array): string => new TextDecoder().decode(b);

interface Backend {
  readonly name: string;
  setUp(): Promise<{ io: FileIO; root: string }>;
  tearDown(): Promise<void>;
}

let localRoot = '';
const backends: Backend[] = [
  {
    name: 'local disk',
    async setUp() {
      localRoot = await mkdtemp(join(tmpdir(), 'packice-catalog-'));
      return { io: new LocalFileIO(), root: localRoot };
    },
    async tearDown() {
      await rm(localRoot, { recursive: true, force: true });
    },
  },
  {
    name: 'S3 (moto)',
    async setUp() {
      return { io: new S3FileIO({ endpoint: testS3Endpoint() }), root: `s3://${await freshBucket()}/warehouse` };
    },
    async tearDown() {},
  },
];

describe.each(backends)('object-store catalog on $name', (backend) => {
  let io: FileIO;
  let root: string;
  let tables = 0;
  const newTable = (): string => `${root}/db/t${++tables}`;

  async function namesIn(table: string): Promise<string[]> {
    const names: string[] = [];
    for await (const f of io.list(`${table}/metadata`)) names.push(f.path.slice(`${table}/metadata/`.length));
    return names.sort();
  }
  const metadata = (table: string, v: number): string => `{"table":"${table}","v":${v}}`;
  async function putVersions(table: string, versions: number[]): Promise<void> {
    for (const v of versions) await io.write(metadataFileLocation(table, v), bytes(metadata(table, v)));
  }

  beforeAll(async () => {
    ({ io, root } = await backend.setUp());
  });
  afterAll(() => backend.tearDown());

  it('creates v1 and commits v2 on top, writing the hint each time', async () => {
    const table = newTable();
    expect(await commitFirstVersion(io, table, 'one')).toEqual({
      version: 1,
      metadataLocation: `${table}/metadata/v1.metadata.json`,
    });
    expect(text(await io.read(versionHintLocation(table)))).toBe('1');
    expect(await commitNext(io, table, 1, 'two')).toEqual({
      version: 2,
      metadataLocation: `${table}/metadata/v2.metadata.json`,
    });
    expect(text(await io.read(versionHintLocation(table)))).toBe('2');
    expect(await loadCurrent(io, table)).toEqual({
      version: 2,
      metadataLocation: `${table}/metadata/v2.metadata.json`,
      text: 'two',
    });
    expect(await namesIn(table)).toEqual(['v1.metadata.json', 'v2.metadata.json', 'version-hint.text']);
  });

  it('follows the hint', async () => {
    const table = newTable();
    await putVersions(table, [1, 2, 5]);
    await io.write(versionHintLocation(table), bytes('2'));
    // v3 is missing, so the probe stops at 2: the listing (which would say 5) was not used.
    expect(await loadCurrent(io, table)).toMatchObject({ version: 2, text: metadata(table, 2) });
  });

  it('probes past a lagging hint', async () => {
    const table = newTable();
    await putVersions(table, [1, 2, 3, 4]);
    await io.write(versionHintLocation(table), bytes('2\n'));
    expect(await loadCurrent(io, table)).toEqual({
      version: 4,
      metadataLocation: metadataFileLocation(table, 4),
      text: metadata(table, 4),
    });
  });

  it('reads the hint from version-hint.txt when version-hint.text is absent', async () => {
    const table = newTable();
    await putVersions(table, [1, 2, 5]);
    await io.write(`${table}/metadata/version-hint.txt`, bytes('2\n'));
    expect((await loadCurrent(io, table)).version).toBe(2);
  });

  it.each([
    ['empty', ''],
    ['garbage', 'v3'],
    ['zero', '0'],
    ['naming a missing version', '9'],
  ])('lists the folder when the hint is %s', async (_label, hint) => {
    const table = newTable();
    await putVersions(table, [1, 2, 5]);
    await io.write(`${table}/metadata/sub/v7.metadata.json`, bytes('nested: not a version'));
    await io.write(`${table}/metadata/v6.metadata.json.tmp`, bytes('not a version'));
    await io.write(versionHintLocation(table), bytes(hint));
    expect(await loadCurrent(io, table)).toMatchObject({ version: 5, text: metadata(table, 5) });
  });

  it('lists the folder when there is no hint at all', async () => {
    const table = newTable();
    await putVersions(table, [3, 4]);
    expect((await loadCurrent(io, table)).version).toBe(4);
  });

  it('fails naming the location when there is no table', async () => {
    const table = newTable();
    const err = await loadCurrent(io, table).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).path).toBe(table);
    expect((err as Error).message).toBe(`no Iceberg table here: ${table}/metadata holds no v<N>.metadata.json`);

    await io.write(versionHintLocation(table), bytes('3'));
    await expect(loadCurrent(io, table)).rejects.toThrow(NotFoundError);
  });

  it('lets exactly one of 8 racing commits on one base win and leaves nothing from the losers', async () => {
    const table = newTable();
    await commitFirstVersion(io, table, 'base');
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => commitNext(io, table, 1, `writer ${i}`)),
    );
    const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    expect(winners).toHaveLength(1);
    const losers = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(losers).toHaveLength(7);
    for (const reason of losers) {
      expect(reason).toBeInstanceOf(CommitConflictError);
      expect((reason as CommitConflictError).retryable).toBe(true);
      expect((reason as Error).message).toBe(
        `${table}/metadata/v2.metadata.json: v2.metadata.json was committed by another writer; refresh and retry`,
      );
    }
    expect(await namesIn(table)).toEqual(['v1.metadata.json', 'v2.metadata.json', 'version-hint.text']);
    expect(await loadCurrent(io, table)).toMatchObject({ version: 2, text: `writer ${winners[0]}` });
  });

  it('rejects a commit on a stale base', async () => {
    const table = newTable();
    await commitFirstVersion(io, table, 'one');
    await commitNext(io, table, 1, 'two');
    await commitNext(io, table, 2, 'three');
    await expect(commitNext(io, table, 1, 'stale')).rejects.toThrow(CommitConflictError);
    expect(text(await io.read(metadataFileLocation(table, 2)))).toBe('two');
  });

  it('rejects a commit whose base was cleaned up, so it cannot land behind the current version', async () => {
    const table = newTable();
    await putVersions(table, [1, 2, 3]);
    await io.deleteMany([metadataFileLocation(table, 1), metadataFileLocation(table, 2)]);
    await expect(commitNext(io, table, 1, 'stale')).rejects.toThrow(
      `cannot commit v2: base v1 no longer exists at ${table}/metadata; refresh and retry`,
    );
    expect(await namesIn(table)).toEqual(['v3.metadata.json']);
  });

  it('refuses to create a table over an existing one', async () => {
    const table = newTable();
    await putVersions(table, [4]);
    await expect(commitFirstVersion(io, table, 'again')).rejects.toThrow(AlreadyExistsError);
    const raced = newTable();
    const results = await Promise.allSettled([1, 2, 3].map((i) => commitFirstVersion(io, raced, `creator ${i}`)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(AlreadyExistsError);
  });

  describe.each([
    ['iceberg_v2_partitioned_position_deletes', 3], // hint in version-hint.txt
    ['iceberg_v2_delete_equality_partitioned', 5],
    ['iceberg_v3_deletion_vectors', 3], // empty version-hint.text
  ])('the fixture %s', (fixture, current) => {
    it(`loads v${current}`, async () => {
      const table = `${root}/fixtures/${fixture}`;
      const source = join(FIXTURES, fixture, 'metadata');
      for (const name of await readdir(source)) {
        if (name.endsWith('.json') || name.startsWith('version-hint')) {
          await io.write(`${table}/metadata/${name}`, new Uint8Array(await readFile(join(source, name))));
        }
      }
      const loaded = await loadCurrent(io, table);
      expect(loaded.version).toBe(current);
      expect(loaded.text).toBe(await readFile(join(source, `v${current}.metadata.json`), 'utf8'));
    });
  });
});

describe('object-store catalog, local only', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'packice-catalog-hint-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('commits even when the hint cannot be written, and loads by listing', async () => {
    const io = new LocalFileIO();
    const table = join(root, 't');
    await commitFirstVersion(io, table, 'one');
    await rm(versionHintLocation(table));
    await mkdir(versionHintLocation(table)); // a folder where the hint goes: writes and reads fail
    expect(await commitNext(io, table, 1, 'two')).toEqual({ version: 2, metadataLocation: metadataFileLocation(table, 2) });
    expect(await loadCurrent(io, table)).toMatchObject({ version: 2, text: 'two' });
  });
});

describe('metadataVersionOf', () => {
  it('parses only v<N>.metadata.json', () => {
    expect(metadataVersionOf('v12.metadata.json')).toBe(12);
    expect(metadataVersionOf('v0.metadata.json')).toBe(0);
    expect(metadataVersionOf('00001-3f1c.metadata.json')).toBeUndefined();
    expect(metadataVersionOf('v1.metadata.json.tmp')).toBeUndefined();
    expect(metadataVersionOf('v1.gz.metadata.json')).toBeUndefined();
    expect(metadataVersionOf('vx.metadata.json')).toBeUndefined();
  });
});
