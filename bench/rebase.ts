/**
 * End-to-end rebase against moto S3 (issue "Concurrent commits", must-show 5): a writer commits
 * deletes to a group's inputs while its rewrite runs, and the compaction commit rebases them
 * (load the metadata, read the writer's deletion vectors or position delete file, translate them
 * through the group's compaction map, write them for the outputs, commit) — next to the other way
 * out, aborting and re-running the same group's rewrite, measured in the same run.
 *
 * Each run builds two fresh tables over the same input files: one where the writer commits, one
 * where nothing does (its commit is the plain one). Timed, in this process, against a moto server
 * on loopback: the rewrite of each table's group (two samples per run), the commit that rebases,
 * `rebaseDeletes` alone (read, translate, write: what the rebase adds, without loading metadata or
 * committing), and the plain commit. The first run checks the rows: what the writer deleted stays
 * deleted, everything else is there.
 *
 *   npx tsx bench/rebase.ts [runs=5] [inputs=10] [rows-per-input=50000] [deletes-per-input=1000] [--write]
 *   npm run bench:rebase -- [same]
 *
 * --write replaces the rebase section of BENCHMARKS.md. Needs the venv scripts/setup-python.sh
 * builds (moto server).
 */
import { performance } from 'node:perf_hooks';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { loadTable, type Table } from '../lib/catalog/table.js';
import { commitCompaction } from '../lib/compaction/commit.js';
import type { GroupResult, Plan } from '../lib/compaction/messages.js';
import { rebaseDeletes } from '../lib/compaction/rebase.js';
import { dataFileFromJson } from '../lib/iceberg/data-file-json.js';
import { ensureRoaring, PositionDeleteIndex } from '../lib/iceberg/deletion-vector.js';
import type { DataFile } from '../lib/iceberg/manifest.js';
import { planFiles } from '../lib/iceberg/scan-planning.js';
import { currentSchema, specById } from '../lib/iceberg/table-metadata.js';
import type { Row } from '../lib/iceberg/values.js';
import { fileIOFor } from '../lib/io/index.js';
import { planStep, rewriteStep } from '../lib/pipeline/steps.js';
import { writeDeletionVectorFile, writePositionDeleteFile } from '../lib/table/delete-writer.js';
import { appendRows, commitChanges, createNewTable } from '../lib/table/operations.js';
import { scanRows } from '../lib/table/scan.js';
import { startMoto, TEST_AWS_ENV, testS3Client } from '../test/support/moto.js';
import { seededRandom as random } from '../test/support/seeded-random.js';
import { SMALL_TABLE_SCHEMA } from '../test/support/small-table.js';
import { ensurePython, int, loadAverage, machine, machineLines, markdownTable, median, parseArgs, writeSection } from './report.js';

interface Sample {
  readonly wallMs: number;
  readonly cpuMs: number;
}

async function timed<T>(f: () => Promise<T>): Promise<{ value: T; sample: Sample }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const value = await f();
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { value, sample: { wallMs, cpuMs: (used.user + used.system) / 1000 } };
}

interface Setup {
  readonly s3Endpoint: string;
  readonly bucket: string;
  readonly inputs: number;
  readonly rowsPerInput: number;
  readonly deletesPerInput: number;
}

/** The input files in id order, written once per format version and registered in every run's tables. */
async function sourceFiles(setup: Setup, formatVersion: 2 | 3): Promise<DataFile[]> {
  const files: DataFile[] = [];
  const location = `s3://${setup.bucket}/source-v${formatVersion}`;
  let t = await createNewTable(fileIOFor(location, { s3Endpoint: setup.s3Endpoint }), location, { formatVersion, schema: SMALL_TABLE_SCHEMA });
  for (let f = 0; f < setup.inputs; f++) {
    const rows: Row[] = [];
    for (let i = 0; i < setup.rowsPerInput; i++) {
      const id = f * setup.rowsPerInput + i;
      rows.push({ id: BigInt(id), category: `c-${id % 9973}`, amount: BigInt(id % 100_000) });
    }
    t = await appendRows(t, rows);
    const added = (await planFiles(t.io, t.metadata)).tasks.map((task) => task.dataFile).filter((d) => !files.some((x) => x.filePath === d.filePath));
    if (added.length !== 1) throw new Error(`an append of one input wrote ${added.length} files`);
    files.push(added[0]);
  }
  return files;
}

