import type { FileInfo, FileIO, InputFile } from '../../lib/io/file-io.js';
import { ForwardingFileIO } from '../../lib/io/forwarding.js';

/** A FileIO that records every path it is asked to read. */
export class RecordingIO extends ForwardingFileIO {
  readonly reads: string[] = [];
  constructor(inner: FileIO) {
    super(inner);
  }
  override read(path: string): Promise<Uint8Array> {
    this.reads.push(path);
    return this.inner.read(path);
  }
  override readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    this.reads.push(path);
    return this.inner.readRange(path, start, end);
  }
  override newInputFile(path: string, knownLength?: number): InputFile {
    this.reads.push(path);
    return this.inner.newInputFile(path, knownLength);
  }
  override stat(path: string): Promise<FileInfo> {
    this.reads.push(path);
    return this.inner.stat(path);
  }
  override exists(path: string): Promise<boolean> {
    this.reads.push(path);
    return this.inner.exists(path);
  }
  override list(prefix: string): AsyncIterable<FileInfo> {
    this.reads.push(prefix);
    return this.inner.list(prefix);
  }
}
