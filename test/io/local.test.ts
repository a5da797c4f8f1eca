import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AlreadyExistsError, InvalidFileError, IoError, NotFoundError, UnsupportedError } from '../../lib/errors.js';
import type { FileInfo } from '../../lib/io/file-io.js';
import { LocalFileIO, localPathOf } from '../../lib/io/local.js';

const io = new LocalFileIO();
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array): string => new TextDecoder().decode(b);

async function collect(it: AsyncIterable<FileInfo>): Promise<FileInfo[]> {
  const out: FileInfo[] = [];
  for await (const f of it) out.push(f);
  return out;
}

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'packice-local-io-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('localPathOf', () => {
  it('accepts absolute paths and file: URIs in all their spellings', () => {
    expect(localPathOf('/a/b')).toBe('/a/b');
    expect(localPathOf('file:/a/b')).toBe('/a/b');
    expect(localPathOf('file:///a/b')).toBe('/a/b');
    expect(localPathOf('file://localhost/a/b')).toBe('/a/b');
    expect(localPathOf('file:/a b%20c')).toBe('/a b%20c');
  });

  it('rejects relative paths, remote hosts and other schemes, naming the location', () => {
    expect(() => localPathOf('a/b')).toThrow(UnsupportedError);
    expect(() => localPathOf('a/b')).toThrow(/^a\/b: /);
    expect(() => localPathOf('file://server/a')).toThrow(/file:\/\/server\/a.*host "server"/);
    expect(() => localPathOf('s3://b/k')).toThrow(UnsupportedError);
  });
});

