/**
 * `packice expire <table>` and `packice orphans <table>`: the CLI face of lib/maintenance. Both
 * take --dry-run (which writes a JSON report of every path and size and deletes nothing),
 * --report, --json, and show progress on stderr when it is a terminal.
 */
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { CommanderError, Option, type Command } from 'commander';
import type { OpenOptions } from '../catalog/table.js';
import { PackiceError } from '../errors.js';
import { resolveLocation } from '../io/index.js';
import { parseDuration } from '../maintenance/duration.js';
import type { ExpireResult } from '../maintenance/expire-snapshots.js';
import type { DeletionTotals } from '../maintenance/file-deletion.js';
import type { OrphanResult, PrefixMismatchMode } from '../maintenance/orphan-files.js';
import { commanderParser, wholeNumber } from './arguments.js';
import { formatBytes } from './format.js';
import { refuseReadOnly, TABLE_ARGUMENT } from './table-argument.js';
import { progressBar } from './progress.js';

interface CommonFlags {
  dryRun?: boolean;
  report?: string;
  json?: boolean;
  concurrency?: number;
}

interface ExpireFlags extends CommonFlags {
  olderThan?: string;
  retainLast?: number;
  pin?: string[];
  horizon?: string[];
}

interface OrphanFlags extends CommonFlags {
  olderThan?: string;
  force?: boolean;
  prefixMismatch?: PrefixMismatchMode;
}

function usage(message: string): never {
  throw new CommanderError(2, 'packice.usage', message);
}

function duration(flag: string, text: string, bareUnit?: 'd'): number {
  try {
    return parseDuration(text, flag, bareUnit);
  } catch (e) {
    if (e instanceof PackiceError) usage(e.message);
    throw e;
  }
}

const positiveInt = (): ((s: string) => number) => commanderParser(wholeNumber(1));

const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

/**
 * Runs the work with its report file claimed first: an existing file of that name is the user's,
 * and refusing it after the deletes would lose the report of what was deleted.
 */
