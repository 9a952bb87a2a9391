"""``memdir install <host>`` / ``uninstall``: plan the config changes, show or apply them.

Hosts and files:
- ``claude-code``: hooks in ``settings.json`` (``--user``: ``~/.claude/settings.json``;
  ``--project``: ``<project>/.claude/settings.json``) and the MCP server where Claude Code reads
  MCP servers (user: ``~/.claude.json`` ``mcpServers``; project: ``<project>/.mcp.json``).
- ``cursor``: ``~/.cursor/mcp.json`` or ``<project>/.cursor/mcp.json``.
- ``claude-desktop``: its ``claude_desktop_config.json`` (the memory dir is pinned with ``--dir``:
  the desktop app has no project directory).

Invariants: a file is backed up (under memdir's home) before it is rewritten, rewritten with
:func:`memdir.atomic.atomic_write` keeping its permission bits, and the install is recorded in
``<memdir home>/installs.json`` — what was added and which containers were created — so that
``uninstall`` removes exactly that and a file the install created is deleted again when it
ends up empty. ``--dry-run`` computes the same plan and only prints its diff.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import json
import os
import shlex
import stat
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.adapters.claude_code import settings_merge as sm
from memdir.adapters.claude_code.hookio import EVENTS
from memdir.atomic import atomic_write, locked
from memdir.errors import InstallError, UnreadableFileError
from memdir.pathsafe import open_regular

HOSTS = ("claude-code", "cursor", "claude-desktop")
SERVER_NAME = "memdir"
HOOK_TIMEOUTS = {
    "session-start": 30,
    "user-prompt-submit": 15,
    "stop": 15,
    "pre-compact": 60,
    "session-end": 15,
}
# No hook is installed ``async``: in ``claude -p`` the host kills an async hook still running
# when the session ends and then waits ~1.5 s, longer than memdir's hooks take. ``stop`` and
# ``session-end`` answer at once instead: their work runs in detached workers.


@dataclass
class FileChange:
    path: Path
    before: str | None  # None: the file does not exist
    after: str | None  # None: delete the file
    added: dict[str, Any] = field(default_factory=dict)  # what the record keeps

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=f"{self.path} (now)" if self.before is not None else "/dev/null",
            tofile=f"{self.path} (after)" if self.after is not None else "/dev/null",
        )
        return "".join(lines)


def memdir_command(env: Mapping[str, str]) -> list[str]:
    """How the host should start this memdir: plain ``memdir`` when a clean login shell finds
    this very install (portable in a shared project file), else an absolute path — the PATH
    of the terminal running ``install`` (an activated virtualenv) is not the host's."""
    from memdir.adapters.claude_code.resolve import resolves_to

    script = Path(sys.executable).parent / "memdir"
    if not (script.is_file() and os.access(script, os.X_OK)):
        return [sys.executable, "-m", "memdir"]
    if resolves_to("memdir", script, env):
        return ["memdir"]
    return [str(script)]


def hook_specs(command: Sequence[str]) -> list[sm.HookSpec]:
    prefix = shlex.join(command)
    return [
        sm.HookSpec(
            host_name,
            f"{prefix} hook {word}",
            HOOK_TIMEOUTS[word],
            matcher="" if host_name in ("SessionStart", "PreCompact", "SessionEnd") else None,
        )
        for word, host_name in EVENTS.items()
    ]


def server_entry(command: Sequence[str]) -> dict[str, Any]:
    return {"command": command[0], "args": [*command[1:], "mcp"]}


@dataclass(frozen=True)
class Locations:
    """Where each host keeps its files, resolved from the injected environment."""

    home: Path
    project_root: Path
    claude_config_dir: Path
    platform: str = sys.platform
    appdata: Path | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, home: Path, project_root: Path) -> Locations:
        claude = env.get("CLAUDE_CONFIG_DIR")
        appdata = env.get("APPDATA")
        return cls(
            home=home,
            project_root=project_root,
            claude_config_dir=Path(claude) if claude else home / ".claude",
            appdata=Path(appdata) if appdata else None,
        )

    def desktop_config(self) -> Path:
        if self.platform == "darwin":
            base = self.home / "Library" / "Application Support"
        elif self.platform.startswith("win"):
            base = self.appdata or self.home / "AppData" / "Roaming"
        else:
            base = self.home / ".config"
        return base / "Claude" / "claude_desktop_config.json"


def _read(path: Path) -> str | None:
    """A config file's text (None: no file). Refused, before anything is written: a FIFO or
    device (reading it would block or never end) and a dangling symlink (writing through it
    would create a file wherever it points)."""
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise InstallError(
                f"{path} is a dangling symlink (to {os.readlink(path)}); create its target "
                "or remove the link, memdir will not replace it"
            ) from None
        return None
    except UnreadableFileError as exc:
        raise InstallError(str(exc)) from None
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror or exc}") from None
    with open(fd, "rb") as fh:
        data = fh.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InstallError(f"cannot read {path}: not UTF-8 text") from None


