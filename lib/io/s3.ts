import { Readable } from 'node:stream';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import {
  AlreadyExistsError,
  CommitConflictError,
  IoError,
  NotFoundError,
  PackiceError,
  UnsupportedError,
} from '../errors.js';
import type { FileIO, FileInfo, InputFile, WriteOptions } from './file-io.js';
import { checkByteRange, existsByStat, rangeInputFile, shortReadError } from './input-file.js';
import { defaultS3Endpoint, parseS3Location } from './s3-location.js';

export { defaultS3Endpoint, parseS3Location, type S3Location } from './s3-location.js';

/** S3 accepts at most this many keys per DeleteObjects request. */
const DELETE_BATCH = 1000;
const MIB = 1024 * 1024;

export interface S3FileIOOptions {
  /**
   * An S3-compatible endpoint such as `http://127.0.0.1:9000`; requests then use path-style URLs.
   * @default the CLI's `--s3-endpoint`, else env `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`, else AWS
   */
  readonly endpoint?: string;
  /** @default env `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1` */
  readonly region?: string;
  /** @default true when an endpoint is set, false for AWS */
  readonly forcePathStyle?: boolean;
  /** @default the SDK's default provider chain (env, profile, container, instance) */
  readonly credentials?: S3ClientConfig['credentials'];
  /** A ready client; the options above are then ignored. */
  readonly client?: S3Client;
  /**
   * Multipart part size in bytes (at least 5 MiB); a write no larger is one PutObject.
   * @default env `PACKICE_S3_PART_SIZE_MIB` × 1 MiB, else DEFAULT_PART_SIZE
   */
  readonly partSize?: number;
  /** Parts uploaded at once per streaming write; memory is about partSize × (queueSize + 1). @default 4 */
  readonly queueSize?: number;
}

/**
 * 32 MiB: S3 bills each part as a PUT ($0.005 per 1,000), so a 512 MiB output is 16 parts + 2
 * instead of 64 + 2 at 8 MiB (per GB written $0.00016 instead of $0.0006, a tenth of S3 Tables'
 * price for few-MB files). Memory: at most (4 in flight + 1 filling) × 32 MiB = 160 MiB per open
 * output, beside the rewriter's ~360 MiB peak, under the 1.5 GiB a group may use. One part
 * takes ~0.4 s at one connection's ~85-90 MB/s, well inside S3's retry timeouts.
 */
export const DEFAULT_PART_SIZE = 32 * MIB;
export const DEFAULT_QUEUE_SIZE = 4;

/** The part size from env `PACKICE_S3_PART_SIZE_MIB`, if set. */
function partSizeFromEnv(): number | undefined {
  const v = process.env.PACKICE_S3_PART_SIZE_MIB;
  if (v === undefined || v.trim() === '') return undefined;
  const mib = Number(v);
  if (!Number.isFinite(mib) || mib <= 0) {
    throw new UnsupportedError(`PACKICE_S3_PART_SIZE_MIB must be a number of MiB (at least 5), got "${v}"`);
  }
  return Math.round(mib * MIB);
}

/** Commands whose body is a file's bytes: over TLS they are sent as UNSIGNED-PAYLOAD (createS3Client). */
const FILE_BODY_COMMANDS = new Set(['PutObjectCommand', 'UploadPartCommand']);

/**
 * A client for `options`. Integrity of what goes through it (docs/architecture.md, "S3 integrity
 * checks"): GETs are not validated by the SDK (every output is re-read and hashed by our proof
 * before commit, and inputs by the reader's own checks). On AWS PUT and part bodies keep the SDK's
 * CRC32 (a bucket with a default Object Lock retention refuses PUTs without a checksum, and other
 * engines' SDKs check whole-object GETs against it); another endpoint gets checksums only where S3
 * requires them, since many S3-compatible servers reject them. Over TLS (AWS, or an https endpoint)
 * PUT and part bodies are not hashed for SigV4 (UNSIGNED-PAYLOAD, ~0.6 CPU-s per GB uploaded): TLS
 * authenticates every byte in transit. Over plain http the SigV4 payload hash stays: it is then the
 * only check S3 makes of the bytes received.
 */
