/**
 * The `packice` command line. Commands load what they run when they run (`--help` loads neither
 * Parquet nor the AWS SDK), and every location a person types is resolved here, once.
 */
import { once } from 'node:events';
import { fstatSync, readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import type { OpenOptions } from '../catalog/table.js';
import { PackiceError } from '../errors.js';
import { resolveLocation } from '../io/index.js';
import { commanderParser, wholeNumber } from './arguments.js';
import { registerInspectCommands } from './inspect-commands.js';
import { registerPlanCommands } from './plan-commands.js';
import { addCatalogOptions, refuseReadOnly, TABLE_ARGUMENT, type OpenOptionsOf } from './table-argument.js';
import { registerCompactCommand } from './compact-command.js';
import { registerRetentionCommands } from './retention-commands.js';
import { registerDeleteCommand } from './delete-command.js';
import { registerStepCommands } from './step-commands.js';
import { progressBar } from './progress.js';

interface GlobalOptions {
  s3Endpoint?: string;
}

function openOptions(program: Command, metadata?: string): OpenOptions {
  const g = program.opts<GlobalOptions>();
  const endpoint = g.s3Endpoint ?? process.env.AWS_ENDPOINT_URL_S3;
  return {
    ...(endpoint ? { s3Endpoint: endpoint } : {}),
    ...(metadata ? { metadataFile: resolveLocation(metadata) } : {}),
    warn: (message) => process.stderr.write(`packice: warning: ${message}\n`),
  };
}

function parseSnapshotId(s: string): bigint {
  if (!/^-?\d+$/.test(s)) throw new CommanderError(2, 'packice.usage', `--snapshot must be a snapshot id, got "${s}"`);
  return BigInt(s);
}

function stdoutIsFile(): boolean {
  try {
    return fstatSync(1).isFile();
  } catch {
    return false;
  }
}

/** Characters of JSON lines `scan` hands stdout at once. */
const SCAN_CHUNK_CHARS = 1 << 20;

/** The version in package.json, from the sources (lib/cli) or the build (dist/lib/cli). */
function packageVersion(): string {
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'packice' && pkg.version) return pkg.version;
    } catch {
      // not this one
    }
  }
  return 'unknown';
}

