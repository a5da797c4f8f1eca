/**
 * IcebergMaintenance with tables named in a catalog (glue://, s3tables://, rest+https://): the
 * synthesized policies grant each function the catalog calls it makes on those tables alone, and
 * S3 access only where the files are (Template assertions; bundling skipped).
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { IcebergMaintenance, STEPS, type MaintainedTableProps, type Step } from '../../cdk/iceberg-maintenance.js';
import { flatten, type Json } from '../support/cfn-template.js';

const BUCKET_ARN = 'arn:aws:s3tables:eu-west-1:111122223333:bucket/lake-tables';
const TABLES: MaintainedTableProps[] = [
  { location: 's3://lake-a/warehouse/db/events' },
  { location: 'glue://sales/orders', storageLocation: 's3://lake-g/warehouse/sales.db/orders', retention: { retainLast: 3 } },
  { location: `s3tables://${BUCKET_ARN}/sales/clicks` },
  { location: 'rest+https://catalog.example.com/v1/sales/returns' },
];

interface Statement {
  readonly Action: string | string[];
  readonly Resource: Json;
  readonly Condition?: Json;
}
interface Resource {
  readonly Type: string;
  readonly Properties: { [k: string]: Json };
}

function synth(tables: readonly MaintainedTableProps[]): { template: Template; resources: Record<string, Resource> } {
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Catalogs');
  new IcebergMaintenance(stack, 'Maintenance', { tables });
  const template = Template.fromStack(stack);
  return { template, resources: template.toJSON().Resources as Record<string, Resource> };
}

/** Every statement of the policies attached to a step's function's role. */
function statementsOf(resources: Record<string, Resource>, step: Step): Statement[] {
  const fn = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Description === `packice maintenance: ${step}`)!;
  const role = (fn.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && (r.Properties.Roles as { Ref: string }[]).some((x) => x.Ref === role))
    .flatMap((p) => (p.Properties.PolicyDocument as unknown as { Statement: Statement[] }).Statement);
}

/** The statements of one service (`glue:`, `s3tables:`, `s3:` on table objects), as `actions → resources (condition)`. */
function grants(resources: Record<string, Resource>, step: Step, service: string): string[] {
  return statementsOf(resources, step)
    .filter((s) => [s.Action].flat().some((a) => a.startsWith(`${service}:`)))
    .map((s) => {
      const arns = [s.Resource].flat().map(flatten);
      const condition = s.Condition === undefined ? '' : ` if ${JSON.stringify(s.Condition)}`;
      return `${[s.Action].flat().sort().join(',')} → ${arns.join(' ')}${condition}`;
    })
    // Not the work bucket's.
    .filter((g) => !g.includes('.Arn>'))
    .sort();
}

const GLUE_RESOURCES = [
  'arn:aws:glue:<AWS::Region>:<AWS::AccountId>:catalog',
  'arn:aws:glue:<AWS::Region>:<AWS::AccountId>:database/sales',
  'arn:aws:glue:<AWS::Region>:<AWS::AccountId>:table/sales/orders',
].join(' ');
const S3TABLES_CONDITION = ` if ${JSON.stringify({ StringEquals: { 's3tables:namespace': 'sales', 's3tables:tableName': 'clicks' } })}`;