export function createS3Client(options: Omit<S3FileIOOptions, 'client' | 'partSize' | 'queueSize'> = {}): S3Client {
  const endpoint = options.endpoint || defaultS3Endpoint();
  const client = new S3Client({
    region: options.region ?? (process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1'),
    endpoint,
    forcePathStyle: options.forcePathStyle ?? endpoint !== undefined,
    // On AWS a bucket in another region answers with a redirect; follow it.
    followRegionRedirects: endpoint === undefined,
    requestChecksumCalculation: endpoint === undefined ? 'WHEN_SUPPORTED' : 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    credentials: options.credentials,
  });
  if (endpoint === undefined || /^https:/i.test(endpoint)) {
    client.middlewareStack.add(
      (next, context) => (args) => {
        const request = args.request as { headers?: Record<string, string> } | undefined;
        // Set before signing (finalizeRequest): the signer then signs this instead of hashing the body.
        if (request?.headers && FILE_BODY_COMMANDS.has(context.commandName ?? '')) request.headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
        return next(args);
      },
      { step: 'build', name: 'packiceUnsignedPayloadOverTls' },
    );
  }
  return client;
}

interface SdkErrorShape {
  readonly name?: string;
  readonly message?: string;
  readonly Code?: string;
  readonly $metadata?: { readonly httpStatusCode?: number };
  readonly $retryable?: unknown;
}

function sdkError(err: unknown): { name: string; status: number | undefined; message: string } {
  const e = (typeof err === 'object' && err !== null ? err : {}) as SdkErrorShape;
  return {
    name: e.Code ?? e.name ?? 'Error',
    status: e.$metadata?.httpStatusCode,
    message: e.message ?? String(err),
  };
}

/**
 * A ranged GET's body read straight into one buffer of the `expected` bytes asked for, where the
 * SDK's transformToByteArray keeps every chunk and then copies them all into a new array: half the
 * memory a read holds at its peak and one copy less. Fewer bytes come back as what arrived (the
 * caller names a short read); a body that is not a Node stream goes the SDK's way.
 */
async function bodyBytes(body: { transformToByteArray(): Promise<Uint8Array> }, expected: number): Promise<Uint8Array> {
  if (!(Symbol.asyncIterator in body)) return body.transformToByteArray();
  // A plain Uint8Array over uninitialised memory, as the SDK hands out: callers copy with slice(), which a Buffer's would not.
  const out = new Uint8Array(Buffer.allocUnsafeSlow(expected).buffer, 0, expected);
  let at = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    if (at + chunk.length > expected) throw new Error(`the response body holds more than the ${expected} bytes asked for`);
    out.set(chunk, at);
    at += chunk.length;
  }
  return at === expected ? out : out.subarray(0, at);
}

function isPreconditionFailure(err: unknown): boolean {
  const { name, status } = sdkError(err);
  // 409 ConditionalRequestConflict: another conditional write to the key was in flight.
  return status === 412 || status === 409 || name === 'PreconditionFailed' || name === 'ConditionalRequestConflict';
}

/** What an SDK or network failure means to someone at a terminal, and what to set; undefined if nothing specific. */
function setupProblem(err: unknown, endpoint: string | undefined): string | undefined {
  const e = (typeof err === 'object' && err !== null ? err : {}) as SdkErrorShape & { code?: string };
  const { name, message } = sdkError(err);
  const where = endpoint ? `the S3 endpoint ${endpoint}` : 'AWS S3';
  if (name === 'CredentialsProviderError' || /Could not load credentials/i.test(message)) {
    return 'no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or run where an IAM role is available';
  }
  if (e.code === 'ERR_INVALID_URL' || /Invalid URL/.test(message)) {
    return `the S3 endpoint "${endpoint ?? ''}" is not a URL: set --s3-endpoint or AWS_ENDPOINT_URL_S3 to one such as http://127.0.0.1:9000`;
  }
  const code = e.code ?? name;
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'EHOSTUNREACH', 'ETIMEDOUT', 'TimeoutError'].includes(code)) {
    return `cannot reach ${where} (${code}): check --s3-endpoint / AWS_ENDPOINT_URL_S3${endpoint ? '' : ' and AWS_REGION'} and the network`;
  }
  if (['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'ExpiredToken', 'InvalidToken'].includes(name)) {
    return `${where} refused the credentials (${name}): check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN or AWS_PROFILE`;
  }
  return undefined;
}

