/**
 * The REST catalog's bearer-token auth, as Java's OAuth2Manager sets it up from catalog properties:
 * `token` is sent as it is; `credential` (`<client_id>:<client_secret>`, or only a secret) is
 * exchanged for a token at `oauth2-server-uri` (default `<uri>/v1/oauth/tokens`) with the
 * client-credentials grant and `scope` (default `catalog`, Java's), and asked for again before it
 * expires (`expires_in`, else the JWT's `exp`, else an hour) or when the server answers 401.
 */
import { NotAuthorizedError } from '../../errors.js';
import { isJsonObject } from '../../iceberg/json.js';
import type { RestHttpClient } from './http-client.js';
import { withHeader, type AuthSession, type HttpRequest } from './http-request.js';
import { OnceUntilFailed } from './once-until-failed.js';
import { errorDetail } from './rest-errors.js';

export const DEFAULT_SCOPE = 'catalog';
/** A token is renewed this long before it expires, or a tenth of its life if that is shorter. */
const REFRESH_MARGIN_MS = 60_000;
const DEFAULT_EXPIRY_MS = 3_600_000;

export function bearerAuth(token: string): AuthSession {
  return { authenticate: (r) => Promise.resolve({ ...r, headers: withHeader(r.headers, 'Authorization', `Bearer ${token}`) }) };
}

export interface ClientCredentials {
  readonly tokenUri: URL;
  /** `client_id:client_secret`, or a secret alone. */
  readonly credential: string;
  readonly scope?: string;
  /** Extra form fields Java sends when set (`audience`, `resource`). */
  readonly extra?: Readonly<Record<string, string>>;
}

interface Token {
  readonly value: string;
  readonly expiresAtMs: number;
  readonly marginMs: number;
}

export class ClientCredentialsAuth implements AuthSession {
  private readonly token = new OnceUntilFailed(() => this.fetchToken());

  constructor(
    private readonly settings: ClientCredentials,
    private readonly http: RestHttpClient,
    private readonly table: string,
  ) {}

  async authenticate(request: HttpRequest): Promise<HttpRequest> {
    const cached = this.token.peek();
    let token = await this.token.get();
    if (cached !== undefined && Date.now() >= token.expiresAtMs - token.marginMs) {
      this.token.clear(cached);
      token = await this.token.get();
    }
    return { ...request, headers: withHeader(request.headers, 'Authorization', `Bearer ${token.value}`) };
  }

  invalidate(): boolean {
    this.token.clear();
    return true;
  }

  private async fetchToken(): Promise<Token> {
    const { tokenUri, credential, scope, extra } = this.settings;
    const colon = credential.indexOf(':');
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      ...(colon >= 0 ? { client_id: credential.slice(0, colon) } : {}),
      client_secret: colon >= 0 ? credential.slice(colon + 1) : credential,
      scope: scope ?? DEFAULT_SCOPE,
      ...extra,
    });
    const started = Date.now();
    const response = await this.http.send(
      { method: 'POST', url: tokenUri, body: form.toString(), headers: { 'Content-Type': 'application/x-www-form-urlencoded' } },
      'read',
    );
    const body = response.json;
    if (response.status !== 200 || !isJsonObject(body) || typeof body.access_token !== 'string') {
      throw new NotAuthorizedError(`the OAuth2 token request to ${tokenUri.href} failed: ${errorDetail(response)}`, { path: this.table });
    }
    const expiresIn = body.expires_in === undefined || body.expires_in === null ? undefined : Number(String(body.expires_in));
    const expiresAtMs =
      expiresIn !== undefined && Number.isFinite(expiresIn) ? started + expiresIn * 1000 : (jwtExpiryMs(body.access_token) ?? started + DEFAULT_EXPIRY_MS);
    return { value: body.access_token, expiresAtMs, marginMs: Math.min(REFRESH_MARGIN_MS, (expiresAtMs - started) / 10) };
  }
}

/** The `exp` of a JWT, in ms; undefined when the token is not one. */
function jwtExpiryMs(token: string): number | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null && 'exp' in claims && typeof claims.exp === 'number' ? claims.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
