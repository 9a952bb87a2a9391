"""Which of memdir's Codex hooks the user has not trusted yet (for ``memdir doctor``).

Codex 0.171 runs a hook only once the user trusted it in the TUI's ``/hooks`` review, and
``codex exec`` skips an untrusted one without a word, so a fresh install looks like memdir doing
nothing. The review records, in the user's ``$CODEX_HOME/config.toml``::

    [hooks.state."<abs hooks.json>:<event_snake>:<group>:<handler>"]
    trusted_hash = "sha256:<hex of the hook's normalised identity>"

and a project's ``.codex/`` is read at all only when ``[projects."<root>"] trust_level =
"trusted"``. This module recomputes key and hash exactly as Codex does (the recipe is verified
against Codex's own ``currentHash`` in ``tests/realhost``) and compares. memdir never writes
these tables itself: trusting code is the user's decision.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Installable, Locations

DEFAULT_TIMEOUT = 600
SESSION_END_TIMEOUT = 1


def event_label(event: str) -> str:
    """``SessionStart`` -> ``session_start``, the spelling of hook keys and hashes."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def trust_hash(event: str, group: dict[str, Any], hook: dict[str, Any]) -> str:
    """The ``trusted_hash`` Codex expects for ``hook`` in ``group`` of ``event``."""
    timeout = hook.get("timeout")
    if not isinstance(timeout, int):
        timeout = SESSION_END_TIMEOUT if event == "SessionEnd" else DEFAULT_TIMEOUT
    if event == "SessionEnd":
        timeout = min(timeout, 3)
    norm: dict[str, Any] = {
        "type": "command",
        "command": hook.get("command"),
        "timeout": timeout,
        "async": bool(hook.get("async", False)),
    }
    if isinstance(hook.get("statusMessage"), str):
        norm["statusMessage"] = hook["statusMessage"]
    identity: dict[str, Any] = {"event_name": event_label(event), "hooks": [norm]}
    if isinstance(group.get("matcher"), str):
        identity["matcher"] = group["matcher"]
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def _load(path: Path) -> Any:
    try:
        text = path.read_text("utf-8")
        return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None


def _memdir_hooks(hooks_file: Path, commands: set[str]) -> list[tuple[str, str, str]]:
    """(event, key, hash) of each of memdir's hooks (``commands``) in ``hooks_file``."""
    data = _load(hooks_file)
    hooks = data.get("hooks") if isinstance(data, dict) else None
    found = []
    for event, groups in hooks.items() if isinstance(hooks, dict) else []:
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            inner = group.get("hooks") if isinstance(group, dict) else None
            for h, hook in enumerate(inner if isinstance(inner, list) else []):
                if isinstance(hook, dict) and hook.get("command") in commands:
                    key = f"{hooks_file}:{event_label(event)}:{g}:{h}"
                    found.append((event, key, trust_hash(event, group, hook)))
    return found


def untrusted(dialect: Installable, loc: Locations, home: Path) -> list[dict[str, str]]:
    """Doctor problems: memdir's Codex hooks that will not run until the user trusts them
    (``home``: Codex's ``$CODEX_HOME``, whose ``config.toml`` holds the trust)."""
    config = _load(home / "config.toml")
    config = config if isinstance(config, dict) else {}
    state = (
        config.get("hooks", {}).get("state", {}) if isinstance(config.get("hooks"), dict) else {}
    )
    problems: list[dict[str, str]] = []
    commands = {spec.command for spec in dialect.hook_specs(["memdir"])}
    for scope in dialect.scopes:
        hooks_file = dialect.install_targets(scope, loc)[0].path
        ours = _memdir_hooks(hooks_file, _installed_commands(hooks_file, commands))
        if not ours:
            continue
        if scope == "project" and not _project_trusted(config, loc.project_root):
            problems.append(
                {
                    "kind": "codex-project-untrusted",
                    "path": str(hooks_file),
                    "detail": f"Codex does not read {loc.project_root}/.codex until the project "
                    "is trusted: open `codex` there and accept the folder prompt (or run "
                    "`codex exec --trust` once)",
                }
            )
            continue
        waiting = [
            event
            for event, key, digest in ours
            if not isinstance(state.get(key), dict) or state[key].get("trusted_hash") != digest
        ]
        if waiting:
            problems.append(
                {
                    "kind": "codex-hooks-untrusted",
                    "path": str(hooks_file),
                    "detail": f"{len(waiting)} of memdir's Codex hooks are not trusted yet "
                    f"({', '.join(waiting)}), so Codex skips them: open `codex`, type /hooks "
                    "and trust them",
                }
            )
    return problems


def _installed_commands(hooks_file: Path, wanted: set[str]) -> set[str]:
    """memdir's hook commands in the file: any ``... memdir ... hook --host codex <event>``."""
    data = _load(hooks_file)
    hooks = data.get("hooks") if isinstance(data, dict) else None
    found: set[str] = set()
    for groups in hooks.values() if isinstance(hooks, dict) else []:
        for group in groups if isinstance(groups, list) else []:
            inner = group.get("hooks") if isinstance(group, dict) else None
            for hook in inner if isinstance(inner, list) else []:
                command = hook.get("command") if isinstance(hook, dict) else None
                if isinstance(command, str) and " hook --host codex " in command:
                    found.add(command)
    return found | wanted


def _project_trusted(config: dict[str, Any], root: Path) -> bool:
    projects = config.get("projects")
    entry = projects.get(str(root)) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get("trust_level") == "trusted"


__all__ = ["event_label", "trust_hash", "untrusted"]