/** SDK errors become the project's where they enter, naming the location the caller used. */
function translate(err: unknown, location: string, action: string, endpoint?: string): PackiceError {
  if (err instanceof PackiceError) return err;
  const { name, status, message } = sdkError(err);
  if (name === 'NoSuchBucket') {
    const bucket = /^[a-z0-9]+:\/\/([^/]*)/i.exec(location)?.[1] ?? '';
    return new NotFoundError(
      `cannot ${action}: the bucket ${bucket} does not exist at ${endpoint ? `the S3 endpoint ${endpoint}` : 'AWS S3'} ` +
        '(check the table location, and --s3-endpoint / AWS_ENDPOINT_URL_S3 if the bucket is elsewhere)',
      { path: location, cause: err },
    );
  }
  if (name === 'NoSuchKey' || name === 'NotFound' || status === 404) {
    return new NotFoundError(`cannot ${action}: no such object`, { path: location, cause: err });
  }
  const problem = setupProblem(err, endpoint);
  if (problem !== undefined) return new IoError(`cannot ${action}: ${problem}`, { path: location, cause: err, retryable: false });
  // Client errors will fail again; server errors, throttling and network failures may not.
  const retryable = status === undefined || status >= 500 || status === 429 || name === 'SlowDown';
  const detail = message && message !== name ? `${name}: ${message}` : name;
  return new IoError(`cannot ${action}: ${detail}${status ? ` (HTTP ${status})` : ''}`, {
    path: location,
    cause: err,
    retryable,
  });
}

/** Amazon S3 and S3-compatible stores. */
export class S3FileIO implements FileIO {
  readonly client: S3Client;
  /** Named in errors; undefined for AWS. */
  private readonly endpoint: string | undefined;
  private readonly partSize: number;
  /** Whether partSize was chosen (option or env): then it wins over a write's partBytes. */
  private readonly partSizeChosen: boolean;
  private readonly queueSize: number;
  /** Whether queueSize was chosen: then it wins over a write's partsInFlight. */
  private readonly queueSizeChosen: boolean;

  constructor(options: S3FileIOOptions = {}) {
    this.client = options.client ?? createS3Client(options);
    this.endpoint = options.client ? undefined : options.endpoint || defaultS3Endpoint();
    const chosen = options.partSize ?? partSizeFromEnv();
    this.partSize = chosen ?? DEFAULT_PART_SIZE;
    this.partSizeChosen = chosen !== undefined;
    this.queueSize = options.queueSize ?? DEFAULT_QUEUE_SIZE;
    this.queueSizeChosen = options.queueSize !== undefined;
    if (this.partSize < 5 * MIB) {
      throw new UnsupportedError(`S3 multipart parts must be at least 5 MiB, got partSize ${this.partSize}`);
    }
  }

  async read(path: string): Promise<Uint8Array> {
    return (await this.readWithETag(path)).data;
  }

