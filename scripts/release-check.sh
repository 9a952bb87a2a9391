#!/usr/bin/env bash
# Release readiness: build the wheel and the sdist, check their metadata (twine check --strict),
# install the wheel (with the README's quick-start extras) into a fresh venv outside the checkout
# and run `memdir demo` from it. Publishing is then one command on the dist/ this leaves behind:
#   .venv/bin/python -m twine upload <dist dir>/*
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
work=$(mktemp -d "${TMPDIR:-/tmp}/memdir-release.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$py" -m build --sdist --wheel --outdir "$work/dist" . >"$work/build.log" 2>&1 \
  || { cat "$work/build.log" >&2; exit 1; }
"$py" -m twine check --strict "$work"/dist/*
wheel=$(ls "$work"/dist/memdir-*.whl)
sdist=$(ls "$work"/dist/memdir-*.tar.gz)
# The sdist must carry what the wheel is built from (sources, package data, README, license).
tar -tzf "$sdist" >"$work/sdist.txt"
for f in src/memdir/py.typed src/memdir/prompts/shared.md src/memdir/recall/data/vocab.txt \
  src/memdir/adapters/mcp_manifest.json \
  README.md pyproject.toml; do
  grep -q "/$f\$" "$work/sdist.txt" || { echo "sdist lacks $f" >&2; exit 1; }
done
"$py" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q "$wheel[recall,mcp]"
mkdir "$work/home" "$work/run"
# From outside the checkout with an empty HOME: only what the wheel installed can answer.
(cd "$work/run" && env -i HOME="$work/home" PATH="$work/venv/bin:/usr/bin:/bin" LANG=C.UTF-8 \
  HF_HUB_OFFLINE=1 "$work/venv/bin/memdir" demo >"$work/demo.log" 2>&1) \
  || { cat "$work/demo.log" >&2; exit 1; }
echo "release check: $(basename "$wheel") and $(basename "$sdist") built, checked, installed; memdir demo passed"
