/**
 * Durations as operators write them: `3d`, `12h`, `30m`, `45s`, `500ms`, `2w`, or several
 * run together (`1d12h`). A bare number is refused unless the caller names its unit (a
 * horizon "in days" may be written `7`), so `--older-than 3` never silently means 3 ms.
 */
import { InvalidArgumentError } from '../errors.js';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
export type DurationUnit = keyof typeof UNIT_MS;

const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/gy;

/** Milliseconds in `text`; throws InvalidArgumentError naming `what` (the flag) when it is not a duration. */
export function parseDuration(text: string, what = 'duration', bareUnit?: DurationUnit): number {
  const s = text.trim().toLowerCase();
  if (bareUnit !== undefined && /^\d+(?:\.\d+)?$/.test(s)) return Math.round(Number(s) * UNIT_MS[bareUnit]);
  PART.lastIndex = 0;
  let total = 0;
  let matched = 0;
  for (let m = PART.exec(s); m !== null; m = PART.exec(s)) {
    total += Number(m[1]) * UNIT_MS[m[2] as DurationUnit];
    matched = PART.lastIndex;
  }
  if (s === '' || matched !== s.length) {
    throw new InvalidArgumentError(
      `${what}: "${text}" is not a duration; write a number and a unit, like 3d, 12h, 30m, 45s or 0s` +
        (bareUnit !== undefined ? ` (a bare number counts in ${bareUnit})` : ''),
    );
  }
  return Math.round(total);
}

/** The shortest exact spelling: 259200000 → `3d`, 5400000 → `1h30m`, 0 → `0s`. */
export function formatDurationText(ms: number): string {
  if (ms === 0) return '0s';
  let rest = Math.round(ms);
  let out = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms'] as const) {
    const n = Math.floor(rest / UNIT_MS[unit]);
    if (n > 0) {
      out += `${n}${unit}`;
      rest -= n * UNIT_MS[unit];
    }
  }
  return out;
}
