"""``memdir install <host>`` / ``uninstall``: plan the config changes, show or apply them.

Which files a host's install edits, and its hooks in its own terms, come from the host
(:class:`~.dialect.Installable`: ``install_targets``, ``hook_specs``); this module owns what
every install guarantees. A target is a JSON hooks object, a JSON MCP servers object, an MCP
table in a TOML file (Codex's ``config.toml``, edited as one marked block: :mod:`.toml_block`),
or a whole file memdir owns (OpenCode's plugin: :mod:`.managed_file`).

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
import stat
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.adapters.hooks import managed_file, toml_block
from memdir.adapters.hooks import settings_merge as sm
from memdir.adapters.hooks.dialect import Installable, Locations, Target
from memdir.atomic import atomic_write, locked
from memdir.errors import InstallError, UnreadableFileError
from memdir.pathsafe import open_regular

SERVER_NAME = "memdir"


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
    from memdir.adapters.hooks.resolve import resolves_to

    script = Path(sys.executable).parent / "memdir"
    if not (script.is_file() and os.access(script, os.X_OK)):
        return [sys.executable, "-m", "memdir"]
    if resolves_to("memdir", script, env):
        return ["memdir"]
    return [str(script)]


def server_entry(
    command: Sequence[str], extra: Mapping[str, Any] | None = None, args: Sequence[str] = ()
) -> dict[str, Any]:
    return {"command": command[0], "args": [*command[1:], "mcp", *args], **(extra or {})}


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


def _by_file(targets: Sequence[Target]) -> dict[Path, list[Target]]:
    """The targets grouped by file, in order: one file may hold hooks and MCP servers."""
    grouped: dict[Path, list[Target]] = {}
    for target in targets:
        grouped.setdefault(target.path, []).append(target)
    return grouped


def plan_install(
    host: Installable,
    scope: str,
    loc: Locations,
    command: Sequence[str],
    record: Mapping[str, Any],
    *,
    hook_prefix: Sequence[str] = (),
) -> list[FileChange]:
    """``hook_prefix`` goes before the hooks' commands only (``env MEMDIR_HOST_MODEL=off``)."""
    changes = []
    for path, targets in _by_file(host.install_targets(scope, loc)).items():
        before = _read(path)
        previous = record.get(str(path), {})
        text = before
        added: dict[str, Any] = {}
        for target in targets:
            if target.kind == "mcp-toml":
                entry = server_entry(command, target.server, target.mcp_args)
                text = toml_block.add(text, target.key, SERVER_NAME, entry, str(path))
                part: dict[str, Any] = {"server": [*target.key, SERVER_NAME], "toml": True}
            elif target.kind == "file":  # a file memdir owns whole (OpenCode's plugin)
                text, part = managed_file.plan(
                    host, target, text, [*hook_prefix, *command], previous, loc
                )
            else:
                text, part = _plan_json(host, target, text, command, previous, hook_prefix)
                part["created"] = sorted(set(part["created"]) | set(added.get("created", [])))
            added.update(part)
        added["host"] = host.name
        added["new_file"] = previous.get("new_file", before is None)
        if added["new_file"] and "created_dirs" not in added:
            # the dirs made for a new config file go with it (an empty .claude/ left behind)
            added["created_dirs"] = previous.get("created_dirs") or managed_file.missing_dirs(path)
        if previous.get("backup"):
            added["backup"] = previous["backup"]
        changes.append(FileChange(path, before, text, added))
    return changes


