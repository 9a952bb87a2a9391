"""What the hook core needs from one agent host: its dialect.

The lifecycle (session start, recall per prompt, extraction after a turn, notes before a
compaction, the end of a session) is memdir's and lives once, in this package. A host — Claude
Code, Codex CLI, Gemini CLI — differs only in how it says things: what its events are called,
the JSON it sends a hook and the JSON it reads back, the format of its transcript, the config
files that wire memdir in, and the headless form of its CLI. A :class:`Dialect` says exactly
that and nothing more; adding a host is one module under :mod:`memdir.adapters.hosts` plus its
tests.

Invariant: the core never imports a dialect. The entry points (``memdir hook``, ``memdir
install``, the recall daemon) look a dialect up by name in :mod:`memdir.adapters.hosts` and hand
it in.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from memdir.adapters.hooks.hookio import HookInput
    from memdir.transcripts import Entry

# memdir's own event words, in lifecycle order. A host maps the ones it has onto its names.
EVENT_WORDS = ("session-start", "user-prompt-submit", "stop", "pre-compact", "session-end")


@dataclass(frozen=True, slots=True)
class HookSpec:
    """One hook memdir installs: the host's event name, the command line, a timeout in the
    host's unit, an optional matcher, whether the host may run it without waiting, and a name
    for hosts that identify hooks by one (Gemini CLI's ``hooksConfig.disabled``); ``flat``
    for hosts that list the hook itself under the event, with no group (Cursor)."""

    event: str
    command: str
    timeout: int
    matcher: str | None = None
    run_async: bool = False
    name: str | None = None
    flat: bool = False
    # a flat hook's keys: Cursor's ``command``/``timeout``, Copilot CLI's ``bash``/``timeoutSec``
    keys: tuple[str, str] = ("command", "timeout")
    # what a host shows for the hook where it names hooks by it (Codex's ``/hooks`` list and
    # its spinner: ``statusMessage``)
    status: str | None = None
    typed: bool = False  # a flat hook that must say ``"type": "command"`` (Antigravity)

    def entry(self) -> dict[str, Any]:
        """The ``{"matcher", "hooks": [{"type": "command", ...}]}`` group most hosts share,
        or, when ``flat``, Cursor's ``{"command", "timeout"}`` / Copilot CLI's ``{"type":
        "command", "bash", "timeoutSec"}``."""
        if self.flat:
            command, timeout = self.keys
            kind = {"type": "command"} if self.typed or command != "command" else {}
            return {**kind, command: self.command, timeout: self.timeout}
        hook: dict[str, Any] = {"type": "command", "command": self.command, "timeout": self.timeout}
        if self.name is not None:
            hook = {"name": self.name, **hook}
        if self.status is not None:
            hook["statusMessage"] = self.status
        if self.run_async:
            hook["async"] = True
        group: dict[str, Any] = {"hooks": [hook]}
        if self.matcher is not None:
            group = {"matcher": self.matcher, **group}
        return group


@dataclass(frozen=True, slots=True)
class Target:
    """One config file an install edits: ``kind`` "hooks" (a hooks object at ``key``),
    "named-hooks" (one top-level ``"memdir": {event: [hooks]}`` group: Antigravity),
    "mcp" (a servers object at ``key`` in JSON), "mcp-toml" (a ``[key.memdir]`` table) or
    "file" (a whole file memdir owns, its text from the host's optional ``file_text(target,
    command, loc)``: OpenCode's plugin). A host may also give ``mcp_entry(command)`` (its own
    server entry shape) and ``check_install(scope, loc)`` (its own refusals), both optional.
    ``server`` holds keys the host wants in memdir's MCP server entry besides its command
    (Gemini CLI's ``trust``); ``mcp_args`` go after ``memdir mcp`` (``--preload`` for a host
    whose only recall is the agent calling ``memory_recall``); ``fields`` top-level keys a
    hooks file must hold besides ``hooks`` (Cursor's ``"version": 1``), added when absent and
    removed with the hooks. Several targets may name one file (Gemini CLI keeps hooks and MCP
    servers in the same ``settings.json``)."""

    path: Path
    kind: str
    key: tuple[str, ...] = ()
    server: Mapping[str, Any] = field(default_factory=dict)
    mcp_args: tuple[str, ...] = ()
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Locations:
    """Where each host keeps its files, resolved from the injected environment."""

    home: Path
    project_root: Path
    claude_config_dir: Path
    platform: str = sys.platform
    appdata: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)  # a host's own dirs (CODEX_HOME)

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, home: Path, project_root: Path) -> Locations:
        claude = env.get("CLAUDE_CONFIG_DIR")
        appdata = env.get("APPDATA")
        return cls(
            home=home,
            project_root=project_root,
            claude_config_dir=Path(claude) if claude else home / ".claude",
            appdata=Path(appdata) if appdata else None,
            env=dict(env),
        )

    def desktop_config(self) -> Path:
        if self.platform == "darwin":
            base = self.home / "Library" / "Application Support"
        elif self.platform.startswith("win"):
            base = self.appdata or self.home / "AppData" / "Roaming"
        else:
            base = self.home / ".config"
        return base / "Claude" / "claude_desktop_config.json"


class Installable(Protocol):
    """A host ``memdir install`` can wire memdir into (its MCP server, perhaps hooks)."""

    name: str  # the CLI word: ``memdir install <name>``, ``memdir hook --host <name>``
    title: str  # for people: "Codex CLI"
    scopes: tuple[str, ...]  # of "user", "project"; the first is the default

    def install_targets(self, scope: str, loc: Locations) -> list[Target]:
        """The files ``memdir install <name> --<scope>`` edits."""
        ...

    def hook_specs(self, command: Sequence[str]) -> list[HookSpec]:
        """memdir's hooks in the host's terms, each running ``command hook ...`` ([] for none)."""
        ...

    def install_notes(self, scope: str, loc: Locations) -> list[str]:
        """What the user must still do after an install (a trust step), in plain words."""
        ...

    def problems(self, loc: Locations) -> list[dict[str, str]]:
        """``memdir doctor`` findings about this host's install (hooks not trusted yet)."""
        ...


class Dialect(Installable, Protocol):
    """One host's way of saying memdir's lifecycle."""

    events: Mapping[str, str]  # memdir event word -> the host's event name (only those it has)
    # the headless form of the host's CLI ("claude -p"), and the provider spec prefix that runs
    # it as memdir's background model ("claude-code"); None where the host has none memdir uses
    headless: str | None
    model_provider: str | None

    def parse(self, event: str, body: Mapping[str, Any]) -> HookInput:
        """memdir's event from the host's JSON object (size, encoding, JSON already checked);
        :class:`~memdir.errors.HookInputError` when it cannot be used."""
        ...

    def render(self, event: str, context: str, notice: str | None) -> str:
        """The host's stdout for ``context`` to reach the model ('' for nothing)."""
        ...

    def transcript_roots(self, env: Mapping[str, str]) -> Sequence[Path]:
        """Where the host keeps its transcripts: a symlinked transcript must resolve inside."""
        ...

    def unattended(self, env: Mapping[str, str]) -> bool:
        """True when nobody waits at this session's prompt (a headless run): recall may then
        wait for a daemon that is still loading instead of answering empty."""
        ...

    def read_entries(self, path: Path, *, tail_bytes: int | None = None) -> list[Entry] | None:
        """The host transcript (its newest ``tail_bytes`` when given) as memdir's entries (the
        Claude Code JSONL shape), or None when the file already is in that shape."""
        ...

    # Optional, found with getattr (a dialect without one simply lacks the feature):
    # ``compactions(path) -> int`` (the transcript records compactions, see hooks.lifecycle) and
    # ``project_transcripts(env, project_root) -> list[Path]`` (the project's past sessions, for
    # ``memdir backfill``; :mod:`memdir.adapters.hosts.sessions`).


def hook_command(prefix: str, dialect_name: str, word: str) -> str:
    """The command line of one installed hook: ``<memdir> hook [--host <name>] <word>``."""
    host = "" if dialect_name == "claude-code" else f" --host {dialect_name}"
    return f"{prefix} hook{host} {word}"


__all__ = [
    "EVENT_WORDS",
    "Dialect",
    "HookSpec",
    "Installable",
    "Locations",
    "Target",
    "hook_command",
]
