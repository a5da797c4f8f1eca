/**
 * The state machines a CDK stack synthesizes, run locally in aws-local-stepfunctions against
 * moto S3, every Lambda task bound to the function's real code: the esbuild bundle CDK staged
 * in the cloud assembly, called with the environment the template gives the function. What is
 * local, and how:
 * - The template's intrinsics are resolved to names and ARNs in one made-up account
 *   (cfn-template.ts); each bucket of the stack is a fresh bucket on moto.
 * - `arn:aws:states:::lambda:invoke` tasks (and plain Lambda ARNs) are bound by the function
 *   their FunctionName resolves to; the task sees `{ExecutedVersion, Payload, StatusCode, …}` as
 *   from Lambda, and a thrown error as Lambda reports it: Error = the error's name (errorType),
 *   Cause = `{"errorType","errorMessage","trace"}`. A task with another resource fails the setup.
 * - The Distributed Map runs in a stand-in on the same S3 objects (distributed-map.ts).
 * - Retry intervals are overridden to 0 ms so tests do not sleep; which errors are retried and
 *   how often is the definition's. A Lambda task without a timeout gets the function's (the
 *   engine would give it 60 s; Step Functions waits until Lambda stops the function).
 * - Step Functions' 256 KiB limit on a state's input and output, which the engine does not
 *   enforce, is checked on every task payload and every state's input and output
 *   (`States.DataLimitExceeded`).
 * - Each function runs in a worker thread of its own (its "container"), with the variables the
 *   Lambda runtime sets, the template's, and AWS_ENDPOINT_URL_S3 pointing at moto.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Stack, Stage, type CfnElement } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { ExecutionError, StateMachine, type RunOptions } from 'aws-local-stepfunctions';
import { S3FileIO } from '../../lib/io/s3.js';
import { CfnResolver, LOCAL_ACCOUNT, LOCAL_REGION, type CfnTemplate, type Json } from './cfn-template.js';
import { MAP_FIELDS_KEPT, isDistributedMap, runDistributedMap, type ChildOutcome } from './distributed-map.js';
import { freshBucket, testS3Endpoint } from './s3.js';

type JsonObject = { [k: string]: Json };

// aws-local-stepfunctions 3 declares Node >= 22: its Task state calls Promise.withResolvers
// (Node 22); the tests run on Node 20.
const promiseStatics = Promise as unknown as { withResolvers?: () => unknown };
promiseStatics.withResolvers ??= () => {
  let resolve!: (value: unknown) => void;
  let reject!: (reason?: unknown) => void;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

/** Step Functions' limit on a state's input or output (and so on a task's payload and result). */
export const STATE_PAYLOAD_LIMIT_BYTES = 256 * 1024;

const LAMBDA_INVOKE = /^arn:[^:]+:states:::lambda:invoke$/;
const LAMBDA_ARN = /^arn:[^:]+:lambda:[^:]+:[0-9]+:function:[^:]+(:[^:]+)?$/;

/** An error as Step Functions matches it in Retry and Catch: `name` is its Error, `message` its Cause. */
class StatesError extends Error {
  constructor(
    name: string,
    cause: string,
    readonly isRetryable = true,
    readonly isCatchable = true,
  ) {
    super(cause);
    this.name = name;
  }
}

/** What a Lambda task gets when the function throws: Error = errorType (the error's name), Cause = Lambda's error JSON. */
function lambdaError(e: unknown): StatesError {
  const error = e instanceof Error ? e : new Error(String(e));
  const trace = (error.stack ?? '').split('\n').slice(1).map((l) => l.trim());
  return new StatesError(error.name, JSON.stringify({ errorType: error.name, errorMessage: error.message, trace }));
}

function dataLimitExceeded(what: string, bytes: number): StatesError {
  // Terminal in Step Functions: States.ALL neither retries nor catches it.
  return new StatesError('States.DataLimitExceeded', `${what} is ${bytes} bytes, over the ${STATE_PAYLOAD_LIMIT_BYTES}-byte limit`, false, false);
}

const sizeOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value ?? null), 'utf8');

/**
 * The function's "container": a worker thread with the function's own environment (what the
 * Lambda runtime sets, then the template's variables), which imports the bundle at the first
 * call and serves calls until the deployment is disposed. Errors come back as Lambda reports
 * them: name (errorType), message and stack.
 */
const CONTAINER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createRequire } = require('node:module');
if (workerData.sourceMaps) process.setSourceMapsEnabled(true);
let handler;
parentPort.on('message', async ({ id, event, context }) => {
  try {
    handler ??= createRequire(workerData.file)(workerData.file)[workerData.exportName];
    if (typeof handler !== 'function') throw new Error(workerData.file + ' exports no function ' + workerData.exportName);
    const ctx = { ...context, getRemainingTimeInMillis: () => Math.max(0, context.deadline - Date.now()) };
    const result = await handler(JSON.parse(event), ctx);
    parentPort.postMessage({ id, result: JSON.stringify(result === undefined ? null : result) });
  } catch (e) {
    const error = e instanceof Error ? e : new Error(String(e));
    parentPort.postMessage({ id, error: { name: error.name, message: error.message, stack: error.stack ?? '' } });
  }
});
`;

interface ContainerReply {
  readonly id: number;
  readonly result?: string;
  readonly error?: { readonly name: string; readonly message: string; readonly stack: string };
}

/** An error the function threw, as its container reports it. */
class FunctionError extends Error {
  constructor(reply: NonNullable<ContainerReply['error']>) {
    super(reply.message);
    this.name = reply.name;
    this.stack = reply.stack;
  }
}

/** One Lambda function of the stack: its bundle in the cloud assembly and its configuration. */
export class LocalFunction {
  private container?: Worker;
  private readonly pending = new Map<number, (reply: ContainerReply) => void>();
  private calls = 0;

  constructor(
    readonly logicalId: string,
    readonly name: string,
    readonly arn: string,
    /** The folder CDK staged the bundle in (`<assembly>/asset.<hash>`). */
    readonly assetDir: string,
    /** `index.handler`: file `index.js`, export `handler`. */
    readonly handlerSpec: string,
    /** The template's variables, resolved. */
    readonly environment: Readonly<Record<string, string>>,
    readonly timeoutSeconds: number,
    readonly memoryMb: number,
    /** What the function reaches for S3 (AWS_ENDPOINT_URL_S3): moto, or the hop before it. */
    private readonly s3Endpoint: string,
  ) {}

  async invoke(payload: Json): Promise<Json> {
    const container = this.start();
    const id = ++this.calls;
    const context = {
      functionName: this.name,
      functionVersion: '$LATEST',
      invokedFunctionArn: this.arn,
      memoryLimitInMB: String(this.memoryMb),
      awsRequestId: randomUUID(),
      logGroupName: `/aws/lambda/${this.name}`,
      logStreamName: 'local',
      deadline: Date.now() + this.timeoutSeconds * 1000,
    };
    const reply = await new Promise<ContainerReply>((resolve) => {
      this.pending.set(id, resolve);
      container.postMessage({ id, event: JSON.stringify(payload ?? null), context });
    });
    if (reply.error) throw new FunctionError(reply.error);
    return JSON.parse(reply.result ?? 'null') as Json;
  }

  async stop(): Promise<void> {
    await this.container?.terminate();
    this.container = undefined;
  }

  private start(): Worker {
    if (this.container) return this.container;
    const dot = this.handlerSpec.lastIndexOf('.');
    const { NODE_OPTIONS: nodeOptions = '', ...variables } = this.environment;
    const container = new Worker(CONTAINER, {
      eval: true,
      workerData: {
        file: join(this.assetDir, `${this.handlerSpec.slice(0, dot)}.js`),
        exportName: this.handlerSpec.slice(dot + 1),
        // The one NODE_OPTIONS flag the construct sets; a worker takes it as a call.
        sourceMaps: nodeOptions.includes('--enable-source-maps'),
      },
      env: {
        ...process.env,
        AWS_LAMBDA_FUNCTION_NAME: this.name,
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(this.memoryMb),
        AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${this.name}`,
        AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
        LAMBDA_TASK_ROOT: this.assetDir,
        AWS_REGION: LOCAL_REGION,
        AWS_DEFAULT_REGION: LOCAL_REGION,
        ...variables,
        AWS_ENDPOINT_URL_S3: this.s3Endpoint,
      },
    });
    container.on('message', (reply: ContainerReply) => {
      this.pending.get(reply.id)?.(reply);
      this.pending.delete(reply.id);
    });
    container.on('error', (e) => {
      // The container died: the calls in flight fail as Lambda's would.
      for (const [id, resolve] of this.pending) resolve({ id, error: { name: 'Runtime.ExitError', message: String(e), stack: '' } });
      this.pending.clear();
      this.container = undefined;
    });
    container.unref();
    return (this.container = container);
  }
}

