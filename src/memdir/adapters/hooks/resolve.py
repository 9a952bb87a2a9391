"""Will the host find the command memdir installs? Checked the way the host will run it.

A host (Claude Code, Cursor, ...) runs a hook or MCP command line through a shell with its own
PATH — often not the terminal's where a virtualenv was activated, so a plain ``memdir`` that
worked at install time exits 127 in every hook. The PATH a freshly started host most likely has
is a login shell's: ``/bin/sh -lc 'command -v NAME'`` with a clean environment (HOME and the
user's names only), which reads ``/etc/profile`` and ``~/.profile`` and nothing of this process.

Invariants: install writes plain ``memdir`` only when that check finds this very install
(portable in a shared project file), else the absolute path; ``memdir doctor`` runs the same
check on every installed command. A shell that is missing or slow counts as "not found": an
absolute path is always safe.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Mapping
from pathlib import Path

SHELL = "/bin/sh"
_KEEP = ("HOME", "USER", "LOGNAME", "LANG")


def login_which(name: str, env: Mapping[str, str]) -> str | None:
    """Where a clean login shell finds ``name`` on its PATH, or None."""
    clean = {k: env[k] for k in _KEEP if env.get(k)}
    try:
        proc = subprocess.run(
            [SHELL, "-lc", f"command -v {shlex.quote(name)}"],
            env=clean,
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = proc.stdout.strip().splitlines()
    found = lines[-1] if proc.returncode == 0 and lines else ""
    return found if os.path.isabs(found) else None


def command_problem(command_line: str, env: Mapping[str, str]) -> str | None:
    """Why the host would not find the program of ``command_line``, or None when it would."""
    try:
        program = shlex.split(command_line)[0]
    except (ValueError, IndexError):
        return f"cannot parse the command {command_line!r}"
    if "${" in program:
        return None  # expanded by the host (a plugin's ${CLAUDE_PLUGIN_ROOT})
    if os.path.isabs(program):
        if os.path.isfile(program) and os.access(program, os.X_OK):
            return None
        return f"{program} does not exist or is not executable"
    if login_which(program, env) is None:
        return (
            f"{program!r} is not on the PATH of a login shell, so a host started outside this "
            "terminal gets exit 127"
        )
    return None


def resolves_to(name: str, target: Path, env: Mapping[str, str]) -> bool:
    found = login_which(name, env)
    return found is not None and os.path.realpath(found) == os.path.realpath(target)


ASYNC_DETAIL = (
    "memdir's {events} hook is installed async: in `claude -p` the host kills it at exit and "
    "waits ~1.5 s every run; run `memdir install claude-code` again to update it"
)


def _async_problems(path: str) -> list[dict[str, str]]:
    """An earlier install's ``async`` hooks in the settings file at ``path``."""
    import json

    from memdir.adapters.hooks.settings_merge import async_memdir_hooks

    try:
        settings = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError, RecursionError):
        return []  # the unreadable file is reported by the install checks themselves
    if not isinstance(settings, dict):
        return []
    found = async_memdir_hooks(settings)
    if not found:
        return []
    events = " and ".join(sorted({c.rsplit(" ", 1)[-1] for c in found}))
    return [{"kind": "install-async", "path": path, "detail": ASYNC_DETAIL.format(events=events)}]


def installed_problems(
    record: Mapping[str, object], env: Mapping[str, str]
) -> list[dict[str, str]]:
    """``doctor`` problems for every hook and MCP command the install record lists."""
    import json
    import tomllib

    problems: list[dict[str, str]] = []
    checked: dict[str, str | None] = {}
    for path, added in record.items():
        if not isinstance(added, dict):
            continue
        commands = [c for c in added.get("hooks", []) if isinstance(c, str)]
        if commands:
            problems += _async_problems(path)
        server = added.get("server")
        if isinstance(server, list) and server:
            try:
                text = Path(path).read_text("utf-8")
                value: object = tomllib.loads(text) if added.get("toml") else json.loads(text)
                for key in server:
                    value = value.get(key) if isinstance(value, dict) else None
            except (OSError, ValueError, RecursionError):
                value = None
            if isinstance(value, dict) and isinstance(value.get("command"), str):
                commands.append(shlex.join([value["command"], *value.get("args", [])]))
        for command in commands:
            program = command.split(" ", 1)[0]
            if program not in checked:
                checked[program] = command_problem(command, env)
            detail = checked[program]
            if detail is not None:
                problems.append({"kind": "install-unresolved", "path": path, "detail": detail})
                break  # one line per file: the same program runs every hook in it
    return problems
