/**
 * `--where` as a user types it (issue 12): a partition value in the human form `health` prints,
 * a source-column predicate projected onto the partitions and checked against file metrics, and
 * a type mismatch refused. The table: hour(ts) × identity(action), three files per hour, each
 * file's rows inside its own 10-minute band, so metrics can tell the files of one hour apart.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Table } from '../../lib/catalog/table.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { parseJson, toPlain } from '../../lib/iceberg/json.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import type { Row } from '../../lib/iceberg/values.js';
import type { Plan } from '../../lib/compaction/messages.js';
import { scopeScan } from '../../lib/compaction/partition-filter.js';
import { planCompaction, planFromScan } from '../../lib/compaction/planner.js';
import { resolvePolicy } from '../../lib/compaction/policy.js';
import { tableHealth } from '../../lib/compaction/health.js';
import { appendRows, createNewTable, deleteRows } from '../../lib/table/operations.js';
import { runCli, runMain } from '../support/cli.js';
import { EVENTS_SCHEMA, MINUTE, T3 } from '../support/events.js';
import { tempDir } from '../support/fixtures.js';
import { RecordingIO } from '../support/recording-io.js';

const io = new LocalFileIO();
const HOURS = ['2026-01-01-03', '2026-01-01-04', '2026-01-01-05'];
/** Bands (minutes past the hour) of the three files of each hour. */
const BANDS = [0, 20, 40];

/** One file per (hour, band): 5 rows at band+0..band+8 minutes, action 'click'. */
async function hourTable(): Promise<{ table: Table; files: Map<string, string> }> {
  let t = await createNewTable(io, join(tempDir(), 't'), {
    schema: EVENTS_SCHEMA,
    partitionFields: [
      { sourceId: 3, name: 'ts_hour', transform: { kind: 'hour' } },
      { sourceId: 2, name: 'action', transform: { kind: 'identity' } },
    ],
  });
  let id = 0n;
  const files = new Map<string, string>();
  for (let h = 0; h < HOURS.length; h++) {
    for (const band of BANDS) {
      const rows: Row[] = Array.from({ length: 5 }, (_, i) => ({
        id: id++,
        action: 'click',
        ts: T3 + BigInt(h) * 60n * MINUTE + BigInt(band + 2 * i) * MINUTE,
      }));
      const before = new Set((await planFiles(io, t.metadata)).tasks.map((x) => x.dataFile.filePath));
      t = await appendRows(t, rows);
      const added = (await planFiles(io, t.metadata)).tasks.map((x) => x.dataFile.filePath).find((p) => !before.has(p))!;
      files.set(`${HOURS[h]}+${band}`, added);
    }
  }
  return { table: t, files };
}

const fromJsonText = (s: string): unknown => toPlain(parseJson(s));
/** Every input file of a `plan --json`, as `hour+band` keys. */
function selected(plan: Plan, files: Map<string, string>): string[] {
  const byPath = new Map([...files].map(([k, p]) => [p, k]));
  return plan.groups.flatMap((g) => g.inputs.map((i) => byPath.get(i.file.filePath) ?? i.file.filePath)).sort();
}
const keys = (hours: string[], bands = BANDS): string[] => hours.flatMap((h) => bands.map((b) => `${h}+${b}`)).sort();

