/**
 * A small Iceberg REST catalog on loopback (node:http), for the REST client's tests: `/v1/config`,
 * OAuth2 client credentials at `/v1/oauth/tokens`, table load and commit, each table backed by an
 * InMemoryCatalog in `server` mode (requirements checked against the current metadata, as a REST
 * server does; its metadata files written through the catalog's FileIO). It can demand a bearer
 * token, OAuth2 tokens or SigV4 signatures (verified with the SDK's signer and fixed credentials),
 * answer chosen requests with an error status, and records every request.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import type { LoadedMetadata } from '../../lib/catalog/catalog.js';
import type { InMemoryCatalog } from '../../lib/catalog/in-memory-catalog.js';
import { CommitConflictError, NotFoundError, ValidationError } from '../../lib/errors.js';
import { isJsonObject, parseJson } from '../../lib/iceberg/json.js';
import { serializeTableMetadata } from '../../lib/iceberg/table-metadata.js';
import { tableRequirementFromJson, tableUpdateFromJson } from './rest-request-json.js';

export type RestServerAuth =
  | { readonly kind: 'none' }
  | { readonly kind: 'bearer'; readonly token: string }
  | { readonly kind: 'oauth2'; readonly clientId: string; readonly clientSecret: string; readonly expiresIn?: number; readonly scope?: string }
  | {
      readonly kind: 'sigv4';
      readonly service: string;
      readonly region: string;
      readonly accessKeyId: string;
      readonly secretAccessKey: string;
    };

export interface RestServerOptions {
  /** The path the catalog is served under (`/iceberg`), as Glue's and S3 Tables' endpoints are. */
  readonly basePath?: string;
  /** `prefix` in the config's overrides. */
  readonly prefix?: string;
  /** When set, `/v1/config` must be asked with this `warehouse`. */
  readonly warehouse?: string;
  readonly defaults?: Readonly<Record<string, string>>;
  readonly overrides?: Readonly<Record<string, string>>;
  /** Advertised as `idempotency-key-lifetime`: the client then sends `Idempotency-Key` with commits. */
  readonly idempotencyKeyLifetime?: string;
  readonly auth?: RestServerAuth;
  /** The `config` of every LoadTableResult (vended credentials, a table token). */
  readonly tableConfig?: Readonly<Record<string, string>>;
  readonly storageCredentials?: readonly { readonly prefix: string; readonly config: Readonly<Record<string, string>> }[];
}

export type RestEndpoint = 'config' | 'token' | 'load' | 'commit';

export interface RecordedRequest {
  readonly endpoint: RestEndpoint | 'unknown';
  readonly method: string;
  /** The path as sent, still URL-encoded. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The status answered. */
  status?: number;
}

interface Injected {
  readonly status: number;
  times: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Apply the commit, then answer the status (the server failed after committing). */
  readonly afterApply: boolean;
}

export class RestCatalogServer {
  readonly requests: RecordedRequest[] = [];
  tokensIssued = 0;
  /** Idempotency-Key → the answer first given, as the spec's finalization rules replay it. */
  private readonly replays = new Map<string, { status: number; body: string }>();
  private readonly tables = new Map<string, InMemoryCatalog>();
  private readonly injected = new Map<RestEndpoint, Injected[]>();
  private readonly tokens = new Set<string>();

  private constructor(
    private readonly server: Server,
    readonly uri: string,
    private readonly options: RestServerOptions,
  ) {}

