/**
 * A REST catalog's client properties, by the names Java's RESTCatalog and PyIceberg use, and where
 * packice finds them. Later sources win:
 * 1. the config file: `$PACKICE_CATALOG_CONFIG`, else `~/.packice/catalogs.json`, a JSON object of
 *    properties by catalog URI (`{"https://host/iceberg": {"warehouse": "…"}}`);
 * 2. `$PACKICE_REST_CATALOGS`, a JSON object of the same shape (how the CDK construct hands its
 *    tables' `catalogProperties` to the functions);
 * 3. the environment: `PACKICE_REST_TOKEN`, `PACKICE_REST_CREDENTIAL`, `PACKICE_REST_WAREHOUSE`,
 *    `PACKICE_REST_SCOPE`, `PACKICE_REST_OAUTH2_SERVER_URI`, `PACKICE_REST_SIGNING_NAME`,
 *    `PACKICE_REST_SIGNING_REGION`, and `PACKICE_REST_PROPERTIES`, a JSON
 *    object of any others (the command line's `--catalog-property` flags land there);
 * 4. properties passed in code.
 * The server's `/v1/config` then puts its `defaults` under them and its `overrides` over them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from '../../errors.js';

export type CatalogProperties = Readonly<Record<string, string>>;

export const RestProperty = {
  Uri: 'uri',
  Warehouse: 'warehouse',
  Prefix: 'prefix',
  Token: 'token',
  Credential: 'credential',
  OAuth2ServerUri: 'oauth2-server-uri',
  Scope: 'scope',
  Audience: 'audience',
  Resource: 'resource',
  /** SigV4 on or off; unset, a signing name or region turns it on. */
  SigV4Enabled: 'rest.sigv4-enabled',
  SigningName: 'rest.signing-name',
  SigningRegion: 'rest.signing-region',
  NamespaceSeparator: 'namespace-separator',
  MaxRetries: 'rest.client.max-retries',
  /** `header.<Name>`: a header every request carries, e.g. `header.X-Iceberg-Access-Delegation=vended-credentials`. */
  HeaderPrefix: 'header.',
} as const;

export const CONFIG_FILE_ENV = 'PACKICE_CATALOG_CONFIG';
export const PROPERTIES_ENV = 'PACKICE_REST_PROPERTIES';
export const CATALOGS_ENV = 'PACKICE_REST_CATALOGS';

const ENV_PROPERTIES: Readonly<Record<string, string>> = {
  PACKICE_REST_TOKEN: RestProperty.Token,
  PACKICE_REST_CREDENTIAL: RestProperty.Credential,
  PACKICE_REST_WAREHOUSE: RestProperty.Warehouse,
  PACKICE_REST_SCOPE: RestProperty.Scope,
  PACKICE_REST_OAUTH2_SERVER_URI: RestProperty.OAuth2ServerUri,
  PACKICE_REST_SIGNING_NAME: RestProperty.SigningName,
  PACKICE_REST_SIGNING_REGION: RestProperty.SigningRegion,
};

/** The properties for the catalog at `uri` from the config file, the environment, then `given`. */
export function restCatalogProperties(
  uri: string,
  given: CatalogProperties = {},
  env: NodeJS.ProcessEnv = process.env,
  home: string = homedir(),
): CatalogProperties {
  const fromEnv: Record<string, string> = {};
  for (const [name, key] of Object.entries(ENV_PROPERTIES)) {
    const v = env[name];
    if (v !== undefined && v !== '') fromEnv[key] = v;
  }
  const json = env[PROPERTIES_ENV];
  const fromJson = json !== undefined && json !== '' ? propertiesOf(parseJsonText(json, `$${PROPERTIES_ENV}`), `$${PROPERTIES_ENV}`) : {};
  const catalogs = env[CATALOGS_ENV];
  const fromCatalogs = catalogs !== undefined && catalogs !== '' ? propertiesByUri(parseJsonText(catalogs, `$${CATALOGS_ENV}`), uri, `$${CATALOGS_ENV}`) : {};
  return { ...configFileProperties(uri, env, home), ...fromCatalogs, ...fromEnv, ...fromJson, ...given };
}

function configFileProperties(uri: string, env: NodeJS.ProcessEnv, home: string): CatalogProperties {
  const named = env[CONFIG_FILE_ENV];
  const file = named !== undefined && named !== '' ? named : join(home, '.packice', 'catalogs.json');
  if (!existsSync(file)) {
    if (named !== undefined && named !== '') throw new InvalidArgumentError('the catalog config file does not exist', { path: file });
    return {};
  }
  return propertiesByUri(parseJsonText(readFileSync(file, 'utf8'), file), uri, file);
}

/** The entry for `uri` of a JSON object of properties by catalog URI. */
function propertiesByUri(all: unknown, uri: string, where: string): CatalogProperties {
  if (typeof all !== 'object' || all === null || Array.isArray(all)) {
    throw new InvalidArgumentError('catalog properties by catalog URI must be a JSON object', { path: where });
  }
  const entries = all as Record<string, unknown>;
  const key = Object.keys(entries).find((k) => trimSlash(k) === trimSlash(uri));
  return key === undefined ? {} : propertiesOf(entries[key], `${where}: "${key}"`);
}

function parseJsonText(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new InvalidArgumentError(`not valid JSON: ${(e as Error).message}`, { path: where, cause: e });
  }
}

function propertiesOf(v: unknown, where: string): Record<string, string> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new InvalidArgumentError('catalog properties must be a JSON object', { path: where });
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== 'string' && typeof x !== 'number' && typeof x !== 'boolean') {
      throw new InvalidArgumentError(`catalog property ${k} must be a string`, { path: where });
    }
    out[k] = String(x);
  }
  return out;
}

function trimSlash(s: string): string {
  return s.replace(/\/+$/, '');
}

/** The `header.*` properties as headers. */
export function headersOf(properties: CatalogProperties): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(properties)) if (k.startsWith(RestProperty.HeaderPrefix)) out[k.slice(RestProperty.HeaderPrefix.length)] = v;
  return out;
}
