import { defineConfig } from 'vitest/config';

/**
 * The tests test/parquet/node22.test.ts runs again on Node 22 (the rewrite Lambda's runtime), where
 * ZSTD goes through node:zlib (lib/parquet/compression-codec.ts) instead of zstd-napi: the codec
 * itself and the merge paths that compress and decompress every page. No global setup: the outer
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
    ],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
  },
});
