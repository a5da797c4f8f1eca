/** The `<table>` argument every table command takes, and how a command opens its table. */
import { Option, type Command } from 'commander';
import { CONFIG_FILE_ENV, PROPERTIES_ENV } from '../catalog/rest/rest-properties.js';
import type { OpenOptions, Table } from '../catalog/table.js';
import { InvalidArgumentError } from '../errors.js';
import { resolveLocation } from '../io/index.js';

export const TABLE_ARGUMENT =
  'the table: its location, a folder (relative paths and ~ work) or s3://bucket/prefix, or glue://<database>/<table>, ' +
  's3tables://<table-bucket-arn>/<namespace>/<table> or rest+https://<endpoint>/<namespace>/<table>';

/** The open options of the command line: `--s3-endpoint`, and the metadata file when one is named. */
export type OpenOptionsOf = (metadata?: string) => OpenOptions;

/**
 * Refuses, before anything is written, a table this command could not commit to: one opened from
 * a metadata file (named, or the newest in a catalog service's folder), saying why.
 */
export async function refuseReadOnly(table: Table, command: string): Promise<void> {
  if (table.catalog.readOnly !== true) return;
  const { MetadataFileCatalog } = await import('../catalog/metadata-file-catalog.js');
  const { ReadOnlyTableError } = await import('../errors.js');
  const why = table.catalog instanceof MetadataFileCatalog ? table.catalog.readOnlyReason : 'its catalog is read-only';
  throw new ReadOnlyTableError(`${command} refused, nothing written: ${why}`, { path: table.location });
}

interface CatalogFlags {
  catalogProperty?: string[];
  catalogConfig?: string;
}

/** `--catalog-property key=value` (repeatable) and `--catalog-config <file>`: a REST catalog's settings. */
export function addCatalogOptions(program: Command): void {
  program
    .addOption(
      new Option('--catalog-property <key=value>', 'a REST catalog property, e.g. warehouse=…, credential=id:secret, rest.signing-name=glue (repeatable)').argParser(
        (v: string, prev: string[] = []) => [...prev, v],
      ),
    )
    .addOption(new Option('--catalog-config <file>', 'REST catalog properties by catalog URI, JSON (default: $PACKICE_CATALOG_CONFIG, else ~/.packice/catalogs.json)'))
    // Through the environment, so the compaction's worker threads see them too; flags win over it.
    .hook('preAction', () => applyCatalogFlags(program.opts<CatalogFlags>()));
}

function applyCatalogFlags(flags: CatalogFlags): void {
  if (flags.catalogConfig !== undefined) process.env[CONFIG_FILE_ENV] = resolveLocation(flags.catalogConfig);
  if (flags.catalogProperty === undefined) return;
  const given = process.env[PROPERTIES_ENV];
  const properties = given !== undefined && given !== '' ? (JSON.parse(given) as Record<string, string>) : {};
  for (const p of flags.catalogProperty) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new InvalidArgumentError(`--catalog-property takes key=value, got "${p}"`);
    properties[p.slice(0, eq)] = p.slice(eq + 1);
  }
  process.env[PROPERTIES_ENV] = JSON.stringify(properties);
}