describe('--where', () => {
  it('selects by a partition value in its human form, by a column range with metric pruning, and refuses type mismatches', async () => {
    const { table: t, files } = await hourTable();
    const plan = async (where: string): Promise<string[]> =>
      selected(fromJsonText(await runCli(['plan', t.location, '--json', '--min-input-files', '2', '--where', where])) as Plan, files);

    // Human-form hours, as health prints them and Java names the partition folders.
    expect(await plan("ts_hour >= '2026-01-01-04'")).toEqual(keys(HOURS.slice(1)));
    expect(await plan("ts_hour < '2026-01-01-04'")).toEqual(keys(HOURS.slice(0, 1)));
    expect(await plan("ts_hour = '2026-01-01-04' and action = 'click'")).toEqual(keys(['2026-01-01-04']));
    // The ordinal form still works, and means what it says: hour 10 of 1970 is before every file.
    expect(await plan('ts_hour >= 10')).toEqual(keys(HOURS));
    expect(await plan('ts_hour < 10')).toEqual([]);

    // A column range: projected onto ts_hour (hour 03 out), then file bounds (the 04:00-04:08 file out).
    expect(await plan("ts >= '2026-01-01T04:15:00Z'")).toEqual([...keys(['2026-01-01-04'], [20, 40]), ...keys(['2026-01-01-05'])].sort());
    expect(await plan("ts >= '2026-01-01T04:15:00Z' and ts < '2026-01-01T05:25:00Z'")).toEqual(
      [...keys(['2026-01-01-04'], [20, 40]), ...keys(['2026-01-01-05'], [0, 20])].sort(),
    );
    // Partition fields and columns together; not is pushed down.
    expect(await plan("ts_hour = '2026-01-01-05' and not (ts < '2026-01-01T05:10:00Z')")).toEqual(keys(['2026-01-01-05'], [20, 40]));
    expect(await plan("ts_hour = '2026-01-01-05' and not (ts >= '2026-01-01T05:30:00Z')")).toEqual(keys(['2026-01-01-05'], [0, 20]));
    expect(await plan("ts_hour = '2026-01-01-03' or id >= 35")).toEqual([...keys(['2026-01-01-03']), ...keys(['2026-01-01-05'], [20, 40])].sort());

    // Health shows the same partitions and files.
    const health = fromJsonText(await runCli(['health', t.location, '--json', '--where', "ts >= '2026-01-01T04:15:00Z'"])) as {
      partitions: { partitionPath: string; dataFiles: number }[];
      dataFiles: number;
    };
    expect(health.partitions.map((p) => [p.partitionPath, p.dataFiles])).toEqual([
      ['ts_hour=2026-01-01-04/action=click', 2],
      ['ts_hour=2026-01-01-05/action=click', 3],
    ]);
    expect(health.dataFiles).toBe(9);

    // Mismatched types fail before any manifest is read, naming the term, the literal and the types.
    const mismatch = await runMain(['plan', t.location, '--where', 'action > 5']);
    expect(mismatch.exitCode).toBe(1);
    expect(mismatch.stdout).toBe('');
    expect(mismatch.stderr).toBe(`packice: ${t.location}: filter "action > 5": cannot compare column action (string) with 5 (a number)\n`);
    const hour = await runMain(['compact', t.location, '--where', "ts_hour >= '2026-01-01T04'"]);
    expect(hour.exitCode).toBe(1);
    expect(hour.stderr).toBe(
      `packice: ${t.location}: filter "ts_hour >= '2026-01-01T04'": cannot compare partition field ts_hour (hour(ts), int) with '2026-01-01T04' (a string): ` +
        `"2026-01-01T04" is not an hour 'yyyy-MM-dd-HH'; expected an hour 'yyyy-MM-dd-HH' or hours since 1970-01-01 00:00\n`,
    );
    const ts = await runMain(['health', t.location, '--where', "ts >= '2026-01-01-04'"]);
    expect(ts.exitCode).toBe(1);
    expect(ts.stderr).toMatch(/cannot compare column ts \(timestamptz\) with '2026-01-01-04' \(a string\)/);
  });

  it('reads only the manifests that may match, and plans exactly what a full scan plans', async () => {
    let { table: t } = await hourTable();
    // Position deletes in hours 03 and 05: the plan's delete figures must not depend on which manifests were read.
    t = (await deleteRows(t, (r) => r.id === 1n || r.id === 40n)).table;
    const where = "ts >= '2026-01-01T05:00:00Z'";
    const recording = new RecordingIO(io);
    const request = { table: { location: t.location }, policy: { where, minInputFiles: 2 } };
    const skipping = await planCompaction(recording, t.metadata, request, { nowMs: 0 });
    const manifests = (await planFiles(io, t.metadata)).manifests;
    const read = manifests.filter((m) => recording.reads.includes(m.manifestPath));
    // Ten manifests: nine appends (one per file) and one of deletes; hours 03 and 04 are not read.
    expect(manifests).toHaveLength(10);
    expect(read).toHaveLength(4);

    const resolved = resolvePolicy(t.metadata, request.policy);
    const full = await planFiles(io, t.metadata);
    const expected = planFromScan(t.metadata, scopeScan(t.metadata, full, resolved.filter!), request, resolved, 0);
    expect(skipping).toEqual(expected);
    expect(skipping.groups.map((g) => g.partitionPath)).toEqual(['ts_hour=2026-01-01-05/action=click']);
    expect(skipping.summary.dataFilesBefore).toBe(3);
    expect(skipping.summary.deleteFilesBefore).toBe(1);
    // The scan keeps the metrics of the filter's columns only (ts is field 3).
    const narrow = await planFiles(io, t.metadata, undefined, { columnStats: resolved.filter!.columnIds });
    expect(new Set(narrow.tasks.flatMap((x) => [...x.dataFile.lowerBounds!.keys(), ...x.dataFile.nullValueCounts!.keys()]))).toEqual(new Set([3]));
    // Health reads every manifest: its table figures are the whole table's.
    const health = await tableHealth(io, t.metadata, request.policy, { nowMs: 0 });
    expect(health.dataFiles).toBe(9);
    expect(health.deleteFiles).toBe(2);
    expect(health.partitions.map((p) => p.partitionPath)).toEqual(['ts_hour=2026-01-01-05/action=click']);
  });
});