def _targets(
    host: str, scope: str, loc: Locations
) -> list[tuple[Path, str, tuple[str, ...] | None]]:
    """(file, "hooks" | "mcp", key path of the servers object) for a host and scope."""
    project = scope == "project"
    if host == "claude-code":
        if project:
            settings = loc.project_root / ".claude" / "settings.json"
            mcp = loc.project_root / ".mcp.json"
            return [(settings, "hooks", None), (mcp, "mcp", ("mcpServers",))]
        # Claude Code keeps user MCP servers in ~/.claude.json (inside CLAUDE_CONFIG_DIR if set)
        default = loc.claude_config_dir == loc.home / ".claude"
        user_json = loc.home / ".claude.json" if default else loc.claude_config_dir / ".claude.json"
        return [
            (loc.claude_config_dir / "settings.json", "hooks", None),
            (user_json, "mcp", ("mcpServers",)),
        ]
    if host == "cursor":
        base = loc.project_root if project else loc.home
        return [(base / ".cursor" / "mcp.json", "mcp", ("mcpServers",))]
    if host == "claude-desktop":
        return [(loc.desktop_config(), "mcp", ("mcpServers",))]
    raise InstallError(f"unknown host {host!r} (choose {', '.join(HOSTS)})")


class InstallRecord:
    """``<memdir home>/installs.json``: what each install added to each file."""

    def __init__(self, memdir_home: Path) -> None:
        self.path = memdir_home / "installs.json"

    def load(self) -> dict[str, Any]:
        text = _read(self.path)
        try:
            value = json.loads(text) if text else {}
        except (ValueError, RecursionError):
            raise InstallError(f"{self.path} is corrupt; move it aside to continue") from None
        return value if isinstance(value, dict) else {}

    def save(self, value: Mapping[str, Any]) -> None:
        atomic_write(self.path, json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def plan_install(
    host: str,
    scope: str,
    loc: Locations,
    command: Sequence[str],
    record: Mapping[str, Any],
    *,
    hook_prefix: Sequence[str] = (),
) -> list[FileChange]:
    """``hook_prefix`` goes before the hooks' commands only (``env MEMDIR_HOST_MODEL=off``)."""
    changes = []
    for path, kind, key in _targets(host, scope, loc):
        before = _read(path)
        current = sm.parse(before, where=str(path))
        previous = record.get(str(path), {})
        if kind == "hooks":
            specs = hook_specs([*hook_prefix, *command])
            new = {s.command for s in specs}
            # an earlier install's commands (another --llm, another memdir path) are replaced,
            # never left beside the new ones: every hook would run twice
            stale = set(previous.get("hooks", [])) - new
            after, created = sm.add_hooks(sm.remove_hooks(current, stale), specs)
            added: dict[str, Any] = {
                "hooks": sorted(new),
                "created": sorted(set(created) | set(previous.get("created", []))),
            }
        else:
            assert key is not None
            after, created = sm.set_server(current, key, SERVER_NAME, server_entry(command))
            added = {
                "server": [*key, SERVER_NAME],
                "created": sorted(set(created) | set(previous.get("created", []))),
            }
        added["host"] = host
        added["new_file"] = previous.get("new_file", before is None)
        if previous.get("backup"):
            added["backup"] = previous["backup"]
        text = before if after == current and before is not None else sm.dump(after, like=before)
        changes.append(FileChange(path, before, text, added))
    return changes


def plan_uninstall(
    host: str, scope: str, loc: Locations, record: Mapping[str, Any]
) -> list[FileChange]:
    changes = []
    for path, kind, key in _targets(host, scope, loc):
        before = _read(path)
        if before is None:
            continue
        current = sm.parse(before, where=str(path))
        added = record.get(str(path), {})
        created = added.get("created", [])
        if kind == "hooks":
            commands = added.get("hooks") or sm.memdir_hook_commands(current)
            after = sm.remove_hooks(current, commands, created)
        else:
            assert key is not None
            after = sm.remove_server(current, key, SERVER_NAME, created)
        text: str | None = before if after == current else sm.dump(after, like=before)
        original = _read(Path(added["backup"])) if added.get("backup") else None
        if text != before and original is not None and _same(original, after):
            text = original  # back to the very bytes it had before the install
        if after == {} and added.get("new_file"):
            text = None
        changes.append(FileChange(path, before, text, added))
    return changes


def _same(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except (ValueError, RecursionError):
        return False


def apply(changes: Sequence[FileChange], *, memdir_home: Path, install: bool) -> list[str]:
    """Back up, write (or delete) each changed file and update the record; backup paths."""
    record_store = InstallRecord(memdir_home)
    backups: list[str] = []
    with locked(memdir_home / "installs.lock"):
        record = record_store.load()
        for change in changes:
            if change.changed:
                if change.before is not None:
                    backup = str(_backup(change.path, change.before, memdir_home))
                    backups.append(backup)
                    if install:
                        change.added.setdefault("backup", backup)
                _write(change)
            if install:
                record[str(change.path)] = change.added
            else:
                record.pop(str(change.path), None)
        record_store.save(record)
    return backups


def _backup(path: Path, text: str, memdir_home: Path) -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%dT%H%M%S%f")
    safe = "".join(c if c.isalnum() or c in "._-" else "-" for c in str(path).strip("/"))
    target = memdir_home / "backups" / f"{safe}.{stamp}"
    atomic_write(target, text)
    return target


def _write(change: FileChange) -> None:
    path = change.path
    if path.is_symlink():  # a user's link (dotfiles): write through to its target, keep the link
        path = Path(os.path.realpath(path))
        if not path.is_file():
            raise InstallError(f"{change.path} links to {path}, which is not a regular file")
        if change.after is None:
            change = FileChange(change.path, change.before, "{}\n", change.added)
    if change.after is None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    mode = 0o600  # a new file: user configs can hold tokens
    with contextlib.suppress(FileNotFoundError):
        mode = stat.S_IMODE(path.stat().st_mode)
    if change.before is None:
        path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, change.after, mode=mode)
