/**
 * AWS SigV4 for a REST catalog, as Java's RESTSigV4AuthSession signs: with the AWS SDK's signer
 * (@smithy/signature-v4), for `rest.signing-name` (`glue` for Glue's Iceberg endpoint, `s3tables`
 * for S3 Tables'; Java's default `execute-api`) in `rest.signing-region` (default: `AWS_REGION`),
 * with credentials from the SDK's default provider chain. The body's SHA-256 is sent and signed
 * as `x-amz-content-sha256` (the empty body's hash when there is none), and an `Authorization`
 * header the inner auth set is kept as `Original-Authorization`, SigV4 taking its place.
 */
import { createHash } from 'node:crypto';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import type { AuthSession, HttpRequest } from './http-request.js';

export const DEFAULT_SIGNING_NAME = 'execute-api';
const RELOCATED_PREFIX = 'Original-';

export interface SigV4Settings {
  readonly signingName?: string;
  readonly signingRegion?: string;
  /** @default the SDK's default provider chain (env, profile, container, instance) */
  readonly credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
}

export function sigV4Auth(inner: AuthSession, settings: SigV4Settings = {}): AuthSession {
  const signer = new SignatureV4({
    service: settings.signingName ?? DEFAULT_SIGNING_NAME,
    region: settings.signingRegion ?? (process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1'),
    credentials: settings.credentials ?? defaultProvider(),
    sha256: Sha256,
  });
  return {
    async authenticate(request: HttpRequest): Promise<HttpRequest> {
      const authenticated = await inner.authenticate(request);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(authenticated.headers)) headers[k.toLowerCase() === 'authorization' ? `${RELOCATED_PREFIX}${k}` : k] = v;
      headers['x-amz-content-sha256'] = createHash('sha256').update(authenticated.body ?? '').digest('hex');
      const url = authenticated.url;
      const signed = await signer.sign({
        method: authenticated.method,
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port !== '' ? { port: Number(url.port) } : {}),
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: { ...headers, host: url.host },
        ...(authenticated.body !== undefined ? { body: authenticated.body } : {}),
      });
      // fetch sends the same Host itself.
      const { host: _, ...out } = signed.headers;
      return { ...authenticated, headers: out };
    },
    invalidate: () => inner.invalidate?.() ?? false,
  };
}
