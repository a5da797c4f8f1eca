import { defineConfig } from 'vitest/config';

/**
 * The tests test/parquet/node22.test.ts runs again on Node 22 (the rewrite Lambda's runtime), where
 * ZSTD goes through node:zlib (lib/parquet/compression-codec.ts) instead of zstd-napi: the codec
 * itself and the merge paths that compress and decompress every page, and the rewrite function's
 * bundle with its decode workers, as the Lambda runs them. No global setup: the outer
 * run passes its S3 server in PACKICE_TEST_S3_ENDPOINT and has built dist/.
 */
export default defineConfig({
  test: {
    include: [
      'test/parquet/compression-codec.test.ts',
      'test/parquet/page-compressor.test.ts',
      'test/compaction/row-group-merge.test.ts',
      'test/compaction/merge-deletes.test.ts',
      'test/compaction/merge-equality-deletes.test.ts',
      // The rewrite function as bundled, its decode workers started from their own bundle.
      'test/functions/decode-worker-bundle.test.ts',
    ],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
  },
});
