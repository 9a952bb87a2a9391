"""One harness for the npm hosts that speak to an OpenAI-compatible API: a real CLI in a sandbox.

Each host is a :class:`HostKind` — its pinned package, its binary, its config and environment
switches, its one-shot and continue flags — and :class:`NpmHost` is the one sandboxed user they
all share: ``HOME`` in the test's tmp dir, the fake :class:`~tests.realhost.fake_openai.FakeOpenAI`
as its model API (and as ``HTTPS_PROXY``, so anything sent off loopback is logged in
``api.escapes`` and refused), and this checkout's ``memdir`` on ``PATH``. Adding a host is one
``HostKind``, not another harness class.

The CLIs are the pinned npm packages ``scripts/install-test-deps.sh`` installs into
``~/.cache/memdir-test/<name>-<version>/`` (``MEMDIR_TEST_<NAME>`` overrides a binary).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.realhost.fake_openai import FakeOpenAI, LoggedRequest
from tests.realhost.host import SRC, MemdirUser

HERE = Path(__file__).resolve().parent
# Computed at import, before the autouse fixture points HOME at a scratch dir.
_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
MODEL = "fake-model"


@dataclass(frozen=True)
class HostKind:
    """What differs between the npm hosts: where the CLI is, how it is configured and run."""

    name: str  # memdir's host word
    package: str  # the npm package
    binary: str  # its executable under node_modules/.bin
    configure: Callable[[NpmHost], None]  # writes the user config that points it at the fake
    environment: Callable[[NpmHost], dict[str, str]]
    one_shot: Callable[[str], list[str]]  # argv for one prompt
    resume: Callable[[str], list[str]]  # argv for one prompt in the last session
    # the user's answer to the host's folder-trust prompt, where it has one
    trust: Callable[[NpmHost], None] = lambda host: None
    # hosts the CLI sends telemetry to with no switch to stop it: refused by the proxy, never
    # sent, and not counted as an escape of the user's data
    telemetry: tuple[str, ...] = ()

    @property
    def version(self) -> str:
        return (HERE / f"{self.name}.version").read_text().strip()

    @property
    def default_cli(self) -> Path:
        base = _CACHE / "memdir-test" / f"{self.name}-{self.version}"
        return base / "node_modules" / ".bin" / self.binary

    def find_cli(self) -> Path | None:
        override = os.environ.get(f"MEMDIR_TEST_{self.name.upper()}")
        cli = Path(override) if override else self.default_cli
        return cli if cli.is_file() and os.access(cli, os.X_OK) else None

    @property
    def missing(self) -> str:
        return (
            f"{self.package} {self.version} is not installed at {self.default_cli}: run "
            f"`bash scripts/install-test-deps.sh` (CI does), or set "
            f"MEMDIR_TEST_{self.name.upper()} to its binary"
        )


@dataclass
class NpmHost(MemdirUser):
    """One sandboxed user of one npm host CLI: home, project dir, env; run sessions."""

    kind: HostKind
    cli: Path
    api: FakeOpenAI
    root: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    timings: list[tuple[tuple[str, ...], float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.make_sandbox(self.root, link_cli=self.kind.binary)
        self.kind.configure(self)

    @property
    def env(self) -> dict[str, str]:
        env = {
            "HOME": str(self.home),
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
            "MEMDIR_PREPARE_RECALL": "0",
            **self.kind.environment(self),
        }
        env.update(self.extra_env)
        return env

    def prompt(
        self, text: str, *, resume: bool = False, timeout: float = 120, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """One prompt in a new session, or (``resume``) in the last one."""
        argv = self.kind.resume(text) if resume else self.kind.one_shot(text)
        return self.run_cli(*argv, timeout=timeout, check=check)

    def escapes(self) -> list[str]:
        """What the CLI tried to send off loopback, less its known telemetry (all refused)."""
        return [e for e in self.api.escapes if e.split(":")[0] not in self.kind.telemetry]

    def trust_project(self) -> None:
        """Trust the project as the user would at the host's prompt (docs/hosts.md)."""
        self.kind.trust(self)

    def main_requests(self) -> list[LoggedRequest]:
        """The session's model requests (those that offer the agent's tools)."""
        return [r for r in self.api.model_requests() if r.body.get("tools")]

    def write_json(self, path: Path, value: dict[str, Any]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value, indent=2) + "\n")


