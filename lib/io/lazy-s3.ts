/**
 * An S3FileIO that loads the AWS SDK on its first call: a command that names an S3 table pays
 * for the SDK, one that reads a local folder (or only prints help) does not.
 */
import type { FileIO, FileInfo, InputFile, WriteOptions } from './file-io.js';
import { rangeInputFile } from './input-file.js';
import type { S3FileIO, S3FileIOOptions } from './s3.js';

export class LazyS3FileIO implements FileIO {
  private loaded: Promise<S3FileIO> | undefined;

  constructor(private readonly options: S3FileIOOptions = {}) {}

  /** The S3FileIO behind this one, created on first use. */
  s3(): Promise<S3FileIO> {
    this.loaded ??= import('./s3.js').then(({ S3FileIO: Io }) => new Io(this.options));
    return this.loaded;
  }

  async read(path: string): Promise<Uint8Array> {
    return (await this.s3()).read(path);
  }

  async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    return (await this.s3()).readRange(path, start, end);
  }

  newInputFile(path: string, knownLength?: number): InputFile {
    return rangeInputFile(this, path, knownLength);
  }

  async stat(path: string): Promise<FileInfo> {
    return (await this.s3()).stat(path);
  }

  async exists(path: string): Promise<boolean> {
    return (await this.s3()).exists(path);
  }

  async write(path: string, data: Uint8Array | AsyncIterable<Uint8Array>, options?: WriteOptions): Promise<void> {
    return (await this.s3()).write(path, data, options);
  }

  async createIfAbsent(path: string, data: Uint8Array): Promise<void> {
    return (await this.s3()).createIfAbsent(path, data);
  }

  async *list(prefix: string): AsyncIterable<FileInfo> {
    yield* (await this.s3()).list(prefix);
  }

  async deleteMany(paths: readonly string[]): Promise<void> {
    return (await this.s3()).deleteMany(paths);
  }
}
