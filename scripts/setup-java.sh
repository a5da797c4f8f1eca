#!/usr/bin/env bash
# Builds the Java Iceberg interop harness (interop/java) into .cache/interop:
#   harness.jar      the harness classes
#   classpath.txt    the full runtime classpath (harness.jar + dependencies in .cache/m2)
#   harness.jsa      class-data-sharing archive for fast JVM starts
# Dependencies resolve from Maven Central into .cache/m2. Idempotent: does nothing when the
# stamp (hash of pom.xml, sources, repo path and Java version) matches.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
project="$root/interop/java"
out="$root/.cache/interop"
m2="$root/.cache/m2"
stamp="$out/java.stamp"

for tool in java mvn; do
  command -v "$tool" >/dev/null || { echo "setup-java: '$tool' not found on PATH" >&2; exit 1; }
done

want="$(
  {
    echo "$root"
    java -version 2>&1 | head -1
    cd "$project" && find pom.xml src -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
  } | sha256sum | cut -d' ' -f1
)"
up_to_date() {
  [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -f "$out/harness.jar" && -f "$out/classpath.txt" ]]
}
if up_to_date; then
  exit 0
fi

mkdir -p "$out"
# Two test runs starting at once must not build together.
exec 9>"$out/java.lock"
flock 9
if up_to_date; then
  exit 0
fi

echo "setup-java: building the interop harness (dependencies into $m2)" >&2
rm -f "$stamp"
# compile, not package: the jar and surefire plugins would pull ~15 MB more; the JDK's jar tool packs.
mvn -q -B -Dstyle.color=never -Dmaven.repo.local="$m2" -f "$project/pom.xml" \
  compile dependency:build-classpath -Dmdep.outputFile="$out/deps.txt" >&2
rm -f "$out/harness.jar"
jar --create --file "$out/harness.jar" -C "$project/target/classes" .
printf '%s:%s\n' "$out/harness.jar" "$(cat "$out/deps.txt")" > "$out/classpath.txt"
rm -f "$out/deps.txt"
# Smoke run: write, read and check every scenario. It also records a class-data-sharing archive
# (harness.jsa) that cuts each later JVM start from ~3 s to ~1 s; test/support/java.ts uses the same
# flags (JVM_FLAGS there).
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rm -f "$out/harness.jsa"
java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xlog:disable -Xlog:all=error:stderr \
  -XX:ArchiveClassesAtExit="$out/harness.jsa" \
  -cp "$(cat "$out/classpath.txt")" packice.interop.Harness selftest "$work" >&2
echo "$want" > "$stamp"
echo "setup-java: done" >&2
