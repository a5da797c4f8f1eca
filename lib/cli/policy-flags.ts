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
  { flags: '--where <filter>', field: 'where', parse: (s) => s, description: `files whose rows may match, over partition fields (values as health prints them) and columns, e.g. "ts_hour >= '2026-01-01-04' and action = 'click'", "ts >= '2026-01-01T04:00:00Z'"` },
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

/**
 * `--option <name>=<value>`: the option names of Iceberg's rewrite_data_files, so that a Spark
 * user's settings carry over. Each maps onto a flag; the run's own options (concurrency,
 * partial progress) are read by `compact` with `runOptionsOf`.
 */
const ICEBERG_POLICY_OPTIONS: Readonly<Record<string, string>> = {
  'target-file-size-bytes': '--target-file-size',
  'min-file-size-bytes': '--min-file-size',
  'max-file-size-bytes': '--max-file-size',
  'min-input-files': '--min-input-files',
  'delete-file-threshold': '--delete-file-threshold',
  'delete-ratio-threshold': '--delete-ratio-threshold',
  'max-file-group-size-bytes': '--max-group-bytes',
  'sort-order': '--sort-order',
  strategy: '--strategy',
  where: '--where',
};
/** Options of the run rather than the policy, and the values packice always has. */
const ICEBERG_RUN_OPTIONS = new Set(['max-concurrent-file-group-rewrites', 'partial-progress.enabled', 'partial-progress.max-commits']);
const ICEBERG_FIXED: Readonly<Record<string, string>> = {
  'remove-dangling-deletes': 'true',
  'use-starting-sequence-number': 'true',
};
const ICEBERG_UNSUPPORTED: Readonly<Record<string, string>> = {
  'rewrite-all': 'give --min-input-files 1 and thresholds every file crosses instead',
  'rewrite-job-order': 'groups run largest benefit first',
  'output-spec-id': 'outputs are written in the default spec (or the group\'s own, in minor mode)',
  'partial-progress.max-failed-commits': 'a failed commit stops the run',
  'max-files-to-rewrite': 'use --max-groups',
};

/** `name=value` pairs of the repeatable `--option`. */
function icebergOptions(opts: Readonly<Record<string, unknown>>): Map<string, string> {
  const out = new Map<string, string>();
  for (const pair of (opts.option as string[] | undefined) ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new InvalidArgumentError(`--option ${pair}: expected name=value, e.g. min-input-files=5`);
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (ICEBERG_UNSUPPORTED[name] !== undefined) throw new InvalidArgumentError(`--option ${name}: not supported (${ICEBERG_UNSUPPORTED[name]})`);
    if (ICEBERG_FIXED[name] !== undefined && value !== ICEBERG_FIXED[name]) {
      throw new InvalidArgumentError(`--option ${name}=${value}: packice always runs with ${name}=${ICEBERG_FIXED[name]}`);
    }
    if (ICEBERG_POLICY_OPTIONS[name] === undefined && ICEBERG_FIXED[name] === undefined && !ICEBERG_RUN_OPTIONS.has(name)) {
      const known = [...Object.keys(ICEBERG_POLICY_OPTIONS), ...ICEBERG_RUN_OPTIONS, ...Object.keys(ICEBERG_FIXED)].join(', ');
      throw new InvalidArgumentError(`--option ${name}: not a rewrite_data_files option packice knows (${known})`);
    }
    out.set(name, value);
  }
  return out;
}

/** The run options `--option` gives `compact`: parallelism, and the most commits for partial progress. */
export function runOptionsOf(opts: Readonly<Record<string, unknown>>): { parallelism?: number; maxCommits?: number } {
  const o = icebergOptions(opts);
  const run: { parallelism?: number; maxCommits?: number } = {};
  const concurrency = o.get('max-concurrent-file-group-rewrites');
  if (concurrency !== undefined) run.parallelism = named('max-concurrent-file-group-rewrites', wholeNumber(1, 1024))(concurrency);
  if (o.get('partial-progress.enabled') === 'true') {
    const commits = o.get('partial-progress.max-commits');
    // Java's default partial-progress.max-commits is 10.
    run.maxCommits = commits === undefined ? 10 : named('partial-progress.max-commits', wholeNumber(1))(commits);
  }
  return run;
}

/** A parser whose errors name the Iceberg option. */
function named<T>(name: string, parse: (text: string) => T): (text: string) => T {
  return (text) => {
    try {
      return parse(text);
    } catch (e) {
      if (e instanceof InvalidArgumentError) throw new InvalidArgumentError(`--option ${name}: ${e.message}`);
      throw e;
    }
  };
}

const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

/** Adds the policy flags. Their defaults are not set here: unset fields resolve in lib/compaction/policy.ts. */
export function addPolicyOptions(cmd: Command): Command {
  for (const flag of POLICY_FLAGS) cmd.addOption(optionOf(flag));
  cmd.addOption(
    new Option('--option <name=value>', "an option of Iceberg's rewrite_data_files by its name, e.g. min-input-files=5, target-file-size-bytes=256MB (repeatable)")
      .argParser(collect),
  );
  return cmd;
}

/** The policy the flags ask for; values may be already parsed (commander) or raw strings. */
export function policyFromOptions(opts: Readonly<Record<string, unknown>>): CompactionPolicy {
  const policy: Partial<Record<keyof CompactionPolicy, unknown>> = {};
  const iceberg = icebergOptions(opts);
  for (const flag of POLICY_FLAGS) {
    const option = new Option(flag.flags);
    const v = opts[option.attributeName()];
    const name = Object.keys(ICEBERG_POLICY_OPTIONS).find((k) => ICEBERG_POLICY_OPTIONS[k] === option.long);
    const fromIceberg = name === undefined ? undefined : iceberg.get(name);
    if (fromIceberg !== undefined && v !== undefined && v !== null) {
      throw new InvalidArgumentError(`--option ${name} and ${option.long} both set the same thing: give one`);
    }
    if (fromIceberg !== undefined) {
      if (flag.choices && !flag.choices.includes(fromIceberg)) throw new InvalidArgumentError(`--option ${name}: must be one of ${flag.choices.join(', ')}, got "${fromIceberg}"`);
      policy[flag.field] = named(name!, flag.parse)(fromIceberg);
      continue;
    }
    if (v === undefined || v === null) continue;
    policy[flag.field] = typeof v === 'string' ? flag.parse(v) : v;
  }
  return policy as CompactionPolicy;
}
