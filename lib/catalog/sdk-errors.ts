/** AWS SDK errors of catalog services, translated where they enter (STYLE.md). */
import { InvalidFileError, IoError, NotFoundError, PackiceError } from '../errors.js';

/** The SDK's exception name (`ConcurrentModificationException`, …), if `err` has one. */
export function sdkErrorName(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'name' in err && typeof err.name === 'string' ? err.name : undefined;
}

/** `err` from `service`'s `call` as one of ours: NotFoundError for `notFound`, else IoError; ours pass through. */
export function catalogError(err: unknown, table: string, service: string, call: string, notFound: string): PackiceError {
  if (err instanceof NotFoundError || err instanceof InvalidFileError) return err;
  if (err instanceof PackiceError) return err;
  const kind = sdkErrorName(err);
  if (kind === notFound) return new NotFoundError(`${service} ${call}: no such table`, { path: table, cause: err });
  const message = err instanceof Error ? err.message : String(err);
  return new IoError(`${service} ${call} failed: ${kind ?? 'error'}: ${message}`, { path: table, cause: err });
}
