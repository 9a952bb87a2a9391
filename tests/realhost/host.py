"""The real Claude Code CLI in a sandbox: an isolated HOME, a fake API, and this checkout's memdir.

``ClaudeHost`` runs ``claude -p`` (and ``--continue``, ``--output-format stream-json``) as a real
process with:
- ``HOME`` (and so ``~/.claude``, ``~/.claude.json``, ``~/.memdir``) inside the test's tmp dir;
- ``ANTHROPIC_BASE_URL`` at a :class:`~tests.realhost.fakeapi.FakeAnthropic` on 127.0.0.1 and a
  dummy API key, and the switches that turn off the CLI's telemetry, error reports, auto-updates
  and every other non-essential request (so nothing leaves the machine);
- a ``memdir`` on ``PATH`` that runs *this checkout's* sources with the test interpreter, so hooks
  and the MCP server the host starts run the code under test, not whatever else is installed.

The CLI is the pinned npm package that ``scripts/install-test-deps.sh`` installs into
``~/.cache/memdir-test/claude-code-<version>/`` (``MEMDIR_TEST_CLAUDE`` overrides the binary).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import memdir
from tests.realhost.fakeapi import FakeAnthropic

HERE = Path(__file__).resolve().parent
VERSION = (HERE / "claude-code.version").read_text().strip()
# Computed at import, before the autouse fixture points HOME at a scratch dir.
_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
DEFAULT_CLI = _CACHE / "memdir-test" / f"claude-code-{VERSION}" / "node_modules" / ".bin" / "claude"
CLI_OVERRIDE = os.environ.get("MEMDIR_TEST_CLAUDE")
SRC = Path(memdir.__file__).resolve().parent.parent  # the checkout's src/ (or site-packages)

# Everything the CLI would send that is not a model request, and its self-update.
QUIET_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_UPDATES": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_GROWTHBOOK": "1",
    "DISABLE_INSTALLATION_CHECKS": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
    # The host's own auto-memory would add a second memory system to every request.
    "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
    # `-p` sends the first request without waiting for MCP servers that are still starting; wait,
    # so a test's tool call never races the server's start-up.
    "MCP_CONNECTION_NONBLOCKING": "false",
}
DUMMY_KEY = "sk-ant-api03-memdir-test-dummy-key-not-real"


def find_cli() -> Path | None:
    """The pinned CLI, or None when it is not installed."""
    cli = Path(CLI_OVERRIDE) if CLI_OVERRIDE else DEFAULT_CLI
    return cli if cli.is_file() and os.access(cli, os.X_OK) else None


MISSING_CLI = (
    f"the Claude Code CLI {VERSION} is not installed at {DEFAULT_CLI}: "
    "run `bash scripts/install-test-deps.sh` (CI does), "
    "or set MEMDIR_TEST_CLAUDE to a claude binary"
)


def write_memdir_shim(bin_dir: Path) -> Path:
    """A ``memdir`` command that runs this checkout with this interpreter (hooks, MCP server)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / "memdir"
    shim.write_text(
        "#!/bin/sh\n"
        f"PYTHONPATH='{SRC}'${{PYTHONPATH:+:$PYTHONPATH}} "
        f"exec '{sys.executable}' -m memdir \"$@\"\n"
    )
    shim.chmod(0o755)
    return shim