  /** The whole object and its ETag, for a later `replaceIfMatch`. */
  async readWithETag(path: string): Promise<{ data: Uint8Array; etag: string }> {
    const { bucket, key } = parseS3Location(path);
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      const data = out.Body ? await out.Body.transformToByteArray() : new Uint8Array(0);
      return { data, etag: out.ETag ?? '' };
    } catch (err) {
      throw translate(err, path, 'read', this.endpoint);
    }
  }

  async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    checkByteRange(path, start, end);
    if (start === end) return new Uint8Array(0);
    const { bucket, key } = parseS3Location(path);
    let data: Uint8Array;
    try {
      const out = await this.client.send(
        new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${end - 1}` }),
      );
      data = out.Body ? await bodyBytes(out.Body, end - start) : new Uint8Array(0);
    } catch (err) {
      const { name, status } = sdkError(err);
      if (status === 416 || name === 'InvalidRange') throw shortReadError(path, start, end, 0);
      throw translate(err, path, 'read', this.endpoint);
    }
    // A range past the end comes back short rather than failing.
    if (data.length !== end - start) throw shortReadError(path, start, end, data.length);
    return data;
  }

  newInputFile(path: string, knownLength?: number): InputFile {
    return rangeInputFile(this, path, knownLength);
  }

  async stat(path: string): Promise<FileInfo> {
    const { bucket, key } = parseS3Location(path);
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return { path, size: out.ContentLength ?? 0, lastModifiedMs: out.LastModified?.getTime() ?? 0 };
    } catch (err) {
      throw translate(err, path, 'stat', this.endpoint);
    }
  }

  exists(path: string): Promise<boolean> {
    return existsByStat(this, path);
  }

  async write(path: string, data: Uint8Array | AsyncIterable<Uint8Array>, options: WriteOptions = {}): Promise<void> {
    const { bucket, key } = parseS3Location(path);
    // A part size the user chose (say, to bound memory) wins over the writer's preference.
    const partSize = this.partSizeChosen ? this.partSize : options.partBytes ?? this.partSize;
    if (partSize < 5 * MIB) throw new UnsupportedError(`S3 multipart parts must be at least 5 MiB, got partBytes ${partSize} writing ${path}`);
    try {
      if (data instanceof Uint8Array && data.length <= partSize) {
        await this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: data }));
        return;
      }
      // Upload sends one PutObject for a short stream and a multipart upload otherwise; it
      // aborts the multipart upload if a part fails, so no parts linger.
      const upload = new Upload({
        client: this.client,
        params: { Bucket: bucket, Key: key, Body: data instanceof Uint8Array ? data : Readable.from(data) },
        partSize,
        queueSize: this.queueSizeChosen ? this.queueSize : Math.max(1, options.partsInFlight ?? this.queueSize),
        leavePartsOnError: false,
      });
      await upload.done();
    } catch (err) {
      throw translate(err, path, 'write', this.endpoint);
    }
  }

  async createIfAbsent(path: string, data: Uint8Array): Promise<void> {
    const { bucket, key } = parseS3Location(path);
    try {
      await this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: data, IfNoneMatch: '*' }));
    } catch (err) {
      if (isPreconditionFailure(err)) throw new AlreadyExistsError('already exists', { path, cause: err });
      throw translate(err, path, 'create', this.endpoint);
    }
  }

  /**
   * Replaces the object only if its ETag is still `etag` (as returned by `readWithETag`), and
   * returns the new ETag. Someone else's write in between → CommitConflictError.
   */
  async replaceIfMatch(path: string, data: Uint8Array, etag: string): Promise<string> {
    const { bucket, key } = parseS3Location(path);
    try {
      const out = await this.client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: data, IfMatch: etag }),
      );
      return out.ETag ?? '';
    } catch (err) {
      if (isPreconditionFailure(err)) {
        throw new CommitConflictError(`changed since it was read (expected ETag ${etag}); refresh and retry`, {
          path,
          cause: err,
        });
      }
      throw translate(err, path, 'replace', this.endpoint);
    }
  }

  async *list(prefix: string): AsyncIterable<FileInfo> {
    const { scheme, bucket, key } = parseS3Location(prefix);
    // The prefix is a folder: `s3://b/t` never lists `s3://b/t_backup/…`.
    const folder = key.replace(/\/+$/, '');
    const keyPrefix = folder === '' ? '' : `${folder}/`;
    const shownPrefix = `${scheme}://${bucket}/`;
    let token: string | undefined;
    do {
      let page;
      try {
        page = await this.client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: keyPrefix, ContinuationToken: token }),
        );
      } catch (err) {
        throw translate(err, prefix, 'list', this.endpoint);
      }
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        // Zero-byte `folder/` markers made by consoles are not files.
        if (object.Key.endsWith('/') && (object.Size ?? 0) === 0) continue;
        yield {
          path: shownPrefix + object.Key,
          size: object.Size ?? 0,
          lastModifiedMs: object.LastModified?.getTime() ?? 0,
        };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  async deleteMany(paths: readonly string[]): Promise<void> {
    const byBucket = new Map<string, { key: string; path: string }[]>();
    for (const path of paths) {
      const { bucket, key } = parseS3Location(path);
      let keys = byBucket.get(bucket);
      if (!keys) byBucket.set(bucket, (keys = []));
      keys.push({ key, path });
    }
    for (const [bucket, keys] of byBucket) {
      for (let i = 0; i < keys.length; i += DELETE_BATCH) {
        const batch = keys.slice(i, i + DELETE_BATCH);
        let out;
        try {
          out = await this.client.send(
            new DeleteObjectsCommand({
              Bucket: bucket,
              Delete: { Objects: batch.map(({ key }) => ({ Key: key })), Quiet: true },
            }),
          );
        } catch (err) {
          throw translate(err, batch[0].path, 'delete', this.endpoint);
        }
        // DeleteObjects answers 200 and lists per-key failures in its body.
        const errors = out.Errors ?? [];
        if (errors.length > 0) {
          const first = errors[0];
          const path = batch.find(({ key }) => key === first.Key)?.path ?? `s3://${bucket}/${first.Key ?? ''}`;
          throw new IoError(
            `${errors.length} of ${batch.length} deletes failed; first: ${first.Code ?? 'Error'}: ${first.Message ?? ''}`,
            { path, retryable: errors.every((e) => e.Code === 'InternalError' || e.Code === 'SlowDown') },
          );
        }
      }
    }
  }
}
