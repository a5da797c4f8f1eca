/**
 * Every table command on a `rest+http://` name, against the loopback REST server with a bearer
 * token and a warehouse given by `--catalog-property` flags or a `--catalog-config` file.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryCatalog } from '../../lib/catalog/in-memory-catalog.js';
import { loadTable } from '../../lib/catalog/table.js';
import { fileIOFor } from '../../lib/io/index.js';
import { scanRows } from '../../lib/table/scan.js';
import { runCli, runMain } from '../support/cli.js';
import { savedEnv } from '../support/saved-env.js';
import { RestCatalogServer } from '../support/rest-catalog-server.js';
import { smallTable } from '../support/small-table.js';

const ENV = ['PACKICE_REST_PROPERTIES', 'PACKICE_CATALOG_CONFIG', 'PACKICE_REST_TOKEN'];
const env = savedEnv(ENV);
let root: string;
let server: RestCatalogServer;
let tables = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'packice-rest-cli-'));
});

afterEach(async () => {
  env.restore();
  await server.close();
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function serve(): Promise<string> {
  const location = join(root, `t${++tables}`);
  const io = fileIOFor(location);
  const written = await smallTable(io, location, 2);
  server = await RestCatalogServer.start({ basePath: '/api/catalog', prefix: 'wh1', warehouse: 'wh1', auth: { kind: 'bearer', token: 'abc' } });
  const name = server.tableName(['sales', 'eu'], 'events');
  server.addTable(['sales', 'eu'], 'events', new InMemoryCatalog(io, name, written, { checks: 'server' }));
  return name;
}

async function ids(name: string): Promise<number[]> {
  const t = await loadTable(name);
  const out: number[] = [];
  for await (const r of scanRows(t.io, t.metadata)) out.push(Number(r.id));
  return out.sort((a, b) => a - b);
}

const SMALL_IDS = Array.from({ length: 40 }, (_, i) => i + 1).filter((i) => i % 5 !== 0);

describe('the command line on a REST catalog table', () => {
  it('info, scan, health, plan, compact, expire, orphans, delete and step take the rest+http name', async () => {
    // Prepare
    const name = await serve();
    const flags = ['--catalog-property', 'token=abc', '--catalog-property', 'warehouse=wh1'];
    const run = (...args: string[]): Promise<string> => runCli([...flags, ...args]);

    // Act
    const info = JSON.parse(await run('info', '--json', name)) as { formatVersion?: number };
    const scanned = (await run('scan', name)).trim().split('\n');
    const health = await run('health', '--json', name);
    const plan = JSON.parse(await run('plan', '--json', '--min-input-files', '2', name)) as { groups?: unknown[] };
    await run('compact', '--json', '--min-input-files', '2', name);
    const expire = JSON.parse(await run('expire', '--dry-run', '--json', '--report', join(root, 'expire.json'), '--retain-last', '1', '--older-than', '0s', name)) as { dryRun?: boolean };
    const orphans = JSON.parse(await run('orphans', '--dry-run', '--json', '--report', join(root, 'orphans.json'), name)) as { dryRun?: boolean };
    await run('delete', '--json', '--where', 'id = 1', name);
    const planFile = join(root, 'plan.json');
    await writeFile(planFile, await run('step', 'plan', '--min-input-files', '1', '--delete-file-threshold', '1', name));
    const resultsFile = join(root, 'results.jsonl');
    await writeFile(resultsFile, await run('step', 'rewrite', planFile));
    const stepCommit = JSON.parse(await run('step', 'commit', planFile, resultsFile)) as { committedGroups?: unknown[]; abortedGroups?: unknown[] };

    // Assess
    expect(info.formatVersion).toBe(2);
    expect(scanned).toHaveLength(32);
    expect(health.length).toBeGreaterThan(0);
    expect(plan.groups?.length).toBe(2);
    expect(expire.dryRun).toBe(true);
    expect(orphans.dryRun).toBe(true);
    process.env.PACKICE_REST_TOKEN = 'abc';
    process.env.PACKICE_REST_PROPERTIES = '{"warehouse":"wh1"}';
    const after = await loadTable(name);
    expect(stepCommit.committedGroups?.length).toBeGreaterThan(0);
    expect(stepCommit.abortedGroups).toEqual([]);
    // compact, delete, then the step commit (the delete's file folded into a rewrite).
    expect(after.metadata.snapshots.map((s) => s.summary.operation).slice(-3)).toEqual(['replace', 'delete', 'replace']);
    expect(await ids(name)).toEqual(SMALL_IDS.filter((i) => i !== 1));
    expect(server.requests.every((q) => q.status === 200)).toBe(true);
    expect(server.of('config').every((q) => q.query.get('warehouse') === 'wh1')).toBe(true);
  });

  it('reads the properties from --catalog-config, by catalog URI; without them the server refuses', async () => {
    // Prepare
    const name = await serve();
    const config = join(root, 'catalogs.json');
    await writeFile(config, JSON.stringify({ [`${server.uri}/`]: { token: 'abc', warehouse: 'wh1' } }));

    // Act
    const info = JSON.parse(await runCli(['--catalog-config', config, 'info', '--json', name])) as { formatVersion?: number };
    delete process.env.PACKICE_CATALOG_CONFIG;
    const refused = await runMain(['info', name]);
    const badFlag = await runMain(['--catalog-property', 'token', 'info', name]);

    // Assess
    expect(info.formatVersion).toBe(2);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/400: BadRequestException: unknown warehouse \(none\)|401: NotAuthorizedException/);
    expect(badFlag.exitCode).not.toBe(0);
    expect(badFlag.stderr).toContain('--catalog-property takes key=value, got "token"');
  });
});
