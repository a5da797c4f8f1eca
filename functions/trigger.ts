/**
 * Lambda: an S3 "Object Created" event for a table's `metadata/*.metadata.json` (through
 * EventBridge), or `{"tables":"all"}` from the nightly schedule → for each table concerned, a
 * threshold check from its metadata and, when there is work, one execution of the compaction
 * state machine named after the table and snapshot. A name Step Functions already has is
 * success: that commit's compaction was started before.
 */
import { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { MAINTAINED_TABLES_ENV, parseMaintainedTables, tableOfMetadataObject } from '../lib/pipeline/maintained-table.js';
import { triggerTables, type ExecutionStarter, type TriggerOutcome } from '../lib/pipeline/trigger-step.js';
import { parseTriggerEvent } from './event.js';
import { logStep, type LambdaContext } from './log-step.js';

/** The environment variable naming the compaction state machine; the construct sets it. */
export const STATE_MACHINE_ARN_ENV = 'PACKICE_STATE_MACHINE_ARN';

const sfn = new SFNClient({});

const start: ExecutionStarter = async (name, input) => {
  try {
    const out = await sfn.send(new StartExecutionCommand({ stateMachineArn: process.env[STATE_MACHINE_ARN_ENV], name, input: JSON.stringify(input) }));
    return { executionArn: out.executionArn, alreadyStarted: false };
  } catch (e) {
    if (e instanceof ExecutionAlreadyExists) return { alreadyStarted: true };
    throw e;
  }
};

export async function handler(event: unknown, context?: LambdaContext): Promise<TriggerOutcome[]> {
  return logStep('trigger', context, async () => {
    const request = parseTriggerEvent(event);
    const tables = parseMaintainedTables(process.env[MAINTAINED_TABLES_ENV]);
    const concerned = request.kind === 'all' ? tables : [tableOfMetadataObject(tables, request.bucket, request.key)].filter((t) => t !== undefined);
    const outcomes = await triggerTables(concerned, start);
    return {
      result: outcomes,
      log: { tables: outcomes.map((o) => o.table), actions: outcomes.map((o) => o.action), ...(request.kind === 'all' ? {} : { key: request.key }) },
    };
  });
}