/** One Lambda call a task made. */
export interface LambdaCall {
  /** The Task state's name. */
  readonly state: string;
  readonly function: LocalFunction;
  readonly payload: Json;
}

export interface LambdaHooks {
  /** Runs before the function is called (a test's chance to change the world in between). */
  beforeInvoke?(call: LambdaCall): Promise<void> | void;
  afterInvoke?(call: LambdaCall, outcome: { readonly result?: Json; readonly error?: Error }): Promise<void> | void;
}

export interface StateEvent {
  readonly type: string;
  readonly index?: number;
  readonly state?: { readonly name: string; readonly type: string; readonly input?: Json; readonly output?: Json };
  readonly Error?: string;
  readonly Cause?: string;
}

export interface Invocation {
  readonly state: string;
  readonly functionLogicalId: string;
  readonly payload: Json;
  readonly result?: Json;
  readonly error?: { readonly name: string; readonly message: string };
}

export interface Execution {
  readonly status: 'SUCCEEDED' | 'FAILED';
  readonly output?: Json;
  readonly error?: string;
  readonly cause?: string;
  /** Every Lambda call, in the order they ended. */
  readonly invocations: readonly Invocation[];
  /** The engine's events, nested Map iterations included (with their index). */
  readonly events: readonly StateEvent[];
}

type Binding =
  | { readonly kind: 'lambda'; readonly state: string; readonly invoke: 'integration' | 'direct'; readonly fn: LocalFunction }
  | { readonly kind: 'distributed-map'; readonly state: string; readonly map: JsonObject };

export class LocalStateMachine {
  /** The definition the engine runs: the synthesized one, with Distributed Maps swapped for their stand-in. */
  readonly runnable: JsonObject;
  private readonly bindings: Binding[] = [];
  private readonly retried: string[] = [];

  constructor(
    readonly deployment: LocalDeployment,
    readonly logicalId: string,
    readonly name: string,
    readonly arn: string,
    /** As synthesized, intrinsics resolved. */
    readonly definition: JsonObject,
  ) {
    this.runnable = this.prepare(definition);
    // Validates the definition (JSONPaths, reachability, fields) as the engine reads it.
    new StateMachine(this.runnable as never);
  }

