/**
 * A local stand-in for the Distributed Map state, which aws-local-stepfunctions (3.0.0) runs as an
 * inline Map: it has no ItemReader and no ResultWriter. The stand-in does what the service does
 * with the fields the definition gives, on the same S3 objects:
 * - ItemReader `arn:aws:states:::s3:getObject` with `ReaderConfig.InputType` JSON: reads the
 *   object its (resolved) Parameters name, a JSON array of items (`MaxItems` honoured);
 * - ItemSelector with `$$.Map.Item.Index` / `$$.Map.Item.Value`; one child execution per item,
 *   at most MaxConcurrency at once, running the ItemProcessor through the same local engine;
 * - ToleratedFailurePercentage / ToleratedFailureCount: above them the state fails with
 *   `States.ExceedToleratedFailureThreshold`;
 * - ResultWriter `arn:aws:states:::s3:putObject` to `<Prefix>/<map run id>/`: `SUCCEEDED_0.json`,
 *   `FAILED_0.json` (the children's records as the service writes them, input and output as JSON
 *   text) and `manifest.json`; the state's result is `{MapRunArn, ResultWriterDetails: {Bucket, Key}}`.
 * Anything else a Distributed Map may carry (ItemBatcher, CSV or manifest readers, a WriterConfig
 * transformation, no ResultWriter) is refused rather than imitated.
 */
import { randomUUID } from 'node:crypto';
import { StateMachine } from 'aws-local-stepfunctions';
import type { FileIO } from '../../lib/io/file-io.js';
import type { Json } from './cfn-template.js';

type JsonObject = { [k: string]: Json };

/** A child execution's end, as the engine reports it. */
export type ChildOutcome = { readonly output: Json } | { readonly error: string; readonly cause: string };

export interface DistributedMapRun {
  /** The Map state's name and definition, as synthesized. */
  readonly name: string;
  readonly state: JsonObject;
  /** Where the service reads items and writes results (moto). */
  readonly io: FileIO;
  /** The parent execution's ARN, e.g. `arn:aws:states:…:execution:<machine>:<name>`. */
  readonly executionArn: string;
  readonly stateMachineArn: string;
  /** Runs the ItemProcessor (without ProcessorConfig) on one input as a child execution. */
  runChild(definition: JsonObject, input: Json, context: JsonObject): Promise<ChildOutcome>;
}

/** The Map state's fields the stand-in implements; the rest of a Map is the parent engine's. */
const HANDLED = new Set(['Type', 'ItemReader', 'ItemSelector', 'ItemProcessor', 'MaxConcurrency', 'ToleratedFailurePercentage', 'ToleratedFailureCount', 'ResultWriter', 'Label', 'Comment']);
/** Fields the parent engine applies to the stand-in's Task exactly as to the Map. */
export const MAP_FIELDS_KEPT = ['InputPath', 'ResultSelector', 'ResultPath', 'OutputPath', 'Next', 'End', 'Retry', 'Catch'] as const;

export function isDistributedMap(state: JsonObject): boolean {
  const processor = state.ItemProcessor as JsonObject | undefined;
  return state.Type === 'Map' && (processor?.ProcessorConfig as JsonObject | undefined)?.Mode === 'DISTRIBUTED';
}

/** Evaluates a payload template (`"x.$": "$.path"`) the way the engine does, by running it in a Pass state. */
export async function evaluateTemplate(template: Json, input: Json, context: JsonObject = {}): Promise<Json> {
  const machine = new StateMachine(
    { StartAt: 'Evaluate', States: { Evaluate: { Type: 'Pass', Parameters: template as JsonObject, End: true } } },
    { validationOptions: { noValidate: true } },
  );
  return (await machine.run(input as JsonObject, { context }).result) as Json;
}

export async function runDistributedMap(run: DistributedMapRun, input: Json): Promise<Json> {
  const { state, name } = run;
  const unsupported = Object.keys(state).filter((k) => !HANDLED.has(k) && !(MAP_FIELDS_KEPT as readonly string[]).includes(k));
  if (unsupported.length > 0) throw new Error(`Distributed Map "${name}": the local stand-in does not implement ${unsupported.join(', ')}`);
  const items = await readItems(run, input);
  const mapRunId = randomUUID();
  const label = typeof state.Label === 'string' ? state.Label : name;
  const machineName = run.stateMachineArn.split(':').pop() ?? 'machine';
  const mapRunArn = `${run.stateMachineArn.replace(':stateMachine:', ':mapRun:')}/${label}:${mapRunId}`;
  const childMachineArn = `${run.stateMachineArn}/${label}`;
  const { ProcessorConfig: _config, ...childDefinition } = state.ItemProcessor as JsonObject;

  const records: ChildRecord[] = new Array(items.length);
  const limit = typeof state.MaxConcurrency === 'number' && state.MaxConcurrency > 0 ? state.MaxConcurrency : items.length;
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) {
      const childInput =
        state.ItemSelector === undefined ? items[i] : await evaluateTemplate(state.ItemSelector, input, { Map: { Item: { Index: i, Value: items[i] } } });
      const childName = randomUUID();
      const started = new Date().toISOString();
      const outcome = await run.runChild(childDefinition, childInput, {
        Execution: { Id: `${childMachineArn.replace(':stateMachine:', ':execution:')}:${childName}`, Name: childName },
        StateMachine: { Id: childMachineArn, Name: `${machineName}/${label}` },
      });
      records[i] = {
        ExecutionArn: `${run.executionArn}/${label}:${childName}`,
        Input: JSON.stringify(childInput),
        InputDetails: { Included: true },
        Name: childName,
        ...('output' in outcome
          ? { Output: JSON.stringify(outcome.output), OutputDetails: { Included: true }, Status: 'SUCCEEDED' }
          : { Error: outcome.error, Cause: outcome.cause, Status: 'FAILED' }),
        StartDate: started,
        StateMachineArn: childMachineArn,
        StopDate: new Date().toISOString(),
      };
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));

  const failed = records.filter((r) => r.Status === 'FAILED');
  checkTolerance(state, name, failed.length, records.length);
  if (state.ResultWriter === undefined) {
    if (failed.length > 0) throw new Error(`Distributed Map "${name}": failed children without a ResultWriter are not imitated`);
    return records.map((r) => JSON.parse(r.Output ?? 'null') as Json);
  }
  return writeResults(run, input, mapRunArn, mapRunId, records);
}

