/**
 * How the CLI reads numbers and sizes: every numeric option is checked against the range it
 * accepts, and a value outside it is a usage error that names the option and the range.
 */
import { InvalidArgumentError as CommanderInvalidArgument } from 'commander';
import { InvalidArgumentError, PackiceError } from '../errors.js';

const UNITS: Readonly<Record<string, number>> = {
  '': 1, b: 1,
  k: 1024, kb: 1024, kib: 1024,
  m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2,
  g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3,
  t: 1024 ** 4, tb: 1024 ** 4, tib: 1024 ** 4,
};

/**
 * A byte size: plain bytes, or a number with a unit (128MB, 512MiB, 1.5GiB). Units are binary
 * whichever way they are spelt, as in Spark and Iceberg's docs: 512MB is Iceberg's 536870912.
 */
export function parseByteSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m ? UNITS[m[2].toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new InvalidArgumentError(`"${text}" is not a size (e.g. 134217728, 128MB, 512MiB, 1GiB)`);
  const n = Math.round(Number(m[1]) * unit);
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`"${text}" is too large`);
  return n;
}

/** A size of at least `min` bytes. */
export function byteSize(min: number): (text: string) => number {
  return (text) => {
    const n = parseByteSize(text);
    if (n < min) throw new InvalidArgumentError(`must be at least ${min} byte${min === 1 ? '' : 's'}, got "${text}"`);
    return n;
  };
}

/** A whole number in [min, max] (max unbounded when absent). */
export function wholeNumber(min: number, max?: number): (text: string) => number {
  const range = max === undefined ? `a whole number >= ${min}` : `a whole number from ${min} to ${max}`;
  return (text) => {
    const n = /^\s*-?\d+\s*$/.test(text) ? Number(text) : NaN;
    if (!Number.isSafeInteger(n) || n < min || (max !== undefined && n > max)) {
      throw new InvalidArgumentError(`must be ${range}, got "${text}"`);
    }
    return n;
  };
}

/** A number (not necessarily whole) in (above, atMost]. */
export function numberIn(above: number, atMost?: number): (text: string) => number {
  const range = atMost === undefined ? `a number > ${above}` : `a number > ${above} and <= ${atMost}`;
  return (text) => {
    const n = text.trim() === '' ? NaN : Number(text);
    if (!Number.isFinite(n) || !(n > above) || (atMost !== undefined && n > atMost)) {
      throw new InvalidArgumentError(`must be ${range}, got "${text}"`);
    }
    return n;
  };
}

/** A parser commander calls: our errors become commander's, which it prints after the option's name. */
export function commanderParser<T>(parse: (text: string) => T): (text: string) => T {
  return (text) => {
    try {
      return parse(text);
    } catch (e) {
      if (e instanceof PackiceError) throw new CommanderInvalidArgument(e.message);
      throw e;
    }
  };
}
