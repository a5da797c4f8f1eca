#!/usr/bin/env bash
# Builds the Spark baseline of bench/rewrite-rate.ts (bench/spark: Spark 3.5 + Iceberg's Spark runtime)
# into .cache/spark: target/classes and classpath.txt (the classes + their dependencies in .cache/m2,
# ~270 MB resolved from Maven Central the first time). Run it with
#   java @bench/spark/jvm-options.txt -cp "$(cat .cache/spark/classpath.txt)" packice.bench.SparkRewrite …
# Does nothing when classpath.txt is newer than every file of bench/spark and this script.
# Never run by the tests.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
project="$root/bench/spark"
out="$root/.cache/spark"
if [[ -f "$out/classpath.txt" && -z "$(find "$project" "${BASH_SOURCE[0]}" -type f -newer "$out/classpath.txt" -print -quit)" ]]; then
  exit 0
fi
command -v mvn >/dev/null || { echo "setup-spark: 'mvn' not found on PATH" >&2; exit 1; }
command -v java >/dev/null || { echo "setup-spark: 'java' not found on PATH" >&2; exit 1; }

echo "setup-spark: building bench/spark (dependencies into $root/.cache/m2)" >&2
mkdir -p "$out"
rm -f "$out/classpath.txt"
mvn -q -B -Dstyle.color=never -Dmaven.repo.local="$root/.cache/m2" -f "$project/pom.xml" \
  compile dependency:build-classpath -Dmdep.outputFile="$out/deps.txt" >&2
printf '%s:%s\n' "$out/target/classes" "$(cat "$out/deps.txt")" > "$out/classpath.txt"
rm -f "$out/deps.txt"
echo "setup-spark: done" >&2
