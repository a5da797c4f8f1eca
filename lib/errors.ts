/**
 * One error tree for the whole project: a `kind`, the `context` it happened in
 * (usually the file), an optional `cause`, and whether retrying can help.
 */
export const ErrorKind = {
  NotFound: 'not-found',
  AlreadyExists: 'already-exists',
  InvalidInput: 'invalid-input',
  Unsupported: 'unsupported',
  CommitConflict: 'commit-conflict',
  Validation: 'validation',
  Io: 'io',
  InvalidArgument: 'invalid-argument',
  IllegalState: 'illegal-state',
  ReadOnly: 'read-only',
  CommitStateUnknown: 'commit-state-unknown',
  NotAuthorized: 'not-authorized',
} as const;
export type ErrorKind = (typeof ErrorKind)[keyof typeof ErrorKind];

export interface ErrorOptions {
  /** The file, table or object the error is about. */
  readonly path?: string;
  readonly cause?: unknown;
  readonly retryable?: boolean;
}

export class PackiceError extends Error {
  readonly kind: ErrorKind;
  readonly path: string | undefined;
  readonly retryable: boolean;

  constructor(kind: ErrorKind, message: string, options: ErrorOptions = {}) {
    super(options.path !== undefined && !message.includes(options.path) ? `${options.path}: ${message}` : message, {
      cause: options.cause,
    });
    this.name = new.target.name;
    this.kind = kind;
    this.path = options.path;
    this.retryable = options.retryable ?? false;
  }
}

/** A file or object that does not exist. */
export class NotFoundError extends PackiceError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(ErrorKind.NotFound, message, options);
  }
}

/** A create-if-absent write found the object already there. */
export class AlreadyExistsError extends PackiceError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(ErrorKind.AlreadyExists, message, options);
  }
}

/** Bytes that break a format rule: truncated, corrupt, or of the wrong kind. */
export class InvalidFileError extends PackiceError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(ErrorKind.InvalidInput, message, options);
  }
}

/** Valid input that this project does not handle (yet): ORC data, a future format version. */
export class UnsupportedError extends PackiceError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(ErrorKind.Unsupported, message, options);
  }
}

export interface CommitConflictOptions extends ErrorOptions {
  /** The REST name of the requirement that failed (`assert-ref-snapshot-id`, …); absent when the catalog's pointer moved. */
  readonly requirement?: string;
  /** Attempts made, when the commit gave up after retrying. */
  readonly attempts?: number;
}

/**
 * Somebody else committed first: a requirement no longer holds, or the catalog's pointer moved
 * since the base was loaded. Refresh, re-validate and try again. One class whatever the cause,
 * so the Step Functions retry (which matches the class name) catches every conflict.
 */
export class CommitConflictError extends PackiceError {
  readonly requirement: string | undefined;
  readonly attempts: number | undefined;

  constructor(message: string, options: CommitConflictOptions = {}) {
    super(ErrorKind.CommitConflict, message, { retryable: true, ...options });
    this.requirement = options.requirement;
    this.attempts = options.attempts;
  }
}

/**
 * A commit whose outcome is not known: the catalog service failed (a 5xx, a lost connection)
 * after it may have applied it (Java's CommitStateUnknownException). Not retried, and the files
 * the commit references are kept: check the catalog before anything else is done to the table.
 */
export class CommitStateUnknownError extends PackiceError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(ErrorKind.CommitStateUnknown, message, { ...options, retryable: false });
  }
}

/** True when `e` leaves a commit's outcome unknown: the files it references must then be kept. */
export function mayHaveCommitted(e: unknown): boolean {
  return e instanceof CommitStateUnknownError;
}

/** A catalog service refused who we are or what we may do (HTTP 401, 403, 419; Java's NotAuthorizedException, ForbiddenException). */
export class NotAuthorizedError extends PackiceError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(ErrorKind.NotAuthorized, message, options);
  }
}

/** A commit that can never succeed as asked (Java's ValidationException). */
export class ValidationError extends PackiceError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(ErrorKind.Validation, message, options);
  }
}

/** Storage failed for a reason other than the ones above. */
export class IoError extends PackiceError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(ErrorKind.Io, message, { retryable: true, ...options });
  }
}

/**
 * A value or argument outside what a function accepts: a value that does not fit its
 * Iceberg type, text that is not a type or a mode, a position or size out of range
 * (Java's IllegalArgumentException). Readers that know the file wrap it in InvalidFileError.
 */
export class InvalidArgumentError extends PackiceError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(ErrorKind.InvalidArgument, message, options);
  }
}

/** A call the object's state does not allow: writing after close, iterating twice (Java's IllegalStateException). */
export class IllegalStateError extends PackiceError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(ErrorKind.IllegalState, message, options);
  }
}

/** A change asked of a table that was opened read-only (from an explicit metadata file, not the catalog). */
export class ReadOnlyTableError extends PackiceError {
  constructor(message: string, options: ErrorOptions = {}) {
    super(ErrorKind.ReadOnly, message, options);
  }
}

/**
 * Deletes prepared against a data file that a commit other than a compaction with a map removed
 * (an overwrite, a rewrite that reorders rows): they cannot be translated, so they conflict.
 */
export class DataFileRemovedError extends ValidationError {
  /** The data file the deletes were prepared against, as the writer named it. */
  readonly dataFile: string;

  constructor(dataFile: string, message: string, options: ErrorOptions = {}) {
    super(message, options);
    this.dataFile = dataFile;
  }
}

/** An error as it crosses a worker thread (structured clone keeps neither the class nor `path`). */
export interface ErrorJson {
  readonly name: string;
  readonly message: string;
  readonly path?: string;
  readonly retryable?: boolean;
  readonly cause?: ErrorJson;
}

/** `e` as ErrorJson: its class name, message, path and retryability, and its causes'. */
export function errorToJson(e: unknown, depth = 0): ErrorJson {
  if (!(e instanceof Error)) return { name: 'Error', message: String(e) };
  const cause = depth < 4 && e.cause !== undefined ? errorToJson(e.cause, depth + 1) : undefined;
  return {
    name: e.name,
    message: e.message,
    ...(e instanceof PackiceError ? { ...(e.path !== undefined ? { path: e.path } : {}), retryable: e.retryable } : {}),
    ...(cause ? { cause } : {}),
  };
}

const ERROR_CLASSES: Readonly<Record<string, new (message: string, options?: ErrorOptions) => PackiceError>> = {
  NotFoundError, AlreadyExistsError, InvalidFileError, UnsupportedError, CommitConflictError, CommitStateUnknownError,
  NotAuthorizedError, ValidationError, IoError, InvalidArgumentError, IllegalStateError, ReadOnlyTableError,
};

/** The error `errorToJson` described, of the same class when it is one of this tree's (else an Error of that name). */
export function errorFromJson(json: ErrorJson): Error {
  const cause = json.cause ? errorFromJson(json.cause) : undefined;
  const Class = ERROR_CLASSES[json.name];
  if (Class) {
    return new Class(json.message, {
      ...(json.path !== undefined ? { path: json.path } : {}),
      ...(json.retryable !== undefined ? { retryable: json.retryable } : {}),
      ...(cause ? { cause } : {}),
    });
  }
  const e = new Error(json.message, cause ? { cause } : undefined);
  e.name = json.name;
  return e;
}
