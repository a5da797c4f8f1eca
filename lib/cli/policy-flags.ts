/**
 * The policy flags `plan`, `health` and `compact` share: one table gives each flag its
 * CompactionPolicy field, its parser and its help, and the help's defaults come from
 * lib/compaction/policy.ts, so the two cannot disagree.
 */
import { Option, type Command } from 'commander';
import type { CompactionPolicy } from '../compaction/messages.js';
import {
  DEFAULT_TARGET_FILE_SIZE_BYTES, MAX_FILE_SIZE_DEFAULT_RATIO, MIN_FILE_SIZE_DEFAULT_RATIO, POLICY_DEFAULTS, TARGET_FILE_SIZE_PROPERTY,
} from '../compaction/policy.js';
import { InvalidArgumentError } from '../errors.js';
import { byteSize, commanderParser, numberIn, wholeNumber } from './arguments.js';
import { formatSizeFlag } from './format.js';

/** Quiet minutes: any number of minutes, fractions allowed, not negative. */
function minutes(text: string): number {
  const n = text.trim() === '' ? NaN : Number(text);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`must be a number of minutes >= 0, got "${text}"`);
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
    flags: '--target-file-size <size>', field: 'targetFileSizeBytes', parse: byteSize(2), description: 'target output file size',
    shownDefault: `${TARGET_FILE_SIZE_PROPERTY} or ${formatSizeFlag(DEFAULT_TARGET_FILE_SIZE_BYTES)}`,
  },
  {
    flags: '--min-file-size <size>', field: 'minFileSizeBytes', parse: byteSize(0), description: 'files below this are rewritten',
    shownDefault: percentOf(MIN_FILE_SIZE_DEFAULT_RATIO),
  },
  {
    flags: '--max-file-size <size>', field: 'maxFileSizeBytes', parse: byteSize(1), description: 'files above this are rewritten',
    shownDefault: percentOf(MAX_FILE_SIZE_DEFAULT_RATIO),
  },
  {
    flags: '--min-input-files <n>', field: 'minInputFiles', parse: wholeNumber(1), description: 'fewest files worth a group',
    shownDefault: String(POLICY_DEFAULTS.minInputFiles),
  },
  {
    flags: '--delete-file-threshold <n>', field: 'deleteFileThreshold', parse: wholeNumber(0),
    description: 'rewrite a file that has this many delete files', shownDefault: String(POLICY_DEFAULTS.deleteFileThreshold),
  },
  {
    flags: '--delete-ratio-threshold <r>', field: 'deleteRatioThreshold', parse: numberIn(0, 1),
    description: 'rewrite a file with this fraction of rows deleted', shownDefault: String(POLICY_DEFAULTS.deleteRatioThreshold),
  },
  {
    flags: '--quiet-minutes <n>', field: 'quietMinutes', parse: minutes, description: 'leave partitions written in the last n minutes',
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
    flags: '--sort-order <order>', field: 'sortOrder', parse: (s) => s,
    description: 'with the sort strategy (implied): sort by this order instead of the table\'s, as Spark\'s sort_order, e.g. "ts ASC NULLS LAST, id DESC"',
  },
  {
    flags: '--max-group-bytes <size>', field: 'maxGroupBytes', parse: byteSize(1), description: 'most input bytes in one group',
    shownDefault: formatSizeFlag(POLICY_DEFAULTS.maxGroupBytes),
  },
  {
    flags: '--max-groups <n>', field: 'maxGroups', parse: wholeNumber(1), description: 'most groups in one run',
    shownDefault: String(POLICY_DEFAULTS.maxGroups),
  },
];

/** The commander option of a flag; a value that does not parse is a usage error naming the flag. */
function optionOf(flag: PolicyFlag): Option {
  const option = new Option(flag.flags, `${flag.description}${flag.shownDefault !== undefined ? ` (default: ${flag.shownDefault})` : ''}`);
  if (flag.choices) return option.choices(flag.choices);
  return option.argParser(commanderParser(flag.parse));
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
