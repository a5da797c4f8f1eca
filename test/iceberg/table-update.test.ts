import { describe, expect, it } from 'vitest';
import { CommitConflictError } from '../../lib/errors.js';
import { checkRequirements, type TableRequirement } from '../../lib/iceberg/table-update.js';
import { newTableMetadata } from '../../lib/table/operations.js';

const base = newTableMetadata('/tmp/t', {
  schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: true, type: { type: 'long' } }] },
  partitionFields: [{ sourceId: 1, name: 'id_bucket', transform: { kind: 'bucket', numBuckets: 4 } }],
});

/** Every requirement kind of the REST spec, each with a value the base does not have. */
const FAILING: readonly TableRequirement[] = [
  { type: 'assert-create' },
  { type: 'assert-table-uuid', uuid: '00000000-0000-0000-0000-000000000000' },
  { type: 'assert-ref-snapshot-id', ref: 'main', snapshotId: 7n },
  { type: 'assert-last-assigned-field-id', lastAssignedFieldId: 9 },
  { type: 'assert-current-schema-id', currentSchemaId: 3 },
  { type: 'assert-last-assigned-partition-id', lastAssignedPartitionId: 1009 },
  { type: 'assert-default-spec-id', defaultSpecId: 2 },
  { type: 'assert-default-sort-order-id', defaultSortOrderId: 5 },
];

describe('table requirements', () => {
  it('hold on the base they were taken from', () => {
    expect(() =>
      checkRequirements(base, [
        { type: 'assert-table-uuid', uuid: base.tableUuid },
        { type: 'assert-ref-snapshot-id', ref: 'main', snapshotId: null },
        { type: 'assert-last-assigned-field-id', lastAssignedFieldId: 1 },
        { type: 'assert-current-schema-id', currentSchemaId: 0 },
        { type: 'assert-last-assigned-partition-id', lastAssignedPartitionId: 1000 },
        { type: 'assert-default-spec-id', defaultSpecId: 0 },
        { type: 'assert-default-sort-order-id', defaultSortOrderId: 0 },
      ]),
    ).not.toThrow();
    expect(() => checkRequirements(undefined, [{ type: 'assert-create' }])).not.toThrow();
  });

  for (const r of FAILING) {
    it(`${r.type}: a failure is a retryable conflict that names the requirement`, () => {
      const err = (() => {
        try {
          checkRequirements(base, [r], 'glue://db/t');
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(CommitConflictError);
      expect((err as CommitConflictError).requirement).toBe(r.type);
      expect((err as CommitConflictError).retryable).toBe(true);
      expect((err as CommitConflictError).message).toMatch(new RegExp(`^glue://db/t: Requirement failed \\(${r.type}\\): .*expected .*, found `));
    });
  }

  it('a requirement other than assert-create fails on a table that does not exist', () => {
    expect(() => checkRequirements(undefined, [{ type: 'assert-table-uuid', uuid: base.tableUuid }])).toThrow(/the table must exist/);
  });
});
