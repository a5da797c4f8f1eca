import { Command, CommanderError, Option } from 'commander';
import { PackiceError } from '../errors.js';
import { loadTable, type OpenOptions } from '../catalog/table.js';
import { currentSchema } from '../iceberg/table-metadata.js';
import { rowToJson } from '../iceberg/row-json.js';
import { stringifyJson } from '../iceberg/json.js';
import { tableInfo } from '../table/info.js';
import { scanRows } from '../table/scan.js';
import { relocateTable } from '../table/relocate.js';
import { runDemo } from './demo.js';
import { formatBytes, formatInfo } from './format.js';
import { registerPlanCommands, TABLE_ARGUMENT } from './plan-commands.js';
import { registerCompactCommand } from './compact-command.js';
import { registerRetentionCommands } from './retention-commands.js';
import { registerDeleteCommand } from './delete-command.js';
import { registerStepCommands } from './step-commands.js';

interface GlobalOptions {
  s3Endpoint?: string;
}

function openOptions(program: Command, metadata?: string): OpenOptions {
  const g = program.opts<GlobalOptions>();
  const endpoint = g.s3Endpoint ?? process.env.AWS_ENDPOINT_URL_S3;
  return { ...(endpoint ? { s3Endpoint: endpoint } : {}), ...(metadata ? { metadataFile: metadata } : {}) };
}

function parseSnapshotId(s: string): bigint {
  if (!/^-?\d+$/.test(s)) throw new CommanderError(2, 'packice.usage', `--snapshot must be a snapshot id, got "${s}"`);
  return BigInt(s);
}

export function buildProgram(out: (s: string) => void = (s) => process.stdout.write(s)): Command {
  const program = new Command('packice')
    .description('Compaction, expiry and cleanup for Apache Iceberg tables on object storage.')
    .addOption(new Option('--s3-endpoint <url>', 'S3-compatible endpoint (default: $AWS_ENDPOINT_URL_S3)'))
    .showHelpAfterError();

  program
    .command('info')
    .description('format version, current snapshot, file counts, records and bytes of a table')
    .argument('<table>', TABLE_ARGUMENT)
    .option('--metadata <file>', 'read this metadata file instead of the current one')
    .option('--snapshot <id>', 'describe this snapshot instead of the current one', parseSnapshotId)
    .option('--json', 'print JSON')
    .action(async (location: string, o: { metadata?: string; snapshot?: bigint; json?: boolean }) => {
      const table = await loadTable(location, openOptions(program, o.metadata));
      const info = await tableInfo(table.io, table.metadata, o.snapshot);
      out(o.json ? `${JSON.stringify(info, null, 2)}\n` : formatInfo(info, table.metadataLocation));
    });

  program
    .command('scan')
    .description('print the live rows of a snapshot as JSON lines')
    .argument('<table>', TABLE_ARGUMENT)
    .option('--metadata <file>', 'read this metadata file instead of the current one')
    .option('--snapshot <id>', 'read this snapshot instead of the current one', parseSnapshotId)
    .option('--limit <n>', 'stop after n rows', (s) => Number(s))
    .action(async (location: string, o: { metadata?: string; snapshot?: bigint; limit?: number }) => {
      const table = await loadTable(location, openOptions(program, o.metadata));
      const schema = currentSchema(table.metadata);
      let n = 0;
      for await (const row of scanRows(table.io, table.metadata, { snapshotId: o.snapshot })) {
        if (o.limit !== undefined && n >= o.limit) break;
        out(`${stringifyJson(rowToJson(row, schema))}\n`);
        n++;
      }
    });

  program
    .command('relocate')
    .description("copy a table and rewrite every path inside it to the new location (Iceberg's rewrite-table-path)")
    .argument('<source>', 'where the table files are now')
    .argument('<target>', 'the new table location')
    .option('--metadata <file>', 'metadata file to start from (default: the current one)')
    .option('--overwrite', 'write into a target that already holds files, replacing files at the same paths (metadata files are never overwritten)')
    .option('--json', 'print JSON')
    .action(async (source: string, target: string, o: { metadata?: string; json?: boolean; overwrite?: boolean }) => {
      const g = openOptions(program);
      const result = await relocateTable(source, target, {
        ...g,
        ...(o.metadata ? { metadataFile: o.metadata } : {}),
        overwrite: o.overwrite === true,
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
      await runDemo(folder, { json: o.json === true, out });
    });

  registerPlanCommands(program, out, (m) => openOptions(program, m));
  registerCompactCommand(program, out, () => openOptions(program).s3Endpoint);
  registerRetentionCommands(program, out, () => openOptions(program));
  registerDeleteCommand(program, out, () => openOptions(program));
  registerStepCommands(program, out, () => openOptions(program).s3Endpoint);
  return program;
}

export async function main(argv: string[]): Promise<void> {
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
