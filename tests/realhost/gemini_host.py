"""The real Gemini CLI in a sandbox: an isolated HOME, a fake Gemini API, this checkout's memdir.

``GeminiHost`` runs ``gemini -p`` (and ``--resume latest``, ``--output-format json|stream-json``)
as a real process with:
- ``HOME`` (so ``~/.gemini``, ``~/.memdir``) inside the test's tmp dir, and a user
  ``~/.gemini/settings.json`` that selects API-key auth and turns off usage statistics (the
  Clearcut uploads, the only non-model traffic a headless run makes), telemetry, auto-update and
  IDE integration;
- ``GOOGLE_GEMINI_BASE_URL`` at a :class:`~tests.realhost.fake_gemini.FakeGemini` on 127.0.0.1
  and a dummy ``GEMINI_API_KEY``;
- ``GEMINI_CLI_TRUST_WORKSPACE=true``: folder trust is on by default and a headless run in an
  untrusted folder exits with ``FatalUntrustedWorkspaceError`` (``--skip-trust`` sets the same
  variable); without trust no settings hook runs at all, user hooks included;
- a ``memdir`` on ``PATH`` that runs *this checkout's* sources with the test interpreter.

The CLI is the pinned npm package that ``scripts/install-test-deps.sh`` installs into
``~/.cache/memdir-test/gemini-cli-<version>/`` (``MEMDIR_TEST_GEMINI`` overrides the binary).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.realhost.fake_gemini import FakeGemini
from tests.realhost.host import SRC, MemdirUser

HERE = Path(__file__).resolve().parent
VERSION = (HERE / "gemini-cli.version").read_text().strip()
# Computed at import, before the autouse fixture points HOME at a scratch dir.
_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
DEFAULT_CLI = _CACHE / "memdir-test" / f"gemini-cli-{VERSION}" / "node_modules" / ".bin" / "gemini"
CLI_OVERRIDE = os.environ.get("MEMDIR_TEST_GEMINI")
DUMMY_KEY = "memdir-test-dummy-gemini-key-not-real"

# The user settings every sandbox starts from (merged under a test's own with ``settings()``).
BASE_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "ide": {"enabled": False},
}


def find_cli() -> Path | None:
    """The pinned CLI, or None when it is not installed."""
    cli = Path(CLI_OVERRIDE) if CLI_OVERRIDE else DEFAULT_CLI
    return cli if cli.is_file() and os.access(cli, os.X_OK) else None


MISSING_CLI = (
    f"the Gemini CLI {VERSION} is not installed at {DEFAULT_CLI}: "
    "run `bash scripts/install-test-deps.sh` (CI does), "
    "or set MEMDIR_TEST_GEMINI to a gemini binary"
)


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``extra`` merged into a copy of ``base``, objects recursively (settings layers)."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


@dataclass
class GeminiHost(MemdirUser):
    """One sandboxed user of the real Gemini CLI: home, project dir, env; run sessions."""

    cli: Path
    api: FakeGemini
    root: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    timings: list[tuple[tuple[str, ...], float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.make_sandbox(self.root, self.root / "home" / ".gemini")
        self.settings()

    @property
    def user_settings_path(self) -> Path:
        return self.home / ".gemini" / "settings.json"

    @property
    def project_settings_path(self) -> Path:
        return self.project / ".gemini" / "settings.json"

    def settings(self, extra: dict[str, Any] | None = None, *, project: bool = False) -> None:
        """Write the user settings (``BASE_SETTINGS`` + ``extra``), or the project's (``extra``)."""
        path = self.project_settings_path if project else self.user_settings_path
        data = (extra or {}) if project else merge(BASE_SETTINGS, extra or {})
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2) + "\n")

    @property
    def env(self) -> dict[str, str]:
        env = {
            "HOME": str(self.home),
            "PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
            "GOOGLE_GEMINI_BASE_URL": self.api.base_url,
            "GEMINI_API_KEY": DUMMY_KEY,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "NO_COLOR": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "PYTHONPATH": str(SRC),
        }
        env.update(self.extra_env)
        return env

    def gemini(
        self, *args: str, timeout: float = 90, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        return self.run_cli(*args, timeout=timeout, check=check)

    def prompt(
        self, text: str, *args: str, resume: bool = False, timeout: float = 90, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """``gemini -p TEXT`` (``--resume latest`` when ``resume``) with any extra flags."""
        flags = ["--resume", "latest"] if resume else []
        return self.gemini("-p", text, *flags, *args, timeout=timeout, check=check)

    def json(self, text: str, *args: str, resume: bool = False) -> dict[str, Any]:
        """One prompt with ``--output-format json``: ``{session_id, response, stats}``."""
        proc = self.prompt(text, "--output-format", "json", *args, resume=resume)
        return dict(json.loads(proc.stdout))

    def stream_json(self, text: str, *args: str, resume: bool = False) -> list[dict[str, Any]]:
        """One prompt with ``--output-format stream-json``: the parsed event lines."""
        proc = self.prompt(text, "--output-format", "stream-json", *args, resume=resume)
        return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]

    def project_temp_dir(self) -> Path:
        """``~/.gemini/tmp/<slug>/``: the slug ``projects.json`` maps the project to."""
        registry = json.loads((self.home / ".gemini" / "projects.json").read_text())
        return self.home / ".gemini" / "tmp" / registry["projects"][str(self.project)]

    def session_files(self) -> list[Path]:
        """The project's main session files (``chats/session-*.jsonl``), oldest first."""
        return sorted(self.project_temp_dir().joinpath("chats").glob("session-*.jsonl"))
