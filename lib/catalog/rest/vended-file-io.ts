/**
 * The FileIO of a table in a REST catalog. Its files may be local (a catalog serving a folder) or
 * on S3; for S3 the catalog may vend credentials with the table (`config` or the longest matching
 * `storage-credentials` prefix of LoadTableResult: `s3.access-key-id`, `s3.secret-access-key`,
 * `s3.session-token`, `s3.endpoint`, `s3.region` or `client.region`, `s3.path-style-access`), and
 * then S3 is reached with those instead of the default chain. Each load hands the newest ones.
 */
import type { FileIO, FileInfo, InputFile, WriteOptions } from '../../io/file-io.js';
import { fileIOFor, LazyS3FileIO, rangeInputFile } from '../../io/index.js';
import { isS3Path } from '../../io/path.js';

export interface VendedFileIOOptions {
  /** The CLI's `--s3-endpoint`, when the catalog does not say. */
  readonly s3Endpoint?: string;
  /** Every file through this one instead (tests). */
  readonly io?: FileIO;
}

/** Storage settings the catalog vended, by the Java property names above. */
export type StorageConfig = Readonly<Record<string, string>>;

export class VendedFileIO implements FileIO {
  private s3: FileIO | undefined;
  private vendedKey = '';

  constructor(private readonly options: VendedFileIOOptions = {}) {}

  /** True when S3 is now reached with credentials the catalog vended. */
  get vended(): boolean {
    return this.s3 !== undefined;
  }

  /** Uses what the catalog vended for S3; config without S3 credentials keeps the default chain. */
  useStorageConfig(config: StorageConfig): void {
    const accessKeyId = config['s3.access-key-id'];
    const secretAccessKey = config['s3.secret-access-key'];
    if (accessKeyId === undefined || secretAccessKey === undefined) return;
    const sessionToken = config['s3.session-token'];
    const endpoint = config['s3.endpoint'] ?? this.options.s3Endpoint;
    const region = config['s3.region'] ?? config['client.region'];
    const pathStyle = config['s3.path-style-access'];
    const key = JSON.stringify([accessKeyId, secretAccessKey, sessionToken, endpoint, region, pathStyle]);
    if (key === this.vendedKey) return;
    this.vendedKey = key;
    this.s3 = new LazyS3FileIO({
      ...(endpoint !== undefined ? { endpoint } : {}),
      ...(region !== undefined ? { region } : {}),
      ...(pathStyle !== undefined ? { forcePathStyle: pathStyle === 'true' } : {}),
      credentials: { accessKeyId, secretAccessKey, ...(sessionToken !== undefined ? { sessionToken } : {}) },
    });
  }

  private of(path: string): FileIO {
    if (this.options.io !== undefined) return this.options.io;
    if (this.s3 !== undefined && isS3Path(path)) return this.s3;
    return fileIOFor(path, { ...(this.options.s3Endpoint !== undefined ? { s3Endpoint: this.options.s3Endpoint } : {}) });
  }

  read(path: string): Promise<Uint8Array> {
    return this.of(path).read(path);
  }

  readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    return this.of(path).readRange(path, start, end);
  }

  newInputFile(path: string, knownLength?: number): InputFile {
    return rangeInputFile(this, path, knownLength);
  }

  stat(path: string): Promise<FileInfo> {
    return this.of(path).stat(path);
  }

  exists(path: string): Promise<boolean> {
    return this.of(path).exists(path);
  }

  write(path: string, data: Uint8Array | AsyncIterable<Uint8Array>, options?: WriteOptions): Promise<void> {
    return this.of(path).write(path, data, options);
  }

  createIfAbsent(path: string, data: Uint8Array): Promise<void> {
    return this.of(path).createIfAbsent(path, data);
  }

  list(prefix: string): AsyncIterable<FileInfo> {
    return this.of(prefix).list(prefix);
  }

  async deleteMany(paths: readonly string[]): Promise<void> {
    const byIo = new Map<FileIO, string[]>();
    for (const p of paths) {
      const io = this.of(p);
      byIo.set(io, [...(byIo.get(io) ?? []), p]);
    }
    for (const [io, group] of byIo) await io.deleteMany(group);
  }
}

/**
 * The storage settings for `location` from a LoadTableResult: the table's `config`, overlaid by
 * the `storage-credentials` entry with the longest prefix of `location` (the spec says to look
 * there first).
 */
export function storageConfigFor(
  location: string,
  config: StorageConfig,
  credentials: readonly { readonly prefix: string; readonly config: StorageConfig }[],
): StorageConfig {
  const best = credentials
    .filter((c) => location.startsWith(c.prefix) || schemeless(location).startsWith(schemeless(c.prefix)))
    .sort((a, b) => b.prefix.length - a.prefix.length)[0];
  return best === undefined ? config : { ...config, ...best.config };
}

/** `s3a://b/k` and `s3://b/k` are the same object. */
function schemeless(location: string): string {
  return location.replace(/^s3[an]?:\/\//, 's3://');
}
