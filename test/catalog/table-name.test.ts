import { describe, expect, it } from 'vitest';
import { formatTableName, isCatalogName, parseTableName } from '../../lib/catalog/table-name.js';
import { InvalidArgumentError } from '../../lib/errors.js';

const ARN = 'arn:aws:s3tables:us-east-1:111122223333:bucket/analytics';

describe('table names', () => {
  it.each([
    ['/data/warehouse/t', { kind: 'location', location: '/data/warehouse/t' }],
    ['s3://bucket/warehouse/t', { kind: 'location', location: 's3://bucket/warehouse/t' }],
    ['glue://sales/orders', { kind: 'glue', database: 'sales', table: 'orders' }],
    [`s3tables://${ARN}/sales/orders`, { kind: 's3tables', tableBucketArn: ARN, namespace: 'sales', table: 'orders' }],
    ['rest+https://catalog.example.com/sales/orders', { kind: 'rest', uri: 'https://catalog.example.com', namespace: ['sales'], table: 'orders' }],
    [
      'rest+https://glue.us-east-1.amazonaws.com/iceberg/eu.sales/orders',
      { kind: 'rest', uri: 'https://glue.us-east-1.amazonaws.com/iceberg', namespace: ['eu', 'sales'], table: 'orders' },
    ],
    ['rest+http://127.0.0.1:8181/ns/t', { kind: 'rest', uri: 'http://127.0.0.1:8181', namespace: ['ns'], table: 't' }],
    ['rest+http://127.0.0.1:8181/v1%2E2.b%20c/t', { kind: 'rest', uri: 'http://127.0.0.1:8181', namespace: ['v1.2', 'b c'], table: 't' }],
  ])('%s', (name, parsed) => {
    expect(parseTableName(name)).toEqual(parsed);
    expect(formatTableName(parseTableName(name))).toBe(name);
    expect(isCatalogName(name)).toBe(parsed.kind !== 'location');
  });

  it.each(['glue://sales', 'glue://sales/orders/extra', 's3tables://bucket/sales/orders', `s3tables://${ARN}/orders`, 'rest+https://host/orders'])(
    'refuses %s, naming it',
    (name) => {
      expect(() => parseTableName(name)).toThrow(InvalidArgumentError);
      expect(() => parseTableName(name)).toThrow(name);
    },
  );
});