async function tableOver(setup: Setup, location: string, formatVersion: 2 | 3, files: readonly DataFile[]): Promise<Table> {
  const t = await createNewTable(fileIOFor(location, { s3Endpoint: setup.s3Endpoint }), location, { formatVersion, schema: SMALL_TABLE_SCHEMA });
  return commitChanges(t, { addedDataFiles: files });
}

/** `n` distinct positions of `rows`, seeded, ascending. */
function positions(n: number, rows: number, rng: () => number): bigint[] {
  const set = new Set<number>();
  while (set.size < n) set.add(Math.floor(rng() * rows));
  return [...set].sort((a, b) => a - b).map(BigInt);
}

/** The writer: deletes `deletesPerInput` rows of every input, a DV per input (v3) or one position delete file (v2). */
async function writerDeletes(setup: Setup, t: Table, files: readonly DataFile[], rng: () => number): Promise<{ added: DataFile[]; ids: Set<bigint> }> {
  const m = t.metadata;
  const ids = new Set<bigint>();
  const perFile = files.map((f) => {
    const ps = positions(setup.deletesPerInput, Number(f.recordCount), rng);
    // Rows were written in id order, one input per append.
    const first = BigInt(files.indexOf(f) * setup.rowsPerInput);
    for (const p of ps) ids.add(first + p);
    return { file: f, ps };
  });
  let added: DataFile[];
  if (m.formatVersion >= 3) {
    added = await writeDeletionVectorFile(t.io, m, perFile.map(({ file, ps }) => ({ dataFile: file, positions: new PositionDeleteIndex(ps) })));
  } else {
    const deletes = perFile.flatMap(({ file, ps }) => ps.map((pos) => ({ filePath: file.filePath, pos })));
    added = [await writePositionDeleteFile(t.io, m, currentSchema(m), specById(m, m.defaultSpecId), {}, deletes)];
  }
  await commitChanges(t, { addedDeleteFiles: added, operation: 'delete' });
  return { added, ids };
}

interface Figures {
  readonly rewrite: Sample[];
  readonly rebaseCommit: Sample[];
  readonly rebaseOnly: Sample[];
  readonly plainCommit: Sample[];
  positionsWritten: number;
  deleteFilesRebased: number;
  mapBytes: number;
  readonly inputBytes: number;
}

async function planAndRewrite(setup: Setup, location: string, figures: Figures): Promise<{ plan: Plan; result: GroupResult }> {
  const plan = await planStep({ table: { location, s3Endpoint: setup.s3Endpoint }, policy: { minInputFiles: 2 } });
  if (plan.groups.length !== 1) throw new Error(`expected one group, planned ${plan.groups.length}`);
  const r = await timed(() => rewriteStep({ plan, groupId: plan.groups[0].id }));
  figures.rewrite.push(r.sample);
  return { plan, result: r.value };
}

