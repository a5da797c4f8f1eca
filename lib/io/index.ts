import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { UnsupportedError } from '../errors.js';
import type { FileIO } from './file-io.js';
import { LazyS3FileIO } from './lazy-s3.js';
import { LocalFileIO } from './local.js';
import { isLocalPath, isS3Path, schemeOf } from './path.js';
import { defaultS3Endpoint } from './s3-location.js';

export type { FileIO, FileInfo, InputFile } from './file-io.js';
export { rangeInputFile } from './input-file.js';
export { LocalFileIO, localPathOf } from './local.js';
export { LazyS3FileIO } from './lazy-s3.js';
export { defaultS3Endpoint, parseS3Location } from './s3-location.js';
export type { S3Location } from './s3-location.js';
export { baseName, isLocalPath, isS3Path, joinPath, normalizePath, parentOf, schemeOf } from './path.js';

export interface FileIOOptions {
  /** The CLI's `--s3-endpoint`; wins over env `AWS_ENDPOINT_URL_S3`. */
  readonly s3Endpoint?: string;
}

const local = new LocalFileIO();
// One client per endpoint: clients hold connection pools, so they are shared for the process.
const s3ByEndpoint = new Map<string, LazyS3FileIO>();

/**
 * The FileIO for a location: local for absolute paths and `file:`, S3 for `s3://`, `s3a://`,
 * `s3n://` (the AWS SDK is loaded on the first S3 request, not here).
 */
export function fileIOFor(location: string, options: FileIOOptions = {}): FileIO {
  if (isLocalPath(location)) return local;
  if (isS3Path(location)) {
    const endpoint = options.s3Endpoint || defaultS3Endpoint();
    const cacheKey = endpoint ?? '';
    let io = s3ByEndpoint.get(cacheKey);
    if (!io) {
      io = new LazyS3FileIO({ endpoint });
      s3ByEndpoint.set(cacheKey, io);
    }
    return io;
  }
  throw new UnsupportedError('no FileIO for this location: use a folder path, file:, or s3:// (s3a://, s3n://)', {
    path: location,
  });
}

/**
 * A location as a person types it, made absolute: `.packice-demo`, `./x`, `../t` resolve against
 * the working folder and `~`, `~/x` against the home folder; URIs (`s3://`, `file:`) and absolute
 * paths are returned as they are.
 */
export function resolveLocation(location: string, cwd: string = process.cwd(), home: string = homedir()): string {
  if (isLocalPath(location) || schemeOf(location) !== undefined) return location;
  if (location === '~' || location.startsWith('~/')) return resolve(home, location.slice(2));
  return resolve(cwd, location);
}