def _plan_json(
    host: Installable,
    target: Target,
    before: str | None,
    command: Sequence[str],
    previous: Mapping[str, Any],
    hook_prefix: Sequence[str],
) -> tuple[str, dict[str, Any]]:
    current = sm.parse(before, where=str(target.path))
    if target.kind == "hooks":
        specs = host.hook_specs([*hook_prefix, *command])
        new = {s.command for s in specs}
        # an earlier install's commands (another --llm, another memdir path) are replaced,
        # never left beside the new ones: every hook would run twice
        stale = set(previous.get("hooks", [])) - new
        after, created = sm.add_hooks(sm.remove_hooks(current, stale), specs)
        missing = {k: v for k, v in target.fields.items() if k not in after}
        after, created = {**missing, **after}, [*created, *missing]
        added: dict[str, Any] = {"hooks": sorted(new)}
    elif target.kind == "named-hooks":  # {"memdir": {event: [handler]}}, memdir's own group
        specs = host.hook_specs([*hook_prefix, *command])
        group: dict[str, Any] = {}
        for spec in specs:
            group.setdefault(spec.event, []).append(spec.entry())
        theirs = current.get(SERVER_NAME)
        if theirs is not None and theirs != group and not previous.get("hooks"):
            raise InstallError(
                f"{target.path} already has a hook group named {SERVER_NAME!r} that memdir did "
                "not write; rename or remove it to install"
            )
        after, created = {**current, SERVER_NAME: group}, []
        added = {"hooks": sorted(s.command for s in specs)}
    else:
        shaped = getattr(host, "mcp_entry", None)  # a host with its own entry shape (OpenCode)
        entry = shaped(command) if shaped else server_entry(command, target.server, target.mcp_args)
        after, created = sm.set_server(current, target.key, SERVER_NAME, entry)
        added = {"server": [*target.key, SERVER_NAME]}
    added["created"] = sorted(set(created) | set(previous.get("created", [])))
    text = before if after == current and before is not None else sm.dump(after, like=before)
    assert text is not None
    return text, added


def plan_uninstall(
    host: Installable, scope: str, loc: Locations, record: Mapping[str, Any]
) -> list[FileChange]:
    changes = []
    for path, targets in _by_file(host.install_targets(scope, loc)).items():
        before = _read(path)
        if before is None:
            continue
        added = record.get(str(path), {})
        text: str | None = before
        empty = False
        for target in targets:
            assert text is not None
            if target.kind == "mcp-toml":
                text = toml_block.remove(text, str(path))
                empty = not text.strip()
            elif target.kind == "file":
                managed_file.unplan(target, text, added)
                text, empty = None, True
                break
            else:
                text, empty = _unplan_json(target, text, added)
                # a file the install created, left with only what the host adds by itself
                # (OpenCode's "$schema"), is the install's to delete
                empty = empty or _only_generated(host, text)
        original = _read(Path(added["backup"])) if added.get("backup") else None
        if text != before and original is not None and _same_config(original, text, targets):
            text = original  # back to the very bytes it had before the install
        if empty and added.get("new_file"):
            text = None
        changes.append(FileChange(path, before, text, added))
    return changes


def _unplan_json(target: Target, before: str, added: Mapping[str, Any]) -> tuple[str, bool]:
    current = sm.parse(before, where=str(target.path))
    created = added.get("created", [])
    if target.kind == "hooks":
        commands = added.get("hooks") or sm.memdir_hook_commands(current)
        after = sm.remove_hooks(current, commands, created if added else None)
        if set(after) <= set(target.fields):  # nothing left but what the install added
            after = {k: v for k, v in after.items() if k not in created}
    elif target.kind == "named-hooks":
        after = {k: v for k, v in current.items() if k != SERVER_NAME}
    else:
        after = sm.remove_server(current, target.key, SERVER_NAME, created)
    text = before if after == current else sm.dump(after, like=before)
    return text, after == {}


def _only_generated(host: Installable, text: str) -> bool:
    keys: frozenset[str] = getattr(host, "generated_keys", frozenset())
    if not keys:
        return False
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and set(value) <= set(keys)


def _same_config(original: str, text: str | None, targets: Sequence[Target]) -> bool:
    if text is None:
        return False
    if any(t.kind == "mcp-toml" for t in targets):
        return toml_block.same(original, text)
    try:
        return _same(original, json.loads(text))
    except (ValueError, RecursionError):
        return False


def installed_hosts(record: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """What ``installs.json`` says each host has: per host, its files with their hooks and
    whether the MCP server is there (``memdir status`` and ``doctor`` list them)."""
    hosts: dict[str, list[dict[str, Any]]] = {}
    for path, added in sorted(record.items()):
        if not isinstance(added, dict) or not isinstance(added.get("host"), str):
            continue
        hooks = [h for h in added.get("hooks", []) if isinstance(h, str)]
        entry = {"path": path, "hooks": len(hooks), "mcp_server": bool(added.get("server"))}
        hosts.setdefault(added["host"], []).append(entry)
    return hosts


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
        managed_file.remove_created_dirs(change.added)
        return
    mode = 0o600  # a new file: user configs can hold tokens
    with contextlib.suppress(FileNotFoundError):
        mode = stat.S_IMODE(path.stat().st_mode)
    if change.before is None:
        path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, change.after, mode=mode)