async function withReport<T extends object>(
  command: string,
  flags: CommonFlags,
  work: () => Promise<T>,
): Promise<{ result: T; reportPath: string | undefined }> {
  if (flags.report === undefined && flags.dryRun !== true) return { result: await work(), reportPath: undefined };
  const path = flags.report ?? `packice-${command}-report-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
  let handle: FileHandle;
  try {
    handle = await open(path, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') usage(`--report ${path} already exists; packice does not replace files: name another one`);
    throw e;
  }
  try {
    const result = await work();
    await handle.writeFile(`${JSON.stringify({ command, ...result }, null, 2)}\n`);
    return { result, reportPath: path };
  } catch (e) {
    await unlink(path).catch(() => undefined);
    throw e;
  } finally {
    await handle.close();
  }
}

function kinds(t: DeletionTotals): string {
  return Object.entries(t.byKind)
    .map(([k, v]) => `${v.files} ${k}`)
    .join(', ');
}

/** What expire and orphans say of a table whose catalog removes unreferenced files itself. */
const LEFT_TO_CATALOG = 'the catalog removes the files no snapshot reaches itself (S3 Tables: unreferenced file removal)';

export function formatExpire(r: ExpireResult, reportPath: string | undefined): string {
  const verb = r.dryRun ? 'would delete' : 'deleted';
  const lines = [
    `${r.dryRun ? 'dry run: would expire' : 'expired'} ${r.expiredSnapshots.length} snapshots; ${r.retainedSnapshots} retained` +
      (r.removedRefs.length > 0 ? `; refs dropped: ${r.removedRefs.join(', ')}` : ''),
    `  ${verb} ${r.totals.files} files (${formatBytes(r.totals.bytes)})${r.totals.files > 0 ? `: ${kinds(r.totals)}` : ''}`,
  ];
  if (r.filesLeftToCatalog) lines[1] = `  no files deleted here: ${LEFT_TO_CATALOG}`;
  if (r.resumedRecords > 0) lines.push(`  finished ${r.resumedRecords} interrupted expiry run(s)`);
  if (r.outsideLocation.length > 0) lines.push(`  left alone ${r.outsideLocation.length} files outside the table location (e.g. ${r.outsideLocation[0]})`);
  if (reportPath !== undefined) lines.push(`  report    ${reportPath}`);
  return `${lines.join('\n')}\n`;
}

export function formatOrphans(r: OrphanResult, reportPath: string | undefined): string {
  if (r.filesLeftToCatalog) return `no orphans looked for: ${LEFT_TO_CATALOG}\n`;
  const lines = [
    `${r.dryRun ? 'dry run: would delete' : 'deleted'} ${r.totals.files} orphan files (${formatBytes(r.totals.bytes)}) ` +
      `of ${r.listed} listed`,
    `  referenced ${r.referenced}, younger than the delay ${r.tooNew}, hidden ${r.hidden}`,
  ];
  if (reportPath !== undefined) lines.push(`  report     ${reportPath}`);
  return `${lines.join('\n')}\n`;
}

export function registerRetentionCommands(program: Command, out: (s: string) => void, openOptions: () => OpenOptions): void {
  const common = (cmd: Command): Command =>
    cmd
      .option('--dry-run', 'decide and list, delete nothing; writes a JSON report of every path and size')
      .option('--report <file>', 'write the JSON report here (dry run default: packice-<command>-report-<time>.json)')
      .option('--json', 'print the result as JSON')
      .option('--concurrency <n>', 'delete batches in flight (1,000 keys each)', positiveInt());

  common(
    program
      .command('expire')
      .description("remove snapshots the table's retention no longer keeps, then delete the files only they reached")
      .argument('<table>', TABLE_ARGUMENT)
      .option('--older-than <duration>', 'snapshots older than this may expire (default: history.expire.max-snapshot-age-ms, 5d)')
      .option('--retain-last <n>', 'keep at least n snapshots per branch (default: history.expire.min-snapshots-to-keep, 1)', positiveInt())
      .option('--pin <snapshot|ref>', 'never expire this snapshot id, tag or branch (repeatable)', collect)
      .option('--horizon <duration>', 'nothing younger than this expires; a bare number is days (repeatable, the longest wins)', collect),
  ).action(async (location: string, o: ExpireFlags) => {
    const { loadTable } = await import('../catalog/table.js');
    const { expireSnapshots } = await import('../maintenance/expire-snapshots.js');
    const table = await loadTable(resolveLocation(location), openOptions());
    await refuseReadOnly(table, 'expire');
    const { result, reportPath } = await withReport('expire', o, () => expireSnapshots(table, {
      ...(o.olderThan !== undefined ? { olderThanMs: duration('--older-than', o.olderThan) } : {}),
      ...(o.retainLast !== undefined ? { retainLast: o.retainLast } : {}),
      ...(o.pin !== undefined ? { pins: o.pin } : {}),
      ...(o.horizon !== undefined ? { horizonsMs: o.horizon.map((h) => duration('--horizon', h, 'd')) } : {}),
      ...(o.concurrency !== undefined ? { deleteConcurrency: o.concurrency } : {}),
      dryRun: o.dryRun === true,
      onProgress: progressBar(o.json !== true),
    }));
    out(o.json ? `${JSON.stringify({ ...result, ...(reportPath ? { report: reportPath } : {}) }, null, 2)}\n` : formatExpire(result, reportPath));
  });

  common(
    program
      .command('orphans')
      .description('delete files in the table location that no metadata names and that are older than a delay')
      .argument('<table>', TABLE_ARGUMENT)
      .option('--older-than <duration>', 'only files last modified longer ago than this (default 3d; under 1h needs --force)')
      .option('--force', 'allow --older-than under 1h (only when no writer can be running)')
      .addOption(
        new Option('--prefix-mismatch <mode>', 'a listed file the metadata names under another scheme or bucket: error stops, ignore keeps it, delete deletes it')
          .choices(['error', 'ignore', 'delete'])
          .default('error'),
      ),
  ).action(async (location: string, o: OrphanFlags) => {
    const { loadTable } = await import('../catalog/table.js');
    const { DEFAULT_ORPHAN_OLDER_THAN_MS, deleteOrphanFiles } = await import('../maintenance/orphan-files.js');
    const table = await loadTable(resolveLocation(location), openOptions());
    await refuseReadOnly(table, 'orphans');
    const { result, reportPath } = await withReport('orphans', o, () => deleteOrphanFiles(table, {
      olderThanMs: o.olderThan !== undefined ? duration('--older-than', o.olderThan) : DEFAULT_ORPHAN_OLDER_THAN_MS,
      force: o.force === true,
      ...(o.prefixMismatch !== undefined ? { prefixMismatch: o.prefixMismatch } : {}),
      ...(o.concurrency !== undefined ? { deleteConcurrency: o.concurrency } : {}),
      dryRun: o.dryRun === true,
      onProgress: progressBar(o.json !== true),
    }));
    out(o.json ? `${JSON.stringify({ ...result, ...(reportPath ? { report: reportPath } : {}) }, null, 2)}\n` : formatOrphans(result, reportPath));
  });
}