describe('IcebergMaintenance with catalog tables', () => {
  const { template, resources } = synth(TABLES);

  it('grants glue:GetTable to the readers and glue:GetTable/UpdateTable to commit and expire, on the catalog, database and table ARNs only', () => {
    for (const step of STEPS) {
      const commits = step === 'commit' || step === 'expire';
      expect(grants(resources, step, 'glue'), step).toEqual([`${commits ? 'glue:GetTable,glue:UpdateTable' : 'glue:GetTable'} → ${GLUE_RESOURCES}`]);
    }
  });

  it('grants the s3tables: actions each step needs on the named table of the table bucket; expire and orphans none', () => {
    const table = `${BUCKET_ARN}/table/*`;
    const expected: Record<Step, string[]> = {
      plan: [`s3tables:GetTableData,s3tables:GetTableMetadataLocation → ${table}${S3TABLES_CONDITION}`],
      trigger: [`s3tables:GetTableData,s3tables:GetTableMetadataLocation → ${table}${S3TABLES_CONDITION}`],
      rewrite: [`s3tables:GetTableData,s3tables:GetTableMetadataLocation,s3tables:PutTableData → ${table}${S3TABLES_CONDITION}`],
      commit: [
        `s3tables:GetTableData,s3tables:GetTableMetadataLocation,s3tables:PutTableData,s3tables:UpdateTableMetadataLocation → ${table}${S3TABLES_CONDITION}`,
      ],
      expire: [],
      orphans: [],
    };
    for (const step of STEPS) expect(grants(resources, step, 's3tables'), step).toEqual(expected[step]);
    // No s3tables: action on a wildcard bucket or without the table's conditions.
    template.allResourcesProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.not(Match.arrayWith([Match.objectLike({ Action: Match.stringLikeRegexp('^s3tables:\\*$') })])) },
    });
  });

  it('grants S3 on the location of the folder table and the storageLocation of the Glue table, nothing for S3 Tables or the REST table', () => {
    const objects = (step: Step): string[] =>
      grants(resources, step, 's3')
        .filter((g) => !g.startsWith('s3:ListBucket'))
        .map((g) => g.split(' → ')[1]);
    for (const step of STEPS) {
      expect(objects(step), step).toEqual(['arn:aws:s3:::lake-a/warehouse/db/events/*', 'arn:aws:s3:::lake-g/warehouse/sales.db/orders/*']);
    }
    const lists = grants(resources, 'plan', 's3').filter((g) => g.startsWith('s3:ListBucket'));
    expect(lists).toEqual([
      `s3:ListBucket → arn:aws:s3:::lake-a if ${JSON.stringify({ StringLike: { 's3:prefix': ['warehouse/db/events', 'warehouse/db/events/*'] } })}`,
      `s3:ListBucket → arn:aws:s3:::lake-g if ${JSON.stringify({ StringLike: { 's3:prefix': ['warehouse/sales.db/orders', 'warehouse/sales.db/orders/*'] } })}`,
    ]);
  });

  it('hands the functions every table by name, notifications come from the Glue table\'s storage location, retention skips the S3 Tables table', () => {
    const trigger = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Description === 'packice maintenance: trigger')!;
    const env = (trigger.Properties.Environment as { Variables: Record<string, string> }).Variables;
    expect(JSON.parse(env.PACKICE_TABLES)).toEqual([
      { location: 's3://lake-a/warehouse/db/events' },
      { location: 'glue://sales/orders', storageLocation: 's3://lake-g/warehouse/sales.db/orders', retention: { retainLast: 3 } },
      { location: `s3tables://${BUCKET_ARN}/sales/clicks` },
      { location: 'rest+https://catalog.example.com/v1/sales/returns' },
    ]);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        detail: {
          bucket: { name: ['lake-a', 'lake-g'] },
          object: { key: [{ wildcard: 'warehouse/db/events/metadata/*.metadata.json' }, { wildcard: 'warehouse/sales.db/orders/metadata/*.metadata.json' }] },
        },
      },
    });
    const schedules = Object.values(resources).filter((r) => r.Type === 'AWS::Scheduler::Schedule');
    const inputs = schedules.map((s) => JSON.parse((s.Properties.Target as { Input: string }).Input) as { tables: unknown });
    expect(inputs).toContainEqual({
      tables: [
        { table: { location: 's3://lake-a/warehouse/db/events' } },
        { table: { location: 'glue://sales/orders' }, retention: { retainLast: 3 } },
        { table: { location: 'rest+https://catalog.example.com/v1/sales/returns' } },
      ],
    });
  });

  it('with S3 Tables tables only: no notification rule, no S3 grant on any table bucket', () => {
    const only = synth([{ location: `s3tables://${BUCKET_ARN}/sales/clicks` }]);
    only.template.resourceCountIs('AWS::Events::Rule', 0);
    for (const step of STEPS) {
      expect(grants(only.resources, step, 's3'), step).toEqual([]);
    }
    expect(grants(only.resources, 'commit', 's3tables')).toHaveLength(1);
  });

  it('grants a REST table signed for glue or s3tables the calls of the catalog behind it, and hands the functions its properties by URI', () => {
    const glueRest = 'rest+https://glue.eu-west-1.amazonaws.com/iceberg/sales/orders';
    const s3tablesRest = 'rest+https://s3tables.eu-west-1.amazonaws.com/iceberg/sales/clicks';
    const signed = synth([
      { location: glueRest, storageLocation: 's3://lake-g/warehouse/sales.db/orders', catalogProperties: { 'rest.signing-name': 'glue', 'rest.signing-region': 'eu-west-1' } },
      { location: s3tablesRest, catalogProperties: { 'rest.signing-name': 's3tables', 'rest.signing-region': 'eu-west-1', warehouse: BUCKET_ARN } },
    ]);
    const table = `${BUCKET_ARN}/table/*`;
    for (const step of STEPS) {
      const commits = step === 'commit' || step === 'expire';
      const catalog = 'arn:aws:glue:<AWS::Region>:<AWS::AccountId>:catalog';
      expect(grants(signed.resources, step, 'glue'), step).toEqual([`glue:GetCatalog → ${catalog}`, `${commits ? 'glue:GetTable,glue:UpdateTable' : 'glue:GetTable'} → ${GLUE_RESOURCES}`]);
      const s3tables = grants(signed.resources, step, 's3tables');
      expect(s3tables, step).toContain(`s3tables:GetTableBucket → ${BUCKET_ARN}`);
      if (step === 'commit') {
        expect(s3tables).toContain(
          `s3tables:GetTableData,s3tables:GetTableMetadataLocation,s3tables:PutTableData,s3tables:UpdateTableMetadataLocation → ${table}${S3TABLES_CONDITION}`,
        );
      }
    }
    const fn = Object.values(signed.resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Description === 'packice maintenance: commit')!;
    const env = (fn.Properties.Environment as { Variables: Record<string, string> }).Variables;
    expect(JSON.parse(env.PACKICE_REST_CATALOGS)).toEqual({
      'https://glue.eu-west-1.amazonaws.com/iceberg': { 'rest.signing-name': 'glue', 'rest.signing-region': 'eu-west-1' },
      'https://s3tables.eu-west-1.amazonaws.com/iceberg': { 'rest.signing-name': 's3tables', 'rest.signing-region': 'eu-west-1', warehouse: BUCKET_ARN },
    });
    // S3 Tables behind the REST endpoint removes files itself: no retention run for it.
    const schedules = Object.values(signed.resources).filter((r) => r.Type === 'AWS::Scheduler::Schedule');
    const inputs = schedules.map((x) => JSON.parse((x.Properties.Target as { Input: string }).Input) as { tables: unknown });
    expect(inputs).toContainEqual({ tables: [{ table: { location: glueRest } }] });
  });

  it('refuses secrets, unknown signing services and a bad S3 Tables warehouse in catalogProperties', () => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'BadRest');
    const build = (): IcebergMaintenance =>
      new IcebergMaintenance(stack, 'Maintenance', {
        tables: [
          { location: 'rest+https://cat.example.com/a/t1', catalogProperties: { token: 'secret' } },
          { location: 'rest+https://cat.example.com/a/t2', catalogProperties: { 'rest.signing-name': 'execute-api' } },
          { location: 'rest+https://cat.example.com/a/t3', catalogProperties: { 'rest.signing-name': 's3tables', warehouse: 'lake' } },
          { location: 's3://lake/t', catalogProperties: { warehouse: 'w' } },
        ],
      });
    expect(build).toThrow(
      [
        'IcebergMaintenance BadRest/Maintenance: invalid props:',
        "  - table \"rest+https://cat.example.com/a/t1\": catalogProperties.token would be stored in the functions' environment: sign with their role instead (rest.signing-name)",
        '  - table "rest+https://cat.example.com/a/t2": rest.signing-name execute-api: the construct grants the calls of glue or s3tables only',
        '  - table "rest+https://cat.example.com/a/t3": an s3tables REST catalog\'s warehouse is its table bucket ARN (arn:aws:s3tables:<region>:<account>:bucket/<name>), got lake',
        '  - table "s3://lake/t": catalogProperties are for rest+https:// tables',
      ].join('\n'),
    );
  });

  it('says what a catalog table lacks or must not have, with the other problems', () => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Bad');
    const build = (): IcebergMaintenance =>
      new IcebergMaintenance(stack, 'Maintenance', {
        tables: [
          { location: 'glue://sales/orders' },
          { location: 'glue://sales/items', storageLocation: 'https://lake/items' },
          { location: `s3tables://${BUCKET_ARN}/sales/clicks`, storageLocation: 's3://lake/x' },
          { location: `s3tables://${BUCKET_ARN}/sales/views`, retention: { retainLast: 2 } },
          { location: 's3://lake/t', storageLocation: 's3://lake/u' },
          { location: 'glue://sales' },
          { location: 'glue://sales/dup', storageLocation: 's3://lake/dup' },
          { location: 'glue://sales/dup', storageLocation: 's3://lake/dup2' },
        ],
      });
    expect(build).toThrow(
      [
        'IcebergMaintenance Bad/Maintenance: invalid props:',
        '  - table "glue://sales/orders": a Glue table needs storageLocation, the S3 URI its files are under (its Iceberg location, the Glue table\'s StorageDescriptor.Location)',
        '  - table "glue://sales/items": storageLocation: table location "https://lake/items" is not an S3 URI (expected s3://bucket/prefix)',
        `  - table "s3tables://${BUCKET_ARN}/sales/clicks": an S3 Tables table needs no storageLocation: its files are reached through s3tables:GetTableData and PutTableData`,
        `  - table "s3tables://${BUCKET_ARN}/sales/views": S3 Tables expires snapshots and removes unreferenced files itself (its table maintenance settings), and refuses our deletes: no retention for it`,
        '  - table "s3://lake/t": storageLocation is for catalog tables; a location names where the files are already',
        '  - glue://sales: not a table name: expected glue://<database>/<table>',
        '  - table location "glue://sales/dup" is listed twice',
      ].join('\n'),
    );
  });
});
