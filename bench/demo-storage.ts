/**
 * Storage of the demo table through its life: built by `packice demo` (240 two-minute commits,
 * late deletes) and compacted, then `expire --older-than 0s --retain-last 1`, then
 * `orphans --older-than 0s --force`. Files and bytes on disk by kind after each step, next to what
 * the current table needs. Deterministic counts (no timing), so one run.
 *
 *   npx tsx bench/demo-storage.ts [--write]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metadataFolder, VERSION_HINT_FILE } from '../lib/catalog/object-store-catalog.js';
import { loadTable } from '../lib/catalog/table.js';
import { LocalFileIO } from '../lib/io/local.js';
import { expireSnapshots } from '../lib/maintenance/expire-snapshots.js';
import { fileKey } from '../lib/maintenance/file-uri.js';
import { deleteOrphanFiles } from '../lib/maintenance/orphan-files.js';
import { reachableFromSnapshots, type FileKind } from '../lib/maintenance/reachable-files.js';
import { loadAverage, machine, machineLines, markdownTable, parseArgs, REPO_ROOT, writeSection } from './report.js';

const io = new LocalFileIO();
type Kind = FileKind | 'other';
const KINDS: readonly Kind[] = [
  'data', 'position-deletes', 'deletion-vector', 'equality-deletes', 'manifest', 'manifest-list', 'compaction-map', 'metadata', 'version-hint', 'other',
];

/** Every file's kind, as the metadata (all snapshots, the log) names it. */
async function kindsOf(location: string): Promise<Map<string, Kind>> {
  const t = await loadTable(location, { io });
  const reached = await reachableFromSnapshots(io, t.metadata.snapshots, { entries: 'all', missing: 'skip' });
  const kinds = new Map<string, Kind>();
  for (const f of reached.files.values()) kinds.set(fileKey(f.path), f.kind);
  for (const e of t.metadata.metadataLog) kinds.set(fileKey(e.metadataFile), 'metadata');
  kinds.set(fileKey(t.metadataLocation), 'metadata');
  kinds.set(fileKey(join(metadataFolder(location), VERSION_HINT_FILE)), 'version-hint');
  return kinds;
}

interface Tally {
  files: number;
  bytes: number;
}

async function tally(location: string, kinds: Map<string, Kind>): Promise<Map<Kind, Tally>> {
  const out = new Map<Kind, Tally>(KINDS.map((k) => [k, { files: 0, bytes: 0 }]));
  for await (const f of io.list(location)) {
    const k = kinds.get(fileKey(f.path)) ?? (f.path.endsWith('.metadata.json') ? 'metadata' : 'other');
    const t = out.get(k)!;
    t.files++;
    t.bytes += f.size;
  }
  return out;
}

const kb = (n: number): string => `${(n / 1024).toFixed(1)} KiB`;

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const loadBefore = loadAverage();
  const location = join(mkdtempSync(join(tmpdir(), 'packice-demo-storage-')), 'demo');
  // The demo as a user runs it: the command builds the table and compacts it.
  execFileSync(process.execPath, [join(REPO_ROOT, 'bin', 'packice.js'), 'demo', location, '--json'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const kinds = await kindsOf(location);
  const steps: [string, Map<Kind, Tally>][] = [['after `demo` (built and compacted)', await tally(location, kinds)]];
  const expired = await expireSnapshots(location, { olderThanMs: 0, retainLast: 1 });
  steps.push([`after \`expire --older-than 0s --retain-last 1\` (${expired.expiredSnapshots.length} snapshots)`, await tally(location, kinds)]);
  const orphans = await deleteOrphanFiles(location, { olderThanMs: 0, force: true });
  steps.push([`after \`orphans --older-than 0s --force\` (${orphans.deleted} deleted)`, await tally(location, kinds)]);

  const t = await loadTable(location, { io });
  const live = await reachableFromSnapshots(io, [t.metadata.snapshots.find((s) => s.snapshotId === t.metadata.currentSnapshotId)!], {
    entries: 'live', missing: 'fail',
  });
  const liveData = [...live.files.values()].filter((f) => f.kind === 'data');
  const liveBytes = liveData.reduce((s, f) => s + (f.size ?? 0), 0);

  const header = ['kind', ...steps.map(([s]) => s)];
  const rows = KINDS.filter((k) => steps.some(([, m]) => m.get(k)!.files > 0)).map((k) => [
    k, ...steps.map(([, m]) => `${m.get(k)!.files} / ${kb(m.get(k)!.bytes)}`),
  ]);
  const total = (m: Map<Kind, Tally>): Tally => [...m.values()].reduce((a, b) => ({ files: a.files + b.files, bytes: a.bytes + b.bytes }), { files: 0, bytes: 0 });
  rows.push(['**total**', ...steps.map(([, m]) => `**${total(m).files} / ${kb(total(m).bytes)}**`)]);
  const body = [
    '## Demo table storage after maintenance',
    '',
    'Files / bytes on disk by kind (kinds as the table\'s metadata names them; `other` is anything no metadata names). ' +
      `The current snapshot's live data: ${liveData.length} files, ${kb(liveBytes)}. ` +
      'The demo table sets `write.metadata.delete-after-commit.enabled=true` and `write.metadata.previous-versions-max=10`, ' +
      'as streaming writers are configured, so expiry also removes metadata files the log no longer keeps.',
    '',
    markdownTable(header, rows),
    '',
    ...machineLines(machine(), [], loadBefore, loadAverage()),
    '- **Command:** `npx tsx bench/demo-storage.ts --write` (counts, not timings: one run)',
  ].join('\n');
  console.log(body);
  if (args.write) writeSection('demo-storage', body);
}

await main();