  static async start(options: RestServerOptions = {}): Promise<RestCatalogServer> {
    const started: { self?: RestCatalogServer } = {};
    const server = createServer((req, res) => {
      void started.self!.handle(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    started.self = new RestCatalogServer(server, `http://127.0.0.1:${port}${options.basePath ?? ''}`, options);
    return started.self;
  }

  /** The packice name of a table here: `rest+http://127.0.0.1:<port>/<ns.ns>/<table>`. */
  tableName(namespace: readonly string[], table: string): string {
    return `rest+${this.uri}/${namespace.join('.')}/${table}`;
  }

  addTable(namespace: readonly string[], table: string, catalog: InMemoryCatalog): void {
    this.tables.set(key(namespace, table), catalog);
  }

  /** The next `times` requests to `endpoint` are answered `status` (after applying them, for a commit, when `afterApply`). */
  inject(endpoint: RestEndpoint, status: number, options: { times?: number; headers?: Record<string, string>; afterApply?: boolean } = {}): void {
    const list = this.injected.get(endpoint) ?? [];
    list.push({ status, times: options.times ?? 1, headers: options.headers ?? {}, afterApply: options.afterApply ?? false });
    this.injected.set(endpoint, list);
  }

  /** Forgets every OAuth2 token issued: the next request with one is answered 401. */
  revokeTokens(): void {
    this.tokens.clear();
  }

  of(endpoint: RestEndpoint): RecordedRequest[] {
    return this.requests.filter((r) => r.endpoint === endpoint);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://localhost');
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
    const base = this.options.basePath ?? '';
    const path = url.pathname.startsWith(base) ? url.pathname.slice(base.length) : url.pathname;
    const recorded: RecordedRequest = { endpoint: endpointOf(req.method ?? '', path), method: req.method ?? '', path: url.pathname, query: url.searchParams, headers, body };
    this.requests.push(recorded);
    const answer = (status: number, json: string, extra: Record<string, string> = {}): void => {
      recorded.status = status;
      res.writeHead(status, { 'Content-Type': 'application/json', ...extra });
      res.end(json);
    };
    const error = (status: number, type: string, message: string, extra: Record<string, string> = {}): void =>
      answer(status, JSON.stringify({ error: { message, type, code: status } }), extra);
    try {
      if (recorded.endpoint === 'unknown') return error(404, 'NoSuchEndpointException', `no route for ${req.method ?? ''} ${path}`);
      if (recorded.endpoint === 'token') return this.token(body, answer, error);
      const denied = await this.authenticate(req, url, headers, body);
      if (denied !== undefined) return error(denied.status, 'NotAuthorizedException', denied.message);
      const injected = this.takeInjected(recorded.endpoint);
      if (injected !== undefined && !injected.afterApply) {
        return error(injected.status, 'ServiceFailureException', `injected ${injected.status}`, injected.headers);
      }
      if (recorded.endpoint === 'config') {
        if (this.options.warehouse !== undefined && url.searchParams.get('warehouse') !== this.options.warehouse) {
          return error(400, 'BadRequestException', `unknown warehouse ${url.searchParams.get('warehouse') ?? '(none)'}`);
        }
        return answer(
          200,
          JSON.stringify({
            defaults: this.options.defaults ?? {},
            overrides: { ...(this.options.prefix !== undefined ? { prefix: this.options.prefix } : {}), ...this.options.overrides },
            ...(this.options.idempotencyKeyLifetime !== undefined ? { 'idempotency-key-lifetime': this.options.idempotencyKeyLifetime } : {}),
          }),
        );
      }
      const m = /^\/v1\/(?:(.+)\/)?namespaces\/([^/]+)\/tables\/([^/]+)$/.exec(path);
      if (!m || (m[1] ?? undefined) !== this.options.prefix) return error(404, 'NoSuchTableException', `no table at ${path}`);
      const namespace = m[2].split('%1F').map(decodeURIComponent);
      const table = decodeURIComponent(m[3]);
      const catalog = this.tables.get(key(namespace, table));
      if (!catalog) return error(404, 'NoSuchTableException', `Table does not exist: ${namespace.join('.')}.${table}`);
      if (recorded.endpoint === 'load') return answer(200, this.loadResult(await catalog.load()));
      const idempotencyKey = headers['idempotency-key'];
      const replay = idempotencyKey !== undefined ? this.replays.get(idempotencyKey) : undefined;
      if (replay !== undefined) return answer(replay.status, replay.body);
      const result = await this.commit(catalog, namespace, table, body);
      if (idempotencyKey !== undefined && result.status < 500) this.replays.set(idempotencyKey, result);
      if (injected !== undefined) return error(injected.status, 'ServiceFailureException', `injected ${injected.status} after committing`, injected.headers);
      return answer(result.status, result.body);
    } catch (e) {
      return error(500, 'ServerError', e instanceof Error ? e.message : String(e));
    }
  }

  private async commit(catalog: InMemoryCatalog, namespace: string[], table: string, body: string): Promise<{ status: number; body: string }> {
    const fail = (status: number, type: string, message: string): { status: number; body: string } => ({
      status,
      body: JSON.stringify({ error: { message, type, code: status } }),
    });
    const json = parseJson(body);
    if (!isJsonObject(json) || !isJsonObject(json.identifier) || !Array.isArray(json.requirements) || !Array.isArray(json.updates)) {
      return fail(400, 'BadRequestException', 'expected {identifier, requirements, updates}');
    }
    const id = json.identifier;
    if (JSON.stringify(id.namespace) !== JSON.stringify(namespace) || id.name !== table) {
      return fail(400, 'BadRequestException', `identifier ${JSON.stringify(id)} does not name ${namespace.join('.')}.${table}`);
    }
    try {
      const requirements = json.requirements.map((r) => tableRequirementFromJson(isJsonObject(r) ? r : {}));
      const updates = json.updates.map((u) => tableUpdateFromJson(isJsonObject(u) ? u : {}));
      const current = await catalog.load();
      const next = await catalog.commit(requirements, updates, current);
      return { status: 200, body: `{"metadata-location":${JSON.stringify(next.metadataLocation)},"metadata":${serializeTableMetadata(next.metadata)}}` };
    } catch (e) {
      if (e instanceof CommitConflictError) return fail(409, 'CommitFailedException', e.message);
      if (e instanceof ValidationError) return fail(400, 'ValidationException', e.message);
      if (e instanceof NotFoundError) return fail(404, 'NoSuchTableException', e.message);
      throw e;
    }
  }

  private loadResult(loaded: LoadedMetadata): string {
    const extra = this.options.storageCredentials !== undefined ? `,"storage-credentials":${JSON.stringify(this.options.storageCredentials)}` : '';
    return (
      `{"metadata-location":${JSON.stringify(loaded.metadataLocation)},"metadata":${serializeTableMetadata(loaded.metadata)},` +
      `"config":${JSON.stringify(this.options.tableConfig ?? {})}${extra}}`
    );
  }

  private token(body: string, answer: (status: number, json: string) => void, error: (status: number, type: string, message: string) => void): void {
    const auth = this.options.auth;
    if (auth?.kind !== 'oauth2') return error(404, 'NoSuchEndpointException', 'this catalog issues no tokens');
    const form = new URLSearchParams(body);
    if (form.get('grant_type') !== 'client_credentials') return answer(400, JSON.stringify({ error: 'unsupported_grant_type' }));
    if (form.get('client_id') !== auth.clientId || form.get('client_secret') !== auth.clientSecret) {
      return answer(401, JSON.stringify({ error: 'invalid_client', error_description: 'wrong client id or secret' }));
    }
    if (auth.scope !== undefined && form.get('scope') !== auth.scope) return answer(400, JSON.stringify({ error: 'invalid_scope' }));
    const token = `token-${++this.tokensIssued}`;
    this.tokens.add(token);
    answer(200, JSON.stringify({ access_token: token, token_type: 'bearer', expires_in: auth.expiresIn ?? 3600, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' }));
  }

  private async authenticate(req: IncomingMessage, url: URL, headers: Record<string, string>, body: string): Promise<{ status: number; message: string } | undefined> {
    const auth = this.options.auth ?? { kind: 'none' };
    const bearer = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
    switch (auth.kind) {
      case 'none':
        return undefined;
      case 'bearer':
        return bearer === auth.token ? undefined : { status: 401, message: 'a valid bearer token is required' };
      case 'oauth2':
        return bearer !== undefined && this.tokens.has(bearer) ? undefined : { status: 401, message: 'the token is unknown or expired' };
      case 'sigv4': {
        const why = await verifySigV4(req.method ?? 'GET', url, headers, body, auth);
        return why === undefined ? undefined : { status: 403, message: `SigV4 check failed: ${why}` };
      }
    }
  }

  private takeInjected(endpoint: RestEndpoint): Injected | undefined {
    const list = this.injected.get(endpoint);
    const next = list?.[0];
    if (next === undefined) return undefined;
    if (--next.times <= 0) list!.shift();
    return next;
  }
}

function key(namespace: readonly string[], table: string): string {
  return [...namespace, table].join('\u001f');
}

function endpointOf(method: string, path: string): RestEndpoint | 'unknown' {
  if (method === 'GET' && path === '/v1/config') return 'config';
  if (method === 'POST' && path === '/v1/oauth/tokens') return 'token';
  if (/\/namespaces\/[^/]+\/tables\/[^/]+$/.test(path)) return method === 'GET' ? 'load' : method === 'POST' ? 'commit' : 'unknown';
  return 'unknown';
}

/**
 * Checks a request's SigV4 signature the way AWS does: the credential scope names this service,
 * region and key; the body hash is the body's; and signing the same request (its signed headers,
 * at its `x-amz-date`) with the SDK's signer and the secret gives the same Authorization.
 * Returns why not, or undefined when it holds.
 */
async function verifySigV4(
  method: string,
  url: URL,
  headers: Record<string, string>,
  body: string,
  expected: { service: string; region: string; accessKeyId: string; secretAccessKey: string },
): Promise<string | undefined> {
  const authorization = headers.authorization ?? '';
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(authorization);
  if (!m) return `no SigV4 Authorization header (got "${authorization.slice(0, 40)}")`;
  const [, accessKeyId, , region, service, signedHeaders] = m;
  if (accessKeyId !== expected.accessKeyId) return `unknown access key ${accessKeyId}`;
  if (service !== expected.service) return `signed for service ${service}, not ${expected.service}`;
  if (region !== expected.region) return `signed for region ${region}, not ${expected.region}`;
  const bodyHash = createHash('sha256').update(body).digest('hex');
  if (headers['x-amz-content-sha256'] !== bodyHash) return 'x-amz-content-sha256 is not the hash of the body';
  const amzDate = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(headers['x-amz-date'] ?? '');
  if (!amzDate) return 'no x-amz-date';
  const signingDate = new Date(Date.UTC(+amzDate[1], +amzDate[2] - 1, +amzDate[3], +amzDate[4], +amzDate[5], +amzDate[6]));
  const signed: Record<string, string> = {};
  for (const h of signedHeaders.split(';')) {
    if (headers[h] === undefined) return `signed header ${h} is missing`;
    signed[h] = headers[h];
  }
  const signer = new SignatureV4({
    service,
    region,
    credentials: { accessKeyId: expected.accessKeyId, secretAccessKey: expected.secretAccessKey },
    sha256: Sha256,
  });
  const [hostname, port] = (headers.host ?? '').split(':');
  const again = await signer.sign(
    {
      method,
      protocol: 'http:',
      hostname,
      ...(port !== undefined ? { port: Number(port) } : {}),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: signed,
      ...(body !== '' ? { body } : {}),
    },
    { signingDate },
  );
  return again.headers.authorization === authorization ? undefined : 'the signature does not match';
}
