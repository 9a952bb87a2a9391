"""The ``cline`` provider: memdir's background model through the user's own Cline CLI.

Verified against Cline CLI 3.0.65: ``cline --json -s <system> <prompt>`` runs one prompt and
prints one JSON event a line, closing with ``run_result`` (``text``, ``usage`` with Cline's own
``totalCost``, ``finishReason``); stdin, when piped, is appended to the prompt argument. The
child runs with:

* ``-s`` replacing Cline's whole system prompt with memdir's;
* ``--auto-approve false`` and plan mode (``-p``): Cline still offers its tools, but headless
  every call is refused ("requires approval in a TTY session") and plan mode blocks changes
  besides — memdir's tools travel in text and run in memdir's own loop;
* a **private ``--config`` and ``--data-dir``**: none of the user's plugins (memdir's own
  included), hooks, rules or skills are loaded, and the run's session is deleted with the dir,
  so ``memdir backfill`` never reads memdir's calls back. Only the user's provider settings
  (``data/settings/providers.json``, where ``cline auth`` keeps the login) are copied in;
* ``CLINE_SESSION_BACKEND_MODE=local``: no hub daemon is started that would outlive the run.

Cline sends its telemetry whatever the environment says (in the tests the local proxy refuses
it); the prompt travels on stdin, the system prompt as one argument (at most
:data:`MAX_SYSTEM_BYTES`).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from memdir.config import CHILD_ENV_FLAG
from memdir.errors import HostModelUnavailableError
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
    json_lines,
)

FLAGS = ("--json", "-p", "--auto-approve", "false", "--retries", "2")
LEAD = "Reply to what follows."  # the prompt argument JSON mode requires; stdin follows it
MAX_SYSTEM_BYTES = 120 * 1024  # one argv string: Linux refuses more than 128 KiB
PROVIDERS = Path("data") / "settings" / "providers.json"
MAX_PROVIDERS_BYTES = 1024 * 1024


def find_cli(env: Mapping[str, str]) -> str | None:
    """``MEMDIR_CLINE_CLI`` when set, else ``cline`` on the env's PATH."""
    return find_executable(env, "MEMDIR_CLINE_CLI", "cline")


def model_words(host_model: str) -> str:
    return text_cli.model_words("Cline", host_model)


def read_events(stdout: str) -> Answer:
    """The reply of a ``--json`` run: its ``run_result`` (text, tokens, Cline's own cost)."""
    answer = Answer()
    for event in json_lines(stdout):
        if event.get("type") == "error" and answer.error is None:
            answer.error = str(event.get("message") or "the run failed")
        if event.get("type") != "run_result":
            continue
        answer.text = str(event.get("text") or "")
        usage = event.get("usage")
        if isinstance(usage, dict):
            answer.usage = Usage(
                input_tokens=count(usage.get("inputTokens")),
                output_tokens=count(usage.get("outputTokens")),
                cache_read_tokens=count(usage.get("cacheReadTokens")),
                cache_write_tokens=count(usage.get("cacheWriteTokens")),
            )
            cost = usage.get("totalCost")
            if isinstance(cost, (int, float)) and cost > 0:
                answer.cost_usd = float(cost)  # 0: a model Cline has no price for
        finish = event.get("finishReason")
        if finish == "completed":
            answer.error = None
        else:  # its text is then Cline's own account of the failure
            answer.error = " ".join(answer.text.split())[:300] or f"the run ended: {finish}"
    return answer


class HostCliProvider(TextCliProvider):
    """``Provider`` over ``cline --json`` (prompt on stdin)."""

    HOST = "cline"
    TITLE = "the Cline CLI (`cline`)"
    NOISE = ("DeprecationWarning", "      at ")  # its AI SDK's warnings, on every run

    def invocation(self, system: str, prompt: str, home: Path) -> Invocation:
        if len(system.encode("utf-8")) > MAX_SYSTEM_BYTES:
            raise HostModelUnavailableError(
                f"memdir's instructions are over {MAX_SYSTEM_BYTES // 1024} KiB, more than "
                "the Cline CLI can be given"
            )
        config, data = home / "config", home / "data"
        config.mkdir(mode=0o700)
        (home / PROVIDERS).parent.mkdir(mode=0o700, parents=True)
        login = config_home(self.env, "CLINE_DIR", ".cline") / PROVIDERS
        if login.is_file() and login.stat().st_size <= MAX_PROVIDERS_BYTES:
            shutil.copyfile(login, home / PROVIDERS)
            (home / PROVIDERS).chmod(0o600)
        args = [*FLAGS, "-s", system, "--config", str(config), "--data-dir", str(data)]
        model = chosen_model(self.model)
        if model is not None:
            args += ["-m", model]
        env = dict(self.env)
        env.update({CHILD_ENV_FLAG: "1", "CLINE_SESSION_BACKEND_MODE": "local", "NO_COLOR": "1"})
        return Invocation([*args, LEAD], env, prompt)

    def read(self, stdout: str, stderr: str, returncode: int) -> Answer:
        answer = read_events(stdout)
        if answer.usage is None and answer.error is None:
            answer.error = stderr or "the Cline CLI printed no reply"
        return answer


__all__ = ["HostCliProvider", "find_cli", "model_words", "read_events"]
