/**
 * HTTP to an Iceberg REST catalog, with the retries Java's HTTPClient makes
 * (ExponentialHttpRequestRetryStrategy): a read (GET, and the token request) is retried on 408,
 * 429, 500, 502, 503, 504 and lost connections; a commit (POST) only where the server cannot have
 * applied it: 429, 503 with `Retry-After`, and a connection that was refused. Waits double from
 * the base (1 s, as Java) up to 64 times it, plus up to 10% jitter, or what `Retry-After` says.
 * The answer is returned whatever its status: the caller knows what each status means for it.
 *
 * node:http rather than fetch, for one reason: a commit goes on a fresh connection. On a pooled
 * keep-alive connection the server may have closed, a POST fails with no way to tell whether it
 * arrived, and a commit that may have arrived has an unknown outcome. Reads share a pool.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { IoError } from '../../errors.js';
import { parseJson, type JsonValue } from '../../iceberg/json.js';
import { NO_AUTH, type AuthSession, type HttpRequest } from './http-request.js';

export type RetryPolicy = 'read' | 'commit';

export interface HttpClientOptions {
  /** Attempts after the first. @default 5 (Java's `rest.client.max-retries`) */
  readonly maxRetries?: number;
  /** The first wait between attempts, in ms. @default 1000 */
  readonly retryBaseMs?: number;
  /** Headers every request carries (`header.*` properties). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: Headers;
  /** The body parsed as lossless JSON; undefined when empty or not JSON. */
  readonly json: JsonValue | undefined;
  readonly text: string;
}

/** A request that reached no answer; `sent` false when the connection was refused (nothing was sent). */
export class NoResponseError extends IoError {
  constructor(
    message: string,
    readonly sent: boolean,
    cause: unknown,
  ) {
    super(message, { cause });
  }
}

const READ_RETRY = new Set([408, 429, 500, 502, 503, 504]);
/** Error codes of a connection that never carried the request. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

export class RestHttpClient {
  private readonly maxRetries: number;
  private readonly retryBaseMs: number;
  private readonly headers: Readonly<Record<string, string>>;

  constructor(options: HttpClientOptions = {}) {
    this.maxRetries = options.maxRetries ?? 5;
    this.retryBaseMs = options.retryBaseMs ?? 1000;
    this.headers = options.headers ?? {};
  }

  /**
   * Sends, retrying as `policy` allows; resolves to the last answer (any status). Rejects with
   * NoResponseError when no answer came; a 401 makes `auth` forget its token and ask once more.
   */
  async send(
    request: Omit<HttpRequest, 'headers'> & { readonly headers?: Readonly<Record<string, string>> },
    policy: RetryPolicy,
    auth: AuthSession = NO_AUTH,
  ): Promise<HttpResponse> {
    const base: HttpRequest = {
      ...request,
      headers: {
        Accept: 'application/json',
        ...(request.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        'User-Agent': 'packice',
        ...this.headers,
        ...request.headers,
      },
    };
    let reauthenticated = false;
    for (let attempt = 1; ; attempt++) {
      const signed = await auth.authenticate(base);
      let answer: HttpResponse;
      try {
        answer = await exchange(signed, policy === 'commit');
      } catch (err) {
        const sent = !NOT_SENT.has(errorCode(err));
        const what = `${request.method} ${request.url.href} got no answer: ${describe(err)}`;
        if (attempt <= this.maxRetries && (policy === 'read' || !sent)) {
          await sleep(this.backoff(attempt, null));
          continue;
        }
        throw new NoResponseError(attempt > 1 ? `${what} (after ${attempt} attempts)` : what, sent, err);
      }
      if (answer.status === 401 && !reauthenticated && auth.invalidate?.() === true) {
        reauthenticated = true;
        continue;
      }
      if (attempt <= this.maxRetries && retryable(answer, policy)) {
        await sleep(this.backoff(attempt, answer.headers.get('Retry-After')));
        continue;
      }
      return answer;
    }
  }

  private backoff(attempt: number, retryAfter: string | null): number {
    const told = retryAfterMs(retryAfter);
    if (told !== undefined && told > 0) return Math.min(told, 64 * this.retryBaseMs);
    const delay = this.retryBaseMs * Math.min(2 ** (attempt - 1), 64);
    return delay + Math.random() * delay * 0.1;
  }
}

/** Connections kept for reads, per protocol. */
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
/** A request with no answer in this long has failed (for a commit: with an unknown outcome). */
const REQUEST_TIMEOUT_MS = 120_000;

/** One request and its whole answer; `fresh` takes a new connection instead of a pooled one. */
function exchange(request: HttpRequest, fresh: boolean): Promise<HttpResponse> {
  const https = request.url.protocol === 'https:';
  const send = https ? httpsRequest : httpRequest;
  const body = request.body !== undefined ? Buffer.from(request.body, 'utf8') : undefined;
  return new Promise((resolve, reject) => {
    const req = send(
      request.url,
      {
        method: request.method,
        headers: { ...request.headers, ...(body !== undefined ? { 'Content-Length': String(body.length) } : {}) },
        agent: fresh ? false : https ? agents.https : agents.http,
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
          resolve({ status: res.statusCode ?? 0, headers, json: jsonOf(text), text });
        });
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer in ${REQUEST_TIMEOUT_MS / 1000} s`), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}

function retryable(response: HttpResponse, policy: RetryPolicy): boolean {
  if (policy === 'read') return READ_RETRY.has(response.status);
  // A commit the server cannot have applied: throttled, or unavailable and saying when to come back.
  return response.status === 429 || (response.status === 503 && response.headers.get('Retry-After') !== null);
}

function retryAfterMs(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : at - Date.now();
}

function jsonOf(text: string): JsonValue | undefined {
  if (text.trim() === '') return undefined;
  try {
    return parseJson(text);
  } catch {
    return undefined;
  }
}

function errorCode(err: unknown): string {
  return typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