class MemdirUser:
    """What every sandboxed host user does with memdir: run this checkout's ``memdir`` in the
    project with the host's environment, find the memory dir, stop the daemon at teardown.
    The host classes give ``bin``, ``project``, ``home`` and ``env``."""

    bin: Path
    cli: Path  # the host's own executable
    project: Path
    home: Path
    timings: list[tuple[tuple[str, ...], float]]

    @property
    def env(self) -> dict[str, str]:
        raise NotImplementedError

    def make_sandbox(self, root: Path, *dirs: Path, link_cli: str | None = None) -> None:
        """``home``, ``project`` and ``bin`` under ``root``, the ``dirs`` made too, this
        checkout's ``memdir`` shim on ``bin`` and, given a name, the host CLI linked beside it
        (an install asks it for its version)."""
        self.home, self.project, self.bin = root / "home", root / "project", root / "bin"
        for d in (self.home, self.project, *dirs):
            d.mkdir(parents=True, exist_ok=True)
        write_memdir_shim(self.bin)
        if link_cli is not None:
            (self.bin / link_cli).unlink(missing_ok=True)
            (self.bin / link_cli).symlink_to(self.cli)

    def run_cli(
        self,
        *args: str,
        timeout: float,
        check: bool,
        input: str | None = None,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run the host's CLI in the project dir (its time kept in ``timings``); ``check``
        fails the test with the tail of its output on exit != 0."""
        started = time.monotonic()
        proc = subprocess.run(
            [str(self.cli), *args],
            cwd=cwd or self.project,
            env=self.env,
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        self.timings.append((args[:2], time.monotonic() - started))
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{self.cli.name} {' '.join(args)} exited {proc.returncode}\n"
                f"stdout: {proc.stdout[-3000:]}\nstderr: {proc.stderr[-3000:]}"
            )
        return proc

    def hook_log(self) -> list[dict[str, Any]]:
        """Every hook-log record (``memdir hook log --full``), oldest first."""
        out = self.memdir("--json", "hook", "log", "--full", "--limit", "1000").stdout
        return list(json.loads(out))

    def memdir(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """This checkout's ``memdir`` with the host's environment, in the project dir."""
        proc = subprocess.run(
            [str(self.bin / "memdir"), *args],
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"memdir {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def memory_dir(self) -> Path:
        """The memory dir memdir resolves for the project (``memdir where``)."""
        where = json.loads(self.memdir("--json", "where").stdout)
        return Path(where["paths"]["memory_dir"] if "paths" in where else where["memory_dir"])

    def stop_daemon(self) -> None:
        """Stop the recall daemon a hook may have started under this HOME (teardown)."""
        if (self.bin / "memdir").exists():
            self.memdir("hook", "daemon", "stop", check=False)


@dataclass
class ClaudeHost(MemdirUser):
    """One sandboxed user of the real CLI: home, project dir, env; run sessions, run memdir."""

    cli: Path
    api: FakeAnthropic
    root: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    timings: list[tuple[tuple[str, ...], float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.make_sandbox(self.root)

    @property
    def env(self) -> dict[str, str]:
        env = {
            "HOME": str(self.home),
            "PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
            "ANTHROPIC_BASE_URL": self.api.base_url,
            "ANTHROPIC_API_KEY": DUMMY_KEY,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            # `memdir install` writes the interpreter's own `memdir` script (absolute) when the
            # shim is not "this very install": the sources under test must win there too.
            "PYTHONPATH": str(SRC),
            # the first prompt waits for a daemon still loading (deterministic recall); the
            # default — answer at once, deliver with the next prompt — has its own test
            "MEMDIR_RECALL_COLD_WAIT": "60",
            "MEMDIR_PREPARE_RECALL": "0",  # `memdir install` starts no daemon; tests opt in
            **QUIET_ENV,
        }
        env.update(self.extra_env)
        return env

    def claude(
        self, *args: str, timeout: float = 90, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        return self.run_cli(*args, timeout=timeout, check=check)

    def prompt(
        self, text: str, *args: str, resume: bool = False, timeout: float = 90, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """``claude -p TEXT`` (``--continue`` when ``resume``) with any extra flags."""
        flags = ["--continue"] if resume else []
        return self.claude("-p", text, *flags, *args, timeout=timeout, check=check)

    def stream_json(self, text: str, *args: str, resume: bool = False) -> list[dict[str, Any]]:
        """One prompt with ``--output-format stream-json``: the parsed event lines."""
        flags = ("--output-format", "stream-json", "--verbose")
        proc = self.prompt(text, *flags, *args, resume=resume)
        return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]

    def wait_until_ended(self, sessions: int = 1) -> list[dict[str, Any]]:
        """Wait for ``sessions`` finished session ends (``session-end`` hands its work to a
        detached worker, which may finish after ``claude`` exits), then return the hook log."""
        log: list[dict[str, Any]] = []

        def ended() -> bool:
            log[:] = self.hook_log()
            return sum(r["event"] == "session-end-worker" for r in log) >= sessions

        wait_for(ended, f"{sessions} session-end worker record(s)")
        return log

    def install(self, *args: str) -> None:
        """``memdir install claude-code --project`` (hooks + ``.mcp.json``), as a user would."""
        self.memdir("install", "claude-code", "--project", *args)

    def allow_project_mcp(self) -> None:
        """Approve the project's ``.mcp.json`` servers, as a user answering the trust prompt."""
        local = self.project / ".claude" / "settings.local.json"
        local.parent.mkdir(parents=True, exist_ok=True)
        data = json.loads(local.read_text()) if local.exists() else {}
        data["enableAllProjectMcpServers"] = True
        local.write_text(json.dumps(data, indent=2) + "\n")


def wait_for(predicate: Callable[[], bool], what: str, limit: float = 40.0) -> None:
    """Poll until ``predicate()`` holds: work the host left running in the background (a detached
    extraction) finishes after ``claude`` exits. The limit only bounds a hang; nothing is timed."""
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting after {limit:.0f} s for {what}")
        time.sleep(0.1)
