/**
 * S3 requests as S3 bills them, counted on a client: every HTTP attempt (retries included) by
 * command, and by price class. GET class ($0.0004 per 1,000 in us-east-1): GetObject, HeadObject.
 * PUT class ($0.005 per 1,000): PutObject, CopyObject, ListObjectsV2 and each multipart step
 * (create, every part, complete). DELETE and abort requests are free.
 */
import type { S3Client } from '@aws-sdk/client-s3';

export type S3RequestClass = 'get' | 'put' | 'free';

const GET_CLASS = new Set(['GetObjectCommand', 'HeadObjectCommand', 'HeadBucketCommand', 'GetObjectTaggingCommand']);
const FREE = new Set(['DeleteObjectCommand', 'DeleteObjectsCommand', 'AbortMultipartUploadCommand']);

/** The price class of an SDK command name (`GetObjectCommand` …). */
export function requestClass(commandName: string): S3RequestClass {
  if (GET_CLASS.has(commandName)) return 'get';
  if (FREE.has(commandName)) return 'free';
  return 'put';
}

export interface S3RequestCounts {
  readonly get: number;
  readonly put: number;
  readonly free: number;
  /** Attempts per command name. */
  readonly byCommand: Readonly<Record<string, number>>;
}

/** Counts every request `client` sends from now on; `counts()` reads them, `reset()` zeroes them. */
export class S3RequestCounter {
  private readonly byCommand = new Map<string, number>();

  constructor(client: S3Client) {
    // The deserialize step runs once per HTTP attempt (under the retry middleware): what S3 bills.
    client.middlewareStack.add(
      (next, context) => (args) => {
        const name = context.commandName ?? 'unknown';
        this.byCommand.set(name, (this.byCommand.get(name) ?? 0) + 1);
        return next(args);
      },
      { step: 'deserialize', name: 'packiceRequestCounter', override: true },
    );
  }

  counts(): S3RequestCounts {
    const out = { get: 0, put: 0, free: 0 };
    for (const [name, n] of this.byCommand) out[requestClass(name)] += n;
    return { ...out, byCommand: Object.fromEntries(this.byCommand) };
  }

  reset(): void {
    this.byCommand.clear();
  }
}