async function bench(setup: Setup, formatVersion: 2 | 3, runs: number): Promise<Figures> {
  const files = await sourceFiles(setup, formatVersion);
  const figures: Figures = {
    rewrite: [],
    rebaseCommit: [],
    rebaseOnly: [],
    plainCommit: [],
    positionsWritten: 0,
    deleteFilesRebased: 0,
    mapBytes: 0,
    inputBytes: files.reduce((n, f) => n + Number(f.fileSizeInBytes), 0),
  };
  const rng = random(7 + formatVersion);
  for (let run = 0; run < runs; run++) {
    // The table a writer deletes from while the rewrite runs.
    const location = `s3://${setup.bucket}/v${formatVersion}-run${run}-rebase`;
    await tableOver(setup, location, formatVersion, files);
    const { plan, result } = await planAndRewrite(setup, location, figures);
    const { added, ids } = await writerDeletes(setup, await loadTable(location, { s3Endpoint: setup.s3Endpoint }), files, rng);

    // What the rebase itself costs: read the writer's deletes, translate, write them for the outputs.
    const base = await loadTable(location, { s3Endpoint: setup.s3Endpoint });
    const live = await planFiles(base.io, base.metadata);
    const only = await timed(() =>
      rebaseDeletes(
        base.io,
        base.metadata,
        [
          {
            groupId: result.groupId,
            compactionMap: result.compactionMap!,
            inputs: live.tasks.map((task) => task.dataFile),
            outputs: result.outputs.map((o) => dataFileFromJson(o, base.metadata)),
            deletes: added,
          },
        ],
        live.deleteRefs,
      ),
    );
    figures.rebaseOnly.push(only.sample);
    figures.positionsWritten = only.value.positions;
    figures.mapBytes = Number((await base.io.stat(result.compactionMap!)).size);

    const commit = await timed(() => commitCompaction(base, plan, [result]));
    if (commit.value.abortedGroups.length > 0 || commit.value.deletesRebased !== added.length) {
      throw new Error(`the commit did not rebase the writer's ${added.length} delete file(s): ${JSON.stringify(commit.value)}`);
    }
    figures.rebaseCommit.push(commit.sample);
    figures.deleteFilesRebased = commit.value.deletesRebased;
    if (run === 0) {
      const after = await loadTable(location, { s3Endpoint: setup.s3Endpoint });
      let rows = 0;
      for await (const r of scanRows(after.io, after.metadata)) {
        if (ids.has(r.id as bigint)) throw new Error(`row ${String(r.id)} came back after the rebase`);
        rows++;
      }
      if (rows !== setup.inputs * (setup.rowsPerInput - setup.deletesPerInput)) throw new Error(`${rows} rows after the rebase`);
    }

    // The same group with nothing to rebase: the plain commit.
    const plainLocation = `s3://${setup.bucket}/v${formatVersion}-run${run}-plain`;
    await tableOver(setup, plainLocation, formatVersion, files);
    const plain = await planAndRewrite(setup, plainLocation, figures);
    const p = await timed(async () => commitCompaction(await loadTable(plainLocation, { s3Endpoint: setup.s3Endpoint }), plain.plan, [plain.result]));
    figures.plainCommit.push(p.sample);
    console.error(`v${formatVersion} run ${run + 1}/${runs}: rewrite ${figures.rewrite.at(-1)!.wallMs.toFixed(0)} ms, rebase commit ${commit.sample.wallMs.toFixed(0)} ms, plain commit ${p.sample.wallMs.toFixed(0)} ms`);
  }
  return figures;
}

const ms = (x: number): string => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

