"""The ``copilot`` provider: memdir's background model through the user's own GitHub Copilot CLI.

Verified against Copilot CLI 1.0.102: with stdin piped and ``--output-format json`` it runs one
prompt non-interactively and prints one JSON event a line (``assistant.message`` carries the
reply, a closing ``result`` the exit code and ``usage.premiumRequests``). The child runs with:

* a **private ``COPILOT_HOME``** holding only a copy of the user's ``config.json`` (where the
  CLI keeps its login when there is no system keychain): the user's hooks, MCP servers,
  plugins and skills are never loaded, and its session state is deleted with the dir, so
  ``memdir backfill`` never reads memdir's own calls back;
* ``--available-tools`` naming no real tool (the CLI then disables every built-in tool),
  ``--disable-builtin-mcps``, ``--no-custom-instructions`` (no ``AGENTS.md``), ``--no-ask-user``,
  ``--no-auto-update``, ``--disable-client-telemetry``;
* the user's environment otherwise, so a token (``COPILOT_GITHUB_TOKEN``, ``GH_TOKEN``) or a BYOK
  provider (``COPILOT_PROVIDER_*``) works as it does for them.

Copilot CLI has no system-prompt switch: memdir's instructions open the prompt. Cost: the CLI
reports premium requests, not tokens; a premium request is booked at GitHub's list price for
extra ones (:data:`PREMIUM_REQUEST_USD`), and a run that used none (a BYOK provider) at the
prompt's estimated tokens — both estimates.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memdir.config import CHILD_ENV_FLAG
from memdir.llm import text_cli
from memdir.llm.text_cli import (
    Answer,
    Invocation,
    TextCliProvider,
    chosen_model,
    config_home,
    find_executable,
    json_lines,
)

PREMIUM_REQUEST_USD = 0.04
NO_TOOL = "memdir-none"  # an allowlist naming no real tool switches every built-in one off
FLAGS = (
    "--output-format", "json", f"--available-tools={NO_TOOL}", "--disable-builtin-mcps",
    "--no-custom-instructions", "--no-ask-user", "--no-auto-update",
    "--disable-client-telemetry", "--no-color",
)  # fmt: skip
# the parent's session markers and the user's own home are replaced by the child's
DROPPED_ENV = ("COPILOT_HOME", "COPILOT_ALLOW_ALL", "COPILOT_AGENT_SESSION_ID")
MAX_CONFIG_BYTES = 1024 * 1024


def find_cli(env: Mapping[str, str]) -> str | None:
    """``MEMDIR_COPILOT_CLI`` when set, else ``copilot`` on the env's PATH."""
    return find_executable(env, "MEMDIR_COPILOT_CLI", "copilot")


def model_words(host_model: str) -> str:
    return text_cli.model_words("Copilot", host_model)


def read_events(stdout: str) -> Answer:
    """The reply of a ``--output-format json`` run and its premium requests (as dollars)."""
    answer = Answer()
    premium: float | None = None
    for event in json_lines(stdout):
        kind, data = event.get("type"), event.get("data")
        if kind == "assistant.message" and isinstance(data, dict):
            answer.text = str(data.get("content") or "")
        elif kind == "session.error" and isinstance(data, dict):
            answer.error = str(data.get("message") or "the session failed")
        elif kind == "result":
            premium = _premium(event.get("usage"))
            code = event.get("exitCode")
            if isinstance(code, int) and code != 0 and answer.error is None:
                answer.error = f"exit code {code}"
    if premium:
        answer.cost_usd = premium * PREMIUM_REQUEST_USD
    return answer


def _premium(usage: Any) -> float | None:
    value = usage.get("premiumRequests") if isinstance(usage, dict) else None
    return float(value) if isinstance(value, (int, float)) and value >= 0 else None


class HostCliProvider(TextCliProvider):
    """``Provider`` over ``copilot`` headless (stdin piped)."""

    HOST = "copilot"
    TITLE = "the Copilot CLI (`copilot -p`)"

    def invocation(self, system: str, prompt: str, home: Path) -> Invocation:
        config = home / ".copilot"
        config.mkdir(mode=0o700)
        login = config_home(self.env, "COPILOT_HOME", ".copilot") / "config.json"
        if login.is_file() and login.stat().st_size <= MAX_CONFIG_BYTES:
            shutil.copyfile(login, config / "config.json")
            (config / "config.json").chmod(0o600)
        args = list(FLAGS)
        model = chosen_model(self.model)
        if model is not None:
            args += ["--model", model]
        env = {k: v for k, v in self.env.items() if k not in DROPPED_ENV}
        env.update(
            {
                "COPILOT_HOME": str(config),
                "COPILOT_AUTO_UPDATE": "false",
                CHILD_ENV_FLAG: "1",
                "NO_COLOR": "1",
            }
        )
        return Invocation(args, env, f"{system}\n\n---\n\n{prompt}")

    def read(self, stdout: str, stderr: str, returncode: int) -> Answer:
        answer = read_events(stdout)
        if not answer.text and answer.error is None:
            answer.error = stderr or "the Copilot CLI printed no reply"
        return answer


__all__ = ["PREMIUM_REQUEST_USD", "HostCliProvider", "find_cli", "model_words", "read_events"]
