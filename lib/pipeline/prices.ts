/**
 * What a compaction run costs on AWS: Lambda (arm64) duration and requests, and Step Functions
 * Standard state transitions, at the published on-demand prices of the first usage tier, free
 * tiers left out.
 *
 * Sources, read 2026-12-02: https://aws.amazon.com/lambda/pricing/ (Arm price, first 7.5 billion
 * GB-seconds a month; $0.20 per million requests) and https://aws.amazon.com/step-functions/pricing/
 * (state transitions pricing table). A region not listed is priced as us-east-1, and the report
 * says so.
 */
export interface RegionPrices {
  /** Lambda, arm64, per GB-second. */
  readonly lambdaGbSecondUsd: number;
  readonly lambdaRequestUsd: number;
  /** Step Functions Standard, per state transition. */
  readonly stateTransitionUsd: number;
}

export const PRICES_SOURCE = {
  date: '2026-12-02',
  urls: ['https://aws.amazon.com/lambda/pricing/', 'https://aws.amazon.com/step-functions/pricing/'],
} as const;

const LAMBDA_ARM = { lambdaGbSecondUsd: 0.0000133334, lambdaRequestUsd: 0.2 / 1e6 } as const;

export const REGION_PRICES: Readonly<Record<string, RegionPrices>> = {
  'us-east-1': { ...LAMBDA_ARM, stateTransitionUsd: 0.025 / 1000 },
  'us-east-2': { ...LAMBDA_ARM, stateTransitionUsd: 0.025 / 1000 },
  'us-west-2': { ...LAMBDA_ARM, stateTransitionUsd: 0.025 / 1000 },
  'eu-west-1': { ...LAMBDA_ARM, stateTransitionUsd: 0.025 / 1000 },
  'eu-central-1': { ...LAMBDA_ARM, stateTransitionUsd: 0.025 / 1000 },
};

export const DEFAULT_PRICE_REGION = 'us-east-1';

/** The prices of `region`, or us-east-1's when the table has none (`pricedAs` says which). */
export function pricesFor(region: string | undefined): { readonly pricedAs: string; readonly prices: RegionPrices } {
  const known = region !== undefined ? REGION_PRICES[region] : undefined;
  return known ? { pricedAs: region!, prices: known } : { pricedAs: DEFAULT_PRICE_REGION, prices: REGION_PRICES[DEFAULT_PRICE_REGION] };
}

/** Amazon S3 Tables' published compaction price, for comparison: per GB processed and per 1,000 objects. */
export const S3_TABLES_COMPACTION = { perGbUsd: 0.005, perThousandObjectsUsd: 0.002 } as const;

/**
 * Amazon S3 Standard request prices, us-east-1, for the benchmarks' cost per GB: GET per request,
 * PUT (also multipart create, part and complete) per request. Source, read 2026-12-02:
 * https://aws.amazon.com/s3/pricing/ ("Requests & data retrievals").
 */
export const S3_REQUESTS = { getUsd: 0.0004 / 1000, putUsd: 0.005 / 1000 } as const;
