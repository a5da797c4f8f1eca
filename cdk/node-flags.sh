#!/bin/sh
# The rewrite function's AWS_LAMBDA_EXEC_WRAPPER: Lambda runs it with the runtime's command line,
# node first, and it starts node with V8 flags that Node refuses in NODE_OPTIONS.
# --initial-old-space-size=128: a rewrite keeps a heap of ~20 MB while megabytes of pages and
# Arrow buffers pass through it, and V8's small old-generation limit for such a heap started a
# mark-compact every ~100 ms (72 in two rewrites of 3M rows, 18 with the flag; BENCHMARKS.md,
# "Lambda exec wrapper"), with concurrent marking on helper threads billed on the same vCPU.
node="$1"
shift
exec "$node" --initial-old-space-size=128 "$@"