describe('LocalFileIO', () => {
  it('writes, creating missing folders, and reads back through every spelling of the path', async () => {
    const path = join(root, 'w', 'deep', 'er', 'f.bin');
    await io.write(path, bytes('hello'));
    expect(text(await io.read(path))).toBe('hello');
    expect(text(await io.read(`file:${path}`))).toBe('hello');
    expect(text(await io.read(`file://${path}`))).toBe('hello');
    await io.write(`file://${path}`, bytes('replaced'));
    expect(await readFile(path, 'utf8')).toBe('replaced');
    expect(await readdir(join(root, 'w', 'deep', 'er'))).toEqual(['f.bin']);
  });

  it('reads exact ranges and rejects ranges past the end as a truncated file', async () => {
    const path = join(root, 'range.bin');
    await writeFile(path, Buffer.from('0123456789'));
    expect(text(await io.readRange(path, 2, 5))).toBe('234');
    expect(text(await io.readRange(path, 0, 10))).toBe('0123456789');
    expect(await io.readRange(path, 4, 4)).toEqual(new Uint8Array(0));
    const err = await io.readRange(path, 8, 12).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidFileError);
    expect((err as Error).message).toBe(
      `${path}: file is truncated or shorter than expected: asked for bytes [8, 12), got 2 byte(s)`,
    );
    await expect(io.readRange(path, 5, 3)).rejects.toThrow(IoError);
    await expect(io.readRange(path, -1, 3)).rejects.toThrow(/invalid byte range \[-1, 3\)/);
  });

  it('stats files with size and mtime; folders and missing files are not found', async () => {
    const path = join(root, 'stat.bin');
    await writeFile(path, Buffer.alloc(1234));
    const info = await io.stat(path);
    expect(info).toEqual({ path, size: 1234, lastModifiedMs: Math.floor((await stat(path)).mtimeMs) });
    expect(await io.exists(path)).toBe(true);
    expect(await io.exists(join(root, 'nope'))).toBe(false);
    expect(await io.exists(root)).toBe(false);
    await expect(io.stat(root)).rejects.toThrow(NotFoundError);
  });

  it('names the path in not-found errors', async () => {
    const missing = join(root, 'missing', 'x.json');
    const err = await io.read(missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).path).toBe(missing);
    expect((err as Error).message).toBe(`${missing}: cannot read: no such file`);
    await expect(io.readRange(`file://${missing}`, 0, 1)).rejects.toThrow(`file://${missing}: cannot read: no such file`);
    await expect(io.stat(missing)).rejects.toThrow(NotFoundError);
  });

  it('streams a write and never shows a half-written target', async () => {
    const path = join(root, 'stream', 'big.bin');
    const seenMidway: boolean[] = [];
    async function* chunks(): AsyncIterable<Uint8Array> {
      for (let i = 0; i < 5; i++) {
        yield new Uint8Array(1000).fill(i);
        seenMidway.push(existsSync(path));
      }
    }
    await io.write(path, chunks());
    expect(seenMidway).toEqual([false, false, false, false, false]);
    const back = await io.read(path);
    expect(back.length).toBe(5000);
    expect([back[0], back[999], back[1000], back[4999]]).toEqual([0, 0, 1, 4]);
    expect(await readdir(join(root, 'stream'))).toEqual(['big.bin']);
  });

  it('keeps the old content and leaves no temp file when a stream fails', async () => {
    const dir = join(root, 'failing');
    const path = join(dir, 'f.bin');
    await io.write(path, bytes('old'));
    async function* broken(): AsyncIterable<Uint8Array> {
      yield bytes('new part');
      throw new Error('producer died');
    }
    await expect(io.write(path, broken())).rejects.toThrow(/producer died/);
    expect(await readFile(path, 'utf8')).toBe('old');
    expect(await readdir(dir)).toEqual(['f.bin']);
  });

  it('creates if absent exactly once', async () => {
    const dir = join(root, 'cia');
    const path = join(dir, 'v1.metadata.json');
    await io.createIfAbsent(path, bytes('first'));
    const err = await io.createIfAbsent(path, bytes('second')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AlreadyExistsError);
    expect((err as Error).message).toBe(`${path}: already exists`);
    expect(await readFile(path, 'utf8')).toBe('first');
    expect(await readdir(dir)).toEqual(['v1.metadata.json']);
  });

  it('lets exactly one of 8 racing creates win', async () => {
    const dir = join(root, 'race');
    const path = join(dir, 'target');
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => io.createIfAbsent(path, bytes(`writer ${i}`))),
    );
    const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    expect(winners).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(AlreadyExistsError);
    }
    expect(await readFile(path, 'utf8')).toBe(`writer ${winners[0]}`);
    expect(await readdir(dir)).toEqual(['target']);
  });

  it('lists a folder recursively, in the caller spelling, and nothing beside it', async () => {
    const t = join(root, 'list', 't');
    await io.write(join(t, 'data', 'b.parquet'), bytes('bb'));
    await io.write(join(t, 'data', 'a.parquet'), bytes('a'));
    await io.write(join(t, 'metadata', 'v1.metadata.json'), bytes('{}'));
    await io.write(join(root, 'list', 't_backup', 'x'), bytes('x'));
    await io.write(join(root, 'list', 't.txt'), bytes('x'));

    const plain = await collect(io.list(t));
    expect(plain.map((f) => [f.path, f.size])).toEqual([
      [join(t, 'data', 'a.parquet'), 1],
      [join(t, 'data', 'b.parquet'), 2],
      [join(t, 'metadata', 'v1.metadata.json'), 2],
    ]);
    const uri = await collect(io.list(`file://${t}/`));
    expect(uri.map((f) => f.path)).toEqual([
      `file://${t}/data/a.parquet`,
      `file://${t}/data/b.parquet`,
      `file://${t}/metadata/v1.metadata.json`,
    ]);
    expect(await collect(io.list(join(root, 'list', 'absent')))).toEqual([]);
  });

  it('deletes many, ignoring missing files', async () => {
    const dir = join(root, 'del');
    await mkdir(dir, { recursive: true });
    const paths = Array.from({ length: 40 }, (_, i) => join(dir, `f${i}`));
    await Promise.all(paths.map((p) => writeFile(p, 'x')));
    await writeFile(join(dir, 'keep'), 'k');
    await io.deleteMany([...paths, join(dir, 'never-existed')]);
    expect(await readdir(dir)).toEqual(['keep']);
    await io.deleteMany([]);
  });

  it('gives range-readable input files that fetch the length once', async () => {
    const path = join(root, 'input.bin');
    await writeFile(path, Buffer.from('abcdefgh'));
    const file = io.newInputFile(path);
    expect(file.path).toBe(path);
    expect(await file.length()).toBe(8);
    await writeFile(path, Buffer.from('abcdefghij'));
    expect(await file.length()).toBe(8);
    expect(text(await file.read(6, 10))).toBe('ghij');
    expect(await io.newInputFile(path, 3).length()).toBe(3);
    await expect(io.newInputFile(join(root, 'absent')).length()).rejects.toThrow(NotFoundError);
  });

  it('reads a file\'s ranges through one handle, opened again after its own write, a delete or close', async () => {
    const local = new LocalFileIO();
    const path = join(root, 'handle.bin');
    await local.write(path, bytes('0123456789'));
    const ranges = await Promise.all([[0, 2], [2, 5], [5, 10], [0, 10]].map(([s, e]) => local.readRange(path, s, e)));
    expect(ranges.map(text)).toEqual(['01', '234', '56789', '0123456789']);
    expect(text(await local.readRange(`file://${path}`, 8, 10))).toBe('89');
    expect(local.handleStats()).toEqual({ opened: 1, open: 1 });
    // Its own write replaces the file: the next read sees the new bytes through a new handle.
    await local.write(path, bytes('abcdefghij'));
    expect(local.handleStats().open).toBe(0);
    expect(text(await local.readRange(path, 0, 3))).toBe('abc');
    expect(local.handleStats()).toEqual({ opened: 2, open: 1 });
    // A short read fails as before and keeps no handle.
    await expect(local.readRange(path, 8, 12)).rejects.toThrow(InvalidFileError);
    expect(local.handleStats().open).toBe(0);
    expect(text(await local.readRange(path, 8, 10))).toBe('ij');
    await local.deleteMany([path]);
    expect(local.handleStats().open).toBe(0);
    await expect(local.readRange(path, 0, 1)).rejects.toThrow(NotFoundError);
    expect(local.handleStats().open).toBe(0);
    await local.write(path, bytes('xyz'));
    expect(text(await local.readRange(path, 0, 3))).toBe('xyz');
    await local.close();
    expect(local.handleStats().open).toBe(0);
    expect(text(await local.readRange(path, 1, 3))).toBe('yz');
    await local.close();
  });

  it('closes a handle once its reads stop (a timer that keeps no process alive), and holds 32 at most', async () => {
    const local = new LocalFileIO();
    const paths = Array.from({ length: 40 }, (_, k) => join(root, `many-${k}.bin`));
    for (const p of paths) await writeFile(p, Buffer.from('data'));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      for (const p of paths) expect(text(await local.readRange(p, 0, 4))).toBe('data');
      expect(local.handleStats()).toEqual({ opened: 40, open: 32 });
      expect(text(await local.readRange(paths[39], 1, 2))).toBe('a');
      expect(local.handleStats()).toEqual({ opened: 40, open: 32 });
      await vi.runAllTimersAsync();
    } finally {
      vi.useRealTimers();
    }
    expect(local.handleStats().open).toBe(0);
  });
});
