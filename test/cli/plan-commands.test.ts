/**
 * `packice plan` and `packice health` through the CLI, and the policy flags they share with
 * `compact`.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Table } from '../../lib/catalog/table.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { parseJson, toPlain } from '../../lib/iceberg/json.js';
import type { Row } from '../../lib/iceberg/values.js';
import { formatBytes, formatPlan } from '../../lib/cli/format.js';
import { buildProgram } from '../../lib/cli/main.js';
import { parseByteSize } from '../../lib/cli/arguments.js';
import { POLICY_FLAGS, policyFromOptions } from '../../lib/cli/policy-flags.js';
import { InvalidArgumentError } from '../../lib/errors.js';
import { tableHealth } from '../../lib/compaction/health.js';
import type { Plan } from '../../lib/compaction/messages.js';
import { planCompaction } from '../../lib/compaction/planner.js';
import {
  DEFAULT_TARGET_FILE_SIZE_BYTES, MAX_FILE_SIZE_DEFAULT_RATIO, MIN_FILE_SIZE_DEFAULT_RATIO, POLICY_DEFAULTS, TARGET_FILE_SIZE_PROPERTY,
} from '../../lib/compaction/policy.js';
import { appendRows, createNewTable } from '../../lib/table/operations.js';
import { runCli, runMain } from '../support/cli.js';
import { tempDir } from '../support/fixtures.js';

const io = new LocalFileIO();
let nextId = 0;
const rows = (category: string, n: number): Row[] => Array.from({ length: n }, () => ({ id: BigInt(nextId++), category }));

/** Five one-file commits to category a, one to b. */
async function smallFilesTable(): Promise<Table> {
  let t = await createNewTable(io, join(tempDir(), 't'), {
    schema: {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: { type: 'long' } },
        { id: 2, name: 'category', required: false, type: { type: 'string' } },
      ],
    },
    partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
  });
  for (let i = 0; i < 5; i++) t = await appendRows(t, rows('a', 2));
  return appendRows(t, rows('b', 2));
}

/** JSON text back to plain values, as any consumer of `--json` sees it. */
const fromJsonText = (s: string): unknown => toPlain(parseJson(s));

describe('policy flags', () => {
  it('parses sizes with binary units however they are spelt', () => {
    expect(parseByteSize('134217728')).toBe(134217728);
    expect(parseByteSize('128MB')).toBe(128 * 1024 * 1024);
    expect(parseByteSize('512MiB')).toBe(512 * 1024 * 1024);
    expect(parseByteSize('1GiB')).toBe(1024 ** 3);
    expect(parseByteSize('1.5g')).toBe(1.5 * 1024 ** 3);
    expect(parseByteSize('2 KB')).toBe(2048);
    expect(parseByteSize('7b')).toBe(7);
    for (const bad of ['1x', '-5', '', 'MB', '1e3']) {
      expect(() => parseByteSize(bad)).toThrow(InvalidArgumentError);
    }
    expect(() => parseByteSize('1x')).toThrow('"1x" is not a size (e.g. 134217728, 128MB, 512MiB, 1GiB)');
  });

  it('turns flags, raw or parsed, into a CompactionPolicy with only the flags given', () => {
    expect(policyFromOptions({})).toEqual({});
    expect(
      policyFromOptions({
        targetFileSize: '128MB', minFileSize: '1MB', maxFileSize: 209715200, minInputFiles: '3', deleteFileThreshold: '4',
        deleteRatioThreshold: '0.5', quietMinutes: '15', where: "category = 'a'", mode: 'minor', strategy: 'sort',
        maxGroupBytes: '1GiB', maxGroups: 7, json: true,
      }),
    ).toEqual({
      targetFileSizeBytes: 134217728,
      minFileSizeBytes: 1048576,
      maxFileSizeBytes: 209715200,
      minInputFiles: 3,
      deleteFileThreshold: 4,
      deleteRatioThreshold: 0.5,
      quietMinutes: 15,
      where: "category = 'a'",
      mode: 'minor',
      strategy: 'sort',
      maxGroupBytes: 1073741824,
      maxGroups: 7,
    });
  });
});

