/**
 * Parquet write and read throughput: 1M rows × 6 columns (long, int, double, string,
 * timestamptz, decimal(18,2)), ZSTD, 256k-row row groups, to and from a local temp folder,
 * with dictionary encoding on (the default) and off. Each phase runs N times in a fresh
 * process of its own, so its peak RSS is that phase's alone:
 *   packice write   ParquetWriter (with Iceberg metrics), this script with --phase write
 *   packice read    openParquet + readRowGroups (every row group to Arrow JS batches)
 *   pyarrow         bench/baselines/parquet.py in .cache/venv: pq.write_table of the same
 *                   rows (built from the same formula), pq.read_table and iter_batches of the
 *                   file packice wrote; it also checks that both files hold exactly those rows.
 * Prints the medians as a Markdown table.
 *
 *   npx tsx bench/parquet.ts [rows=1000000] [runs=5] [--write] [--no-baseline]
 *
 * --write replaces the parquet section of BENCHMARKS.md.
 */
import * as arrow from 'apache-arrow';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { StructType } from '../lib/iceberg/types.js';
import { LocalFileIO } from '../lib/io/local.js';
import { openParquet, readRowGroups } from '../lib/parquet/reader.js';
import { arrowSchema } from '../lib/parquet/schema.js';
import { ParquetWriter } from '../lib/parquet/writer.js';
import {
  ensurePython, int, loadAverage, machine, machineLines, markdownTable, median, mib, nodeChildArgs, parseArgs,
  type PhaseResult, pythonVersion, REPO_ROOT, runChild, writeSection,
} from './report.js';

const SCRIPT = fileURLToPath(import.meta.url);
const BATCH = 65_536;
const ROW_GROUP_ROWS = 262_144;
const COLUMNS = 'long, int, double, string, timestamptz, decimal(18,2)';

const schema: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'qty', required: false, type: { type: 'int' } },
    { id: 3, name: 'price', required: false, type: { type: 'double' } },
    { id: 4, name: 'name', required: false, type: { type: 'string' } },
    { id: 5, name: 'at', required: false, type: { type: 'timestamptz' } },
    { id: 6, name: 'amount', required: false, type: { type: 'decimal', precision: 18, scale: 2 } },
  ],
};

/** Reproducible data built straight into Arrow buffers (row objects would dominate the timing). */
function makeBatch(from: number, n: number): arrow.RecordBatch {
  const target = arrowSchema(schema);
  const ids = new BigInt64Array(n);
  const qty = new Int32Array(n);
  const price = new Float64Array(n);
  const at = new BigInt64Array(n);
  const amount = new Uint32Array(n * 4);
  const offsets = new Int32Array(n + 1);
  const names: string[] = new Array(n);
  let bytes = 0;
  for (let k = 0; k < n; k++) {
    const i = from + k;
    const h = Math.imul(i, 2654435761) >>> 0;
    ids[k] = BigInt(i);
    qty[k] = h % 1000;
    price[k] = (h % 1_000_000) / 100;
    at[k] = 1_700_000_000_000_000n + BigInt(i) * 1_000_000n;
    amount[k * 4] = h % 10_000_000; // small positive unscaled values
    names[k] = `customer-${h % 50_000}`;
    bytes += names[k].length;
    offsets[k + 1] = bytes;
  }
  const text = Buffer.from(names.join(''), 'latin1');
  const col = (i: number, props: Record<string, unknown>): arrow.Data =>
    arrow.makeData({ type: target.fields[i].type, length: n, nullCount: 0, ...props } as never);
  const children = [
    col(0, { data: ids }),
    col(1, { data: qty }),
    col(2, { data: price }),
    col(3, { valueOffsets: offsets, data: new Uint8Array(text.buffer, text.byteOffset, text.length) }),
    col(4, { data: at }),
    col(5, { data: amount }),
  ];
  return new arrow.RecordBatch(target, arrow.makeData({ type: new arrow.Struct(target.fields), length: n, nullCount: 0, children }));
}

/** Child: build the rows (untimed), then write them `runs` times; the last file stays. */
async function writePhase(path: string, rows: number, dictionary: boolean, runs: number): Promise<void> {
  const io = new LocalFileIO();
  const batches: arrow.RecordBatch[] = [];
  for (let from = 0; from < rows; from += BATCH) batches.push(makeBatch(from, Math.min(BATCH, rows - from)));
  const wallS: number[] = [];
  const cpuS: number[] = [];
  let fileSize = 0;
  let rowGroups = 0;
  for (let r = 0; r < runs; r++) {
    if (existsSync(path)) rmSync(path);
    const t = performance.now();
    const c0 = process.cpuUsage();
    const w = ParquetWriter.open(io, path, schema, { rowGroupRows: ROW_GROUP_ROWS, dictionary });
    for (const b of batches) await w.write(b);
    const written = await w.close();
    const c = process.cpuUsage(c0);
    wallS.push((performance.now() - t) / 1000);
    cpuS.push((c.user + c.system) / 1e6);
    fileSize = written.fileSizeInBytes;
    rowGroups = written.rowGroupCount;
  }
  const result: PhaseResult = { wallS, cpuS, maxRssKiB: process.resourceUsage().maxRSS, info: { fileSize, rowGroups } };
  console.log(JSON.stringify(result));
}

