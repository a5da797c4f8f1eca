/** The example deployment: one PackiceCompaction for the table locations given as context. */
import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct, Node } from 'constructs';
import { PackiceCompaction, type PackiceCompactionProps } from './packice-construct.js';

/** The context key: a JSON array of S3 URIs, or a comma-separated list (`-c tableLocations=s3://b/t1,s3://b/t2`). */
export const TABLE_LOCATIONS_CONTEXT = 'tableLocations';

export interface PackiceStackProps extends StackProps {
  /**
   * Overrides of the construct's props.
   * @default the construct's defaults, with table locations from context
   */
  readonly compaction?: Partial<PackiceCompactionProps>;
}

export class PackiceStack extends Stack {
  public readonly compaction: PackiceCompaction;

  constructor(scope: Construct, id: string, props: PackiceStackProps = {}) {
    super(scope, id, props);
    this.compaction = new PackiceCompaction(this, 'Compaction', {
      tableLocations: tableLocationsFromContext(this.node),
      ...props.compaction,
    });
  }
}

/** The table locations in context, as a list; throws with how to set them when absent. */
export function tableLocationsFromContext(node: Node): string[] {
  const value: unknown = node.tryGetContext(TABLE_LOCATIONS_CONTEXT);
  if (Array.isArray(value)) return value.map((v) => String(v));
  if (typeof value === 'string') {
    const text = value.trim();
    if (text.startsWith('[')) {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return parsed.map((v) => String(v));
    }
    return text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  }
  throw new Error(
    `no table locations: pass them as context, e.g. \`cdk synth -c ${TABLE_LOCATIONS_CONTEXT}=s3://bucket/warehouse/db/table\` ` +
      `(comma-separated, or a JSON array under "context" in cdk.json)`,
  );
}
