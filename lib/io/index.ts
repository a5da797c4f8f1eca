import { UnsupportedError } from '../errors.js';
import type { FileIO } from './file-io.js';
import { LocalFileIO } from './local.js';
import { isLocalPath, isS3Path } from './path.js';
import { S3FileIO, defaultS3Endpoint } from './s3.js';

export type { FileIO, FileInfo, InputFile } from './file-io.js';
export { rangeInputFile } from './input-file.js';
export { LocalFileIO, localPathOf } from './local.js';
export { S3FileIO, createS3Client, defaultS3Endpoint, parseS3Location } from './s3.js';
export type { S3FileIOOptions, S3Location } from './s3.js';
export { baseName, isLocalPath, isS3Path, joinPath, normalizePath, parentOf, schemeOf } from './path.js';

export interface FileIOOptions {
  /** The CLI's `--s3-endpoint`; wins over env `AWS_ENDPOINT_URL_S3`. */
  readonly s3Endpoint?: string;
}

const local = new LocalFileIO();
// One client per endpoint: clients hold connection pools, so they are shared for the process.
const s3ByEndpoint = new Map<string, S3FileIO>();

/** The FileIO for a location: local for absolute paths and `file:`, S3 for `s3://`, `s3a://`, `s3n://`. */
export function fileIOFor(location: string, options: FileIOOptions = {}): FileIO {
  if (isLocalPath(location)) return local;
  if (isS3Path(location)) {
    const endpoint = options.s3Endpoint || defaultS3Endpoint();
    const cacheKey = endpoint ?? '';
    let io = s3ByEndpoint.get(cacheKey);
    if (!io) {
      io = new S3FileIO({ endpoint });
      s3ByEndpoint.set(cacheKey, io);
    }
    return io;
  }
  throw new UnsupportedError('no FileIO for this location: use an absolute path, file:, or s3:// (s3a://, s3n://)', {
    path: location,
  });
}
