import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidFileError, UnsupportedError } from '../../lib/errors.js';
import { parseJson, toPlain } from '../../lib/iceberg/json.js';
import {
  currentSnapshot, parseTableMetadata, serializeTableMetadata,
} from '../../lib/iceberg/table-metadata.js';
import { applyUpdates, checkRequirements } from '../../lib/iceberg/table-update.js';
import { FIXTURE_TABLES, FIXTURES } from '../support/fixtures.js';

const metadataFiles = FIXTURE_TABLES.flatMap((table) =>
  readdirSync(join(FIXTURES, table, 'metadata'))
    .filter((f) => f.endsWith('.metadata.json'))
    .map((f) => join(FIXTURES, table, 'metadata', f)),
);

describe('table metadata', () => {
  it('finds the fixture metadata files', () => {
    expect(metadataFiles.length).toBe(11);
  });

  it.each(metadataFiles)('round-trips %s without losing a field or a digit', (file) => {
    const text = readFileSync(file, 'utf8');
    const m = parseTableMetadata(text, file);
    const written = serializeTableMetadata(m);
    // Same JSON content, compared as lossless values (key order may differ).
    const norm = (t: string): unknown => sortKeys(toPlain(parseJson(t)));
    const original = norm(text) as Record<string, unknown>;
    const again = norm(written) as Record<string, unknown>;
    // v1 metadata without refs gains the implicit main branch, which Java also writes.
    if (original.refs === undefined) delete again.refs;
    expect(again).toEqual(original);
    expect(parseTableMetadata(written, file)).toEqual(m);
  });

  it('reads the v3 fixture with row lineage and big snapshot ids', () => {
    const file = join(FIXTURES, 'iceberg_v3_deletion_vectors/metadata/v3.metadata.json');
    const m = parseTableMetadata(readFileSync(file, 'utf8'), file);
    expect(m.formatVersion).toBe(3);
    expect(m.nextRowId).toBe(5n);
    expect(m.currentSnapshotId).toBe(3685752423136077685n);
    const s = currentSnapshot(m)!;
    expect(s.parentSnapshotId).toBe(2700858159721908397n);
    expect(s.firstRowId).toBe(5n);
    expect(s.addedRows).toBe(0n);
    expect(s.summary.operation).toBe('delete');
    expect(m.refs.main).toEqual({ snapshotId: 3685752423136077685n, type: 'branch' });
  });

  it('keeps unknown fields and big longs through a round trip', () => {
    const file = join(FIXTURES, 'iceberg_v3_deletion_vectors/metadata/v3.metadata.json');
    const text = readFileSync(file, 'utf8').replace(/}\s*$/, ',"future-field":{"a":[1,2.50],"big":9223372036854775807}}');
    const out = serializeTableMetadata(parseTableMetadata(text, 'x.json'));
    expect(out).toContain('"future-field":{"a":[1,2.50],"big":9223372036854775807}');
    expect(out).toContain('"current-snapshot-id":3685752423136077685');
  });

  it('names the file when the JSON is truncated', () => {
    const file = join(FIXTURES, 'iceberg_v3_deletion_vectors/metadata/v3.metadata.json');
    const text = readFileSync(file, 'utf8');
    expect(() => parseTableMetadata(text.slice(0, 500), '/t/metadata/v3.metadata.json')).toThrowError(
      /\/t\/metadata\/v3.metadata.json: not valid JSON/,
    );
    expect(() => parseTableMetadata(text.slice(0, 500), 'f')).toThrow(InvalidFileError);
  });

  it('rejects an unknown format version and missing required fields', () => {
    const file = join(FIXTURES, 'iceberg_v3_deletion_vectors/metadata/v3.metadata.json');
    const json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(() => parseTableMetadata(JSON.stringify({ ...json, 'format-version': 4 }), 'm.json')).toThrow(UnsupportedError);
    expect(() => parseTableMetadata(JSON.stringify({ ...json, 'format-version': 4 }), 'm.json')).toThrowError(
      /m.json: format-version 4 is not supported/,
    );
    const { 'next-row-id': _drop, ...noRowId } = json;
    expect(() => parseTableMetadata(JSON.stringify(noRowId), 'm.json')).toThrowError(
      /m.json: missing required field "next-row-id" for format version 3/,
    );
    expect(() => parseTableMetadata('[1,2]', 'm.json')).toThrow(InvalidFileError);
  });

  it('applies a snapshot: sequence numbers, row ids, logs and refs', () => {
    const file = join(FIXTURES, 'iceberg_v3_deletion_vectors/metadata/v3.metadata.json');
    const base = parseTableMetadata(readFileSync(file, 'utf8'), file);
    const snapshot = {
      snapshotId: 123n, parentSnapshotId: base.currentSnapshotId!, sequenceNumber: 3n, timestampMs: base.lastUpdatedMs + 10,
      manifestList: 'x.avro', summary: { operation: 'append' }, schemaId: 0, firstRowId: 5n, addedRows: 7n,
    };
    const next = applyUpdates(
      base,
      [{ action: 'add-snapshot', snapshot }, { action: 'set-snapshot-ref', refName: 'main', snapshotId: 123n, type: 'branch' }],
      { baseMetadataLocation: file, nowMs: base.lastUpdatedMs + 20 },
    );
    expect(next.currentSnapshotId).toBe(123n);
    expect(next.lastSequenceNumber).toBe(3n);
    expect(next.nextRowId).toBe(12n);
    expect(next.snapshotLog.at(-1)).toEqual({ timestampMs: base.lastUpdatedMs + 10, snapshotId: 123n });
    expect(next.metadataLog.at(-1)).toEqual({ timestampMs: base.lastUpdatedMs, metadataFile: file });
    expect(() => checkRequirements(next, [{ type: 'assert-ref-snapshot-id', ref: 'main', snapshotId: base.currentSnapshotId }])).toThrowError(
      /branch main snapshot: expected 3685752423136077685, found 123/,
    );
    expect(() =>
      applyUpdates(base, [{ action: 'add-snapshot', snapshot: { ...snapshot, firstRowId: 4n } }]),
    ).toThrowError(/first-row-id is behind table next-row-id: 4 < 5/);
  });
});

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]));
  }
  return v;
}
