/**
 * A synthesized CloudFormation template read as a deployment would leave it: intrinsics
 * (Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, Fn::Split) resolved to concrete names and
 * ARNs in one made-up account and region, so definitions and environments hold plain strings.
 */

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export interface CfnResource {
  readonly Type: string;
  readonly Properties?: { [k: string]: Json };
  readonly Metadata?: { [k: string]: Json };
}

export interface CfnTemplate {
  readonly Resources: Record<string, CfnResource>;
}

/**
 * A value of the template as text for assertions, without deploying: Fn::Join joined, the
 * partition `aws`, other Refs `<Id>` (pseudo parameters `<AWS::Region>`), attributes `<Id.Attr>`.
 */
export function flatten(value: Json): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    if ('Fn::Join' in value) {
      const [sep, parts] = value['Fn::Join'] as [string, Json[]];
      return parts.map(flatten).join(sep);
    }
    if ('Ref' in value) return value.Ref === 'AWS::Partition' ? 'aws' : `<${String(value.Ref)}>`;
    if ('Fn::GetAtt' in value) return `<${(value['Fn::GetAtt'] as string[]).join('.')}>`;
  }
  throw new Error(`cannot flatten ${JSON.stringify(value)}`);
}

export const LOCAL_ACCOUNT = '123456789012';
export const LOCAL_REGION = 'us-east-1';
const PARTITION = 'aws';

/** What a resource's Ref and Fn::GetAtt come to once "deployed" under `physicalName`. */
function attributes(resource: CfnResource, physicalName: string): { ref: string; atts: Record<string, string> } {
  const arn = (service: string, rest: string): string => `arn:${PARTITION}:${service}:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${rest}`;
  switch (resource.Type) {
    case 'AWS::S3::Bucket':
      return {
        ref: physicalName,
        atts: { Arn: `arn:${PARTITION}:s3:::${physicalName}`, DomainName: `${physicalName}.s3.amazonaws.com`, RegionalDomainName: `${physicalName}.s3.${LOCAL_REGION}.amazonaws.com` },
      };
    case 'AWS::Lambda::Function':
      return { ref: physicalName, atts: { Arn: arn('lambda', `function:${physicalName}`) } };
    case 'AWS::StepFunctions::StateMachine': {
      const smArn = arn('states', `stateMachine:${physicalName}`);
      return { ref: smArn, atts: { Arn: smArn, Name: physicalName } };
    }
    case 'AWS::IAM::Role':
      return { ref: physicalName, atts: { Arn: `arn:${PARTITION}:iam::${LOCAL_ACCOUNT}:role/${physicalName}` } };
    case 'AWS::SQS::Queue':
      return { ref: `https://sqs.${LOCAL_REGION}.amazonaws.com/${LOCAL_ACCOUNT}/${physicalName}`, atts: { Arn: arn('sqs', physicalName), QueueName: physicalName } };
    case 'AWS::SNS::Topic':
      return { ref: arn('sns', physicalName), atts: { TopicArn: arn('sns', physicalName), TopicName: physicalName } };
    case 'AWS::Logs::LogGroup':
      return { ref: physicalName, atts: { Arn: arn('logs', `log-group:${physicalName}:*`) } };
    case 'AWS::KMS::Key':
      return { ref: physicalName, atts: { Arn: arn('kms', `key/${physicalName}`), KeyId: physicalName } };
    default:
      return { ref: physicalName, atts: { Arn: arn(resource.Type.split('::')[1].toLowerCase(), physicalName) } };
  }
}

const PSEUDO: Record<string, string> = {
  'AWS::Partition': PARTITION,
  'AWS::Region': LOCAL_REGION,
  'AWS::AccountId': LOCAL_ACCOUNT,
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::NoValue': '',
};

export class CfnResolver {
  private readonly names: Record<string, string>;

  /** `physicalNames` by logical id; a resource without one is named `<stackName>-<logicalId>`. */
  constructor(
    readonly template: CfnTemplate,
    readonly stackName: string,
    physicalNames: Record<string, string> = {},
  ) {
    this.names = Object.fromEntries(Object.keys(template.Resources).map((id) => [id, physicalNames[id] ?? `${stackName}-${id}`]));
  }

  physicalName(logicalId: string): string {
    const name = this.names[logicalId];
    if (name === undefined) throw new Error(`the template has no resource ${logicalId}`);
    return name;
  }

  ref(name: string): string {
    if (name === 'AWS::StackName') return this.stackName;
    if (name in PSEUDO) return PSEUDO[name];
    const resource = this.template.Resources[name];
    if (!resource) throw new Error(`Ref to ${name}: no such resource or pseudo parameter`);
    return attributes(resource, this.physicalName(name)).ref;
  }

  getAtt(logicalId: string, attribute: string): string {
    const resource = this.template.Resources[logicalId];
    if (!resource) throw new Error(`Fn::GetAtt on ${logicalId}: no such resource`);
    const value = attributes(resource, this.physicalName(logicalId)).atts[attribute];
    if (value === undefined) throw new Error(`Fn::GetAtt ${logicalId}.${attribute}: attribute not known to the local deployment (${resource.Type})`);
    return value;
  }

  /** `value` with every intrinsic function replaced by what it resolves to. */
  resolve(value: Json): Json {
    if (Array.isArray(value)) return value.map((v) => this.resolve(v));
    if (value === null || typeof value !== 'object') return value;
    const keys = Object.keys(value);
    if (keys.length === 1 && (keys[0] === 'Ref' || keys[0].startsWith('Fn::'))) return this.intrinsic(keys[0], value[keys[0]]);
    return Object.fromEntries(keys.map((k) => [k, this.resolve(value[k])]));
  }

  resolveString(value: Json): string {
    const resolved = this.resolve(value);
    if (typeof resolved !== 'string') throw new Error(`expected a string, resolved ${JSON.stringify(value)} to ${JSON.stringify(resolved)}`);
    return resolved;
  }

  private intrinsic(fn: string, arg: Json): Json {
    switch (fn) {
      case 'Ref':
        return this.ref(String(arg));
      case 'Fn::GetAtt': {
        const [id, att] = Array.isArray(arg) ? arg.map(String) : String(arg).split(/\.(.*)/s);
        return this.getAtt(id, att);
      }
      case 'Fn::Join': {
        const [sep, parts] = arg as [string, Json[]];
        return (this.resolve(parts) as Json[]).map((p) => String(p)).join(sep);
      }
      case 'Fn::Select': {
        const [index, list] = arg as [Json, Json];
        return (this.resolve(list) as Json[])[Number(this.resolve(index))];
      }
      case 'Fn::Split': {
        const [sep, text] = arg as [string, Json];
        return this.resolveString(text).split(sep);
      }
      case 'Fn::Sub': {
        const [text, vars] = (Array.isArray(arg) ? arg : [arg, {}]) as [string, Record<string, Json>];
        return text.replace(/\$\{([^}!][^}]*)\}/g, (_, name: string) => {
          if (name in vars) return String(this.resolve(vars[name]));
          const [id, att] = name.split(/\.(.*)/s);
          return att === undefined || att === '' ? this.ref(id) : this.getAtt(id, att);
        });
      }
      default:
        throw new Error(`${fn} is not resolved by the local deployment`);
    }
  }
}
