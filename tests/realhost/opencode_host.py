"""The real OpenCode CLI in a sandbox: an isolated HOME and XDG dirs, a fake OpenAI-compatible
API, this checkout's memdir.

``OpenCodeHost`` runs ``opencode run`` (and ``--continue``) as a real process with:
- ``HOME`` and every ``XDG_*_HOME`` (so ``~/.config/opencode``, OpenCode's SQLite database under
  ``~/.local/share/opencode``, ``~/.memdir``) inside the test's tmp dir;
- a user ``opencode.json`` naming one custom provider, ``@ai-sdk/openai-compatible`` (bundled in
  the binary: nothing is fetched) with its ``baseURL`` at a
  :class:`~tests.realhost.fake_openai.FakeOpenAI` on 127.0.0.1 (Chat Completions, streamed);
- ``HTTPS_PROXY``/``HTTP_PROXY`` at that fake too, so what OpenCode would fetch off loopback
  (models.dev, npm) is logged in ``api.escapes`` and refused, never sent; the switches that
  turn off its auto-update, model-list fetch, sharing and its reading of ``~/.claude``;
- a ``memdir`` on ``PATH`` that runs *this checkout's* sources with the test interpreter.

The CLI is the pinned npm package that ``scripts/install-test-deps.sh`` installs into
``~/.cache/memdir-test/opencode-<version>/`` (``MEMDIR_TEST_OPENCODE`` overrides the binary).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.realhost.fake_openai import FakeOpenAI, LoggedRequest
from tests.realhost.host import SRC, MemdirUser

HERE = Path(__file__).resolve().parent
VERSION = (HERE / "opencode.version").read_text().strip()
# Computed at import, before the autouse fixture points HOME at a scratch dir.
_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
DEFAULT_CLI = _CACHE / "memdir-test" / f"opencode-{VERSION}" / "node_modules" / ".bin" / "opencode"
CLI_OVERRIDE = os.environ.get("MEMDIR_TEST_OPENCODE")
MODEL = "fake/fake-model"
TITLE_PROMPT = "Generate a title for this conversation"
QUIET_ENV = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    # it would read ~/.claude (CLAUDE.md, skills): the cross-host test shares that HOME
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
}


def find_cli() -> Path | None:
    """The pinned CLI, or None when it is not installed."""
    cli = Path(CLI_OVERRIDE) if CLI_OVERRIDE else DEFAULT_CLI
    return cli if cli.is_file() and os.access(cli, os.X_OK) else None


MISSING_CLI = (
    f"OpenCode {VERSION} is not installed at {DEFAULT_CLI}: "
    "run `bash scripts/install-test-deps.sh` (CI does), "
    "or set MEMDIR_TEST_OPENCODE to an opencode binary"
)


def is_title(request: LoggedRequest) -> bool:
    """OpenCode's own title request (its ``title`` agent), not the session's model turn."""
    return any(TITLE_PROMPT in text for text in request.message_texts("user")[:1])


@dataclass
class OpenCodeHost(MemdirUser):
    """One sandboxed user of the real OpenCode CLI: home, project dir, env; run sessions."""

    cli: Path
    api: FakeOpenAI
    root: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    timings: list[tuple[tuple[str, ...], float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.make_sandbox(self.root, link_cli="opencode")  # `opencode --version` at install
        self.user_config_path.parent.mkdir(parents=True, exist_ok=True)
        self.user_config_path.write_text(json.dumps(self.base_config(), indent=2) + "\n")

    @property
    def config_home(self) -> Path:
        return self.home / ".config"

    @property
    def user_config_path(self) -> Path:
        return self.config_home / "opencode" / "opencode.json"

    def base_config(self) -> dict[str, Any]:
        return {
            "$schema": "https://opencode.ai/config.json",
            "provider": {
                "fake": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Fake",
                    "options": {"baseURL": self.api.base_url, "apiKey": "dummy-not-real"},
                    "models": {"fake-model": {"name": "Fake model"}},
                }
            },
            "model": MODEL,
            "small_model": MODEL,
            "autoupdate": False,
            "share": "disabled",
        }

    @property
    def env(self) -> dict[str, str]:
        env = {
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.config_home),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
            "HTTPS_PROXY": self.api.proxy_url,
            "HTTP_PROXY": self.api.proxy_url,
            "NO_PROXY": "127.0.0.1,localhost",
            "NO_COLOR": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "PYTHONPATH": str(SRC),
            **QUIET_ENV,
        }
        env.update(self.extra_env)
        return env

    def opencode(
        self, *args: str, timeout: float = 120, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        return self.run_cli(*args, timeout=timeout, check=check)

    def prompt(
        self, text: str, *args: str, resume: bool = False, timeout: float = 120, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """``opencode run TEXT`` (``--continue`` when ``resume``) with any extra flags."""
        flags = ["--continue"] if resume else []
        return self.opencode("run", *flags, *args, text, timeout=timeout, check=check)

    def main_requests(self) -> list[LoggedRequest]:
        """The session's model requests (OpenCode's title requests left out)."""
        return [r for r in self.api.model_requests() if not is_title(r)]
