/**
 * The demo's table, built the way a streaming job writes: `packice demo` builds and compacts it,
 * tests and benchmarks build it too (here rather than in lib/cli, which bench/ must not import).
 */
import { LocalFileIO } from '../io/local.js';
import { fromBytes } from '../iceberg/bounds.js';
import type { DataFile } from '../iceberg/manifest.js';
import type { Row } from '../iceberg/values.js';
import { appendRows, createNewTable, deleteRows } from './operations.js';

const ACTIONS = ['view', 'click', 'purchase', 'share'] as const;
const START_US = 1_767_225_600_000_000n; // 2026-01-01T00:00:00Z
const TWO_MINUTES_US = 120_000_000n;

/** Rows of one streaming commit: events of the last two minutes, across every action. */
function batch(commit: number, rows: number): Row[] {
  const out: Row[] = [];
  for (let i = 0; i < rows; i++) {
    const id = commit * rows + i;
    out.push({
      event_id: BigInt(id),
      user_id: BigInt((id * 7919) % 5000),
      action: ACTIONS[(id * 31 + commit) % ACTIONS.length],
      ts: START_US + BigInt(commit) * TWO_MINUTES_US + BigInt((i * 397) % 120_000_000),
      amount: BigInt((id * 37) % 100_000),
    });
  }
  return out;
}

export interface DemoTableOptions {
  /** Commits to make (default 240: eight hours of two-minute commits). */
  readonly commits?: number;
  readonly rowsPerCommit?: number;
  readonly onCommit?: (done: number) => void;
}

/**
 * Builds the demo's table the way a streaming job does, in an absent or empty folder: many
 * two-minute commits of a few hundred rows across partitions, every tenth followed by a
 * late correction that deletes a few rows. Returns how many rows the corrections deleted.
 */
export async function buildDemoTable(location: string, options: DemoTableOptions = {}): Promise<{ deleted: number }> {
  const commits = options.commits ?? 240;
  const rowsPerCommit = options.rowsPerCommit ?? 300;
  const io = new LocalFileIO();
  let table = await createNewTable(io, location, {
    formatVersion: 2,
    schema: {
      type: 'struct',
      fields: [
        { id: 1, name: 'event_id', required: true, type: { type: 'long' } },
        { id: 2, name: 'user_id', required: true, type: { type: 'long' } },
        { id: 3, name: 'action', required: true, type: { type: 'string' } },
        { id: 4, name: 'ts', required: true, type: { type: 'timestamptz' } },
        { id: 5, name: 'amount', required: false, type: { type: 'decimal', precision: 12, scale: 2 } },
      ],
    },
    partitionFields: [
      { sourceId: 3, name: 'action', transform: { kind: 'identity' } },
      { sourceId: 4, name: 'ts_hour', transform: { kind: 'hour' } },
    ],
    // As streaming writers are configured: the metadata log stays short and old metadata files go.
    properties: {
      'write.target-file-size-bytes': String(128 * 1024 * 1024),
      'write.metadata.delete-after-commit.enabled': 'true',
      'write.metadata.previous-versions-max': '10',
    },
  });
  let deleted = 0;
  for (let c = 0; c < commits; c++) {
    table = await appendRows(table, batch(c, rowsPerCommit));
    // Every tenth commit, a late correction deletes a few events of the last hour.
    if (c % 10 === 9) {
      const from = BigInt((c - 9) * rowsPerCommit);
      const r = await deleteRows(
        table,
        (row) => {
          const id = row.event_id as bigint;
          return id >= from && id % 13n === 0n;
        },
        // Like a real job, read only the files that can hold the late events.
        { files: (f) => upperEventId(f) >= from },
      );
      table = r.table;
      deleted += r.deleted;
    }
    options.onCommit?.(c + 1);
  }
  return { deleted };
}

function upperEventId(f: DataFile): bigint {
  const b = f.upperBounds?.get(1);
  return b ? (fromBytes({ type: 'long' }, b) as bigint) : BigInt(Number.MAX_SAFE_INTEGER);
}