# -- Qwen Code -----------------------------------------------------------------------------------


def _qwen_config(host: NpmHost) -> None:
    provider = {"id": MODEL, "name": "Fake", "baseUrl": host.api.base_url, "envKey": "FAKE_KEY"}
    host.write_json(
        host.home / ".qwen" / "settings.json",
        {
            "modelProviders": {"openai": [provider]},
            "security": {"auth": {"selectedType": "openai"}},
            "model": {"name": MODEL},
            # its own memory agent would take scripted replies and add a second memory
            "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"enableAutoUpdate": False},
        },
    )


QWEN = HostKind(
    name="qwen",
    package="@qwen-code/qwen-code",
    binary="qwen",
    configure=_qwen_config,
    environment=lambda host: {"FAKE_KEY": "dummy-not-real", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"},
    one_shot=lambda text: ["--yolo", text],
    resume=lambda text: ["--yolo", "-c", text],
)


# -- GitHub Copilot CLI --------------------------------------------------------------------------


def _copilot_config(host: NpmHost) -> None:
    (host.home / ".copilot").mkdir(parents=True, exist_ok=True)


def _copilot_trust(host: NpmHost) -> None:
    # config.json is the CLI's own file (it writes comments above the JSON): what its folder
    # prompt's "yes, and remember" adds is the trustedFolders list
    host.write_json(host.home / ".copilot" / "config.json", {"trustedFolders": [str(host.project)]})


COPILOT = HostKind(
    name="copilot",
    package="@github/copilot",
    binary="copilot",
    configure=_copilot_config,
    environment=lambda host: {
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": host.api.base_url,
        "COPILOT_MODEL": MODEL,
        "COPILOT_AUTO_UPDATE": "false",
    },
    one_shot=lambda text: ["-p", text, "--allow-all-tools"],
    resume=lambda text: ["--continue", "-p", text, "--allow-all-tools"],
    trust=_copilot_trust,
)

# -- pi --------------------------------------------------------------------------------------------


def _pi_config(host: NpmHost) -> None:
    provider = {
        "baseUrl": host.api.base_url,
        "api": "openai-completions",
        "apiKey": "dummy-not-real",
        "models": [{"id": MODEL}],
    }
    agent = host.home / ".pi" / "agent"
    host.write_json(agent / "models.json", {"providers": {"fake": provider}})
    # what pi saves once the user picks a model: what a bare `pi -p` (memdir's model) runs on
    host.write_json(agent / "settings.json", {"defaultProvider": "fake", "defaultModel": MODEL})


_PI_MODEL = ["--provider", "fake", "--model", MODEL]

PI = HostKind(
    name="pi",
    package="@mariozechner/pi-coding-agent",
    binary="pi",
    configure=_pi_config,
    environment=lambda host: {"PI_OFFLINE": "1"},
    one_shot=lambda text: [*_PI_MODEL, "-p", text],
    resume=lambda text: [*_PI_MODEL, "-c", "-p", text],
)

# -- Cline CLI -------------------------------------------------------------------------------------


def _cline_config(host: NpmHost) -> None:
    # what `cline auth -p openai-compatible -k KEY -m MODEL -b URL` writes, run as the user would
    base = ["-p", "openai-compatible", "-k", "dummy-not-real", "-m", MODEL, "-b", host.api.base_url]
    host.run_cli("auth", *base, timeout=120, check=True)


CLINE = HostKind(
    name="cline",
    package="cline",
    binary="cline",
    configure=_cline_config,
    # the default backend starts a hub daemon on 127.0.0.1 that outlives the run
    environment=lambda host: {"CLINE_SESSION_BACKEND_MODE": "local"},
    one_shot=lambda text: [text],
    resume=lambda text: [text],  # continuing a session needs a TTY: a new run of its own
    telemetry=("otel.cline.bot", "data.cline.bot"),
)

KINDS = {kind.name: kind for kind in (QWEN, COPILOT, PI, CLINE)}
