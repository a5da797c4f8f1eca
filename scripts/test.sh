#!/usr/bin/env bash
# The whole test suite from a fresh clone: installs what it needs (npm packages,
# the Python venv with moto and PyIceberg, the Java interop harness, the Iceberg REST catalog
# fixture server, Node 22 — the Lambda's runtime — for the tests that run on it too),
# type-checks, lints, then runs vitest, which starts moto server on loopback for the S3 tests
# (test files that need a REST catalog start their own).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
bash scripts/setup-python.sh
bash scripts/setup-java.sh
bash scripts/setup-rest-server.sh
# Not fatal: without it test/parquet/node22.test.ts fails and says why, the rest still runs.
bash scripts/setup-node22.sh || echo "setup-node22 failed: test/parquet/node22.test.ts will say so"

echo "== tsc --noEmit"
npx tsc --noEmit -p .
echo "== eslint"
npx eslint .
echo "== vitest"
mkdir -p .cache
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json=.cache/vitest-report.json "$@" || status=$?
# The plain closing line CI reads: "N passed, N failed".
node -e '
const r = JSON.parse(require("fs").readFileSync(".cache/vitest-report.json", "utf8"));
const skipped = r.numPendingTests + r.numTodoTests;
console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
' || true
exit $status
