import type { FileIO, FileInfo, InputFile, WriteOptions } from './file-io.js';
import { rangeInputFile } from './input-file.js';

/**
 * A FileIO that hands every call to another one: the base of wrappers that change a few calls
 * (read-ahead.ts). Its input files read through `readRange` of this object, so a subclass that
 * overrides `readRange` sees the Parquet reader's range reads too.
 */
export class ForwardingFileIO implements FileIO {
  constructor(protected readonly inner: FileIO) {}

  read(path: string): Promise<Uint8Array> {
    return this.inner.read(path);
  }

  readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    return this.inner.readRange(path, start, end);
  }

  newInputFile(path: string, knownLength?: number): InputFile {
    return rangeInputFile(this, path, knownLength);
  }

  stat(path: string): Promise<FileInfo> {
    return this.inner.stat(path);
  }

  exists(path: string): Promise<boolean> {
    return this.inner.exists(path);
  }

  write(path: string, data: Uint8Array | AsyncIterable<Uint8Array>, options?: WriteOptions): Promise<void> {
    return this.inner.write(path, data, options);
  }

  createIfAbsent(path: string, data: Uint8Array): Promise<void> {
    return this.inner.createIfAbsent(path, data);
  }

  list(prefix: string): AsyncIterable<FileInfo> {
    return this.inner.list(prefix);
  }

  deleteMany(paths: readonly string[]): Promise<void> {
    return this.inner.deleteMany(paths);
  }
}
