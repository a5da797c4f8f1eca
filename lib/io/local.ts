import { randomUUID } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { link, mkdir, open, opendir, readFile, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { AlreadyExistsError, IoError, NotFoundError, PackiceError, UnsupportedError } from '../errors.js';
import type { FileIO, FileInfo, InputFile } from './file-io.js';
import { checkByteRange, existsByStat, rangeInputFile, shortReadError } from './input-file.js';

const DELETE_CONCURRENCY = 16;

/**
 * The file-system path of a local location: an absolute path, `file:/x`, `file:///x` or
 * `file://localhost/x`. No percent decoding: Hadoop's `Path.toString()` writes `file:/a b`.
 */
export function localPathOf(location: string): string {
  let path = location;
  if (/^file:/i.test(path)) {
    path = path.slice('file:'.length);
    if (path.startsWith('//')) {
      const slash = path.indexOf('/', 2);
      const authority = slash < 0 ? path.slice(2) : path.slice(2, slash);
      if (authority !== '' && authority.toLowerCase() !== 'localhost') {
        throw new UnsupportedError(`file URI with host "${authority}" is not a local path`, { path: location });
      }
      path = slash < 0 ? '/' : path.slice(slash);
    }
  }
  if (!path.startsWith('/')) {
    throw new UnsupportedError('local locations must be absolute paths or file: URIs', { path: location });
  }
  return path;
}

function errnoOf(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/** Node's errors become the project's, naming the location the caller used. */
function translate(err: unknown, location: string, action: string): PackiceError {
  if (err instanceof PackiceError) return err;
  const code = errnoOf(err);
  switch (code) {
    case 'ENOENT':
      return new NotFoundError(`cannot ${action}: no such file`, { path: location, cause: err });
    case 'EEXIST':
      return new AlreadyExistsError(`cannot ${action}: the file already exists`, { path: location, cause: err });
    case 'EISDIR':
      return new IoError(`cannot ${action}: it is a directory`, { path: location, cause: err, retryable: false });
    case 'ENOTDIR':
      return new NotFoundError(`cannot ${action}: a parent is not a directory`, { path: location, cause: err });
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new IoError(`cannot ${action}: permission denied (${code})`, { path: location, cause: err, retryable: false });
    default:
      return new IoError(`cannot ${action}: ${err instanceof Error ? err.message : String(err)}`, {
        path: location,
        cause: err,
      });
  }
}

/** Local disk. Writes land under a hidden temp name in the target folder and appear whole. */
export class LocalFileIO implements FileIO {
  async read(path: string): Promise<Uint8Array> {
    try {
      return new Uint8Array(await readFile(localPathOf(path)));
    } catch (err) {
      throw translate(err, path, 'read');
    }
  }

  async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    checkByteRange(path, start, end);
    let handle: FileHandle | undefined;
    try {
      handle = await open(localPathOf(path), 'r');
      const out = new Uint8Array(end - start);
      let filled = 0;
      while (filled < out.length) {
        const { bytesRead } = await handle.read(out, filled, out.length - filled, start + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      if (filled < out.length) throw shortReadError(path, start, end, filled);
      return out;
    } catch (err) {
      throw translate(err, path, 'read');
    } finally {
      await handle?.close();
    }
  }

  newInputFile(path: string, knownLength?: number): InputFile {
    return rangeInputFile(this, path, knownLength);
  }

  async stat(path: string): Promise<FileInfo> {
    let info;
    try {
      info = await stat(localPathOf(path));
    } catch (err) {
      throw translate(err, path, 'stat');
    }
    // Object stores have no folders, so a folder is not a file here either.
    if (!info.isFile()) throw new NotFoundError('not a file', { path });
    return { path, size: info.size, lastModifiedMs: Math.floor(info.mtimeMs) };
  }

  exists(path: string): Promise<boolean> {
    return existsByStat(this, path);
  }

  async write(path: string, data: Uint8Array | AsyncIterable<Uint8Array>): Promise<void> {
    const target = localPathOf(path);
    const temp = await this.writeTemp(path, target, data);
    try {
      await rename(temp, target);
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      throw translate(err, path, 'write');
    }
  }

  async createIfAbsent(path: string, data: Uint8Array): Promise<void> {
    const target = localPathOf(path);
    const temp = await this.writeTemp(path, target, data);
    try {
      // link() fails with EEXIST if the target exists, and the target appears with all its bytes.
      await link(temp, target);
    } catch (err) {
      const code = errnoOf(err);
      if (code === 'EEXIST') throw new AlreadyExistsError('already exists', { path, cause: err });
      if (code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'EPERM' || code === 'ENOSYS') {
        await this.createExclusive(path, target, data);
      } else {
        throw translate(err, path, 'create');
      }
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  }

  async *list(prefix: string): AsyncIterable<FileInfo> {
    // The prefix is a folder: `/t` never lists `/t_backup/…`.
    const root = localPathOf(prefix).replace(/\/+$/, '') || '/';
    const shown = prefix.replace(/\/+$/, '');
    yield* this.walk(root, shown, prefix);
  }

  async deleteMany(paths: readonly string[]): Promise<void> {
    const failures: PackiceError[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < paths.length) {
        const path = paths[next++];
        try {
          await unlink(localPathOf(path));
        } catch (err) {
          if (errnoOf(err) !== 'ENOENT') failures.push(translate(err, path, 'delete'));
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, paths.length) }, worker));
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) {
      throw new IoError(`${failures.length} of ${paths.length} deletes failed; first: ${failures[0].message}`, {
        path: failures[0].path,
        cause: failures[0],
      });
    }
  }

  private async *walk(dir: string, shownDir: string, prefix: string): AsyncIterable<FileInfo> {
    let entries: Dirent[];
    try {
      entries = [];
      for await (const entry of await opendir(dir)) entries.push(entry);
    } catch (err) {
      const code = errnoOf(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      throw translate(err, prefix, 'list');
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const fsPath = join(dir, entry.name);
      const shown = `${shownDir}/${entry.name}`;
      if (entry.isDirectory()) {
        yield* this.walk(fsPath, shown, prefix);
        continue;
      }
      let info;
      try {
        info = await stat(fsPath);
      } catch (err) {
        if (errnoOf(err) === 'ENOENT') continue; // deleted while listing
        throw translate(err, shown, 'stat');
      }
      // Symlinked folders are not followed, so a link cycle cannot loop.
      if (info.isFile()) yield { path: shown, size: info.size, lastModifiedMs: Math.floor(info.mtimeMs) };
    }
  }

  /** Writes the bytes to a fresh hidden file beside the target and returns its path. */
  private async writeTemp(location: string, target: string, data: Uint8Array | AsyncIterable<Uint8Array>): Promise<string> {
    const temp = join(dirname(target), `.${basename(target)}.${randomUUID()}.tmp`);
    let handle: FileHandle | undefined;
    try {
      await mkdir(dirname(target), { recursive: true });
      handle = await open(temp, 'wx');
      if (data instanceof Uint8Array) {
        await handle.writeFile(data);
      } else {
        // writeFile on an open handle writes at the current position, so chunks append.
        for await (const chunk of data) await handle.writeFile(chunk);
      }
      await handle.sync();
      await handle.close();
      handle = undefined;
      return temp;
    } catch (err) {
      await handle?.close().catch(() => undefined);
      await unlink(temp).catch(() => undefined);
      throw translate(err, location, 'write');
    }
  }

  /** For file systems without hard links: exclusive create, written in place. */
  private async createExclusive(location: string, target: string, data: Uint8Array): Promise<void> {
    let handle: FileHandle | undefined;
    try {
      handle = await open(target, 'wx');
    } catch (err) {
      if (errnoOf(err) === 'EEXIST') throw new AlreadyExistsError('already exists', { path: location, cause: err });
      throw translate(err, location, 'create');
    }
    try {
      await handle.writeFile(data);
      await handle.sync();
      await handle.close();
    } catch (err) {
      await handle.close().catch(() => undefined);
      await unlink(target).catch(() => undefined); // never leave a half-written file as the target
      throw translate(err, location, 'create');
    }
  }
}