interface ChildRecord {
  readonly ExecutionArn: string;
  readonly Input: string;
  readonly InputDetails: { readonly Included: boolean };
  readonly Name: string;
  readonly Output?: string;
  readonly OutputDetails?: { readonly Included: boolean };
  readonly Error?: string;
  readonly Cause?: string;
  readonly Status: 'SUCCEEDED' | 'FAILED';
  readonly StartDate: string;
  readonly StateMachineArn: string;
  readonly StopDate: string;
}

async function readItems(run: DistributedMapRun, input: Json): Promise<Json[]> {
  const reader = run.state.ItemReader as JsonObject | undefined;
  if (reader === undefined) throw new Error(`Distributed Map "${run.name}": items from ItemsPath are not imitated, only an ItemReader`);
  if (typeof reader.Resource !== 'string' || !/^arn:[^:]+:states:::s3:getObject$/.test(reader.Resource)) {
    throw new Error(`Distributed Map "${run.name}": ItemReader ${String(reader.Resource)} is not imitated`);
  }
  const config = (reader.ReaderConfig ?? {}) as JsonObject;
  if (config.InputType !== 'JSON') throw new Error(`Distributed Map "${run.name}": ReaderConfig.InputType ${String(config.InputType)} is not imitated`);
  const { Bucket, Key } = (await evaluateTemplate(reader.Parameters ?? {}, input)) as { Bucket?: unknown; Key?: unknown };
  if (typeof Bucket !== 'string' || typeof Key !== 'string') throw new Error(`Distributed Map "${run.name}": ItemReader resolved to no Bucket and Key`);
  const items: unknown = JSON.parse(new TextDecoder().decode(await run.io.read(`s3://${Bucket}/${Key}`)));
  // The service fails the Map run when the object is not a JSON array.
  if (!Array.isArray(items)) throw Object.assign(new Error(`s3://${Bucket}/${Key} is not a JSON array`), { name: 'States.ItemReaderFailed' });
  const max = typeof config.MaxItems === 'number' && config.MaxItems > 0 ? config.MaxItems : items.length;
  return (items as Json[]).slice(0, max);
}

function checkTolerance(state: JsonObject, name: string, failed: number, total: number): void {
  const percentage = typeof state.ToleratedFailurePercentage === 'number' ? state.ToleratedFailurePercentage : undefined;
  const count = typeof state.ToleratedFailureCount === 'number' ? state.ToleratedFailureCount : undefined;
  // No tolerance given: any failed child fails the state.
  const tolerated =
    failed === 0 || (percentage !== undefined && (failed / total) * 100 <= percentage) || (count !== undefined && failed <= count);
  if (!tolerated) {
    throw Object.assign(new Error(`Distributed Map "${name}": ${failed} of ${total} child executions failed`), { name: 'States.ExceedToleratedFailureThreshold' });
  }
}

async function writeResults(run: DistributedMapRun, input: Json, mapRunArn: string, mapRunId: string, records: ChildRecord[]): Promise<Json> {
  const writer = run.state.ResultWriter as JsonObject;
  if (typeof writer.Resource !== 'string' || !/^arn:[^:]+:states:::s3:putObject$/.test(writer.Resource)) {
    throw new Error(`Distributed Map "${run.name}": ResultWriter ${String(writer.Resource)} is not imitated`);
  }
  const writerConfig = writer.WriterConfig as JsonObject | undefined;
  if (writerConfig !== undefined && (writerConfig.Transformation ?? 'NONE') !== 'NONE') {
    throw new Error(`Distributed Map "${run.name}": WriterConfig ${JSON.stringify(writerConfig)} is not imitated`);
  }
  const { Bucket, Prefix } = (await evaluateTemplate(writer.Parameters ?? {}, input)) as { Bucket?: unknown; Prefix?: unknown };
  if (typeof Bucket !== 'string') throw new Error(`Distributed Map "${run.name}": ResultWriter resolved to no Bucket`);
  const folder = [typeof Prefix === 'string' ? Prefix.replace(/\/+$/, '') : '', mapRunId].filter((p) => p !== '').join('/');
  const put = async (key: string, value: unknown): Promise<number> => {
    const bytes = new TextEncoder().encode(JSON.stringify(value));
    await run.io.write(`s3://${Bucket}/${key}`, bytes);
    return bytes.byteLength;
  };
  const files: Record<'SUCCEEDED' | 'FAILED' | 'PENDING', { Key: string; Size: number }[]> = { FAILED: [], PENDING: [], SUCCEEDED: [] };
  for (const status of ['SUCCEEDED', 'FAILED'] as const) {
    const these = records.filter((r) => r.Status === status);
    if (these.length === 0) continue;
    const key = `${folder}/${status}_0.json`;
    files[status].push({ Key: key, Size: await put(key, these) });
  }
  const manifestKey = `${folder}/manifest.json`;
  await put(manifestKey, { DestinationBucket: Bucket, MapRunArn: mapRunArn, ResultFiles: files });
  return { MapRunArn: mapRunArn, ResultWriterDetails: { Bucket, Key: manifestKey } };
}
