#!/usr/bin/env bash
# Creates .cache/venv with the pinned Python test tools (moto server, PyIceberg).
# Idempotent: does nothing when the venv was built from the same requirements and Python.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.cache/venv"
requirements="$root/interop/python/requirements.txt"
stamp="$venv/.packice-requirements.stamp"
python="${PYTHON:-python3}"

# The stamp names the Python and the exact requirements the venv was built from.
want="$("$python" -c 'import hashlib, sys; print(sys.version.split()[0], hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$requirements")"
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi

mkdir -p "$root/.cache"
# Two test runs starting at once must not build the same venv together.
if command -v flock >/dev/null; then
  exec 9>"$root/.cache/venv.lock"
  flock 9
fi
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi

echo "setup-python: building $venv from $requirements" >&2
rm -f "$stamp"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --disable-pip-version-check --quiet -r "$requirements"
"$venv/bin/python" -c 'import moto.server, pyiceberg, pyarrow'
echo "$want" > "$stamp"
echo "setup-python: done" >&2
