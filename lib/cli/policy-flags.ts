/**
 * The policy flags `plan`, `health` and `compact` share: one table gives each flag its
 * CompactionPolicy field, its parser and its help, and the help's defaults come from
 * lib/compaction/policy.ts, so the two cannot disagree.
 */
import { InvalidArgumentError as CommanderInvalidArgument, Option, type Command } from 'commander';
import type { CompactionPolicy } from '../compaction/messages.js';
import {
  DEFAULT_TARGET_FILE_SIZE_BYTES, MAX_FILE_SIZE_DEFAULT_RATIO, MIN_FILE_SIZE_DEFAULT_RATIO, POLICY_DEFAULTS, TARGET_FILE_SIZE_PROPERTY,
} from '../compaction/policy.js';
import { InvalidArgumentError } from '../errors.js';
import { formatSizeFlag } from './format.js';

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

export function parseCount(text: string): number {
  if (!/^\s*\d+\s*$/.test(text)) throw new InvalidArgumentError(`"${text}" is not a whole number`);
  return Number(text);
}

export function parseRatio(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`"${text}" is not a number`);
  return n;
}

export function parseMinutes(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`"${text}" is not a number of minutes`);
  return n;
}

function choice<T extends string>(choices: readonly T[]): (text: string) => T {
  return (text) => {
    if (!(choices as readonly string[]).includes(text)) throw new InvalidArgumentError(`Allowed choices are ${choices.join(', ')}.`);
    return text as T;
  };
}

const percentOf = (ratio: number): string => `${Math.round(ratio * 100)}% of the target`;

export interface PolicyFlag {
  /** As commander takes it: `--max-group-bytes <size>`. */
  readonly flags: string;
  readonly field: keyof CompactionPolicy;
  readonly parse: (text: string) => CompactionPolicy[keyof CompactionPolicy];
  readonly description: string;
  /** What applies when the flag is absent, as help shows it. */
  readonly shownDefault?: string;
  readonly choices?: readonly string[];
}

const MODES = ['major', 'minor'] as const;
const STRATEGIES = ['binpack', 'sort'] as const;

export const POLICY_FLAGS: readonly PolicyFlag[] = [
  {
    flags: '--target-file-size <size>', field: 'targetFileSizeBytes', parse: parseByteSize, description: 'target output file size',
    shownDefault: `${TARGET_FILE_SIZE_PROPERTY} or ${formatSizeFlag(DEFAULT_TARGET_FILE_SIZE_BYTES)}`,
  },
  {
    flags: '--min-file-size <size>', field: 'minFileSizeBytes', parse: parseByteSize, description: 'files below this are rewritten',
    shownDefault: percentOf(MIN_FILE_SIZE_DEFAULT_RATIO),
  },
  {
    flags: '--max-file-size <size>', field: 'maxFileSizeBytes', parse: parseByteSize, description: 'files above this are rewritten',
    shownDefault: percentOf(MAX_FILE_SIZE_DEFAULT_RATIO),
  },
  {
    flags: '--min-input-files <n>', field: 'minInputFiles', parse: parseCount, description: 'fewest files worth a group',
    shownDefault: String(POLICY_DEFAULTS.minInputFiles),
  },
  {
    flags: '--delete-file-threshold <n>', field: 'deleteFileThreshold', parse: parseCount,
    description: 'rewrite a file that has this many delete files', shownDefault: String(POLICY_DEFAULTS.deleteFileThreshold),
  },
  {
    flags: '--delete-ratio-threshold <r>', field: 'deleteRatioThreshold', parse: parseRatio,
    description: 'rewrite a file with this fraction of rows deleted', shownDefault: String(POLICY_DEFAULTS.deleteRatioThreshold),
  },
  {
    flags: '--quiet-minutes <n>', field: 'quietMinutes', parse: parseMinutes, description: 'leave partitions written in the last n minutes',
    shownDefault: `${POLICY_DEFAULTS.quietMinutes}${POLICY_DEFAULTS.quietMinutes === 0 ? ', off' : ''}`,
  },
  { flags: '--where <filter>', field: 'where', parse: (s) => s, description: `partition filter, e.g. "action = 'click' and ts_hour >= 10"` },
  {
    flags: '--mode <mode>', field: 'mode', parse: choice(MODES), choices: MODES,
    description: 'major applies every delete; minor leaves equality deletes', shownDefault: POLICY_DEFAULTS.mode,
  },
  {
    flags: '--strategy <strategy>', field: 'strategy', parse: choice(STRATEGIES), choices: STRATEGIES,
    description: 'binpack or sort (by the table sort order)', shownDefault: POLICY_DEFAULTS.strategy,
  },
  {
    flags: '--max-group-bytes <size>', field: 'maxGroupBytes', parse: parseByteSize, description: 'most input bytes in one group',
    shownDefault: formatSizeFlag(POLICY_DEFAULTS.maxGroupBytes),
  },
  {
    flags: '--max-groups <n>', field: 'maxGroups', parse: parseCount, description: 'most groups in one run',
    shownDefault: String(POLICY_DEFAULTS.maxGroups),
  },
];

/** The commander option of a flag; a value that does not parse is a usage error naming the flag. */
function optionOf(flag: PolicyFlag): Option {
  const option = new Option(flag.flags, `${flag.description}${flag.shownDefault !== undefined ? ` (default: ${flag.shownDefault})` : ''}`);
  if (flag.choices) return option.choices(flag.choices);
  return option.argParser((text: string) => {
    try {
      return flag.parse(text);
    } catch (e) {
      // Commander prints its own error, with the flag, for its InvalidArgumentError.
      if (e instanceof InvalidArgumentError) throw new CommanderInvalidArgument(e.message);
      throw e;
    }
  });
}

/** Adds the policy flags. Their defaults are not set here: unset fields resolve in lib/compaction/policy.ts. */
export function addPolicyOptions(cmd: Command): Command {
  for (const flag of POLICY_FLAGS) cmd.addOption(optionOf(flag));
  return cmd;
}

/** The policy the flags ask for; values may be already parsed (commander) or raw strings. */
export function policyFromOptions(opts: Readonly<Record<string, unknown>>): CompactionPolicy {
  const policy: Partial<Record<keyof CompactionPolicy, unknown>> = {};
  for (const flag of POLICY_FLAGS) {
    const v = opts[new Option(flag.flags).attributeName()];
    if (v === undefined || v === null) continue;
    policy[flag.field] = typeof v === 'string' ? flag.parse(v) : v;
  }
  return policy as CompactionPolicy;
}
