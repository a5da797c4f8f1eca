/** A request to a REST catalog as the auth sessions see it: what they may add headers to or sign. */
export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'HEAD' | 'DELETE';
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  /** The encoded body, exactly as sent (SigV4 signs its hash). */
  readonly body?: string;
}

/** Adds who we are to a request: a bearer token, a SigV4 signature, or nothing. */
export interface AuthSession {
  authenticate(request: HttpRequest): Promise<HttpRequest>;
  /** Told when the server answered 401: forget a cached token. True when asking again may succeed. */
  invalidate?(): boolean;
}

export const NO_AUTH: AuthSession = { authenticate: (request) => Promise.resolve(request) };

/** `headers` with `name` set, replacing any casing of it. */
export function withHeader(headers: Readonly<Record<string, string>>, name: string, value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() !== name.toLowerCase()) out[k] = v;
  out[name] = value;
  return out;
}