export function buildProgram(out: (s: string) => void = (s) => process.stdout.write(s)): Command {
  const program = new Command('packice')
    .description('Compaction, expiry and cleanup for Apache Iceberg tables on object storage.')
    .version(packageVersion(), '-V, --version', 'print the packice version')
    .addOption(new Option('--s3-endpoint <url>', 'S3-compatible endpoint (default: $AWS_ENDPOINT_URL_S3)'))
    .showHelpAfterError();
  addCatalogOptions(program);
  const open: OpenOptionsOf = (m) => openOptions(program, m);

  program
    .command('info')
    .description('format version, current snapshot, file counts, records and bytes of a table')
    .argument('<table>', TABLE_ARGUMENT)
    .option('--metadata <file>', 'read this metadata file instead of the current one')
    .option('--snapshot <id>', 'describe this snapshot instead of the current one', parseSnapshotId)
    .option('--json', 'print JSON')
    .action(async (location: string, o: { metadata?: string; snapshot?: bigint; json?: boolean }) => {
      const { loadTable } = await import('../catalog/table.js');
      const { tableInfo } = await import('../table/info.js');
      const { formatInfo } = await import('./format.js');
      const table = await loadTable(resolveLocation(location), open(o.metadata));
      const info = await tableInfo(table.io, table.metadata, o.snapshot);
      out(o.json ? `${JSON.stringify(info, null, 2)}\n` : formatInfo(info, table.metadataLocation));
    });

  program
    .command('scan')
    .description('print the live rows of a snapshot as JSON lines')
    .argument('<table>', TABLE_ARGUMENT)
    .option('--metadata <file>', 'read this metadata file instead of the current one')
    .option('--snapshot <id>', 'read this snapshot instead of the current one', parseSnapshotId)
    .option('--limit <n>', 'stop after n rows (a whole number >= 0)', commanderParser(wholeNumber(0)))
    .action(async (location: string, o: { metadata?: string; snapshot?: bigint; limit?: number }) => {
      const { loadTable } = await import('../catalog/table.js');
      const { currentSchema } = await import('../iceberg/table-metadata.js');
      const { rowToJson } = await import('../iceberg/row-json.js');
      const { stringifyJson } = await import('../iceberg/json.js');
      const { scanRows } = await import('../table/scan.js');
      const table = await loadTable(resolveLocation(location), open(o.metadata));
      const schema = currentSchema(table.metadata);
      let n = 0;
      if (o.limit === 0) return;
      let chunk = '';
      // Rows stream batch by batch; waiting for stdout to drain keeps a slow reader from piling them up in memory.
      const flush = async (): Promise<void> => {
        if (chunk.length > 0) out(chunk);
        chunk = '';
        if (process.stdout.writableNeedDrain) await once(process.stdout, 'drain');
      };
      // Rows and a bar on one terminal, or beside a pipe's reader, garble each other: a bar only
      // when the rows go to a file.
      const progress = progressBar(stdoutIsFile());
      for await (const row of scanRows(table.io, table.metadata, { snapshotId: o.snapshot, onProgress: progress })) {
        chunk += `${stringifyJson(rowToJson(row, schema))}\n`;
        if (chunk.length >= SCAN_CHUNK_CHARS) await flush();
        if (++n === o.limit) break;
      }
      await flush();
    });

  program
    .command('relocate')
    .description("copy a table and rewrite every path inside it to the new location (Iceberg's rewrite-table-path)")
    .argument('<source>', 'where the table files are now')
    .argument('<target>', 'the new table location')
    .option('--metadata <file>', 'metadata file to start from (default: the current one)')
    .option('--overwrite', 'write into a target that already holds files, replacing files at the same paths (metadata files are never overwritten)')
    .option(
      '--current-only',
      'copy only what the current snapshot and the refs reach: one metadata file, with the history trimmed to those snapshots ' +
        '(works when the history names files that are gone)',
    )
    .option('--json', 'print JSON')
    .action(async (source: string, target: string, o: { metadata?: string; json?: boolean; overwrite?: boolean; currentOnly?: boolean }) => {
      const { relocateTable } = await import('../table/relocate.js');
      const { formatBytes } = await import('./format.js');
      const result = await relocateTable(resolveLocation(source), resolveLocation(target), {
        ...open(o.metadata),
        overwrite: o.overwrite === true,
        currentOnly: o.currentOnly === true,
        onProgress: progressBar(o.json !== true),
      });
      out(
        o.json
          ? `${JSON.stringify(result, null, 2)}\n`
          : `relocated ${result.sourceLocation} -> ${result.targetLocation}: ${result.filesCopied} files copied, ` +
              `${result.filesRewritten} rewritten (${formatBytes(result.bytesWritten)})\n`,
      );
    });

  program
    .command('demo')
    .description(
      'build a demo table the way a streaming job does, in a local folder, and show it; the folder must be absent, empty, ' +
        'or a previous demo (it holds packice-demo.json)',
    )
    .argument('[folder]', 'where to build it', '.packice-demo')
    .option('--json', 'print JSON')
    .action(async (folder: string, o: { json?: boolean }) => {
      const { runDemo } = await import('./demo.js');
      await runDemo(resolveLocation(folder), { json: o.json === true, out });
    });

  program
    .command('rewrite-manifests')
    .description("regroup the current snapshot's manifests by partition (Spark's rewrite_manifests), in a replace snapshot that changes no file")
    .argument('<table>', TABLE_ARGUMENT)
    .option('--dry-run', 'read the manifests and say what would be written; write nothing')
    .option('--json', 'print JSON')
    .action(async (location: string, o: { dryRun?: boolean; json?: boolean }) => {
      const { loadTable } = await import('../catalog/table.js');
      const { rewriteManifests } = await import('../maintenance/rewrite-manifests.js');
      const { formatManifestRewrite } = await import('./format.js');
      const table = await loadTable(resolveLocation(location), open());
      await refuseReadOnly(table, 'rewrite-manifests');
      const result = await rewriteManifests(table, { dryRun: o.dryRun === true });
      out(o.json ? `${JSON.stringify(result, null, 2)}\n` : formatManifestRewrite(result));
    });

  registerInspectCommands(program, out, open);
  registerPlanCommands(program, out, open);
  registerCompactCommand(program, out, open);
  registerRetentionCommands(program, out, open);
  registerDeleteCommand(program, out, open);
  registerStepCommands(program, out, open);
  return program;
}

/** `packice … | head` closes our stdout early: that is the reader saying it has enough, not an error. */
let stdoutWatched = false;
function exitQuietlyOnClosedStdout(): void {
  if (stdoutWatched) return;
  stdoutWatched = true;
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}

export async function main(argv: string[]): Promise<void> {
  // The AWS SDK warns on every run under Node 20 that a future SDK will need Node 22; the
  // supported versions are in the README, and the warning buried every S3 command's output.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  exitQuietlyOnClosedStdout();
  const program = buildProgram().exitOverride();
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.exitCode !== 0 && e.code === 'packice.usage') process.stderr.write(`packice: ${e.message}\n`);
      process.exitCode = e.exitCode;
      return;
    }
    const message = e instanceof PackiceError ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e);
    process.stderr.write(`packice: ${message}\n`);
    process.exitCode = 1;
  }
}
