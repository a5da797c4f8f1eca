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

/** One request: its command, key, and the bytes it carried (a GET's body, a PUT's or part's). */
export interface S3Request {
  readonly command: string;
  readonly key: string;
  readonly bytes: number;
}

interface RequestShape {
  readonly Key?: unknown;
  readonly Body?: unknown;
  readonly ContentLength?: unknown;
}

function bodyBytes(input: RequestShape, response: unknown): number {
  // A GET's bytes are its response's Content-Length (a range's length for a range read).
  const headers = (response as { headers?: Record<string, string | undefined> } | undefined)?.headers;
  const length = Number(headers?.['content-length'] ?? Number.NaN);
  if (Number.isSafeInteger(length)) return length;
  if (input.Body instanceof Uint8Array) return input.Body.byteLength;
  if (typeof input.Body === 'string') return Buffer.byteLength(input.Body);
  return typeof input.ContentLength === 'number' ? input.ContentLength : 0;
}

/**
 * Counts every request `client` sends from now on; `counts()` reads them, `reset()` zeroes them.
 * With `log`, each request is kept too (`requests()`), for cost models that need bytes per request.
 */
let counters = 0;

export class S3RequestCounter {
  private readonly byCommand = new Map<string, number>();
  private readonly log: S3Request[] | undefined;

  constructor(client: S3Client, options: { readonly log?: boolean } = {}) {
    this.log = options.log === true ? [] : undefined;
    // The deserialize step runs once per HTTP attempt (under the retry middleware): what S3 bills.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = context.commandName ?? 'unknown';
        this.byCommand.set(command, (this.byCommand.get(command) ?? 0) + 1);
        const result = await next(args);
        if (this.log) {
          const input = (args.input ?? {}) as RequestShape;
          const response = command === 'GetObjectCommand' ? result.response : undefined;
          this.log.push({ command, key: typeof input.Key === 'string' ? input.Key : '', bytes: bodyBytes(input, response) });
        }
        return result;
      },
      { step: 'deserialize', name: `packiceRequestCounter${++counters}` },
    );
  }

  /** The requests logged since the last reset (empty unless made with `log`). */
  requests(): readonly S3Request[] {
    return this.log ?? [];
  }

  counts(): S3RequestCounts {
    const out = { get: 0, put: 0, free: 0 };
    for (const [name, n] of this.byCommand) out[requestClass(name)] += n;
    return { ...out, byCommand: Object.fromEntries(this.byCommand) };
  }

  reset(): void {
    this.byCommand.clear();
    this.log?.splice(0);
  }
}
