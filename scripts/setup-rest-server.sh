#!/usr/bin/env bash
# Resolves the Apache Iceberg REST catalog fixture server (interop/rest-server/pom.xml:
# RESTCatalogServer from iceberg-open-api 1.11.0's test fixtures) into .cache/rest-server:
#   classpath.txt    its runtime classpath (jars in .cache/m2)
#   server.jsa       class-data-sharing archive for fast JVM starts
# Dependencies resolve from Maven Central into .cache/m2. Idempotent: does nothing when the
# stamp (hash of pom.xml, repo path and Java version) matches. test/support/rest-server.ts starts it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
project="$root/interop/rest-server"
out="$root/.cache/rest-server"
m2="$root/.cache/m2"
stamp="$out/rest-server.stamp"

for tool in java mvn node; do
  command -v "$tool" >/dev/null || { echo "setup-rest-server: '$tool' not found on PATH" >&2; exit 1; }
done

want="$(
  {
    echo "$root"
    java -version 2>&1 | head -1
    sha256sum "$project/pom.xml" "${BASH_SOURCE[0]}"
  } | sha256sum | cut -d' ' -f1
)"
up_to_date() {
  [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -f "$out/classpath.txt" ]]
}
if up_to_date; then
  exit 0
fi

mkdir -p "$out"
# Two test runs starting at once must not build together.
exec 9>"$out/rest-server.lock"
flock 9
if up_to_date; then
  exit 0
fi

echo "setup-rest-server: resolving the Iceberg REST fixture server (dependencies into $m2)" >&2
rm -f "$stamp" "$out/server.jsa"
mvn -q -B -Dstyle.color=never -Dmaven.repo.local="$m2" -f "$project/pom.xml" \
  dependency:build-classpath -Dmdep.outputFile="$out/classpath.txt" >&2

# Smoke run: start the server, create a namespace and a table, commit to it, stop it. The run also
# records a class-data-sharing archive (server.jsa) that cuts each later start from ~2.3 s to ~1 s;
# test/support/rest-server.ts uses the same flags (JVM_FLAGS there).
work="$(mktemp -d)"
server=""
cleanup() {
  if [[ -n "$server" ]]; then kill "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
port="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
CATALOG_URI="jdbc:sqlite:$work/catalog.db" CATALOG_WAREHOUSE="file:$work/warehouse" CATALOG_REST_PORT="$port" \
  java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xlog:disable -Xlog:all=error:stderr \
  -XX:ArchiveClassesAtExit="$out/server.jsa" \
  -cp "$(cat "$out/classpath.txt")" org.apache.iceberg.rest.RESTCatalogServer >"$work/server.log" 2>&1 &
server=$!
if ! node - "http://127.0.0.1:$port" <<'JS' >&2; then
const base = process.argv[2];
const call = async (method, path, body) => {
  const res = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
};
const deadline = Date.now() + 120_000;
for (;;) {
  try { await call('GET', '/v1/config'); break; } catch (e) {
    if (Date.now() > deadline) throw e;
    await new Promise((r) => setTimeout(r, 100));
  }
}
await call('POST', '/v1/namespaces', { namespace: ['smoke'] });
const schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] };
const created = await call('POST', '/v1/namespaces/smoke/tables', { name: 't', schema });
const loaded = await call('GET', '/v1/namespaces/smoke/tables/t');
await call('POST', '/v1/namespaces/smoke/tables/t', {
  requirements: [{ type: 'assert-table-uuid', uuid: created.metadata['table-uuid'] }],
  updates: [{ action: 'set-properties', updates: { smoke: 'yes' } }],
});
if (loaded.metadata['table-uuid'] !== created.metadata['table-uuid']) throw new Error('table-uuid changed');
JS
  echo "setup-rest-server: smoke run failed; server log:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
kill -TERM "$server"
wait "$server" || true
server=""
echo "$want" > "$stamp"
echo "setup-rest-server: done" >&2