function rowsOf(f: Figures): string[][] {
  const line = (what: string, s: Sample[]): string[] => [
    what,
    `**${ms(median(s.map((x) => x.wallMs)))}**`,
    ms(median(s.map((x) => x.cpuMs))),
    s.map((x) => ms(x.wallMs)).join(', '),
  ];
  return [
    line('commit that rebases the writer\'s deletes (load metadata, read, translate, write, commit)', f.rebaseCommit),
    line('… of which `rebaseDeletes` alone (read, translate, write)', f.rebaseOnly),
    line('the same commit with nothing to rebase', f.plainCommit),
    line('re-running the group\'s rewrite (read with deletes, write, map, proof)', f.rewrite),
  ];
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const [runs, inputs, rowsPerInput, deletesPerInput] = [5, 10, 50_000, 1000].map((d, i) => Number(args.positional[i] ?? d));
  if (!ensurePython()) throw new Error('the venv with moto server could not be built (scripts/setup-python.sh)');
  Object.assign(process.env, TEST_AWS_ENV);
  const moto = await startMoto();
  const loadBefore = loadAverage();
  const sections: string[] = [];
  try {
    const bucket = 'packice-bench-rebase';
    const client = testS3Client(moto.endpoint);
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    client.destroy();
    await ensureRoaring();
    const setup: Setup = { s3Endpoint: moto.endpoint, bucket, inputs, rowsPerInput, deletesPerInput };
    for (const formatVersion of [3, 2] as const) {
      const f = await bench(setup, formatVersion, runs);
      const wall = (xs: Sample[]): number => median(xs.map((x) => x.wallMs));
      const cpu = (xs: Sample[]): number => median(xs.map((x) => x.cpuMs));
      const redoWall = wall(f.rewrite) + wall(f.plainCommit);
      const redoCpu = cpu(f.rewrite) + cpu(f.plainCommit);
      sections.push(
        [
          `### v${formatVersion}: ${formatVersion === 3 ? `one deletion vector per input (${f.deleteFilesRebased} in one Puffin file)` : 'one position delete file over every input'}`,
          '',
          `Input Parquet ${(f.inputBytes / 1024 ** 2).toFixed(1)} MiB; ${int(inputs * deletesPerInput)} positions rebased onto the output (${int(f.positionsWritten)} written); compaction map ${int(f.mapBytes)} bytes. ` +
            `Rebasing instead of aborting and re-running the rewrite (and its commit): **${(redoWall / wall(f.rebaseCommit)).toFixed(1)}×** less wall time ` +
            `(${ms(wall(f.rebaseCommit))} ms against ${ms(redoWall)} ms), **${(redoCpu / cpu(f.rebaseCommit)).toFixed(1)}×** less CPU in this process ` +
            `(${ms(cpu(f.rebaseCommit))} ms against ${ms(redoCpu)} ms).`,
          '',
          markdownTable(['step', 'median wall ms', 'median CPU ms (this process)', 'each run, wall ms'], rowsOf(f)),
        ].join('\n'),
      );
    }
  } finally {
    await moto.stop();
  }
  const loadAfter = loadAverage();
  const command = `npm run bench:rebase -- ${runs} ${inputs} ${rowsPerInput} ${deletesPerInput} --write`;
  const body = [
    '## Rebase against moto S3, end to end',
    '',
    `- **Command:** \`${command}\` (= \`npx tsx bench/rebase.ts ${runs} ${inputs} ${rowsPerInput} ${deletesPerInput} --write\`)`,
    ...machineLines(machine(), ['moto server on loopback'], loadBefore, loadAfter),
    `- **Input:** one group of ${inputs} input files × ${int(rowsPerInput)} rows (id long, category string, amount decimal(10, 2); ZSTD), unpartitioned, rewritten into one output; a writer deletes ${int(deletesPerInput)} seeded random rows of every input after the rewrite and before its commit (a deletion vector per input on v3, one position delete file on v2, written by packice's delete writer).`,
    `- **Runs:** ${runs}; each builds two fresh tables over the same input files (one the writer deletes from, one nobody touches) and rewrites both, so the rewrite has ${2 * runs} samples; the figure is the median. Wall time against moto on loopback (every S3 request is a local HTTP round trip); CPU time is this Node process only (moto's is not counted). The first run checks the rows after the rebase: none the writer deleted is back, every other one is there.`,
    `- **Scaling:** the rebase reads and writes delete files only, so its cost follows the number of deleted positions and the size of the map; the rewrite reads and writes every live row of the group, so the ratio grows with the group (here ${int(inputs * rowsPerInput)} rows).`,
    '- **What is compared:** when a writer deletes rows of a group\'s inputs during its rewrite, Java Iceberg aborts the group ("found new position delete for replaced data file") and the work is done again from the new snapshot; packice\'s commit rebases the deletes. The rewrite row is what doing the work again costs (plus a commit).',
    '',
    ...sections.flatMap((s) => [s, '']),
  ].join('\n');
  console.log(body);
  if (args.write) writeSection('rebase', body);
}

await main();
