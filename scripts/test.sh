#!/usr/bin/env bash
# Install memdir with every extra into ./.venv and run the whole suite: ruff, mypy --strict, the
# release check (scripts/release-check.sh), pytest (tests/realhost runs the real Claude Code CLI).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[all,test]"
bash scripts/install-test-deps.sh
.venv/bin/ruff check src tests benchmarks examples
.venv/bin/ruff format --check src tests benchmarks examples
.venv/bin/mypy
.venv/bin/mypy --strict examples
# Release readiness: wheel + sdist build, twine check, the wheel in a fresh venv runs memdir demo.
bash scripts/release-check.sh
set +e
.venv/bin/python -m pytest -q "$@"
rc=$?
set -e
# pytest exits 5 when it collected nothing: that is a failure for us, not a pass.
if [ "$rc" -eq 5 ]; then echo "no tests were collected" >&2; exit 1; fi
exit "$rc"
