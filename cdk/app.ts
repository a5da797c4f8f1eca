/**
 * `npx cdk synth [-c tableLocations=s3://bucket/warehouse/db/table[,…]]` (cdk.json runs this with tsx);
 * without context it synthesizes for an example location.
 */
import { App } from 'aws-cdk-lib';
import { PackiceStack } from './packice-stack.js';

const app = new App();
new PackiceStack(app, 'Packice', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
app.synth();