/** Child: read every row group of `path` to Arrow JS batches, `runs` times. */
async function readPhase(path: string, rows: number, runs: number): Promise<void> {
  const io = new LocalFileIO();
  const wallS: number[] = [];
  const cpuS: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    const c0 = process.cpuUsage();
    const file = await openParquet(io, path);
    let n = 0;
    for await (const b of readRowGroups(file)) n += b.numRows;
    file.close();
    const c = process.cpuUsage(c0);
    wallS.push((performance.now() - t) / 1000);
    cpuS.push((c.user + c.system) / 1e6);
    if (n !== rows) throw new Error(`${path}: read ${n} rows, expected ${rows}`);
  }
  const result: PhaseResult = { wallS, cpuS, maxRssKiB: process.resourceUsage().maxRSS };
  console.log(JSON.stringify(result));
}

interface Measured {
  readonly dictionary: boolean;
  readonly op: 'write' | 'read';
  readonly impl: string;
  /** Bytes of the Parquet file written or read (MB/s is of this). */
  readonly fileSize: number;
  readonly result: PhaseResult | null;
  readonly skipped?: string;
}

function attempt(run: () => PhaseResult): { result: PhaseResult | null; skipped?: string } {
  try {
    return { result: run() };
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    return { result: null, skipped: err instanceof Error ? err.message.split('\n')[0] : String(err) };
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const rows = Number(args.positional[0] ?? 1_000_000);
  const runs = Number(args.positional[1] ?? 5);
  const m = machine();
  const loadBefore = loadAverage();
  const dir = mkdtempSync(join(tmpdir(), 'packice-bench-'));
  const python = args.baseline ? ensurePython() : null;
  const pyScript = join(REPO_ROOT, 'bench', 'baselines', 'parquet.py');
  const measured: Measured[] = [];
  const verified: string[] = [];
  console.log(
    `parquet bench: ${int(rows)} rows × 6 columns (${COLUMNS}), ZSTD, ${int(ROW_GROUP_ROWS)}-row groups; ` +
      `median of ${runs} runs, one process per phase`,
  );
  try {
    for (const dictionary of [true, false]) {
      const mode = dictionary ? 'on' : 'off';
      const ours = join(dir, `packice-dict-${mode}.parquet`);
      const [node, writeArgs] = nodeChildArgs(SCRIPT, ['--phase', 'write', ours, String(rows), mode, String(runs)]);
      const w = runChild(node, writeArgs, `packice write (dictionary ${mode})`);
      const size = Number(w.info?.fileSize);
      measured.push({ dictionary, op: 'write', impl: 'packice `ParquetWriter`', fileSize: size, result: w });
      const [, readArgs] = nodeChildArgs(SCRIPT, ['--phase', 'read', ours, String(rows), String(runs)]);
      measured.push({
        dictionary, op: 'read', impl: 'packice `readRowGroups` (streaming)', fileSize: size,
        result: runChild(node, readArgs, `packice read (dictionary ${mode})`),
      });
      if (!args.baseline) continue;

      const theirs = join(dir, `pyarrow-dict-${mode}.parquet`);
      const py = (phase: string, rest: readonly string[]): PhaseResult => {
        if (!python) throw new Error('no .cache/venv (scripts/setup-python.sh failed)');
        return runChild(python, [pyScript, phase, ...rest], `pyarrow ${phase} (dictionary ${mode})`);
      };
      const pw = attempt(() => py('write', [theirs, String(rows), String(ROW_GROUP_ROWS), mode, String(runs)]));
      measured.push({ dictionary, op: 'write', impl: 'pyarrow `pq.write_table`', fileSize: Number(pw.result?.info?.fileSize ?? 0), ...pw });
      const reads: [string, string, string[]][] = [
        ['pyarrow `pq.read_table` (threads, whole table)', 'read_table', [ours, String(rows), 'on', String(runs)]],
        ['pyarrow `pq.read_table(use_threads=False)`', 'read_table', [ours, String(rows), 'off', String(runs)]],
        [`pyarrow \`iter_batches(${int(BATCH)})\` (streaming)`, 'iter_batches', [ours, String(rows), String(BATCH), String(runs)]],
      ];
      for (const [impl, phase, rest] of reads) measured.push({ dictionary, op: 'read', impl, fileSize: size, ...attempt(() => py(phase, rest)) });
      // Both files must hold exactly the generated rows, or the comparison means nothing.
      for (const f of [ours, theirs]) {
        if (python && existsSync(f)) {
          runChild<{ verified: string }>(python, [pyScript, 'verify', f, String(rows)], `verify ${f}`);
          verified.push(f === ours ? `packice (dictionary ${mode})` : `pyarrow (dictionary ${mode})`);
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const loadAfter = loadAverage();

  const base = (d: boolean, op: string): PhaseResult | null => measured.find((x) => x.dictionary === d && x.op === op)?.result ?? null;
  const tableRows = measured.map((x): string[] => {
    const lead = [x.dictionary ? 'on' : 'off', x.op, x.impl];
    const r = x.result;
    if (!r) return [...lead, `not run: ${x.skipped ?? ''}`, '', '', '', '', '', ''];
    const s = median(r.wallS);
    const ours = base(x.dictionary, x.op);
    return [
      ...lead,
      `**${int(rows / s)}**`,
      (x.fileSize / 1e6 / s).toFixed(1),
      int(rows / median(r.cpuS)),
      ours ? `${(median(ours.cpuS) / median(r.cpuS)).toFixed(2)}×` : '',
      r.wallS.map((t) => t.toFixed(3)).join(', '),
      mib(r.maxRssKiB),
      (x.fileSize / 1e6).toFixed(1),
    ];
  });
  const table = markdownTable(
    ['dictionary', 'op', 'implementation', 'median rows/s (wall)', 'MB/s of Parquet', 'rows per CPU-second', 'per-CPU-second rate ÷ packice\'s',
      'each run, s', 'peak RSS of the process', 'file MB'],
    tableRows,
  );
  console.log(`\n${table}\n`);
  console.log(`load average ${loadBefore} → ${loadAfter} (${m.nproc} CPUs); rows verified by pyarrow: ${verified.join(', ') || 'none'}`);

  if (args.write) {
    const pyVersion = python ? pythonVersion(python) : null;
    const pa = measured.find((x) => x.result?.info?.version !== undefined)?.result?.info?.version;
    const command = ['npx tsx bench/parquet.ts', ...process.argv.slice(2)].join(' ');
    writeSection('parquet', [
      '## Parquet write and read',
      '',
      `- **Command:** \`${command}\` (also run by \`npm run bench -- --write\`)`,
      ...machineLines(m, [...(pyVersion ? [pyVersion] : []), ...(pa !== undefined ? [`pyarrow ${pa}`] : [])], loadBefore, loadAfter),
      `- **Input:** ${int(rows)} rows × 6 columns (${COLUMNS}), generated from one formula in both languages ` +
        '(`makeBatch` in bench/parquet.ts, `generate` in bench/baselines/parquet.py); ZSTD level 1, ' +
        `${int(ROW_GROUP_ROWS)}-row groups, decimal stored as INT64, field ids set, local temp folder. ` +
        'Every read, packice\'s and pyarrow\'s, reads the file packice wrote. ' +
        `pyarrow checked that both writers\' files hold exactly the generated rows: ${verified.join(', ') || 'not checked'}.`,
      `- **Runs:** ${runs} per phase, each phase in a fresh process; the figure is the median run. ` +
        'Writes start from rows already in memory (Arrow batches); reads include opening the file and decoding every row group.',
      '',
      table,
      '',
      '"MB/s of Parquet" is the file\'s bytes over the median wall time. The ratio column divides rows per CPU-second by ' +
        'packice\'s for the same operation and dictionary setting (below 1×, packice does the same work with less CPU); ' +
        'it uses CPU time because the wall rates move with the machine\'s load. Peak RSS is the whole ' +
        'process (runtime and, for writes, the 1M rows held in memory). packice decodes in one thread (wasm); ' +
        'pyarrow\'s readers use a thread pool (also for I/O with `use_threads=False`), so their wall rate can exceed their ' +
        'CPU-second rate, and on an idle machine they would gain more from the second core than packice can.',
    ].join('\n'));
  }
}

if (process.argv[2] === '--phase') {
  const [phase, path, rows, a, b] = process.argv.slice(3);
  if (phase === 'write') await writePhase(path, Number(rows), a === 'on', Number(b));
  else if (phase === 'read') await readPhase(path, Number(rows), Number(a));
  else throw new Error(`unknown phase ${phase}`);
} else {
  await main();
}
