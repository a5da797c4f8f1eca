/**
 * The package's entry for CDK apps (`import { IcebergMaintenance } from 'packice'`): the
 * construct, its props, and the example stack.
 */
export {
  IcebergMaintenance,
  MAINTENANCE_DEFAULTS,
  type IcebergMaintenanceProps,
  type MaintainedTableProps,
  type RetentionProps,
} from './iceberg-maintenance.js';
export { PackiceStack, type PackiceStackProps } from './packice-stack.js';
export type { CompactionPolicy } from '../lib/compaction/messages.js';
