import type { FileInfo, FileIO, InputFile } from '../../lib/io/file-io.js';

/** A FileIO that records every path it is asked to read. */
export class RecordingIO implements FileIO {
  readonly reads: string[] = [];
  constructor(private readonly inner: FileIO) {}
  read(path: string): Promise<Uint8Array> {
    this.reads.push(path);
    return this.inner.read(path);
  }
  readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    this.reads.push(path);
    return this.inner.readRange(path, start, end);
  }
  newInputFile(path: string, knownLength?: number): InputFile {
    this.reads.push(path);
    return this.inner.newInputFile(path, knownLength);
  }
  stat(path: string): Promise<FileInfo> {
    this.reads.push(path);
    return this.inner.stat(path);
  }
  exists(path: string): Promise<boolean> {
    this.reads.push(path);
    return this.inner.exists(path);
  }
  write(path: string, data: Uint8Array | AsyncIterable<Uint8Array>): Promise<void> {
    return this.inner.write(path, data);
  }
  createIfAbsent(path: string, data: Uint8Array): Promise<void> {
    return this.inner.createIfAbsent(path, data);
  }
  list(prefix: string): AsyncIterable<FileInfo> {
    this.reads.push(prefix);
    return this.inner.list(prefix);
  }
  deleteMany(paths: readonly string[]): Promise<void> {
    return this.inner.deleteMany(paths);
  }
}
