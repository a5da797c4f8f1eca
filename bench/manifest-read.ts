/**
 * Manifest read throughput: writes one 100,000-entry v3 manifest (10 columns of
 * metrics, partitioned by day(ts) and bucket[16](id)) to a temp folder, then reads that
 * same file N times in a fresh process per reader:
 *   packice   readManifest (inheritance applied), this script again with --read
 *   PyIceberg ManifestFile.fetch_manifest_entry (bench/baselines/manifest_read.py, .cache/venv)
 *   Java      ManifestFiles.read (bench/baselines/ManifestRead.java, interop harness classpath)
 * and prints the median rates and each process's peak RSS as a Markdown table.
 *
 *   npx tsx bench/manifest-read.ts [entries=100000] [runs=5] [deflate level=9, as Java] [--write] [--no-baseline]
 *
 * --write replaces the manifest-read section of BENCHMARKS.md.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { LocalFileIO } from '../lib/io/local.js';
import { type DataFile, FileContent, ManifestWriter, readManifest } from '../lib/iceberg/manifest.js';
import type { ManifestFile } from '../lib/iceberg/manifest-list.js';
import { partitionSpecFromJson } from '../lib/iceberg/partition.js';
import { schemaFromJson } from '../lib/iceberg/schema.js';
import {
  ensureJavaClasspath, ensurePython, int, javaVersion, loadAverage, machine, machineLines, markdownTable, median, mib,
  nodeChildArgs, parseArgs, type PhaseResult, pythonVersion, REPO_ROOT, runChild, writeSection,
} from './report.js';

const SCRIPT = fileURLToPath(import.meta.url);

const schema = schemaFromJson({
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    { id: 3, name: 'name', required: false, type: 'string' },
    { id: 4, name: 'amount', required: false, type: 'double' },
    { id: 5, name: 'qty', required: false, type: 'int' },
    { id: 6, name: 'flag', required: false, type: 'boolean' },
    { id: 7, name: 'category', required: false, type: 'string' },
    { id: 8, name: 'price', required: false, type: 'decimal(10, 2)' },
    { id: 9, name: 'd', required: false, type: 'date' },
    { id: 10, name: 'ratio', required: false, type: 'float' },
  ],
});
const spec = partitionSpecFromJson({
  'spec-id': 0,
  fields: [
    { name: 'ts_day', transform: 'day', 'source-id': 2, 'field-id': 1000 },
    { name: 'id_bucket', transform: 'bucket[16]', 'source-id': 1, 'field-id': 1001 },
  ],
});
const SNAPSHOT_ID = 6_917_529_027_641_081_857n; // > 2^53

function le(n: number, bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let x = BigInt(n);
  for (let i = 0; i < bytes; i++) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

function dataFile(i: number): DataFile {
  const day = 19_000 + (i % 365);
  const counts = new Map<number, bigint>();
  const sizes = new Map<number, bigint>();
  const nulls = new Map<number, bigint>();
  const lower = new Map<number, Uint8Array>();
  const upper = new Map<number, Uint8Array>();
  const rows = 10_000n + BigInt(i % 5000);
  for (let c = 1; c <= 10; c++) {
    sizes.set(c, 40_000n + BigInt((i * c) % 9973));
    counts.set(c, rows);
    nulls.set(c, BigInt((i + c) % 17));
    const width = c === 3 || c === 7 ? 16 : c === 5 || c === 9 || c === 10 ? 4 : 8;
    lower.set(c, le(i * c, width));
    upper.set(c, le(i * c + 1000, width));
  }
  return {
    content: FileContent.Data,
    filePath: `s3://warehouse-bucket/db/events/data/ts_day=${day}/id_bucket=${i % 16}/00000-${i}-8c3f2a6e-4d5b-4f1a-9e3c-${String(i).padStart(12, '0')}-00001.parquet`,
    fileFormat: 'PARQUET',
    specId: 0,
    partition: { ts_day: day, id_bucket: i % 16 },
    recordCount: rows,
    fileSizeInBytes: 64_000_000n + BigInt(i),
    columnSizes: sizes,
    valueCounts: counts,
    nullValueCounts: nulls,
    nanValueCounts: new Map([[4, 0n], [10, 0n]]),
    lowerBounds: lower,
    upperBounds: upper,
    splitOffsets: [4n, 33_554_436n],
    sortOrderId: 0,
  };
}

/** Child process: read the manifest `runs` times, print one JSON line (a PhaseResult). */
async function readPhase(path: string, entries: number, runs: number): Promise<void> {
  const io = new LocalFileIO();
  const manifest: ManifestFile = {
    manifestPath: path, manifestLength: BigInt(statSync(path).size), partitionSpecId: 0, content: 0, sequenceNumber: 1n,
    minSequenceNumber: 1n, addedSnapshotId: SNAPSHOT_ID, addedFilesCount: entries, existingFilesCount: 0, deletedFilesCount: 0,
    addedRowsCount: null, existingRowsCount: 0n, deletedRowsCount: 0n, firstRowId: 0n,
  };
  const specs = new Map([[0, spec]]);
  const wallS: number[] = [];
  const cpuS: number[] = [];
  let recordCountSum = 0n;
  for (let r = 0; r < runs; r++) {
    const start = performance.now();
    const c0 = process.cpuUsage();
    let n = 0;
    let sum = 0n;
    let lastRowId = 0n;
    for await (const e of readManifest(io, manifest, specs, schema)) {
      n++;
      sum += e.dataFile.recordCount;
      lastRowId = e.dataFile.firstRowId ?? -1n;
    }
    const c = process.cpuUsage(c0);
    wallS.push((performance.now() - start) / 1000);
    cpuS.push((c.user + c.system) / 1e6);
    if (n !== entries || lastRowId <= 0n) throw new Error(`read ${n} entries, expected ${entries}`);
    recordCountSum = sum;
  }
  const result: PhaseResult = {
    wallS, cpuS, maxRssKiB: process.resourceUsage().maxRSS, info: { recordCountSum: String(recordCountSum) },
  };
  console.log(JSON.stringify(result));
}

