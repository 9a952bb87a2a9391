"""The ``qwen`` provider: memdir's background model through the user's own Qwen Code CLI.

Verified against Qwen Code 0.24.4: ``qwen -o json`` runs the prompt on stdin once and prints a
JSON array of events in Claude Code's shape (``assistant`` messages, a closing ``result`` with
``result``, ``usage`` and ``is_error``). The child runs with:

* a **private ``QWEN_HOME``** whose ``settings.json`` carries only what picks the user's model
  and login (``security``, ``modelProviders``, ``model``; their ``oauth_creds.json`` and ``.env``
  copied beside it) and memdir's switches: ``disableAllHooks``, Qwen's own memory agent off
  (it would take a second model call and write its own memories), usage statistics, telemetry
  and auto-update off. The user's hooks, MCP servers, extensions and skills are never loaded,
  and nothing the run records outlives the dir;
* ``QWEN_SYSTEM_MD`` replacing Qwen's whole system prompt with memdir's;
* ``--max-tool-calls 0`` (a call the model still makes ends the run, nothing is run),
  ``--chat-recording false``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memdir.config import CHILD_ENV_FLAG
from memdir.llm import text_cli
from memdir.llm.base import Usage
from memdir.llm.text_cli import (
    Answer,
    Invocation,
    TextCliProvider,
    chosen_model,
    config_home,
    count,
    find_executable,
)

NO_TOOL = "memdir-none"  # an allowlist naming no real tool drops every built-in one it governs
# the tools 0.24 registers outside the allowlist: excluded by name
ALWAYS_ON = (
    "agent", "skill", "tool_call", "tool_search", "get_goal", "update_goal", "list_agents",
    "enter_worktree", "exit_worktree", "record_artifact", "report_findings", "send_message",
    "task_stop",
)  # fmt: skip
FLAGS = (
    "-o", "json", "--max-tool-calls", "0", "--chat-recording", "false",
    "--core-tools", NO_TOOL, "--exclude-tools", ",".join(ALWAYS_ON),
)  # fmt: skip
KEPT_SETTINGS = ("security", "modelProviders", "model")
LOGIN_FILES = ("oauth_creds.json", ".env")
SWITCHES: dict[str, Any] = {
    "disableAllHooks": True,
    "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False},
}
DROPPED_ENV = ("QWEN_HOME", "QWEN_SYSTEM_MD", "QWEN_CODE_SESSION_ID", "QWEN_PROJECT_DIR")
MAX_SETTINGS_BYTES = 1024 * 1024


def find_cli(env: Mapping[str, str]) -> str | None:
    """``MEMDIR_QWEN_CLI`` when set, else ``qwen`` on the env's PATH."""
    return find_executable(env, "MEMDIR_QWEN_CLI", "qwen")


def model_words(host_model: str) -> str:
    return text_cli.model_words("Qwen Code", host_model)


def child_settings(user: Any, model: str | None) -> dict[str, Any]:
    """The child's settings: the user's model and login, memdir's switches."""
    kept = {k: user[k] for k in KEPT_SETTINGS if isinstance(user, dict) and k in user}
    if model is not None:
        current = kept.get("model")
        kept["model"] = {**(current if isinstance(current, dict) else {}), "name": model}
    return {**kept, **SWITCHES}


def _user_settings(home: Path) -> Any:
    path = home / "settings.json"
    try:
        if not path.is_file() or path.stat().st_size > MAX_SETTINGS_BYTES:
            return {}
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return {}  # the child then finds no login and says so: offline, not a crash


def read_events(stdout: str) -> Answer:
    """The reply of a ``-o json`` run: its ``result`` event (text, tokens, error)."""
    answer = Answer()
    try:
        events = json.loads(stdout)
    except ValueError:
        return answer
    for event in events if isinstance(events, list) else []:
        if not isinstance(event, dict) or event.get("type") != "result":
            continue
        answer.text = str(event.get("result") or "")
        usage = event.get("usage")
        if isinstance(usage, dict):
            cached = count(usage.get("cache_read_input_tokens"))
            answer.usage = Usage(
                input_tokens=count(usage.get("input_tokens")),  # as reported: a budget errs high
                output_tokens=count(usage.get("output_tokens")),
                cache_read_tokens=cached,
            )
        if event.get("is_error"):
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            answer.error = str(message or event.get("subtype") or "the run failed")
    return answer


class HostCliProvider(TextCliProvider):
    """``Provider`` over ``qwen`` headless (prompt on stdin)."""

    HOST = "qwen"
    TITLE = "the Qwen Code CLI (`qwen`)"
    NOISE = ("Ripgrep not available",)

    def invocation(self, system: str, prompt: str, home: Path) -> Invocation:
        config = home / ".qwen"
        config.mkdir(mode=0o700)
        source = config_home(self.env, "QWEN_HOME", ".qwen")
        settings = child_settings(_user_settings(source), chosen_model(self.model))
        (config / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        for name in LOGIN_FILES:
            if (source / name).is_file():
                shutil.copyfile(source / name, config / name)
                (config / name).chmod(0o600)
        system_md = home / "system.md"
        system_md.write_text(system, encoding="utf-8")
        env = {k: v for k, v in self.env.items() if k not in DROPPED_ENV}
        env.update(
            {
                "QWEN_HOME": str(config),
                "QWEN_SYSTEM_MD": str(system_md),
                CHILD_ENV_FLAG: "1",
                "NO_COLOR": "1",
            }
        )
        return Invocation(list(FLAGS), env, prompt)

    def read(self, stdout: str, stderr: str, returncode: int) -> Answer:
        answer = read_events(stdout)
        if answer.usage is None and answer.error is None:
            answer.error = stderr or "Qwen Code printed no reply"
        return answer


__all__ = ["HostCliProvider", "child_settings", "find_cli", "model_words", "read_events"]
