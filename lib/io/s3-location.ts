/**
 * S3 locations as strings, apart from lib/io/s3.ts so that naming a bucket never loads the AWS SDK.
 */
import { UnsupportedError } from '../errors.js';

/** `s3://bucket/key` split up; `scheme` is kept (lower-case) so listings answer in the caller's scheme. */
export interface S3Location {
  readonly scheme: 's3' | 's3a' | 's3n';
  readonly bucket: string;
  /** The object key, without a leading `/`; empty for the bucket itself. */
  readonly key: string;
}

export function parseS3Location(location: string): S3Location {
  const m = /^(s3|s3a|s3n):\/\/([^/]*)(?:\/(.*))?$/is.exec(location);
  if (!m || m[2] === '') {
    throw new UnsupportedError('not an S3 location: expected s3://bucket/key (or s3a://, s3n://)', { path: location });
  }
  return { scheme: m[1].toLowerCase() as S3Location['scheme'], bucket: m[2], key: m[3] ?? '' };
}

/** The endpoint to use when none is given: env `AWS_ENDPOINT_URL_S3`, then `AWS_ENDPOINT_URL`. */
export function defaultS3Endpoint(): string | undefined {
  return process.env.AWS_ENDPOINT_URL_S3 || process.env.AWS_ENDPOINT_URL || undefined;
}
