/** Where a REST catalog's properties come from: the config file by URI, the environment, then code. */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restCatalogProperties } from '../../lib/catalog/rest/rest-properties.js';
import { InvalidArgumentError } from '../../lib/errors.js';

let home: string;
const URI = 'https://glue.us-east-1.amazonaws.com/iceberg';

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'packice-rest-props-'));
  await mkdir(join(home, '.packice'));
  await writeFile(
    join(home, '.packice', 'catalogs.json'),
    JSON.stringify({ [`${URI}/`]: { warehouse: '111111111111', 'rest.signing-name': 'glue', scope: 'file' }, 'https://other': { warehouse: 'x' } }),
  );
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('REST catalog properties', () => {
  it('takes the config file entry of the URI, the environment over it, and the given over both', () => {
    // Act
    const p = restCatalogProperties(
      URI,
      { warehouse: '333333333333' },
      { PACKICE_REST_SCOPE: 'env', PACKICE_REST_WAREHOUSE: '222222222222', PACKICE_REST_PROPERTIES: '{"header.X-Iceberg-Access-Delegation":"vended-credentials"}' },
      home,
    );

    // Assess
    expect(p).toEqual({
      warehouse: '333333333333',
      'rest.signing-name': 'glue',
      scope: 'env',
      'header.X-Iceberg-Access-Delegation': 'vended-credentials',
    });
  });

  it('takes $PACKICE_REST_CATALOGS (how the CDK construct passes properties) by URI, over the config file and under the single variables', () => {
    // Act
    const p = restCatalogProperties(
      URI,
      {},
      { PACKICE_REST_CATALOGS: JSON.stringify({ [URI]: { warehouse: '444444444444', scope: 'catalogs' }, 'https://other': { warehouse: 'y' } }), PACKICE_REST_SCOPE: 'env' },
      home,
    );
    const broken = (): unknown => restCatalogProperties(URI, {}, { PACKICE_REST_CATALOGS: '[1]' }, home);

    // Assess
    expect(p).toEqual({ warehouse: '444444444444', 'rest.signing-name': 'glue', scope: 'env' });
    expect(broken).toThrow(/PACKICE_REST_CATALOGS: catalog properties by catalog URI must be a JSON object/);
  });

  it('reads $PACKICE_CATALOG_CONFIG instead of ~/.packice/catalogs.json, and names a missing or broken file', async () => {
    // Prepare
    const other = join(home, 'other.json');
    await writeFile(other, JSON.stringify({ [URI]: { token: 't' } }));
    const broken = join(home, 'broken.json');
    await writeFile(broken, '{"x": ');

    // Act
    const p = restCatalogProperties(URI, {}, { PACKICE_CATALOG_CONFIG: other }, home);
    const missing = (): unknown => restCatalogProperties(URI, {}, { PACKICE_CATALOG_CONFIG: join(home, 'nope.json') }, home);
    const bad = (): unknown => restCatalogProperties(URI, {}, { PACKICE_CATALOG_CONFIG: broken }, home);

    // Assess
    expect(p).toEqual({ token: 't' });
    expect(missing).toThrow(InvalidArgumentError);
    expect(missing).toThrow(/nope\.json: the catalog config file does not exist/);
    expect(bad).toThrow(/broken\.json: not valid JSON/);
  });
});