  /** Starts an execution and waits for its end; a failed execution is returned, not thrown. */
  async run(input: Json, options: { readonly hooks?: LambdaHooks; readonly name?: string } = {}): Promise<Execution> {
    const executionName = options.name ?? randomUUID();
    const executionArn = `${this.arn.replace(':stateMachine:', ':execution:')}:${executionName}`;
    const invocations: Invocation[] = [];
    const events: StateEvent[] = [];
    const handlers: Record<string, (input: Json) => Promise<Json>> = {};
    const runOptions = {
      overrides: {
        taskResourceLocalHandlers: handlers,
        retryIntervalOverrides: Object.fromEntries(this.retried.map((s) => [s, 0])),
      },
    };
    const io = new S3FileIO({ endpoint: testS3Endpoint() });
    const runChild = async (definition: JsonObject, childInput: Json, context: JsonObject): Promise<ChildOutcome> => {
      const child = new StateMachine(definition as never, { validationOptions: { noValidate: true } });
      const execution = child.run(childInput as never, { ...runOptions, context } as RunOptions);
      const logged = collect(execution.eventLogs as AsyncIterable<StateEvent>, events);
      try {
        return { output: (await execution.result) as Json };
      } catch (e) {
        const cause = e instanceof ExecutionError && e.cause instanceof Error ? e.cause : (e as Error);
        return { error: cause.name, cause: cause.message };
      } finally {
        await logged;
      }
    };
    for (const binding of this.bindings) {
      if (binding.kind === 'distributed-map') {
        handlers[binding.state] = (mapInput) =>
          runDistributedMap({ name: binding.state, state: binding.map, io, executionArn, stateMachineArn: this.arn, runChild }, mapInput);
        continue;
      }
      const { fn, state } = binding;
      handlers[state] = async (taskInput) => {
        const params = taskInput as JsonObject;
        if (binding.invoke === 'integration') {
          const named = this.deployment.functionNamed(String(params.FunctionName));
          if (named !== fn) throw new Error(`state ${state}: FunctionName ${String(params.FunctionName)} is not the function it was bound to`);
        }
        const payload = binding.invoke === 'integration' ? (params.Payload ?? null) : taskInput;
        if (sizeOf(payload) > STATE_PAYLOAD_LIMIT_BYTES) throw dataLimitExceeded(`the payload of ${state}`, sizeOf(payload));
        const call: LambdaCall = { state, function: fn, payload };
        await options.hooks?.beforeInvoke?.(call);
        let result: Json;
        try {
          result = await fn.invoke(payload);
        } catch (e) {
          const error = lambdaError(e);
          invocations.push({ state, functionLogicalId: fn.logicalId, payload, error: { name: error.name, message: error.message } });
          await options.hooks?.afterInvoke?.(call, { error: e as Error });
          throw error;
        }
        invocations.push({ state, functionLogicalId: fn.logicalId, payload, result });
        await options.hooks?.afterInvoke?.(call, { result });
        if (sizeOf(result) > STATE_PAYLOAD_LIMIT_BYTES) throw dataLimitExceeded(`the result of ${state}`, sizeOf(result));
        return binding.invoke === 'direct'
          ? result
          : { ExecutedVersion: '$LATEST', Payload: result, SdkHttpMetadata: { HttpStatusCode: 200 }, SdkResponseMetadata: { RequestId: randomUUID() }, StatusCode: 200 };
      };
    }

    const machine = new StateMachine(this.runnable as never, { validationOptions: { noValidate: true } });
    const execution = machine.run(input as never, {
      ...runOptions,
      context: { Execution: { Id: executionArn, Name: executionName }, StateMachine: { Id: this.arn, Name: this.name } },
    } as RunOptions);
    const logged = collect(execution.eventLogs as AsyncIterable<StateEvent>, events);
    let outcome: Execution;
    try {
      outcome = { status: 'SUCCEEDED', output: (await execution.result) as Json, invocations, events };
    } catch (e) {
      const cause = e instanceof ExecutionError && e.cause instanceof Error ? e.cause : (e as Error);
      outcome = { status: 'FAILED', error: cause.name, cause: cause.message, invocations, events };
    }
    await logged;
    const tooLarge = events.find((e) => sizeOf(e.state?.input) > STATE_PAYLOAD_LIMIT_BYTES || sizeOf(e.state?.output) > STATE_PAYLOAD_LIMIT_BYTES);
    if (tooLarge?.state) {
      const size = Math.max(sizeOf(tooLarge.state.input), sizeOf(tooLarge.state.output));
      const error = dataLimitExceeded(`the input or output of ${tooLarge.state.name}`, size);
      return { status: 'FAILED', error: error.name, cause: error.message, invocations, events };
    }
    return outcome;
  }

