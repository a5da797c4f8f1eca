/**
 * A table in an Iceberg REST catalog (rest-catalog-open-api.yaml), as Java's RESTSessionCatalog
 * talks to one: `GET /v1/config` (with `warehouse`) once, its `defaults` under and `overrides` over
 * the client's properties, its `prefix` in every path; the table loaded with
 * `GET /v1/{prefix}/namespaces/{namespace}/tables/{table}` and committed with a `POST` to the same
 * path of `{identifier, requirements, updates}`: the server checks the requirements against the
 * current metadata and applies the updates there, and answers the new metadata and its location.
 * 409 is a conflict (the retry loop reloads and re-runs the action); a commit answered 500, 502,
 * 503 or 504, or whose connection broke after it was sent, may have been applied: that is a
 * CommitStateUnknownError, never retried blindly. A server that advertises
 * `idempotency-key-lifetime` gets an `Idempotency-Key` with each commit, and then those are retried
 * with the same key, as the spec allows.
 *
 * Auth (rest/oauth2.ts, rest/sigv4.ts) and the vended storage credentials (rest/vended-file-io.ts)
 * come from the properties (rest/rest-properties.ts).
 */
import { randomUUID } from 'node:crypto';
import { CommitStateUnknownError, InvalidFileError, UnsupportedError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { isJsonObject, stringifyJson, type JsonObject, type JsonValue } from '../iceberg/json.js';
import { tableMetadataFromJson } from '../iceberg/table-metadata.js';
import type { TableRequirement, TableUpdate } from '../iceberg/table-update.js';
import type { Catalog, LoadedMetadata } from './catalog.js';
import { formatTableName } from './table-name.js';
import { commitTableRequest } from './rest/commit-table-request.js';
import { NoResponseError, RestHttpClient, type HttpResponse } from './rest/http-client.js';
import { NO_AUTH, type AuthSession, type HttpRequest } from './rest/http-request.js';
import { OnceUntilFailed } from './rest/once-until-failed.js';
import { bearerAuth, ClientCredentialsAuth } from './rest/oauth2.js';
import { restError, type Endpoint } from './rest/rest-errors.js';
import { headersOf, RestProperty, type CatalogProperties } from './rest/rest-properties.js';
import { storageConfigFor, VendedFileIO, type StorageConfig } from './rest/vended-file-io.js';

export interface RestCatalogOptions {
  /** The client's properties (rest/rest-properties.ts resolves them from flags, env and file). */
  readonly properties?: CatalogProperties;
  /** The CLI's `--s3-endpoint`, for S3 when the catalog does not vend one. */
  readonly s3Endpoint?: string;
  /** Every file through this one instead (tests). */
  readonly io?: FileIO;
  /** The first wait between HTTP retries, ms. @default 1000 */
  readonly retryBaseMs?: number;
}

/** What `/v1/config` settled: the merged properties and how to reach the server. */
interface Session {
  readonly properties: CatalogProperties;
  readonly base: string;
  readonly http: RestHttpClient;
  readonly auth: AuthSession;
  readonly tablePath: string;
  readonly idempotent: boolean;
}

export class RestCatalog implements Catalog {
  readonly name: string;
  readonly io: VendedFileIO;
  private readonly session = new OnceUntilFailed(() => this.fetchConfig());
  /** A token the server handed with the table (`config.token`), for this table's requests. */
  private tableAuth: AuthSession | undefined;

  constructor(
    /** The catalog's base URI (`https://host/iceberg`), without `/v1`. */
    readonly uri: string,
    readonly namespace: readonly string[],
    readonly table: string,
    private readonly options: RestCatalogOptions = {},
  ) {
    if (namespace.length === 0) throw new UnsupportedError('a REST catalog table needs a namespace', { path: uri });
    this.name = formatTableName({ kind: 'rest', uri: trimSlash(uri), namespace, table });
    this.io = new VendedFileIO({
      ...(options.s3Endpoint !== undefined ? { s3Endpoint: options.s3Endpoint } : {}),
      ...(options.io !== undefined ? { io: options.io } : {}),
    });
  }

  /** The merged catalog properties, after `/v1/config`. */
  async properties(): Promise<CatalogProperties> {
    return (await this.connect()).properties;
  }

  async load(): Promise<LoadedMetadata> {
    const s = await this.connect();
    const url = new URL(`${s.base}/${s.tablePath}`);
    const response = await this.send(s, { method: 'GET', url }, 'read', 'load');
    const body = this.object(response, 'load', url);
    const metadataLocation = body['metadata-location'];
    if (typeof metadataLocation !== 'string') throw this.invalid('the loaded table has no metadata-location (not committed yet?)', url);
    const loaded = this.loaded(body, metadataLocation, url);
    const config = stringMap(body.config);
    if (config.token !== undefined) this.tableAuth = await this.authFor({ ...s.properties, token: config.token }, s.http);
    this.io.useStorageConfig(storageConfigFor(loaded.metadata.location, config, storageCredentials(body['storage-credentials'])));
    return loaded;
  }

  async commit(requirements: readonly TableRequirement[], updates: readonly TableUpdate[], base: LoadedMetadata): Promise<LoadedMetadata> {
    const s = await this.connect();
    const url = new URL(`${s.base}/${s.tablePath}`);
    const request = commitTableRequest({ namespace: this.namespace, name: this.table }, requirements, updates, base.metadata.formatVersion);
    const response = await this.send(
      s,
      { method: 'POST', url, body: stringifyJson(request), ...(s.idempotent ? { headers: { 'Idempotency-Key': randomUUID() } } : {}) },
      s.idempotent ? 'read' : 'commit',
      'commit',
    );
    const body = this.object(response, 'commit', url);
    const metadataLocation = body['metadata-location'];
    if (typeof metadataLocation !== 'string') throw this.invalid('the commit answer has no metadata-location', url);
    return this.loaded(body, metadataLocation, url);
  }

  private connect(): Promise<Session> {
    return this.session.get();
  }

  private async fetchConfig(): Promise<Session> {
    const given = this.options.properties ?? {};
    const maxRetries = given[RestProperty.MaxRetries] !== undefined ? Number(given[RestProperty.MaxRetries]) : undefined;
    const http = new RestHttpClient({
      headers: headersOf(given),
      ...(maxRetries !== undefined && Number.isInteger(maxRetries) ? { maxRetries } : {}),
      ...(this.options.retryBaseMs !== undefined ? { retryBaseMs: this.options.retryBaseMs } : {}),
    });
    const uri = trimSlash(given[RestProperty.Uri] ?? this.uri);
    const url = new URL(`${uri}/v1/config`);
    const warehouse = given[RestProperty.Warehouse];
    if (warehouse !== undefined) url.searchParams.set('warehouse', warehouse);
    const auth = await this.authFor({ ...given, [RestProperty.Uri]: uri }, http);
    const response = await http.send({ method: 'GET', url }, 'read', auth).catch((e: unknown) => this.noResponse(e, 'config', url));
    if (response.status !== 200) throw restError(response, 'config', `GET ${url.href}`, this.name);
    const body = this.object(response, 'config', url);
    const properties = { ...stringMap(body.defaults), ...given, ...stringMap(body.overrides) };
    const base = trimSlash(properties[RestProperty.Uri] ?? uri);
    const prefix = properties[RestProperty.Prefix];
    const separator = properties[RestProperty.NamespaceSeparator] ?? '%1F';
    const tablePath = [
      'v1',
      ...(prefix !== undefined && prefix !== '' ? [trimSlash(prefix).replace(/^\/+/, '')] : []),
      'namespaces',
      this.namespace.map(encodeURIComponent).join(separator),
      'tables',
      encodeURIComponent(this.table),
    ].join('/');
    // The merged properties may name other credentials than the client's alone.
    const sameAuth =
      base === uri &&
      [RestProperty.Token, RestProperty.Credential, RestProperty.Scope, RestProperty.SigV4Enabled, RestProperty.SigningName, RestProperty.SigningRegion].every(
        (k) => properties[k] === given[k],
      );
    return {
      properties,
      base,
      http: new RestHttpClient({
        headers: headersOf(properties),
        ...(maxRetries !== undefined && Number.isInteger(maxRetries) ? { maxRetries } : {}),
        ...(this.options.retryBaseMs !== undefined ? { retryBaseMs: this.options.retryBaseMs } : {}),
      }),
      auth: sameAuth ? auth : await this.authFor({ ...properties, [RestProperty.Uri]: base }, http),
      tablePath,
      idempotent: body['idempotency-key-lifetime'] !== undefined,
    };
  }

  /** The auth the properties ask for: a token, client credentials, SigV4 over either, or none. */
  private async authFor(properties: CatalogProperties, http: RestHttpClient): Promise<AuthSession> {
    const token = properties[RestProperty.Token];
    const credential = properties[RestProperty.Credential];
    let auth: AuthSession = NO_AUTH;
    if (token !== undefined && token !== '') auth = bearerAuth(token);
    else if (credential !== undefined && credential !== '') {
      const uri = trimSlash(properties[RestProperty.Uri] ?? this.uri);
      const extra: Record<string, string> = {};
      for (const k of [RestProperty.Audience, RestProperty.Resource]) if (properties[k] !== undefined) extra[k] = properties[k];
      auth = new ClientCredentialsAuth(
        {
          tokenUri: new URL(properties[RestProperty.OAuth2ServerUri] ?? `${uri}/v1/oauth/tokens`),
          credential,
          ...(properties[RestProperty.Scope] !== undefined ? { scope: properties[RestProperty.Scope] } : {}),
          extra,
        },
        http,
        this.name,
      );
    }
    // A signing name or region asks for SigV4 unless it is turned off.
    const sigV4 = properties[RestProperty.SigV4Enabled];
    if (sigV4 === 'true' || (sigV4 === undefined && (properties[RestProperty.SigningName] !== undefined || properties[RestProperty.SigningRegion] !== undefined))) {
      const { sigV4Auth } = await import('./rest/sigv4.js');
      auth = sigV4Auth(auth, {
        ...(properties[RestProperty.SigningName] !== undefined ? { signingName: properties[RestProperty.SigningName] } : {}),
        ...(properties[RestProperty.SigningRegion] !== undefined ? { signingRegion: properties[RestProperty.SigningRegion] } : {}),
      });
    }
    return auth;
  }

  private async send(
    s: Session,
    request: Omit<HttpRequest, 'headers'> & { readonly headers?: Readonly<Record<string, string>> },
    policy: 'read' | 'commit',
    endpoint: Endpoint,
  ): Promise<HttpResponse> {
    const response = await s.http.send(request, policy, this.tableAuth ?? s.auth).catch((e: unknown) => this.noResponse(e, endpoint, request.url));
    if (response.status < 200 || response.status > 299) throw restError(response, endpoint, `${request.method} ${request.url.href}`, this.name);
    return response;
  }

  private noResponse(e: unknown, endpoint: Endpoint, url: URL): never {
    if (endpoint === 'commit' && e instanceof NoResponseError && e.sent) {
      throw new CommitStateUnknownError(
        `POST ${url.href}: ${e.message}: the commit may or may not have been applied; check the table in the catalog before running anything else on it`,
        { path: this.name, cause: e },
      );
    }
    throw e;
  }

  private object(response: HttpResponse, endpoint: Endpoint, url: URL): JsonObject {
    if (!isJsonObject(response.json)) throw this.invalid(`the ${endpoint} answer is not a JSON object`, url);
    return response.json;
  }

  private loaded(body: JsonObject, metadataLocation: string, url: URL): LoadedMetadata {
    if (!isJsonObject(body.metadata)) throw this.invalid('the answer has no table metadata', url);
    try {
      return { metadata: tableMetadataFromJson(body.metadata, metadataLocation), metadataLocation, versionToken: metadataLocation };
    } catch (e) {
      throw new InvalidFileError(`the table metadata from ${url.href} is invalid: ${(e as Error).message}`, { path: this.name, cause: e });
    }
  }

  private invalid(message: string, url: URL): InvalidFileError {
    return new InvalidFileError(`${message} (${url.href})`, { path: this.name });
  }
}

function trimSlash(s: string): string {
  return s.replace(/\/+$/, '');
}

/** A JSON object of strings (`config`, `defaults`, `overrides`); other values are skipped. */
function stringMap(v: JsonValue | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isJsonObject(v)) return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

function storageCredentials(v: JsonValue | undefined): { prefix: string; config: StorageConfig }[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((c) => (isJsonObject(c) && typeof c.prefix === 'string' ? [{ prefix: c.prefix, config: stringMap(c.config) }] : []));
}
