/** The example deployment: one IcebergMaintenance for the table locations given as context. */
import { Annotations, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct, Node } from 'constructs';
import { IcebergMaintenance, type IcebergMaintenanceProps } from './iceberg-maintenance.js';

/** The context key: a JSON array of S3 URIs, or a comma-separated list (`-c tableLocations=s3://b/t1,s3://b/t2`). */
export const TABLE_LOCATIONS_CONTEXT = 'tableLocations';

/**
 * What the example synthesizes for when no locations are given, so `npx cdk synth` works right
 * after `npm ci`. `amzn-s3-demo-bucket` is the name AWS reserves for examples: nobody owns it.
 */
export const EXAMPLE_TABLE_LOCATIONS: readonly string[] = ['s3://amzn-s3-demo-bucket/warehouse/db/events'];

export interface PackiceStackProps extends StackProps {
  /**
   * Overrides of the construct's props.
   * @default the construct's defaults, with table locations from context
   */
  readonly maintenance?: Partial<IcebergMaintenanceProps>;
}

export class PackiceStack extends Stack {
  public readonly maintenance: IcebergMaintenance;

  constructor(scope: Construct, id: string, props: PackiceStackProps = {}) {
    super(scope, id, props);
    const fromContext = tableLocationsFromContext(this.node);
    if (fromContext === undefined && props.maintenance?.tables === undefined) {
      Annotations.of(this).addWarningV2(
        'packice:exampleTableLocations',
        `no table locations given: synthesized for the example ${EXAMPLE_TABLE_LOCATIONS.join(', ')}; ` +
          `deploy with \`-c ${TABLE_LOCATIONS_CONTEXT}=s3://bucket/warehouse/db/table[,…]\``,
      );
    }
    this.maintenance = new IcebergMaintenance(this, 'Maintenance', {
      tables: (fromContext ?? EXAMPLE_TABLE_LOCATIONS).map((location) => ({ location })),
      ...props.maintenance,
    });
  }
}

/** The table locations in context, as a list, or undefined when none are given. */
export function tableLocationsFromContext(node: Node): string[] | undefined {
  const value: unknown = node.tryGetContext(TABLE_LOCATIONS_CONTEXT);
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.map((v) => String(v));
  if (typeof value === 'string') {
    const text = value.trim();
    if (text.startsWith('[')) {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return parsed.map((v) => String(v));
    }
    return text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  }
  // A number or object: let the construct's validation say what is wrong with it.
  return [String(value)];
}