describe('policy flag help', () => {
  /** Each policy flag's `(default: …)` as `packice <command> --help` shows it. */
  const shownDefaults = (command: string): Map<string, string> => {
    const cmd = buildProgram().commands.find((c) => c.name() === command)!;
    const help = cmd.createHelp();
    const out = new Map<string, string>();
    for (const o of help.visibleOptions(cmd)) {
      const m = /\(default: ([^)]+)\)/.exec(help.optionDescription(o));
      if (m && POLICY_FLAGS.some((f) => f.flags === o.flags)) out.set(o.flags, m[1]);
    }
    return out;
  };

  it.each(['plan', 'health', 'compact'])('%s --help shows the defaults lib/compaction/policy.ts applies', (command) => {
    const shown = shownDefaults(command);
    const fieldOf = new Map(POLICY_FLAGS.map((f) => [f.flags, f]));
    const checked = new Set<string>();
    for (const [flags, text] of shown) {
      const flag = fieldOf.get(flags)!;
      const field = flag.field;
      if (field in POLICY_DEFAULTS) {
        // The shown value, read back by the flag's own parser, is the default.
        expect(flag.parse(text.split(',')[0]), flags).toEqual(POLICY_DEFAULTS[field as keyof typeof POLICY_DEFAULTS]);
        checked.add(field);
      }
    }
    // Every default has its flag in the help.
    expect([...checked].sort()).toEqual(Object.keys(POLICY_DEFAULTS).sort());
    expect(shown.get('--max-group-bytes <size>')).toBe('700MiB');
    const target = shown.get('--target-file-size <size>')!;
    expect(target.startsWith(`${TARGET_FILE_SIZE_PROPERTY} or `)).toBe(true);
    expect(parseByteSize(target.split(' or ')[1])).toBe(DEFAULT_TARGET_FILE_SIZE_BYTES);
    expect(shown.get('--min-file-size <size>')).toBe(`${MIN_FILE_SIZE_DEFAULT_RATIO * 100}% of the target`);
    expect(shown.get('--max-file-size <size>')).toBe(`${MAX_FILE_SIZE_DEFAULT_RATIO * 100}% of the target`);
  });
});