interface Reader {
  readonly name: string;
  readonly result: PhaseResult | null;
  /** Why a baseline has no figures (not installed, failed). */
  readonly skipped?: string;
}

function baseline(name: string, run: () => PhaseResult): Reader {
  try {
    return { name, result: run() };
  } catch (err) {
    const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
    console.error(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    return { name, result: null, skipped: why };
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const entries = Number(args.positional[0] ?? 100_000);
  const runs = Number(args.positional[1] ?? 5);
  const level = args.positional[2] === undefined ? undefined : Number(args.positional[2]);
  const m = machine();
  const loadBefore = loadAverage();
  const dir = mkdtempSync(join(tmpdir(), 'packice-bench-'));
  const path = join(dir, 'bench-m0.avro');
  try {
    const t0 = performance.now();
    const writer = new ManifestWriter(new LocalFileIO(), path, {
      formatVersion: 3, spec, schema, snapshotId: SNAPSHOT_ID, ...(level !== undefined ? { deflateLevel: level } : {}),
    });
    for (let i = 0; i < entries; i++) writer.add(dataFile(i));
    await writer.close();
    const writeS = (performance.now() - t0) / 1000;
    const size = statSync(path).size;
    const input =
      `one v3 data manifest, ${int(entries)} entries (10 columns of metrics each, partition day(ts) + bucket[16](id)), ` +
      `${(size / 1024 / 1024).toFixed(1)} MiB, deflate level ${level ?? 9}; packice wrote it in ${writeS.toFixed(1)} s ` +
      `(${int(entries / writeS)} entries/s, incl. building the DataFiles)`;
    console.log(input);

    const readers: Reader[] = [];
    const [node, nodeArgs] = nodeChildArgs(SCRIPT, ['--read', path, String(entries), String(runs)]);
    readers.push({ name: `packice \`readManifest\``, result: runChild(node, nodeArgs, 'packice read') });
    const versions: string[] = [];
    if (args.baseline) {
      const python = ensurePython();
      const pyVersion = python ? pythonVersion(python) : null;
      if (pyVersion) versions.push(pyVersion);
      readers.push(
        baseline('PyIceberg `ManifestFile.fetch_manifest_entry`', () => {
          if (!python) throw new Error('no .cache/venv (scripts/setup-python.sh failed)');
          const script = join(REPO_ROOT, 'bench', 'baselines', 'manifest_read.py');
          return runChild(python, [script, path, String(entries), String(runs), String(SNAPSHOT_ID)], 'PyIceberg read');
        }),
      );
      const classpath = ensureJavaClasspath();
      const jv = classpath ? javaVersion() : null;
      if (jv) versions.push(jv);
      readers.push(
        baseline('Java Iceberg `ManifestFiles.read`', () => {
          if (!classpath) throw new Error('no interop classpath (scripts/setup-java.sh failed)');
          const source = join(REPO_ROOT, 'bench', 'baselines', 'ManifestRead.java');
          return runChild('java', ['-cp', classpath, source, path, String(entries), String(runs), String(SNAPSHOT_ID)], 'Java read');
        }),
      );
    }
    const loadAfter = loadAverage();

    const sums = new Set(readers.flatMap((r) => (r.result?.info?.recordCountSum !== undefined ? [String(r.result.info.recordCountSum)] : [])));
    if (sums.size > 1) throw new Error(`the readers disagree on the sum of record counts: ${[...sums].join(' vs ')}`);

    const ours = median(readers[0].result?.cpuS ?? [1]);
    const rows = readers.map((r): string[] => {
      const res = r.result;
      const version = res?.info?.version !== undefined ? ` ${res.info.version}` : '';
      if (!res) return [`${r.name}`, `not run: ${r.skipped ?? ''}`, '', '', '', ''];
      const rates = res.wallS.map((s) => entries / s);
      return [
        `${r.name}${version}`,
        `**${int(entries / median(res.wallS))}**`,
        int(entries / median(res.cpuS)),
        `${(ours / median(res.cpuS)).toFixed(2)}×`,
        rates.map(int).join(', '),
        mib(res.maxRssKiB),
      ];
    });
    const table = markdownTable(
      ['reader', 'median entries/s (wall)', 'entries per CPU-second', 'per-CPU-second rate ÷ packice\'s', 'each run, entries/s', 'peak RSS of the process'],
      rows,
    );
    console.log(`\n${table}\n`);
    console.log(`load average ${loadBefore} → ${loadAfter} (${m.nproc} CPUs)`);

    if (args.write) {
      const command = ['npx tsx bench/manifest-read.ts', ...process.argv.slice(2)].join(' ');
      writeSection('manifest-read', [
        '## Manifest read',
        '',
        `- **Command:** \`${command}\` (also run by \`npm run bench -- --write\`)`,
        ...machineLines(m, versions, loadBefore, loadAfter),
        `- **Input:** ${input}. Every reader reads this same file from the local disk (page cache warm).`,
        `- **Runs:** ${runs} reads per reader in one fresh process each; the figure is the median run. ` +
          'The first run of each process includes its warm-up (JIT, imports).',
        '',
        table,
        '',
        'The ratio column divides the reader\'s entries per CPU-second by packice\'s (below 1×, packice does the ' +
          'same work with less CPU); it uses CPU time because the wall rates move with the machine\'s load. ' +
          'Peak RSS is the whole reading process (runtime included). PyIceberg returns the manifest as one list, so it ' +
          'holds every entry at once; packice streams them; Java iterates and copies each file (with its stats). Java runs ' +
          'with the JVM\'s defaults (G1, heap up to a quarter of the RAM), so its heap grows well past what the read needs.',
      ].join('\n'));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--read') {
  await readPhase(process.argv[3], Number(process.argv[4]), Number(process.argv[5]));
} else {
  await main();
}
