/**
 * A REST catalog's error answers as our errors, the way Java's ErrorHandlers read them: the body is
 * the spec's ErrorModel `{"error": {"message", "type", "code"}}` (or OAuth2's `{"error",
 * "error_description"}` from the token endpoint); every message names the table and the endpoint.
 * A commit answered 409 is a conflict; 500, 502, 503 or 504 leave its outcome unknown.
 */
import {
  CommitConflictError,
  CommitStateUnknownError,
  InvalidArgumentError,
  IoError,
  NotAuthorizedError,
  NotFoundError,
  UnsupportedError,
  type PackiceError,
} from '../../errors.js';
import { isJsonObject } from '../../iceberg/json.js';
import type { HttpResponse } from './http-client.js';

export type Endpoint = 'config' | 'token' | 'load' | 'commit';

/** `status: type: message` from the answer's body, as much as it carries. */
export function errorDetail(response: HttpResponse): string {
  const body = response.json;
  if (isJsonObject(body)) {
    const e = body.error;
    if (isJsonObject(e)) {
      const type = typeof e.type === 'string' ? e.type : undefined;
      const message = typeof e.message === 'string' ? e.message : undefined;
      return [String(response.status), type, message].filter((x) => x !== undefined).join(': ');
    }
    // OAuth2's token errors.
    if (typeof e === 'string') {
      return [String(response.status), e, typeof body.error_description === 'string' ? body.error_description : undefined]
        .filter((x) => x !== undefined)
        .join(': ');
    }
  }
  const text = response.text.trim().slice(0, 200);
  return text === '' ? String(response.status) : `${response.status}: ${text}`;
}

/** The error for a non-2xx answer of `endpoint` (`call` is what was asked, e.g. `POST /v1/…`). */
export function restError(response: HttpResponse, endpoint: Endpoint, call: string, table: string): PackiceError {
  const status = response.status;
  const detail = `the catalog answered ${call} with ${errorDetail(response)}`;
  const options = { path: table };
  if (endpoint === 'commit') {
    if (status === 409) return new CommitConflictError(`${detail}; refresh and retry`, options);
    if (status === 500 || status === 502 || status === 503 || status === 504) {
      return new CommitStateUnknownError(
        `${detail}: the commit may or may not have been applied; check the table in the catalog before running anything else on it`,
        options,
      );
    }
  }
  if (status === 401 || status === 403 || status === 419) return new NotAuthorizedError(detail, options);
  if (status === 404) return new NotFoundError(endpoint === 'load' || endpoint === 'commit' ? `no such table: ${detail}` : detail, options);
  if (status === 406 || status === 501) return new UnsupportedError(detail, options);
  if (status === 400 || status === 422) return new InvalidArgumentError(detail, options);
  return new IoError(detail, { ...options, retryable: status >= 500 || status === 429 });
}