  /** Binds every Task, swaps Distributed Maps for their stand-in, and notes the states that retry. */
  private prepare(machine: JsonObject): JsonObject {
    const states = machine.States as Record<string, JsonObject>;
    const out: Record<string, JsonObject> = {};
    for (const [name, state] of Object.entries(states)) {
      if (state.Retry !== undefined) this.retried.push(name);
      if (state.Type === 'Task') {
        const binding = this.bindTask(name, state);
        this.bindings.push(binding);
        // The engine gives a task without a timeout 60 s; Step Functions waits for the function,
        // which Lambda stops at its own timeout.
        const timeout = state.TimeoutSeconds === undefined && state.TimeoutSecondsPath === undefined && binding.kind === 'lambda' ? { TimeoutSeconds: binding.fn.timeoutSeconds } : ({} as JsonObject);
        out[name] = { ...state, ...timeout };
      } else if (isDistributedMap(state)) {
        this.prepare(state.ItemProcessor as JsonObject);
        this.bindings.push({ kind: 'distributed-map', state: name, map: state });
        const kept = Object.fromEntries(MAP_FIELDS_KEPT.filter((f) => f in state).map((f) => [f, state[f]]));
        // A Task the engine hands to the stand-in; the resource is never called.
        out[name] = { Type: 'Task', Resource: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:local-distributed-map`, TimeoutSeconds: 86_400, ...kept };
      } else if (state.Type === 'Map') {
        const key = 'ItemProcessor' in state ? 'ItemProcessor' : 'Iterator';
        out[name] = { ...state, [key]: this.prepare(state[key] as JsonObject) };
      } else if (state.Type === 'Parallel') {
        out[name] = { ...state, Branches: (state.Branches as JsonObject[]).map((b) => this.prepare(b)) };
      } else {
        out[name] = state;
      }
    }
    return { ...machine, States: out };
  }

  private bindTask(name: string, state: JsonObject): Binding {
    const resource = String(state.Resource);
    if (this.bindings.some((b) => b.state === name)) throw new Error(`two Task states are named "${name}": bindings go by state name`);
    if (LAMBDA_INVOKE.test(resource)) {
      const params = (state.Parameters ?? {}) as JsonObject;
      if (typeof params.FunctionName !== 'string') throw new Error(`state ${name}: FunctionName is not a literal (${JSON.stringify(params.FunctionName)})`);
      return { kind: 'lambda', state: name, invoke: 'integration', fn: this.deployment.functionNamed(params.FunctionName) };
    }
    if (LAMBDA_ARN.test(resource)) return { kind: 'lambda', state: name, invoke: 'direct', fn: this.deployment.functionNamed(resource) };
    throw new Error(`state ${name}: resource ${resource} has no local binding`);
  }
}

async function collect(logs: AsyncIterable<StateEvent>, into: StateEvent[]): Promise<void> {
  for await (const event of logs) into.push(event);
}

export interface LocalDeploymentOptions {
  /** The S3 endpoint the functions reach (AWS_ENDPOINT_URL_S3): moto, or the hop before it. */
  readonly functionS3Endpoint: string;
}

/** A stack "deployed" into this process: its buckets on moto, its functions loaded from the cloud assembly. */
export class LocalDeployment {
  private readonly functions = new Map<string, LocalFunction>();

  private constructor(
    readonly stack: Stack,
    readonly template: CfnTemplate,
    readonly resolver: CfnResolver,
    assemblyDir: string,
    options: LocalDeploymentOptions,
  ) {
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (resource.Type !== 'AWS::Lambda::Function') continue;
      const props = resource.Properties ?? {};
      const code = props.Code as JsonObject | undefined;
      // Functions CDK adds from inline code (custom resources) are not part of what we run.
      if (typeof code?.S3Key !== 'string') continue;
      const variables = Object.fromEntries(
        Object.entries(((props.Environment as JsonObject | undefined)?.Variables ?? {}) as JsonObject).map(([k, v]) => [k, resolver.resolveString(v)]),
      );
      const fn = new LocalFunction(
        id,
        resolver.ref(id),
        resolver.getAtt(id, 'Arn'),
        join(assemblyDir, `asset.${code.S3Key.replace(/\.zip$/, '')}`),
        String(props.Handler ?? 'index.handler'),
        variables,
        Number(props.Timeout ?? 3),
        Number(props.MemorySize ?? 128),
        options.functionS3Endpoint,
      );
      this.functions.set(fn.arn, fn);
      this.functions.set(fn.name, fn);
    }
  }

  /** Synthesizes the stack's app (bundling its functions) and creates a moto bucket for each of its buckets. */
  static async deploy(stack: Stack, options: LocalDeploymentOptions): Promise<LocalDeployment> {
    const stage = Stage.of(stack);
    if (!stage) throw new Error(`${stack.node.path} is in no App`);
    const assembly = stage.synth();
    const template = assembly.getStackArtifact(stack.artifactId).template as CfnTemplate;
    const names: Record<string, string> = {};
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (resource.Type === 'AWS::S3::Bucket') names[id] = await freshBucket();
    }
    return new LocalDeployment(stack, template, new CfnResolver(template, stack.stackName, names), assembly.directory, options);
  }

  logicalId(construct: IConstruct): string {
    const element = (construct.node.defaultChild ?? construct) as CfnElement;
    return Stack.of(construct).getLogicalId(element);
  }

  /** What a construct's Ref resolves to here (a bucket's name, a function's name, a state machine's ARN). */
  physicalName(construct: IConstruct): string {
    return this.resolver.ref(this.logicalId(construct));
  }

  /** The function a name or ARN (qualified or not) designates. */
  functionNamed(nameOrArn: string): LocalFunction {
    const unqualified = LAMBDA_ARN.test(nameOrArn) ? nameOrArn.replace(/(:function:[^:]+):[^:]+$/, '$1') : nameOrArn;
    const fn = this.functions.get(unqualified);
    if (!fn) throw new Error(`no function of the stack is named ${nameOrArn}`);
    return fn;
  }

  /** A state machine of the stack, by its construct. */
  stateMachine(construct: IConstruct): LocalStateMachine {
    return this.stateMachineWithId(this.logicalId(construct));
  }

  /** The state machine a state machine ARN designates. */
  stateMachineWithArn(arn: string): LocalStateMachine {
    const id = Object.keys(this.template.Resources).find(
      (r) => this.template.Resources[r].Type === 'AWS::StepFunctions::StateMachine' && this.resolver.ref(r) === arn,
    );
    if (id === undefined) throw new Error(`no state machine of the stack has the ARN ${arn}`);
    return this.stateMachineWithId(id);
  }

  /** What an EventBridge Scheduler schedule of the stack starts (its target's ARN) and the input it gives. */
  scheduleTarget(schedule: IConstruct): { readonly arn: string; readonly input: Json } {
    const resource = this.template.Resources[this.logicalId(schedule)];
    if (resource?.Type !== 'AWS::Scheduler::Schedule') throw new Error(`${schedule.node.path} is not a schedule of the stack`);
    const target = (resource.Properties?.Target ?? {}) as JsonObject;
    const input = target.Input === undefined ? {} : (JSON.parse(this.resolver.resolveString(target.Input)) as Json);
    return { arn: this.resolver.resolveString(target.Arn), input };
  }

  private stateMachineWithId(id: string): LocalStateMachine {
    const resource = this.template.Resources[id];
    if (resource?.Type !== 'AWS::StepFunctions::StateMachine') throw new Error(`${id} is not a state machine of the stack`);
    const props = resource.Properties ?? {};
    let text = this.resolver.resolveString(props.DefinitionString);
    const substitutions = (props.DefinitionSubstitutions ?? {}) as JsonObject;
    for (const [k, v] of Object.entries(substitutions)) text = text.split(`\${${k}}`).join(this.resolver.resolveString(v));
    return new LocalStateMachine(this, id, this.resolver.getAtt(id, 'Name'), this.resolver.ref(id), JSON.parse(text) as JsonObject);
  }

  /** Stops the functions' containers. */
  async dispose(): Promise<void> {
    await Promise.all([...new Set(this.functions.values())].map((fn) => fn.stop()));
  }
}
