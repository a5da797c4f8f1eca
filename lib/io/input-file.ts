import { InvalidFileError, IoError, NotFoundError } from '../errors.js';
import type { FileIO, InputFile } from './file-io.js';

/** An InputFile over any FileIO: ranges go to `readRange`, the length is fetched once. */
export function rangeInputFile(io: FileIO, path: string, knownLength?: number): InputFile {
  let cached: Promise<number> | undefined = knownLength === undefined ? undefined : Promise.resolve(knownLength);
  return {
    path,
    length() {
      if (cached === undefined) {
        const pending = io.stat(path).then((info) => info.size);
        cached = pending;
        // A failed stat must not stick: the next call asks again.
        pending.catch(() => {
          if (cached === pending) cached = undefined;
        });
      }
      return cached;
    },
    read(start, end) {
      return io.readRange(path, start, end);
    },
  };
}

/** Rejects ranges that are not `0 <= start <= end` in safe integers. */
export function checkByteRange(path: string, start: number, end: number): void {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new IoError(`invalid byte range [${start}, ${end})`, { path, retryable: false });
  }
}

/** A range that reaches past the end of a file: the file is shorter than its reader expects. */
export function shortReadError(path: string, start: number, end: number, got: number): InvalidFileError {
  return new InvalidFileError(
    `file is truncated or shorter than expected: asked for bytes [${start}, ${end}), got ${got} byte(s)`,
    { path },
  );
}

/** Whether `path` is a file: stat succeeds. Not-found is false; any other failure is thrown. */
export async function existsByStat(io: Pick<FileIO, 'stat'>, path: string): Promise<boolean> {
  try {
    await io.stat(path);
    return true;
  } catch (err) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
}