describe('packice plan', () => {
  it('prints the Plan message with --json, with the flags in its policy', async () => {
    const t = await smallFilesTable();
    const out = await runCli(['plan', t.location, '--json', '--target-file-size', '1MiB', '--min-input-files', '5', '--where', "category = 'a'"]);
    const printed = fromJsonText(out) as Plan;
    const direct = await planCompaction(t.io, t.metadata, {
      table: { location: t.location },
      policy: { targetFileSizeBytes: 1048576, minInputFiles: 5, where: "category = 'a'" },
    });
    expect({ ...printed, createdAtMs: 0 }).toEqual(fromJsonText(JSON.stringify({ ...direct, createdAtMs: 0 })));
    expect(printed.policy.targetFileSizeBytes).toBe(1048576);
    expect(printed.policy.minFileSizeBytes).toBe(786432);
    expect(printed.groups.map((g) => [g.partitionPath, g.inputs.length])).toEqual([['category=a', 5]]);
  });

  it('prints a table of groups and the summary', async () => {
    const t = await smallFilesTable();
    const direct = await planCompaction(t.io, t.metadata, { table: { location: t.location } });
    const out = await runCli(['plan', t.location]);
    expect(out).toBe(formatPlan({ ...direct, createdAtMs: 0 }));
  });

  it('formats groups, reasons, summary and skipped files', () => {
    const group = (id: string, path: string, specId: number, filesIn: number, read: number, written: number, reasons: string[]): Plan['groups'][number] => ({
      id, specId, partition: {}, partitionPath: path, inputs: [], reasons,
      estimate: { bytesToRead: read, bytesToWrite: written, filesIn, filesOut: 1, liveRows: 0 },
    });
    const plan: Plan = {
      table: { location: '/w/t' },
      policy: {
        targetFileSizeBytes: 536870912, minFileSizeBytes: 1, maxFileSizeBytes: 2, minInputFiles: 5, deleteFileThreshold: 1,
        deleteRatioThreshold: 0.3, quietMinutes: 0, mode: 'major', strategy: 'binpack', maxGroupBytes: 3, maxGroups: 4,
      },
      startingSnapshotId: '42',
      startingSequenceNumber: '7',
      formatVersion: 2,
      groups: [
        group('0123456789abcdef01234567', 'category=a', 1, 12, 3 * 1024 * 1024, 2 * 1024 * 1024, ['too-small']),
        group('fedcba9876543210fedcba98', '', 0, 1, 5000, 700, ['deletes', 'spec-change']),
      ],
      summary: {
        dataFilesBefore: 20, dataFilesAfter: 9, deleteFilesBefore: 3, deleteFilesAfter: 1, bytesBefore: 10 * 1024 * 1024,
        bytesAfter: 9 * 1024 * 1024, rewriteRatio: 0.3,
      },
      skipped: [{ path: '/w/t/data/x.orc', reason: 'file format ORC cannot be rewritten (only PARQUET)' }],
      createdAtMs: 0,
    };
    expect(formatPlan(plan)).toBe(
      [
        'plan of /w/t at snapshot 42 (sequence 7): major binpack, target 512.0 MiB',
        'GROUP         PARTITION                  FILES     READ  WRITTEN  REASONS',
        '0123456789ab  spec 1: category=a       12 -> 1  3.0 MiB  2.0 MiB  too-small',
        'fedcba987654  spec 0: (unpartitioned)   1 -> 1  4.9 KiB    700 B  deletes, spec-change',
        '',
        '2 groups',
        'data files    20 -> 9',
        'delete files  3 -> 1',
        'bytes         10.0 MiB -> 9.0 MiB',
        'rewrite ratio 0.300 (data bytes rewritten / data bytes)',
        'skipped       /w/t/data/x.orc: file format ORC cannot be rewritten (only PARQUET)',
        '',
      ].join('\n'),
    );
    expect(formatPlan({ ...plan, groups: [], skipped: [] }).split('\n').slice(0, 3)).toEqual([
      'plan of /w/t at snapshot 42 (sequence 7): major binpack, target 512.0 MiB',
      'nothing to compact: no partition crosses the thresholds (20 data files)',
      'data files    20 -> 9',
    ]);
  });

  it('fails on a bad filter or flag, naming the rule broken', async () => {
    const t = await smallFilesTable();
    const bad = await runMain(['plan', t.location, '--where', 'nope = 1']);
    expect(bad.exitCode).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe(`packice: ${t.location}: filter "nope = 1": unknown partition field or column "nope"; partition fields: category; columns: id, category\n`);
    const mode = await runMain(['plan', t.location, '--mode', 'medium']);
    expect(mode.exitCode).toBe(1);
    expect(mode.stderr).toContain("error: option '--mode <mode>' argument 'medium' is invalid. Allowed choices are major, minor.");
    const size = await runMain(['health', t.location, '--max-group-bytes', 'lots']);
    expect(size.exitCode).toBe(1);
    expect(size.stderr).toContain('"lots" is not a size');
  });
});

describe('packice health', () => {
  it('prints the report, and with --json the TableHealth', async () => {
    const t = await smallFilesTable();
    const h = await tableHealth(t.io, t.metadata, { minInputFiles: 5 });
    const printed = fromJsonText(await runCli(['health', t.location, '--json', '--min-input-files', '5'])) as typeof h;
    expect(printed).toEqual(fromJsonText(JSON.stringify(h)));
    const text = await runCli(['health', t.location]);
    const lines = text.split('\n');
    expect(lines[0]).toBe(`table         ${t.location} (v2, snapshot ${t.metadata.currentSnapshotId})`);
    expect(lines).toContain('file sizes');
    expect(lines.find((l) => l.startsWith('  < 1 MiB'))).toMatch(/^ {2}< 1 MiB +6 files +\d+(\.\d)? (B|KiB)$/);
    expect(lines.find((l) => l.startsWith('  >= 512 MiB'))).toMatch(/^ {2}>= 512 MiB +0 files +0 B$/);
    expect(lines.find((l) => l.startsWith('category=a'))).toMatch(/^category=a +5 .* 5 +0 +0 +0\.0% +5 -> 1 files, .* read: too-small$/);
    expect(lines.find((l) => l.startsWith('category=b'))).toMatch(/^category=b +1 .* 1 +0 +0 +0\.0% +-$/);
    expect(lines).toContain(
      `1 partition needs compaction (1 group): data files 6 -> 2, delete files 0 -> 0, ` +
        `${formatBytes(h.summary.bytesBefore)} -> ${formatBytes(h.summary.bytesAfter)}, ` +
        `rewriting ${(h.summary.rewriteRatio * 100).toFixed(1)}% of the data bytes`,
    );
  });
});
