import { describe, expect, it } from 'vitest';
import {
  ErrorKind,
  IllegalStateError,
  InvalidArgumentError,
  InvalidFileError,
  PackiceError,
  ReadOnlyTableError,
} from '../lib/errors.js';

describe('the error tree', () => {
  it('gives each new class its own kind, under PackiceError', () => {
    const errors = [new InvalidArgumentError('x'), new IllegalStateError('x'), new ReadOnlyTableError('x')];
    expect(errors.map((e) => e.kind)).toEqual([ErrorKind.InvalidArgument, ErrorKind.IllegalState, ErrorKind.ReadOnly]);
    expect(errors.every((e) => e instanceof PackiceError && !(e instanceof InvalidFileError))).toBe(true);
    expect(errors.map((e) => e.name)).toEqual(['InvalidArgumentError', 'IllegalStateError', 'ReadOnlyTableError']);
    expect(errors.some((e) => e.retryable)).toBe(false);
  });

  it('names the file once in the message', () => {
    expect(new IllegalStateError('the writer is closed', { path: '/t/a.parquet' }).message).toBe('/t/a.parquet: the writer is closed');
    expect(new ReadOnlyTableError('/t/m.json is read-only', { path: '/t/m.json' }).message).toBe('/t/m.json is read-only');
  });
});
